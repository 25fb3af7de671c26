/**
 * The tool host the CLI uses: every call runs in a Deno Worker whose runtime permissions are
 * narrowed to the workspace — read and write on the roots, run on `/bin/sh` only, and no
 * network, environment, FFI, system information or imports. Calls cross by message;
 * cancelling a call's signal cancels it inside the worker.
 *
 * Custom tool modules run in a second worker of their own, never beside the built-ins: a
 * module shares its isolate with whatever else runs there, so it could rewrite globals the
 * built-ins use, hook `postMessage` to forge their results, or use the run grant bash needs
 * (sh, bwrap or setpriv: a way out of every wall, with the process's whole environment). The
 * modules' worker may read and write the roots (and read the module files), nothing else: no
 * process, no network, no environment (`context.env` is empty there), no FFI, no imports.
 *
 * Worker permissions need `--unstable-worker-options` (Deno 2.9): `deno task cli` and
 * `deno task compile` pass it through the `cli` permission set's task flags.
 *
 * @module
 */

import { fileURLToPath as fromFileUrl } from "node:url";
import { defineTool, ToolError } from "./define.ts";
import { Registry } from "./registry.ts";
import { createFdChannel, serveFdChannel } from "./_fd_channel.ts";
import { CANCEL_GRACE_MS, notText, type ToolHost } from "./host.ts";
import type { InitMessage, WorkerReply, WorkerRequest } from "./_worker_protocol.ts";
import type { StartedPrefilter } from "./_grep_prefilter.ts";
import type { CallScope, JsonSchemaObject, Limits, ToolResult, Workspace } from "./types.ts";
import { fitSandbox, type Sandbox } from "./_sandbox.ts";
import { hiddenGone, socketsSinceStart } from "./_sockets.ts";
import {
  claimWorker,
  derivePermissions,
  type StartedWorker,
  startToolWorker,
  type WorkerPermissions,
} from "./worker_start.ts";

/** Options of `createWorkerHost`. */
export interface WorkerHostOptions {
  readonly workspace: Workspace;
  readonly limits: Limits;
  readonly env: Readonly<Record<string, string>>;
  /** bash's sandbox; the worker may then run bwrap instead of /bin/sh. */
  readonly sandbox?: Sandbox;
  /** Custom tool modules (file URLs or absolute paths), loaded in a worker of their own. @default [] */
  readonly modules?: readonly string[];
  /** Override the derived grants (narrower only; see `derivePermissions`). */
  readonly permissions?: WorkerPermissions;
  /**
   * A worker started early (`startToolWorker`), to overlap its start with the caller's own
   * loading. It is used only when it was started with exactly the grants these options
   * give; otherwise it is stopped and a new worker is started.
   */
  readonly started?: StartedWorker;
  /** Longest wait for the custom modules to load, in milliseconds. @default MODULE_LOAD_TIMEOUT_MS */
  readonly moduleLoadTimeoutMs?: number;
  /**
   * Prove the files a built-in call read with its result, instead of one question to this
   * isolate per opened file while the call runs (`LaterProofs` in `_workspace.ts`): for a
   * long-running host making many small calls. Without
   * `/proc/self/fd` (not Linux) every proof is made at once anyway. @default false
   */
  readonly proveLater?: boolean;
}

/**
 * How long custom modules may take to load: a module that blocks at import (a loop, a wait
 * that never ends) would otherwise hold every command at start-up forever.
 */
export const MODULE_LOAD_TIMEOUT_MS = 30_000;

/** Proven descriptors held for the next call to carry to the worker; past this, sent alone. */
const PROVED_HELD = 16;

/** The grants of the built-in tools' worker `createWorkerHost(options)` starts. */
export function workerPermissions(
  options: Pick<WorkerHostOptions, "workspace" | "sandbox" | "permissions">,
): WorkerPermissions {
  return options.permissions ??
    derivePermissions(options.workspace, options.sandbox ? { sandbox: options.sandbox } : {});
}

