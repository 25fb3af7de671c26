/**
 * What a process that hosts the tools needs without loading them: the CLI's isolate, whose
 * tools run in the worker. Workspaces and path resolution, limits and durations, the
 * environment scrub, bash's sandbox argv, the worker host, and the tool interface.
 *
 * Re-exports only, like `mod.ts` (the whole library surface), but nothing re-exported here
 * loads a tool's implementation, Node's fs layer or an npm package: at start-up those cost
 * the CLI tens of milliseconds it spends only in the worker.
 *
 * @module
 */

export * from "./types.ts";
export { defineTool, ToolError } from "./define.ts";
export { Registry } from "./registry.ts";
export type { ToolHost } from "./host.ts";
export { confine, createWorkspace, isInside, resolveReal } from "./_paths.ts";
export { scrubEnvironment } from "./_env.ts";
export { formatDuration, parseDuration } from "./_duration.ts";
export * from "./limits.ts";
// Types only: the overlay's code (node:fs) loads where bash runs, and in the sandbox probe.
export type { ChangeSet, ObservedChange, OverlaySetup } from "./_overlay.ts";
export {
  createWorkerHost,
  type WorkerHost,
  type WorkerHostOptions,
  workerPermissions,
} from "./worker_host.ts";
export {
  derivePermissions,
  type StartedWorker,
  startToolWorker,
  type WorkerPermissions,
} from "./worker_start.ts";
export {
  DEFAULT_HIDDEN,
  fitSandbox,
  type HiddenPath,
  type PidsLimit,
  type Sandbox,
  sandboxArgs,
  sandboxCommand,
  spawnSandboxed,
  withNetwork,
} from "./_sandbox.ts";
export { type ShellIdentity, SYSTEM_CALLS, UNPRIVILEGED_ID } from "./_identity.ts";
export { keyringFilter } from "./_seccomp.ts";
export { ABI_SCOPES_ABSTRACT, landlockAbi } from "./_landlock.ts";
export { resolverText, type UserNet, USERNET_CALLS } from "./_usernet.ts";
export { boundSockets, MAX_SOCKETS } from "./_sockets.ts";
