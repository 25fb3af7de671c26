/**
 * `defineTool()` and `ToolError`: the two things a tool author needs.
 *
 * @module
 */

import type { Tool } from "./types.ts";

/** Returns the tool unchanged; exists so TypeScript infers `Input` from `parseInput`. */
export function defineTool<Input>(tool: Tool<Input>): Tool<Input> {
  return tool;
}

/** A tool failure whose message is model-facing text starting with `<tool>: `. */
export class ToolError extends Error {
  /** Name of the tool that failed. */
  readonly tool: string;

  /** `message` is the complete text, prefix included. */
  constructor(tool: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ToolError";
    this.tool = tool;
  }
}
