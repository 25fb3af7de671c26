/**
 * `defineTool()` and `ToolError`: the two things a tool author needs.
 *
 * @module
 */

import type { Tool } from "./types.ts";

export { ToolError } from "./tool_error.ts";

/** Returns the tool unchanged; exists so TypeScript infers `Input` from `parseInput`. */
export function defineTool<Input>(tool: Tool<Input>): Tool<Input> {
  return tool;
}
