/**
 * read: a UTF-8 text file's contents, verbatim up to the read cap.
 *
 * @module
 */

import { defineTool, ToolError } from "./define.ts";
import { optionalCount, parseFields, requireAbsolute, requireNonEmpty } from "./_input.ts";
import { pathError } from "./_os_error.ts";
import { readSync, type Stats } from "node:fs";
import { closeOpened, confineSync, openConfinedStatSync, READ_FLAGS } from "./_workspace.ts";
import { decodeUtf8, looksBinary, utf8Boundary } from "./_text.ts";
import { BINARY_SNIFF_BYTES, DEFAULT_READ_MAX_BYTES } from "./limits.ts";
import type { Tool, ToolContext } from "./types.ts";

/** Input of the read tool. */
export interface ReadInput {
  /** Absolute path of the file. */
  readonly path: string;
  /** First line to return, 1-based. */
  readonly offset?: number;
  /** Number of lines to return. */
  readonly limit?: number;
}

const NAME = "read";
/** Bytes read per step; between steps of a large file the event loop runs (cancellation). */
const CHUNK = 1 << 20;
/** Steps between two yields to the event loop. */
const STEPS_PER_YIELD = 8;
const NEWLINE = 0x0a;

/** Creates the read tool. */
export function createReadTool(): Tool<ReadInput> {
  return defineTool({
    name: NAME,
    description: "Read a UTF-8 text file and return its contents exactly. The path must be " +
      "absolute and inside the workspace. Binary files (a NUL byte in the first 512 bytes) " +
      `are refused. Files over ${DEFAULT_READ_MAX_BYTES} bytes (by default) come back cut at ` +
      "a line break with a note naming the lines shown and the offset to continue from. " +
      "offset (first line, 1-based) and limit (number of lines) read part of a file.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Absolute path of the file to read." },
        offset: {
          type: "integer",
          minimum: 1,
          description: "Line number to start at (1-based). Optional; default 1.",
        },
        limit: {
          type: "integer",
          minimum: 1,
          description: "Number of lines to return. Optional; default all (up to the byte cap).",
        },
      },
      required: ["path"],
    },
    readOnly: true,
    facts: { path: "read" },
    parseInput(raw: unknown): ReadInput {
      const fields = parseFields(NAME, raw, { path: "string", offset: "number", limit: "number" });
      const path = requireAbsolute(NAME, requireNonEmpty(NAME, fields, "path"));
      const offset = optionalCount(NAME, fields, "offset");
      const limit = optionalCount(NAME, fields, "limit");
      return {
        path,
        ...(offset === undefined ? {} : { offset }),
        ...(limit === undefined ? {} : { limit }),
      };
    },
    execute: readFile,
  });
}

/** Opens `path` confined; the caller closes the descriptor. Also gives the file's size. */
function openFile(
  path: string,
  { workspace, signal, proofs }: ToolContext,
): { fd: number; size: number } {
  signal.throwIfAborted();
  const real = confineSync(NAME, path, workspace);
  let fd: number;
  let info: Stats;
  try {
    ({ fd, info } = openConfinedStatSync(NAME, path, real, workspace, READ_FLAGS, proofs));
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(NAME, `${NAME}: ${pathError("open", path, error)}`, { cause: error });
  }
  try {
    if (info.isDirectory()) throw new ToolError(NAME, `${NAME}: read ${path}: is a directory`);
    if (!info.isFile()) throw new ToolError(NAME, `${NAME}: read ${path}: not a regular file`);
    return { fd, size: info.size };
  } catch (error) {
    closeOpened(fd, proofs);
    throw error;
  }
}

/** Fills `buffer` from `fd` until it is full or the file ends; returns the bytes read. */
function fill(fd: number, buffer: Uint8Array, path: string): number {
  let filled = 0;
  while (filled < buffer.length) {
    let n: number;
    try {
      n = readSync(fd, buffer, filled, buffer.length - filled, null);
    } catch (error) {
      throw new ToolError(NAME, `${NAME}: ${pathError("read", path, error)}`, { cause: error });
    }
    if (n === 0) break;
    filled += n;
  }
  return filled;
}

