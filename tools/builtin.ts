/**
 * The five tools every rousseau process registers by default.
 *
 * @module
 */

import { createBashTool } from "./bash.ts";
import { createEditTool } from "./edit.ts";
import { createGrepTool } from "./grep.ts";
import { createReadTool } from "./read.ts";
import { createWriteTool } from "./write.ts";
import type { AnyTool } from "./types.ts";

/** read, write, edit, grep and bash. Their limits come from each call's `ToolContext`. */
export function createBuiltinTools(): AnyTool[] {
  return [
    createReadTool(),
    createWriteTool(),
    createEditTool(),
    createGrepTool(),
    createBashTool(),
  ];
}
