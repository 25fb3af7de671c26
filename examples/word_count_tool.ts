/**
 * A custom tool in one file: counts the lines, words and bytes of a text file in the
 * workspace. Its default export is the tool object; see docs/add-a-tool.md.
 *
 * @module
 */

import { confine, defineTool, parseFields, requireAbsolute, requireNonEmpty } from "../mod.ts";

/** Input of word_count. */
export interface WordCountInput {
  /** Absolute path of the file. */
  readonly path: string;
}

const NAME = "word_count";

export default defineTool<WordCountInput>({
  name: NAME,
  description: "Count the lines, words and bytes of a text file. The path must be absolute " +
    "and inside the workspace.",
  inputSchema: {
    type: "object",
    properties: {
      path: { type: "string", description: "Absolute path of the file to count." },
    },
    required: ["path"],
  },
  readOnly: true,
  parseInput(raw) {
    const fields = parseFields(NAME, raw, { path: "string" });
    return { path: requireAbsolute(NAME, requireNonEmpty(NAME, fields, "path")) };
  },
  async execute({ path }, context) {
    // Resolves symlinks and `..`; throws "word_count: <path> is outside the workspace".
    const real = await confine(NAME, path, context.workspace);
    context.signal.throwIfAborted();
    const bytes = await Deno.readFile(real);
    const text = new TextDecoder().decode(bytes);
    const lines = text.split("\n").length - (text.endsWith("\n") || text === "" ? 1 : 0);
    const words = text.split(/\s+/).filter((w) => w !== "").length;
    return `${lines} lines, ${words} words, ${bytes.length} bytes`;
  },
});