/**
 * Streams the file once, in steps of at most `CHUNK` bytes: keeps at most cap + 1 bytes of
 * the requested lines, and counts lines to the end only when the note or the error needs
 * the total. Small files take one synchronous step; a large one yields between steps, so a
 * cancellation is seen and memory stays bounded whatever the file's size.
 */
async function readFile(input: ReadInput, context: ToolContext): Promise<string> {
  const { path } = input;
  const { limits, signal } = context;
  const { fd, size } = openFile(path, context);
  try {
    const cap = limits.readMaxBytes;
    const first = input.offset ?? 1;
    const last = input.limit === undefined ? Infinity : first + input.limit - 1;
    const buffer = new Uint8Array(Math.max(BINARY_SNIFF_BYTES, Math.min(CHUNK, size + 1)));
    const kept: Uint8Array[] = [];
    let keptBytes = 0;
    let overflow = false; // more than the cap of the requested lines exists
    let line = 1; // the line the next byte belongs to
    let total = 0;
    let lastByte = -1;
    for (let step = 0;; step++) {
      if (step > 0 && step % STEPS_PER_YIELD === 0) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        signal.throwIfAborted();
      }
      const n = fill(fd, buffer, path);
      if (step === 0 && looksBinary(buffer.subarray(0, n))) {
        throw new ToolError(NAME, `${NAME}: ${path} does not look like UTF-8 text`);
      }
      if (n === 0) break;
      total += n;
      const view = buffer.subarray(0, n);
      lastByte = view[n - 1]!;
      let pos = 0;
      // Lines before the first one asked for are only counted.
      while (line < first && pos < n) {
        const nl = view.indexOf(NEWLINE, pos);
        if (nl === -1) pos = n;
        else {
          line++;
          pos = nl + 1;
        }
      }
      // The asked-for lines in this step: kept, up to one byte past the cap.
      if (pos < n && line <= last && !overflow) {
        let end = n;
        if (last === Infinity) {
          line += countNewlines(view, pos, n);
        } else {
          let scan = pos;
          while (line <= last) {
            const nl = view.indexOf(NEWLINE, scan);
            if (nl === -1) break; // the line goes on in the next step
            line++;
            scan = nl + 1;
          }
          if (line > last) end = scan;
        }
        const room = cap + 1 - keptBytes;
        const piece = view.slice(pos, Math.min(end, pos + room));
        kept.push(piece);
        keptBytes += piece.length;
        if (keptBytes > cap) overflow = true;
        pos = end;
      }
      // The rest is only counted (for the note's total).
      if (pos < n) line += countNewlines(view, pos, n);
      // Every requested line is in and fits: the rest of the file changes nothing.
      if (!overflow && line > last) return decodeUtf8(join(kept, keptBytes));
      if (n < buffer.length) break;
    }
    const lines = total === 0 ? 0 : lastByte === NEWLINE ? line - 1 : line;
    if (first > lines && (first > 1 || input.offset !== undefined)) {
      throw new ToolError(
        NAME,
        `${NAME}: offset ${first} is past the end of ${path} (${lines} lines)`,
      );
    }
    const bytes = join(kept, keptBytes);
    if (!overflow) return decodeUtf8(bytes);
    const lastBreak = bytes.subarray(0, cap).lastIndexOf(NEWLINE);
    const shown = lastBreak >= 0 ? lastBreak + 1 : utf8Boundary(bytes, cap);
    const shownLines = countNewlines(bytes, 0, shown);
    const lastShown = first + Math.max(shownLines, 1) - 1;
    return decodeUtf8(bytes.subarray(0, shown)) +
      (shown > 0 && bytes[shown - 1] !== NEWLINE ? "\n" : "") +
      `[truncated: showed ${shown} of ${total} bytes; lines ${first}-${lastShown} of ${lines}; ` +
      `call read with offset ${lastShown + 1} to continue]`;
  } finally {
    closeOpened(fd, context.proofs);
  }
}

/** Line breaks in `bytes[from, to)`. */
function countNewlines(bytes: Uint8Array, from: number, to: number): number {
  let count = 0;
  for (
    let at = bytes.indexOf(NEWLINE, from);
    at !== -1 && at < to;
    at = bytes.indexOf(NEWLINE, at + 1)
  ) {
    count++;
  }
  return count;
}

function join(parts: readonly Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
