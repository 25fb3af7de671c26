/**
 * edit: replace exactly one occurrence of a string in a file, byte for byte.
 * The unique-match rule (from Claude Code's Edit tool) keeps the model from replacing more
 * than it meant; overlapping occurrences count, so the target is never ambiguous.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { defineTool, ToolError } from "./define.ts";
import { parseFields, requireAbsolute, requireNonEmpty, requirePresent } from "./_input.ts";
import { pathError } from "./_os_error.ts";
import { confine, openConfined, READ_FLAGS } from "./_workspace.ts";
import { writeAtomic } from "./_atomic.ts";
import { looksBinary } from "./_text.ts";
import type { Tool, ToolContext } from "./types.ts";

/** Input of the edit tool. */
export interface EditInput {
  /** Absolute path of the file. */
  readonly path: string;
  /** Exact text to find; must occur exactly once. */
  readonly "old_string": string;
  /** Replacement text; `""` deletes old_string. */
  readonly "new_string": string;
}

const NAME = "edit";

/** Creates the edit tool. */
export function createEditTool(): Tool<EditInput> {
  return defineTool({
    name: NAME,
    description: "Replace one exact occurrence of old_string with new_string in an existing " +
      "text file. old_string must occur exactly once (overlapping occurrences count); if it " +
      "occurs more often, include more surrounding lines to make it unique. Whitespace and " +
      "line endings must match byte for byte. new_string is required; an empty string " +
      "deletes old_string. Never creates files: use write for that.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Absolute path of the file to edit." },
        old_string: {
          type: "string",
          description: "Exact text to replace; must occur exactly once in the file.",
        },
        new_string: { type: "string", description: "Text to put in its place." },
      },
      required: ["path", "old_string", "new_string"],
    },
    readOnly: false,
    facts: {
      path: "write",
      content: { replace: { old: "old_string", new: "new_string" } },
      example: '{"path": "/abs/file", "old_string": "a", "new_string": "b"}',
    },
    parseInput(raw: unknown): EditInput {
      const fields = parseFields(NAME, raw, {
        path: "string",
        old_string: "string",
        new_string: "string",
      });
      const path = requireAbsolute(NAME, requireNonEmpty(NAME, fields, "path"));
      const oldString = requireNonEmpty(NAME, fields, "old_string");
      const newString = requirePresent(NAME, fields, "new_string");
      if (oldString === newString) {
        throw new ToolError(NAME, `${NAME}: old_string and new_string are identical`);
      }
      return { path, old_string: oldString, new_string: newString };
    },
    execute: editFile,
  });
}

/** Every start offset of `needle` in `haystack`, overlapping ones included. */
function occurrences(haystack: Buffer, needle: Buffer): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    found.push(at);
  }
  return found;
}

function tooLarge(path: string, size: number, max: number): ToolError {
  return new ToolError(
    NAME,
    `${NAME}: ${path} is too large to edit (${size} bytes; the limit is ${max})`,
  );
}

async function readBytes(path: string, real: string, context: ToolContext): Promise<Buffer> {
  const handle = await openConfined(NAME, path, real, context.workspace, READ_FLAGS).catch(
    (error) => {
      if (error instanceof ToolError) throw error;
      throw new ToolError(NAME, `${NAME}: read: ${pathError("open", path, error)}`, {
        cause: error,
      });
    },
  );
  try {
    const info = await handle.stat();
    if (info.isDirectory()) {
      throw new ToolError(NAME, `${NAME}: read: read ${path}: is a directory`);
    }
    if (!info.isFile()) {
      throw new ToolError(NAME, `${NAME}: read: read ${path}: not a regular file`);
    }
    const max = context.limits.editMaxBytes;
    if (info.size > max) throw tooLarge(path, info.size, max);
    // Read at most one byte past the limit: a file that grew since the stat is caught
    // without ever holding more than the limit in memory.
    let buffer = Buffer.alloc(Math.min(info.size, max) + 1);
    let filled = 0;
    for (;;) {
      context.signal.throwIfAborted();
      if (filled === buffer.length) {
        // Grown since the stat: keep reading, but never past the limit.
        if (filled > max) throw tooLarge(path, filled, max);
        const grown = Buffer.alloc(Math.min(max + 1, buffer.length * 2));
        buffer.copy(grown);
        buffer = grown;
      }
      let n: number;
      try {
        ({ bytesRead: n } = await handle.read(buffer, filled, buffer.length - filled, null));
      } catch (error) {
        throw new ToolError(NAME, `${NAME}: read: ${pathError("read", path, error)}`, {
          cause: error,
        });
      }
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

async function editFile(input: EditInput, context: ToolContext): Promise<string> {
  const { path } = input;
  context.signal.throwIfAborted();
  // Resolving is part of reading: its failures read `edit: read: open <path>: ...` too.
  const real = await confine(NAME, path, context.workspace, "read: open");
  const bytes = await readBytes(path, real, context);
  if (looksBinary(bytes)) {
    throw new ToolError(NAME, `${NAME}: ${path} does not look like UTF-8 text`);
  }
  const needle = Buffer.from(input.old_string, "utf8");
  const found = occurrences(bytes, needle);
  if (found.length === 0) {
    const crlf = Buffer.from(input.old_string.replace(/(?<!\r)\n/g, "\r\n"), "utf8");
    const hint = !crlf.equals(needle) && bytes.includes(crlf)
      ? " (the file uses CRLF line endings)"
      : "";
    throw new ToolError(NAME, `${NAME}: old_string not found in ${path}${hint}`);
  }
  if (found.length > 1) {
    throw new ToolError(
      NAME,
      `${NAME}: old_string is not unique in ${path} (found ${found.length} occurrences); ` +
        "provide more surrounding context",
    );
  }
  const at = found[0]!;
  const replacement = Buffer.from(input.new_string, "utf8");
  const result = Buffer.concat([
    bytes.subarray(0, at),
    replacement,
    bytes.subarray(at + needle.length),
  ]);
  await writeAtomic(NAME, path, real, result, context.workspace, context.signal);
  return `edited ${path} (1 replacement)`;
}
