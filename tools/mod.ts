/**
 * The tools layer: interface, registry, the five built-ins and the in-process host.
 *
 * @module
 */

export * from "./types.ts";
export { defineTool, ToolError } from "./define.ts";
export { Registry } from "./registry.ts";
export { createBuiltinTools } from "./builtin.ts";
export { createReadTool, type ReadInput } from "./read.ts";
export { createWriteTool, type WriteInput } from "./write.ts";
export { createEditTool, type EditInput } from "./edit.ts";
export { createGrepTool, type GrepInput } from "./grep.ts";
export { type BashInput, createBashTool } from "./bash.ts";
export { createInProcessHost, runTool, type ToolHost } from "./host.ts";
export { createWorkspace, isInside, resolveReal } from "./_paths.ts";
export { scrubEnvironment } from "./_env.ts";
export { formatDuration, parseDuration } from "./_duration.ts";
export * from "./limits.ts";
export { confine } from "./_paths.ts";
export { parseFields, requireAbsolute, requireNonEmpty, requirePresent } from "./_input.ts";
export {
  createWorkerHost,
  derivePermissions,
  type WorkerHost,
  type WorkerHostOptions,
  workerPermissions,
} from "./worker_host.ts";
export { type StartedWorker, startToolWorker, type WorkerPermissions } from "./worker_start.ts";
export {
  DEFAULT_HIDDEN,
  type HiddenPath,
  type PidsLimit,
  type Sandbox,
  sandboxArgs,
} from "./_sandbox.ts";