/**
 * The grants of the custom modules' worker: read on the roots and on the module files (the
 * import reads them), write on the roots when the built-ins' worker may write them, and
 * nothing else — no run grant whatever bash may do.
 */
export function moduleWorkerPermissions(
  options: Pick<WorkerHostOptions, "workspace" | "sandbox" | "modules" | "permissions">,
): WorkerPermissions {
  const roots = options.workspace.roots;
  const base = workerPermissions(options);
  const write = base.write.some((path) => roots.includes(path));
  const own = derivePermissions(options.workspace, { write, run: false });
  return {
    ...own,
    write: own.write.filter((path) => base.write.includes(path)),
    read: [
      ...own.read,
      ...(options.modules ?? []).filter((m) => m.startsWith("file:")).map((m) => fromFileUrl(m)),
    ],
  };
}

/** A worker-backed host and the registry of what the worker offers. */
export interface WorkerHost extends ToolHost, AsyncDisposable {
  /** Tool metadata as loaded inside the workers (built-ins plus modules). */
  readonly registry: Registry;
  /** The grants the built-in tools' worker runs with. */
  readonly permissions: WorkerPermissions;
  /** The grants the custom modules' worker runs with, when modules are configured. */
  readonly modulePermissions?: WorkerPermissions;
  /** Stops the workers; calls in flight fail. */
  close(): void;
}

type Listed = (WorkerReply & { type: "ready" })["tools"];

/** One worker as the host drives it: its tools, calls to it, and stopping it. */
interface Lane {
  readonly tools: Listed;
  call(name: string, input: unknown, signal: AbortSignal, scope?: CallScope): Promise<ToolResult>;
  close(): void;
}

/**
 * Sends `init` to `worker` and waits until its tools are loaded; throws with the worker's
 * error (or when `loadTimeoutMs` passes first). Every number a worker sends back (call,
 * question) is looked up in this lane's own tables, so a worker can only ever answer for
 * its own calls. `onStuck` runs when a cancelled call is not given up by the worker in time.
 */
