/**
 * Entry point of the permission-scoped tool worker. The host creates this Worker with
 * runtime permissions narrowed to the workspace; every call runs here, so even a tool with
 * no checks of its own cannot reach outside what the worker was granted.
 *
 * Messages in: `init`, `call`, `cancel`, `prefilter` (grep's second thread), and the answers
 * to the worker's questions (`may-return-answer`, `settle-answer`). Messages out: `ready`,
 * `result`, `failed`, `want-prefilter`, and the questions a call asks the host (`may-return`,
 * `settle`).
 *
 * @module
 */

import { closeSync } from "node:fs";
import { createBuiltinTools } from "./builtin.ts";
import { Registry } from "./registry.ts";
import { runTool } from "./host.ts";
import { askFdChannel } from "./_fd_channel.ts";
import { LaterProofs, setOpenedPathLookup } from "./_workspace.ts";
import { enableParking } from "./_bash_park.ts";
import { adoptPool, setPoolRequester } from "./_grep_pool.ts";
import type { AnyTool, ChangeVerdict, ToolContext } from "./types.ts";
import type { ChangeSet } from "./_overlay.ts";
import type { WorkerReply, WorkerRequest } from "./_worker_protocol.ts";

/** Loads the custom tool modules; throws naming the module that failed. */
export async function loadModules(urls: readonly string[]): Promise<AnyTool[]> {
  const tools: AnyTool[] = [];
  // The library surface first, so custom modules that import it need no read grant for
  // rousseau's own files: a literal import is part of this worker's start-up graph (read
  // before the grants applied), while evaluating it waits until a module needs it.
  if (urls.length > 0) await import("../mod.ts");
  for (const url of urls) {
    let exported: unknown;
    try {
      exported = (await import(url)).default;
    } catch (error) {
      throw new Error(`tools: cannot load module ${url}: ${(error as Error).message}`);
    }
    const list = Array.isArray(exported) ? exported : [exported];
    for (const tool of list) {
      const t = tool as Partial<AnyTool> | undefined;
      if (
        typeof t !== "object" || t === null || typeof t.name !== "string" ||
        typeof t.execute !== "function" || typeof t.parseInput !== "function" ||
        typeof t.inputSchema !== "object" || typeof t.description !== "string"
      ) {
        throw new Error(
          `tools: module ${url} must export default a tool object (name, description, ` +
            "inputSchema, readOnly, parseInput, execute) or an array of them; see docs/add-a-tool.md",
        );
      }
      tools.push({ readOnly: false, ...t } as AnyTool);
    }
  }
  return tools;
}

// deno-lint-ignore no-explicit-any
const scope = self as any;
let registry: Registry | undefined;
let base: Omit<ToolContext, "signal"> | undefined;
/** The devices of the workspace roots, when the host proves opened files after a call. */
let laterDevices: ReadonlySet<number> | undefined;
/** Descriptors handed to the host with a result, open until it says they are proven. */
const handedOver = new Set<number>();

/** Closes the descriptors in `fds` the host has proven (and no other). */
function closeProven(fds: readonly unknown[] | undefined): void {
  for (const fd of fds ?? []) {
    if (typeof fd !== "number" || !handedOver.delete(fd)) continue;
    try {
      closeSync(fd);
    } catch { /* closed already */ }
  }
}
const running = new Map<number, AbortController>();
/** Questions to the host about files, by number: resolved with its answer. */
const asked = new Map<number, (allowed: boolean) => void>();
/** Questions to the host about change sets, by number. */
const settling = new Map<number, (verdict: ChangeVerdict) => void>();
let nextAsk = 1;

/**
 * Asks the host whether call `id` may return the content of the file at `path`. A cancelled
 * call gets false: nothing of it is returned anyway.
 */
function mayReturnFor(id: number, signal: AbortSignal): (path: string) => Promise<boolean> {
  return (path) => {
    if (signal.aborted) return Promise.resolve(false);
    const ask = nextAsk++;
    return new Promise<boolean>((resolve) => {
      const onAbort = () => settle(false);
      const settle = (allowed: boolean) => {
        asked.delete(ask);
        signal.removeEventListener("abort", onAbort);
        resolve(allowed);
      };
      asked.set(ask, settle);
      signal.addEventListener("abort", onAbort, { once: true });
      reply({ type: "may-return", id, ask, path });
    });
  };
}

/** Asks the host whether call `id` may apply `set`; a cancelled call may not. */
function settleFor(
  id: number,
  signal: AbortSignal,
  which: true | "changes",
): (set: ChangeSet, output: string) => Promise<ChangeVerdict> {
  return (set, output) => {
    const cancelled = { apply: false, reason: "the call was cancelled" } as const;
    if (signal.aborted) return Promise.resolve(cancelled);
    // The host applies an empty set without a question (`CallScope.appliesEmpty`).
    if (which === "changes" && set.changes.length === 0) return Promise.resolve({ apply: true });
    const ask = nextAsk++;
    return new Promise<ChangeVerdict>((resolve) => {
      const onAbort = () => settle(cancelled);
      const settle = (verdict: ChangeVerdict) => {
        settling.delete(ask);
        signal.removeEventListener("abort", onAbort);
        resolve(verdict);
      };
      settling.set(ask, settle);
      signal.addEventListener("abort", onAbort, { once: true });
      reply({ type: "settle", id, ask, set, output });
    });
  };
}

