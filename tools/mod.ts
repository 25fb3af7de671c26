/**
 * The tools layer: interface, registry, the five built-ins and the in-process host. Everything
 * a host needs without the tools themselves comes from `hosting.ts`; this module adds the tools.
 *
 * @module
 */

export * from "./hosting.ts";
export { createBuiltinTools } from "./builtin.ts";
export { createReadTool, type ReadInput } from "./read.ts";
export { createWriteTool, type WriteInput } from "./write.ts";
export { createEditTool, type EditInput } from "./edit.ts";
export { createGrepTool, type GrepInput } from "./grep.ts";
export { type BashInput, createBashTool } from "./bash.ts";
export { createInProcessHost, runTool } from "./host.ts";
export { parseFields, requireAbsolute, requireNonEmpty, requirePresent } from "./_input.ts";