async function openLane(
  worker: Worker,
  earlyError: string | undefined,
  init: Omit<InitMessage, "type" | "fdChannel">,
  options: {
    sandbox?: Sandbox;
    roots: readonly string[];
    loadTimeout?: () => Error;
    loadTimeoutMs?: number;
    onStuck: () => void;
    /** What calls get once this lane is stopped. @default "tools: the tool worker was stopped" */
    stoppedText?: string;
    /** True for the built-ins' lane: grep there may ask for a prefilter worker. */
    prefilter?: boolean;
    /**
     * The built-ins' lane, when its calls' opened files are proven with their results: the
     * workspace to prove them against, and the proving.
     */
    proveLater?: {
      readonly workspace: Workspace;
      readonly prove: typeof import("./_later_proofs.ts").proveLater;
    };
  },
): Promise<Lane> {
  /** Calls in flight; what a worker sends is unchecked until `resultOf`. */
  const pending = new Map<number, (result: { output: unknown; isError: unknown }) => void>();
  /** The gate's hooks of calls in flight that have any. */
  const scopes = new Map<number, CallScope>();
  let nextId = 1;
  let closed = false;
  const post = (message: WorkerRequest) => worker.postMessage(message);
  /**
   * Descriptors proven here, for the worker to close: a descriptor belongs to the isolate that
   * opened it. Sent with the next call (no message of their own), or alone past a few.
   */
  let proved: number[] = [];
  const closeLater = (fd: number) => {
    proved.push(fd);
    if (proved.length >= PROVED_HELD && !closed) {
      post({ type: "close", fds: proved });
      proved = [];
    }
  };
  const fdChannel = createFdChannel();
  const stopAnswering = serveFdChannel(fdChannel);
  /** grep's prefilter worker, started on the main thread when grep asks (`_grep_pool.ts`). */
  let prefilter: StartedPrefilter | undefined;
  const startPrefilterFor = async () => {
    // Loaded on first use: most runs never walk a tree large enough to ask.
    const { startPrefilter } = await import("./_grep_prefilter.ts");
    if (closed) return;
    prefilter?.terminate();
    prefilter = undefined;
    try {
      // The grants are the host's to pick: read on the workspace roots, nothing else.
      prefilter = startPrefilter(options.roots);
    } catch {
      return; // no worker here: grep searches alone
    }
    worker.postMessage({ type: "prefilter", port: prefilter.port }, [prefilter.port]);
  };

  const ready = Promise.withResolvers<WorkerReply & { type: "ready" }>();
  worker.onmessage = (event: MessageEvent<WorkerReply>) => {
    const message = event.data;
    if (message.type === "ready") ready.resolve(message);
    else if (message.type === "failed") ready.reject(new Error(message.error));
    else if (message.type === "may-return") {
      // Fails closed: an unknown call, or a check that throws, returns nothing of the file.
      const check = scopes.get(message.id)?.mayReturn;
      const answer = check === undefined ? Promise.resolve(false) : check(message.path);
      answer.catch(() => false).then((allowed) => {
        if (!closed) post({ type: "may-return-answer", ask: message.ask, allowed });
      });
    } else if (message.type === "settle") {
      // Fails closed too: no hook for the call, or a hook that throws, applies nothing.
      const settle = scopes.get(message.id)?.settleChanges;
      const answer = settle === undefined
        ? Promise.resolve({ apply: false as const, reason: "nobody judged the changes" })
        : settle(message.set, message.output);
      answer.catch((error: unknown) => ({
        apply: false as const,
        reason: `judging them failed: ${error instanceof Error ? error.message : String(error)}`,
      })).then((verdict) => {
        if (!closed) post({ type: "settle-answer", ask: message.ask, verdict });
      });
    } else if (message.type === "result") {
      // Proven even for a call given up on: its descriptors are closed here either way.
      const result = options.proveLater !== undefined && Array.isArray(message.proofs)
        ? proven(message, options.proveLater, closeLater)
        : message;
      pending.get(message.id)?.(result);
      pending.delete(message.id);
    } else if (message.type === "want-prefilter" && options.prefilter === true && !closed) {
      startPrefilterFor().catch(() => {}); // without it grep searches alone
    }
  };
  /** Set when the worker failed: it is gone, and later calls fail at once with this. */
  let failed: string | undefined;
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    const error = new Error(`tools: the tool worker failed: ${event.message}`);
    failed ??= error.message;
    ready.reject(error);
    for (const [id, resolve] of pending) {
      resolve({ output: error.message, isError: true });
      pending.delete(id);
    }
  };
  if (earlyError !== undefined) {
    ready.reject(new Error(`tools: the tool worker failed: ${earlyError}`));
  }
  post({
    type: "init",
    ...init,
    fdChannel,
    ...(options.proveLater === undefined ? {} : { proveLater: true }),
  });
  const timer = options.loadTimeout === undefined
    ? undefined
    : setTimeout(() => ready.reject(options.loadTimeout!()), options.loadTimeoutMs);
  let loaded: WorkerReply & { type: "ready" };
  try {
    loaded = await ready.promise;
  } catch (error) {
    worker.terminate();
    prefilter?.terminate();
    stopAnswering();
    throw error;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  const stopped = options.stoppedText ?? "tools: the tool worker was stopped";
  const close = () => {
    if (closed) return;
    closed = true;
    worker.terminate();
    prefilter?.terminate();
    stopAnswering();
    for (const [id, resolve] of pending) {
      resolve({ output: stopped, isError: true });
      pending.delete(id);
    }
  };
  const sandbox = options.sandbox;
  return {
    tools: loaded.tools,
    close,
    call(name, input, signal, scope) {
      if (closed) return Promise.resolve({ output: stopped, isError: true });
      if (failed !== undefined) return Promise.resolve({ output: failed, isError: true });
      const id = nextId++;
      const mayReturn = scope?.mayReturn;
      const settles = scope?.settleChanges === undefined
        ? false
        : scope.appliesEmpty === true
        ? "changes" as const
        : true;
      if (mayReturn !== undefined || settles) scopes.set(id, scope!);
      return new Promise<ToolResult>((resolve) => {
        let stuck: ReturnType<typeof setTimeout> | undefined;
        const onAbort = () => {
          post({ type: "cancel", id });
          // A worker that does not answer a cancellation in time is blocked (a synchronous
          // wait inside a tool): the call returns anyway, and the worker is stopped so that
          // nothing it was doing outlives the cancellation.
          stuck ??= setTimeout(() => {
            pending.get(id)?.({ output: `${name}: cancelled`, isError: true });
            pending.delete(id);
            options.onStuck();
          }, 2 * CANCEL_GRACE_MS);
        };
        pending.set(id, (result) => {
          signal.removeEventListener("abort", onAbort);
          if (stuck !== undefined) clearTimeout(stuck);
          scopes.delete(id);
          resolve(resultOf(name, result));
        });
        signal.addEventListener("abort", onAbort, { once: true });
        // Sockets bound since start are covered too (the worker may not read /proc/net), and
        // hidden paths gone since start are not (bwrap cannot cover what is not there).
        const hide = name === "bash" && sandbox !== undefined
          ? socketsSinceStart(sandbox, options.roots)
          : [];
        const unhide = name === "bash" && sandbox !== undefined ? hiddenGone(sandbox) : [];
        const close = proved;
        proved = [];
        post({
          type: "call",
          id,
          name,
          input,
          ...(close.length === 0 ? {} : { close }),
          ...(hide.length === 0 ? {} : { hide }),
          ...(unhide.length === 0 ? {} : { unhide }),
          ...(mayReturn === undefined ? {} : { scoped: true }),
          ...(settles ? { settles } : {}),
        });
        if (signal.aborted) onAbort();
      });
    },
  };
}

