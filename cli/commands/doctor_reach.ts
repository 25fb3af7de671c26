/**
 * `doctor`'s offline reachability check: is anything listening at the provider's base URL?
 * A TCP connection only (a name lookup first for a remote host), closed at once: no request
 * is sent, so no key is used and nothing is billed. `doctor --online` goes further.
 *
 * @module
 */

import { wireNamed } from "../../providers/wires.ts";

/** The longest wait for the name lookup plus the connection. */
export const REACH_TIMEOUT_MS = 1000;

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443 };

/** Loopback host names: a server there is started by the user, so the fix is to start it. */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127\./.test(host);
}

/** How to start the server usually found on `port` of this machine. */
function startHint(port: number): string {
  switch (port) {
    case 11434:
      return "start it: ollama serve";
    case 8080:
      return "start it: llama-server --jinja -m MODEL.gguf --port 8080";
    case 1234:
      return "start it: lms server start (LM Studio)";
    case 8000:
      return "start it: vllm serve MODEL --enable-auto-tool-choice --port 8000";
    default:
      return `start the server on port ${port} (ollama serve, llama-server --jinja -m MODEL.gguf ` +
        `--port ${port}), or point --base-url at the one that runs`;
  }
}

/** Settles with `promise` or rejects after `ms`; `late` disposes of a result that came too late. */
function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  late: (value: T) => void,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new Error(`${what}: no answer within ${ms / 1000} s`));
    }, ms);
  });
  promise.then((value) => {
    if (timedOut) late(value);
  }, () => {});
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `reach` for a provider's settings: its base URL, or the provider's default one. */
export function reachProvider(
  settings: { readonly name: string; readonly baseUrl?: string },
  env: Record<string, string> = Deno.env.toObject(),
): Promise<string> {
  const base = settings.baseUrl ?? wireNamed(settings.name)?.defaultBaseUrl;
  if (base === undefined) {
    return Promise.reject(new Error(`no provider wire named ${JSON.stringify(settings.name)}`));
  }
  // Behind a proxy the provider is reached through it, so the proxy is what must answer.
  const url = URL.canParse(base) ? new URL(base) : undefined;
  const proxy = url === undefined || isLoopback(url.hostname)
    ? undefined
    : url.protocol === "https:"
    ? env.HTTPS_PROXY ?? env.https_proxy
    : env.HTTP_PROXY ?? env.http_proxy;
  if (proxy !== undefined && proxy !== "" && URL.canParse(proxy)) {
    return reach(proxy).then((line) => `${line} (the proxy for ${url!.host})`);
  }
  return reach(base);
}

/**
 * Connects to the host and port of `baseUrl` and closes the connection. Resolves with what
 * answered; throws with the fix when nothing does.
 */
export async function reach(baseUrl: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(
      `base URL ${JSON.stringify(baseUrl)} is not a URL (want e.g. http://127.0.0.1:11434/v1)`,
    );
  }
  const port = url.port === "" ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  if (port === undefined) {
    throw new Error(`${baseUrl}: want an http:// or https:// URL, got ${url.protocol}`);
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const where = `${url.hostname}:${port}`;
  const started = performance.now();
  const left = () => Math.max(1, REACH_TIMEOUT_MS - (performance.now() - started));
  // A remote name is resolved first, so a typo and a missing network say so.
  let address = hostname;
  if (!isLoopback(hostname) && !/^[\d.]+$/.test(hostname) && !hostname.includes(":")) {
    const found = await within(
      Promise.any([Deno.resolveDns(hostname, "A"), Deno.resolveDns(hostname, "AAAA")]),
      left(),
      `${where}: name lookup`,
      () => {},
    ).catch((error) => {
      const why = error instanceof AggregateError ? "no address found" : (error as Error).message;
      throw new Error(
        `${where}: cannot resolve ${hostname} (${why}); check the base URL and the network`,
      );
    });
    address = found[0] ?? hostname;
  }
  try {
    const conn = await within(
      Deno.connect({ hostname: address, port }),
      left(),
      where,
      (late) => late.close(),
    );
    conn.close();
  } catch (error) {
    const message = (error as Error).message;
    if (isLoopback(hostname)) {
      throw new Error(`nothing listens on ${where} — ${startHint(port)}`);
    }
    throw new Error(
      `${where}: cannot connect (${message}); check the base URL, the network and any firewall`,
    );
  }
  return `${where} accepts connections (not asked anything; --online sends a request)`;
}