/**
 * The devices the workspace `roots` are on (see `LaterProofs`); undefined, and every proof
 * made at once, when one cannot be looked at.
 */
function rootDevices(roots: readonly string[]): ReadonlySet<number> | undefined {
  try {
    return new Set(roots.map((root) => Deno.statSync(root).dev));
  } catch {
    return undefined;
  }
}

function reply(message: WorkerReply): void {
  scope.postMessage(message);
}

/**
 * Keeps tool modules from stopping the worker they share: `Deno.exit` (which Node's
 * `process.exit` calls too) and `close` throw instead, and cannot be put back. A worker that
 * stops itself tells its host nothing, so every call after it would wait forever.
 */
function forbidStopping(): void {
  const refuse = (what: string) => () => {
    throw new Error(
      `${what} is not available to tool modules: they share their worker; throw an error to fail a call`,
    );
  };
  const fixed = (value: unknown) => ({ value, writable: false, configurable: false });
  Object.defineProperty(Deno, "exit", fixed(refuse("Deno.exit")));
  for (const target of [scope, Object.getPrototypeOf(scope)]) {
    Object.defineProperty(target, "close", fixed(refuse("close")));
  }
  // An error a module throws where no call catches it (a timer's callback, a promise nobody
  // awaits) would stop the worker too: it is dropped instead, and the calls in flight go on.
  // (In the built-ins' worker such an error is a bug of ours: it stops the worker and the
  // host fails the calls in flight with it.)
  scope.addEventListener("error", (event: Event) => event.preventDefault());
  scope.addEventListener("unhandledrejection", (event: Event) => event.preventDefault());
}

scope.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const message = event.data;
  if (message.type === "init") {
    try {
      if (message.fdChannel !== undefined) setOpenedPathLookup(askFdChannel(message.fdChannel));
      if (message.builtins !== false) setPoolRequester(() => reply({ type: "want-prefilter" }));
      if (message.modules.length > 0) forbidStopping();
      // bash's next set-up may start ahead here: whatever it leaves dies with this thread.
      if (message.builtins !== false) enableParking();
      registry = new Registry([
        ...message.builtins === false ? [] : createBuiltinTools(),
        ...await loadModules(message.modules),
      ]);
      if (message.proveLater === true) laterDevices = rootDevices(message.workspace.roots);
      base = {
        workspace: message.workspace,
        limits: message.limits,
        env: message.env,
        ...(message.sandbox === undefined ? {} : { sandbox: message.sandbox }),
      };
      reply({
        type: "ready",
        tools: registry.names().map((name) => {
          const tool = registry!.get(name)!;
          return {
            name,
            description: tool.description,
            inputSchema: tool.inputSchema,
            readOnly: tool.readOnly,
          };
        }),
      });
    } catch (error) {
      reply({ type: "failed", error: (error as Error).message });
    }
    return;
  }
  if (message.type === "prefilter") {
    if (base !== undefined) adoptPool(base.workspace.roots, message.port);
    else message.port.close();
    return;
  }
  if (message.type === "close") {
    closeProven(message.fds);
    return;
  }
  if (message.type === "cancel") {
    running.get(message.id)?.abort();
    return;
  }
  if (message.type === "may-return-answer") {
    asked.get(message.ask)?.(message.allowed === true);
    return;
  }
  if (message.type === "settle-answer") {
    const verdict: ChangeVerdict = message.verdict?.apply === true ? { apply: true } : {
      apply: false,
      reason: String(message.verdict?.reason ?? "refused"),
      ...(message.verdict?.withhold === true ? { withhold: true } : {}),
    };
    settling.get(message.ask)?.(verdict);
    return;
  }
  closeProven(message.close);
  const controller = new AbortController();
  running.set(message.id, controller);
  const proofs = base === undefined || laterDevices === undefined
    ? undefined
    : new LaterProofs(base.workspace, laterDevices);
  try {
    const result = registry === undefined || base === undefined
      ? { output: "tools: the worker was not initialised", isError: true }
      : await runTool(registry, message.name, message.input, {
        ...base,
        ...((message.hide === undefined && message.unhide === undefined) ||
            base.sandbox === undefined
          ? {}
          : {
            sandbox: {
              ...base.sandbox,
              hide: [
                ...base.sandbox.hide.filter((h) => !(message.unhide ?? []).includes(h.path)),
                ...(message.hide ?? []),
              ],
            },
          }),
        signal: controller.signal,
        ...(message.scoped === true
          ? { mayReturn: mayReturnFor(message.id, controller.signal) }
          : {}),
        ...(message.settles === true || message.settles === "changes"
          ? { settleChanges: settleFor(message.id, controller.signal, message.settles) }
          : {}),
        ...(proofs === undefined ? {} : { proofs }),
      });
    const sealed = proofs?.seal();
    for (const proof of sealed?.proofs ?? []) handedOver.add(proof.fd);
    reply({
      type: "result",
      id: message.id,
      ...(sealed?.refusal === undefined ? result : { output: sealed.refusal, isError: true }),
      ...(sealed === undefined || sealed.proofs.length === 0 ? {} : { proofs: sealed.proofs }),
    });
  } finally {
    running.delete(message.id);
  }
};