/**
 * `result` once the files its call left open are proven (each closed after): the first
 * refusal replaces it, as the refusal a proof made during the call would have ended it with.
 */
function proven(
  result: WorkerReply & { type: "result" },
  { workspace, prove }: NonNullable<Parameters<typeof openLane>[3]["proveLater"]>,
  close: (fd: number) => void,
): { output: unknown; isError: unknown } {
  let refusal: string | undefined;
  for (const proof of result.proofs ?? []) {
    const refused = prove(proof, workspace, close);
    refusal ??= refused;
  }
  return refusal === undefined ? result : { output: refusal, isError: true };
}

/**
 * A result as a worker sent it, checked: a tool that returned something other than a string
 * (a custom tool may return anything) gets an error result saying so, never a value the
 * gate, the audit log or a provider would choke on.
 */
function resultOf(name: string, result: { output: unknown; isError: unknown }): ToolResult {
  if (typeof result.output === "string") {
    return { output: result.output, isError: result.isError === true };
  }
  return { output: notText(name, result.output), isError: true };
}

/**
 * What proving calls' files after them takes here (see `WorkerHostOptions.proveLater`);
 * undefined where this isolate cannot read `/proc/self/fd` (not Linux, or narrowed).
 */
async function laterProving(
  workspace: Workspace,
): Promise<NonNullable<Parameters<typeof openLane>[3]["proveLater"]> | undefined> {
  try {
    await Deno.stat("/proc/self/fd");
  } catch {
    return undefined;
  }
  const { proveLater: prove } = await import("./_later_proofs.ts");
  return { workspace, prove };
}

