/**
 * The tool host the CLI uses: every call runs in a Deno Worker whose runtime permissions are
 * narrowed to the workspace — read and write on the roots, run on `/bin/sh` only, and no
 * network, environment, FFI, system information or imports. Calls cross by message;
 * cancelling a call's signal cancels it inside the worker.
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
import { CANCEL_GRACE_MS, type ToolHost } from "./host.ts";
import type { WorkerReply, WorkerRequest } from "./worker.ts";
import type { CallScope, JsonSchemaObject, Limits, ToolResult, Workspace } from "./types.ts";
import { fitSandbox, type Sandbox } from "./_sandbox.ts";
import { socketsSinceStart } from "./_sockets.ts";
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
  /** Custom tool modules (file URLs or absolute paths). @default [] */
  readonly modules?: readonly string[];
  /** Override the derived grants (narrower only; see `derivePermissions`). */
  readonly permissions?: WorkerPermissions;
  /**
   * A worker started early (`startToolWorker`), to overlap its start with the caller's own
   * loading. It is used only when it was started with exactly the grants these options
   * give; otherwise it is stopped and a new worker is started.
   */
  readonly started?: StartedWorker;
}

/** The grants of the worker `createWorkerHost(options)` starts. */
export function workerPermissions(
  options: Pick<WorkerHostOptions, "workspace" | "sandbox" | "modules" | "permissions">,
): WorkerPermissions {
  const modules = options.modules ?? [];
  const base = options.permissions ??
    derivePermissions(options.workspace, options.sandbox ? { sandbox: options.sandbox } : {});
  // A custom module is read by the import itself: the worker may read those files, nothing more.
  return {
    ...base,
    read: [
      ...base.read,
      ...modules.filter((m) => m.startsWith("file:")).map((m) => fromFileUrl(m)),
    ],
  };
}

/** A worker-backed host and the registry of what the worker offers. */
export interface WorkerHost extends ToolHost, AsyncDisposable {
  /** Tool metadata as loaded inside the worker (built-ins plus modules). */
  readonly registry: Registry;
  /** The grants the worker runs with. */
  readonly permissions: WorkerPermissions;
  /** Stops the worker; calls in flight fail. */
  close(): void;
}

/** Starts the worker and waits until its tools are loaded; throws with the worker's error. */
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
  const worker = claimed.worker;
  const earlyError = claimed.error;
  const pending = new Map<number, (result: ToolResult) => void>();
  /** The gate's hooks of calls in flight that have any. */
  const scopes = new Map<number, CallScope>();
  let nextId = 1;
  let closed = false;
  const post = (message: WorkerRequest) => worker.postMessage(message);
  const fdChannel = createFdChannel();
  const stopAnswering = serveFdChannel(fdChannel);

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
    } else {
      pending.get(message.id)?.({ output: message.output, isError: message.isError });
      pending.delete(message.id);
    }
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    const error = new Error(`tools: the tool worker failed: ${event.message}`);
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
    workspace: options.workspace,
    limits: options.limits,
    env: options.env,
    modules,
    fdChannel,
    ...(sandbox === undefined ? {} : { sandbox: sandbox }),
  });
  let loaded: WorkerReply & { type: "ready" };
  try {
    loaded = await ready.promise;
  } catch (error) {
    worker.terminate();
    stopAnswering();
    throw error;
  }
  const registry = new Registry(loaded.tools.map((tool) =>
    defineTool({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as JsonSchemaObject,
      readOnly: tool.readOnly,
      parseInput: (raw: unknown) => raw,
      execute: () => Promise.reject(new ToolError(tool.name, `${tool.name}: runs in the worker`)),
    })
  ));
  const close = () => {
    if (closed) return;
    closed = true;
    worker.terminate();
    stopAnswering();
    for (const [id, resolve] of pending) {
      resolve({ output: "tools: the tool worker was stopped", isError: true });
      pending.delete(id);
    }
  };
  return {
    registry,
    permissions,
    close,
    [Symbol.asyncDispose]: () => Promise.resolve(close()),
    call(name, input, signal, scope) {
      if (closed) {
        return Promise.resolve({ output: "tools: the tool worker was stopped", isError: true });
      }
      const id = nextId++;
      const mayReturn = scope?.mayReturn;
      const settles = scope?.settleChanges !== undefined;
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
            close();
          }, 2 * CANCEL_GRACE_MS);
        };
        pending.set(id, (result) => {
          signal.removeEventListener("abort", onAbort);
          if (stuck !== undefined) clearTimeout(stuck);
          scopes.delete(id);
          resolve(result);
        });
        signal.addEventListener("abort", onAbort, { once: true });
        // Sockets bound since start are covered too (the worker may not read /proc/net).
        const hide = name === "bash" && sandbox !== undefined
          ? socketsSinceStart(sandbox, options.workspace.roots)
          : [];
        post({
          type: "call",
          id,
          name,
          input,
          ...(hide.length === 0 ? {} : { hide }),
          ...(mayReturn === undefined ? {} : { scoped: true }),
          ...(settles ? { settles: true } : {}),
        });
        if (signal.aborted) onAbort();
      });
    },
  };
}
