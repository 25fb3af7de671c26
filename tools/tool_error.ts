/**
 * `ToolError`, the failure a tool throws. It imports nothing, so the helpers every tool uses
 * (path checks, input parsing) can throw it without depending on the tool interface;
 * `define.ts` re-exports it for tool authors.
 *
 * @module
 */

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