/** Starts the workers and waits until their tools are loaded; throws with a worker's error. */
export async function createWorkerHost(options: WorkerHostOptions): Promise<WorkerHost> {
  // Fitted to the roots (idempotent): an unprivileged shell's covers and reachable hides.
  const sandbox = options.sandbox === undefined
    ? undefined
    : fitSandbox(options.sandbox, options.workspace.roots);
  const modules = options.modules ?? [];
  const permissions = workerPermissions(options);
  // The worker started early, if it runs with exactly these grants; else a new one.
  const claimed = (options.started && claimWorker(options.started, permissions)) ??
    claimWorker(startToolWorker(permissions), permissions)!;
  let closed = false;
  const lanes: Lane[] = [];
  const close = () => {
    if (closed) return;
    closed = true;
    for (const lane of lanes) lane.close();
  };
  const proveLater = options.proveLater === true
    ? await laterProving(options.workspace)
    : undefined;
  const builtins = openLane(claimed.worker, claimed.error, {
    workspace: options.workspace,
    limits: options.limits,
    env: options.env,
    modules: [],
    ...(sandbox === undefined ? {} : { sandbox }),
  }, {
    ...(sandbox === undefined ? {} : { sandbox }),
    roots: options.workspace.roots,
    onStuck: close,
    prefilter: true,
    ...(proveLater === undefined ? {} : { proveLater }),
  });
  const modulePermissions = modules.length === 0 ? undefined : moduleWorkerPermissions(options);
  /** The modules' lane once open: a stuck module call stops it alone, not the built-ins. */
  // deno-lint-ignore prefer-const -- set once both lanes are up; read earlier by onStuck's closure
  let moduleLane: Lane | undefined;
  const custom = modulePermissions === undefined ? undefined : (() => {
    const started = startToolWorker(modulePermissions);
    const own = claimWorker(started, modulePermissions)!;
    const timeoutMs = options.moduleLoadTimeoutMs ?? MODULE_LOAD_TIMEOUT_MS;
    return openLane(own.worker, own.error, {
      workspace: options.workspace,
      limits: options.limits,
      env: {},
      modules,
      builtins: false,
    }, {
      roots: options.workspace.roots,
      onStuck: () => moduleLane?.close(),
      stoppedText: "tools: the custom modules' worker was stopped (a call did not stop when " +
        "it was cancelled); restart rousseau to use their tools again",
      loadTimeoutMs: timeoutMs,
      loadTimeout: () =>
        new Error(
          `tools: the tool modules did not load within ${timeoutMs / 1000} s: ${
            modules.join(", ")
          }; ` +
            "a module must not block or wait for anything at import",
        ),
    });
  })();
  const settled = await Promise.allSettled(custom === undefined ? [builtins] : [builtins, custom]);
  for (const outcome of settled) if (outcome.status === "fulfilled") lanes.push(outcome.value);
  const failed = settled.find((outcome) => outcome.status === "rejected");
  if (failed !== undefined) {
    close();
    throw failed.reason;
  }
  const [own, extra] = lanes as [Lane, Lane | undefined];
  moduleLane = extra;
  const route = new Map<string, Lane>();
  let registry: Registry;
  try {
    // A module's tool named like a built-in is refused here: one name, one tool.
    registry = new Registry([...own.tools, ...extra?.tools ?? []].map((tool) =>
      defineTool({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as JsonSchemaObject,
        readOnly: tool.readOnly,
        parseInput: (raw: unknown) => raw,
        execute: () => Promise.reject(new ToolError(tool.name, `${tool.name}: runs in the worker`)),
      })
    ));
  } catch (error) {
    close();
    throw error;
  }
  for (const tool of own.tools) route.set(tool.name, own);
  for (const tool of extra?.tools ?? []) route.set(tool.name, extra!);
  return {
    registry,
    permissions,
    ...(modulePermissions === undefined ? {} : { modulePermissions }),
    close,
    [Symbol.asyncDispose]: () => Promise.resolve(close()),
    call(name, input, signal, scope) {
      if (closed) {
        return Promise.resolve({ output: "tools: the tool worker was stopped", isError: true });
      }
      return (route.get(name) ?? own).call(name, input, signal, scope);
    },
  };
}
