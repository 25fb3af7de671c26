/**
 * What a provider failure means and what to do about it. Both providers classify their SDK's
 * errors here, so a server that will never accept the request (no tool support, unknown
 * model, bad key, invalid request) fails at once with a hint, and only failures that may pass
 * (rate limits, overload, a model still loading, a dropped connection) are retried.
 *
 * @module
 */

/** Where the request went; names the URL and the model in hints. */
export interface Target {
  /** `anthropic` or `openai`. */
  readonly provider: string;
  readonly model: string;
  /** The base URL as the SDK uses it. */
  readonly baseUrl: string;
}

/** An HTTP error answer, as the provider sent it. */
export interface HttpAnswer {
  readonly status: number | undefined;
  /** The provider's error type or code (`invalid_request_error`, `model_not_found`, ...). */
  readonly type: string | undefined;
  readonly message: string;
}

/** Whether to retry, and the text to show (the provider's own words plus a hint). */
export interface Explained {
  readonly transient: boolean;
  readonly detail: string;
  /** More retries for a failure that passes with time; see `Failure.patience`. */
  readonly patience?: { readonly retries: number; readonly maxDelayMs: number };
}

/**
 * A model still loading: up to 14 retries, waits capped at 5 s (about a minute in all, the
 * time a large GGUF takes to load from disk), instead of the usual 4 (about 7 s).
 */
const LOADING_PATIENCE = { retries: 14, maxDelayMs: 5_000 } as const;

/**
 * llama-server started without `--jinja` answers every request that carries tools with
 * `500 {"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`
 * (ggml-org/llama.cpp tools/server, `oaicompat_chat_params_parse` throws it before any
 * work; measured against a real llama-server in issue 17). A 500 no retry can fix.
 */
const NO_JINJA = /tools param requires --jinja/i;

/**
 * vLLM started without a tool parser, to any request with tools (tool_choice defaults to
 * "auto"): `400 "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser
 * to be set` (quoted by many users of self-hosted vLLM, e.g. NVIDIA NIM deployment notes).
 */
const VLLM_NO_PARSER = /requires --enable-auto-tool-choice/i;

/** Ollama: `400 registry.ollama.ai/library/gemma2:latest does not support tools`. */
const NO_TOOLS =
  /does not support tools|tools? (are|is) not supported|tool.?calling is not supported/i;

/** llama.cpp's chat-template engine failing on the request (`Jinja Exception: ...`, a 500). */
const TEMPLATE = /jinja exception|chat template/i;

/** llama.cpp `503 {"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`. */
const LOADING = /loading model/i;

/** A model the server does not know: OpenAI `model_not_found`, Ollama `model "x" not found`. */
const UNKNOWN_MODEL =
  /model_not_found|model .*(not found|does not exist)|no such model|unknown model/i;

function localServer(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === "localhost" || host === "127.0.0.1" || host === "[::1]" ||
      host.startsWith("192.168.") || host.startsWith("10.");
  } catch {
    return false;
  }
}

function keyHint(provider: string): string {
  return provider === "anthropic"
    ? "check ANTHROPIC_API_KEY or anthropic.api_key"
    : "check OPENAI_API_KEY or openai.api_key";
}

function modelHint(target: Target): string {
  const flag = `--model / ${target.provider}.model`;
  if (target.provider === "openai" && localServer(target.baseUrl)) {
    return `the server has no model ${JSON.stringify(target.model)}: check ${flag} against ` +
      `${target.baseUrl}/models (Ollama: ollama pull ${target.model}), and that the base URL ` +
      "ends in /v1";
  }
  return `no model ${JSON.stringify(target.model)} here: check ${flag} and the base URL ` +
    `${target.baseUrl}`;
}

