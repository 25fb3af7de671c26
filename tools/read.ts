/**
 * read: a UTF-8 text file's contents, verbatim up to the read cap.
 *
 * @module
 */

import { defineTool, ToolError } from "./define.ts";
import { parseFields, requireAbsolute, requireNonEmpty } from "./_input.ts";
import { pathError } from "./_os_error.ts";
import { closeSync, fstatSync, readSync } from "node:fs";
import { confineSync, openConfinedFdSync, READ_FLAGS } from "./_workspace.ts";
import { decodeUtf8, looksBinary, utf8Boundary } from "./_text.ts";
import { BINARY_SNIFF_BYTES, DEFAULT_READ_MAX_BYTES } from "./limits.ts";
import type { Tool, ToolContext } from "./types.ts";

/** Input of the read tool. */
export interface ReadInput {
  /** Absolute path of the file. */
  readonly path: string;
}

const NAME = "read";

/** Creates the read tool. */
export function createReadTool(): Tool<ReadInput> {
  return defineTool({
    name: NAME,
    description: "Read a UTF-8 text file and return its contents exactly. The path must be " +
      "absolute and inside the workspace. Binary files (a NUL byte in the first 512 bytes) " +
      `are refused. Files over ${DEFAULT_READ_MAX_BYTES} bytes (by default) come back cut at ` +
      "a line break with a note saying how much was shown; use grep, or bash with sed -n, " +
      "for the rest.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Absolute path of the file to read." },
      },
      required: ["path"],
    },
    readOnly: true,
    parseInput(raw: unknown): ReadInput {
      const fields = parseFields(NAME, raw, { path: "string" });
      return { path: requireAbsolute(NAME, requireNonEmpty(NAME, fields, "path")) };
    },
    execute: readFile,
  });
}

// Synchronous from start to end: a read of a source file takes microseconds, a tenth of what
// the same steps cost as promises. A FIFO cannot block it (READ_FLAGS is non-blocking) and
// the read stops one byte past the cap.
function readFile({ path }: ReadInput, context: ToolContext): Promise<string> {
  try {
    return Promise.resolve(readFileSync(path, context));
  } catch (error) {
    return Promise.reject(error);
  }
}

function readFileSync(path: string, { workspace, limits, signal }: ToolContext): string {
  signal.throwIfAborted();
  const real = confineSync(NAME, path, workspace);
  let fd: number;
  try {
    fd = openConfinedFdSync(NAME, path, real, workspace, READ_FLAGS);
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(NAME, `${NAME}: ${pathError("open", path, error)}`, { cause: error });
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) throw new ToolError(NAME, `${NAME}: read ${path}: is a directory`);
    if (!info.isFile()) throw new ToolError(NAME, `${NAME}: read ${path}: not a regular file`);
    const cap = limits.readMaxBytes;
    // Read one byte past the cap: that byte decides whether the file is larger. Read at
    // least the sniffed prefix, so a cap below 512 bytes cannot hide a NUL from the sniff.
    const want = Math.max(cap + 1, BINARY_SNIFF_BYTES);
    // Sized by the stat (one byte more tells a file that grew since), grown up to `want`.
    let buffer = new Uint8Array(Math.min(want, info.size + 1));
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        if (buffer.length === want) break;
        const grown = new Uint8Array(want);
        grown.set(buffer);
        buffer = grown;
      }
      let n: number;
      try {
        n = readSync(fd, buffer, filled, buffer.length - filled, null);
      } catch (error) {
        throw new ToolError(NAME, `${NAME}: ${pathError("read", path, error)}`, { cause: error });
      }
      if (n === 0) break;
      filled += n;
    }
    const bytes = buffer.subarray(0, filled);
    if (looksBinary(bytes)) {
      throw new ToolError(NAME, `${NAME}: ${path} does not look like UTF-8 text`);
    }
    if (filled <= cap) return decodeUtf8(bytes);
    const total = Math.max(info.size, filled);
    const lastBreak = bytes.subarray(0, cap).lastIndexOf(0x0a);
    const shown = lastBreak >= 0 ? lastBreak + 1 : utf8Boundary(bytes, cap);
    return decodeUtf8(bytes.subarray(0, shown)) +
      (shown > 0 && bytes[shown - 1] !== 0x0a ? "\n" : "") +
      `[truncated: showed ${shown} of ${total} bytes; use grep, or bash with sed -n, for the rest]`;
  } finally {
    closeSync(fd);
  }
}