/** Explains an HTTP error answer: retry or not, and what to do. */
export function explainHttp(target: Target, answer: HttpAnswer): Explained {
  const { status, type } = answer;
  // A proxy's or web server's error page says nothing the user can act on and fills the
  // screen: it is named, and its body goes to the debug log (`htmlBody`).
  const message = isHtmlPage(answer.message)
    ? `HTTP ${status ?? "error"} (HTML page)`
    : answer.message;
  const said = type && !message.startsWith(type) ? `${type}: ${message}` : message;
  const text = `${type ?? ""} ${message}`;
  const fail = (hint: string): Explained => ({ transient: false, detail: `${said} (${hint})` });
  if (NO_JINJA.test(message)) {
    return fail(
      "this llama-server does not accept tools: restart it with --jinja, without --no-jinja " +
        "(jinja is the default since ggml-org/llama.cpp#17524), and a model whose chat " +
        "template supports tool calls",
    );
  }
  if (VLLM_NO_PARSER.test(message)) {
    return fail(
      "this vLLM server does not accept tools: restart it with --enable-auto-tool-choice " +
        "--tool-call-parser <the model's parser, e.g. hermes for Qwen>",
    );
  }
  if (NO_TOOLS.test(message)) {
    return fail(
      `model ${JSON.stringify(target.model)} cannot call tools on this server; pick a model ` +
        "with tool support (Ollama: one tagged tools, e.g. qwen3 or llama3.1)",
    );
  }
  if (status === 401 || status === 403) {
    return fail(
      status === 401
        ? `the API key was refused: ${keyHint(target.provider)}`
        : keyHint(target.provider),
    );
  }
  if (status === 404 || UNKNOWN_MODEL.test(text)) {
    if (status === 404 && !UNKNOWN_MODEL.test(text) && !/model/i.test(message)) {
      return fail(
        `nothing answers at ${target.baseUrl}: check the base URL` +
          (target.provider === "openai" ? " (OpenAI-compatible servers usually end in /v1)" : ""),
      );
    }
    return fail(modelHint(target));
  }
  if (status === 429 && /insufficient_quota|exceeded your current quota/i.test(text)) {
    return fail("the account is out of quota: check billing; retrying will not help");
  }
  if (status !== undefined && status >= 500 && TEMPLATE.test(message)) {
    return fail(
      "the server's chat template failed on this conversation; try another model or " +
        "chat template (llama-server --chat-template-file)",
    );
  }
  if (status === 503 && LOADING.test(message)) {
    return {
      transient: true,
      detail: `${said} (the server is still loading the model)`,
      patience: LOADING_PATIENCE,
    };
  }
  const transient = status === undefined
    ? /overload|rate|server|timeout|unavailable/i.test(text)
    : status === 408 || status === 409 || status === 429 || status >= 500;
  if (transient) return { transient, detail: said };
  if (/max_tokens|max_completion_tokens/i.test(message) && !/context/i.test(message)) {
    return fail(`lower ${target.provider}.max_tokens (--max-tokens)`);
  }
  if (status === 400 || status === 422) {
    return fail("the server rejected the request; retrying the same request will not help");
  }
  return { transient, detail: said };
}

/** Whether an error text is (or carries) an HTML page rather than an API error. */
export function isHtmlPage(text: string): boolean {
  return /<(!doctype html|html[\s>]|head>|body[\s>])/i.test(text);
}

/** Whether `baseUrl` names this machine (a refused connection there is not transient). */
export function isLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return false;
  }
  return host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) ||
    host === "::1" || host === "0.0.0.0" || host === "::";
}

/** The messages of an error and its causes, outermost first. */
function causeChain(error: unknown): string[] {
  const out: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 6; depth++) {
    const message = (current as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") out.push(message);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

/**
 * A failure to reach the server: names the URL and the likely cause. Retried (a server may be
 * starting), except where no retry can help (a port Deno refuses, a bad certificate, and a
 * refused connection to this machine: nothing listens there, and waiting seconds for it to
 * appear only delays the hint; remote hosts keep their retries).
 */
export function explainConnection(target: Target, error: unknown): Explained {
  const all = causeChain(error).join(" | ");
  const where = `cannot reach ${target.baseUrl}`;
  const start = target.provider === "openai"
    ? " — is the server running? (ollama serve / llama-server --jinja / vllm serve)"
    : " — check the network or ANTHROPIC_BASE_URL";
  if (/connection refused/i.test(all)) {
    return {
      transient: !isLoopback(target.baseUrl),
      detail: `${where}: connection refused${start}`,
    };
  }
  if (/dns error|failed to lookup|name or service not known|nodename nor servname/i.test(all)) {
    return {
      transient: true,
      detail: `${where}: host name not found — check the host in the base URL`,
    };
  }
  if (/are blocked/i.test(all)) {
    const port = /port (\d+)/i.exec(all)?.[1];
    return {
      transient: false,
      detail: `${where}: port ${port ?? "?"} is on the fetch standard's blocked list, which ` +
        "Deno enforces — serve the model on another port",
    };
  }
  if (/certificate|tls|ssl|handshake/i.test(all)) {
    return {
      transient: false,
      detail: `${where}: TLS failed (${
        causeChain(error).at(-1)
      }) — check the URL's scheme (http for local servers) or the certificate`,
    };
  }
  if (/timed? ?out/i.test(all)) {
    return { transient: true, detail: `${where}: the connection timed out` };
  }
  const deepest = causeChain(error).at(-1) ?? String(error);
  return { transient: true, detail: `${where}: ${deepest}` };
}
