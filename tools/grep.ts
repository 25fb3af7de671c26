/**
 * grep: RE2 search of a file or a directory tree, in lexical order, stopping at the cap.
 *
 * Speed comes from searching whole file buffers: one RE2 scan decides whether a file can
 * match at all, and only files that can are split into lines. Files are read several at a
 * time but reported in walk order.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { closeSync, constants, fstatSync, readSync } from "node:fs";
import { basename, join, normalize } from "node:path";
import { RE2JS } from "re2js";
import { defineTool, ToolError } from "./define.ts";
import { parseFields, requireAbsolute, requireNonEmpty } from "./_input.ts";
import { pathError } from "./_os_error.ts";
import { confine, isInside, openConfinedSync, READ_FLAGS } from "./_workspace.ts";
import { compileGlob, GlobSyntaxError } from "./_glob.ts";
import { decodeUtf8 } from "./_text.ts";
import {
  DEFAULT_GREP_MAX_FILE_BYTES,
  DEFAULT_GREP_MAX_MATCHES,
  GREP_MAX_LINE_CHARS,
} from "./limits.ts";
import type { Tool, ToolContext, Workspace } from "./types.ts";

/** Input of the grep tool. */
export interface GrepInput {
  /** RE2 pattern. */
  readonly pattern: string;
  /** Absolute file or directory to search. */
  readonly path: string;
  /** Optional glob on base names. */
  readonly include?: string;
  /** Match case-insensitively. */
  readonly "ignore_case"?: boolean;
}

const NAME = "grep";
/** Directory names skipped below the root. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([
  ".git",
  "node_modules",
  "vendor",
  ".venv",
  "__pycache__",
  "dist",
  "build",
]);
/** The first read of each file; larger files are measured and read in full. */
const FIRST_READ_BYTES = 64 * 1024;
/** Longest stretch of synchronous reading before the event loop gets a turn. */
const YIELD_EVERY_MS = 10;
// Patterns whose meaning differs between a whole buffer and a single line: \A and \z anchor
// the text, and a flag group can switch multi-line mode off. They are matched line by line.
const NEEDS_LINES = /\\[Az]|\(\?[a-zA-Z]*-/;

/** Creates the grep tool. */
export function createGrepTool(): Tool<GrepInput> {
  return defineTool({
    name: NAME,
    description: "Search file contents with an RE2 regular expression (Go syntax: no " +
      "backreferences or lookaround). path is an absolute file or directory; directories are " +
      `searched recursively in name order, skipping ${[...SKIPPED_DIRS].join(", ")}, ` +
      `binary files and files over ${DEFAULT_GREP_MAX_FILE_BYTES} bytes. Returns ` +
      `"<path>:<line>: <text>" rows, at most ${DEFAULT_GREP_MAX_MATCHES} by default, or ` +
      '"no matches".',
    inputSchema: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "RE2 regular expression to search for." },
        path: { type: "string", description: "Absolute file or directory to search." },
        include: {
          type: "string",
          description: "Glob on file base names, e.g. '*.ts' or '*.{js,ts}'.",
        },
        ignore_case: {
          type: "boolean",
          description: "Match case-insensitively. Defaults to false.",
        },
      },
      required: ["pattern", "path"],
    },
    readOnly: true,
    parseInput(raw: unknown): GrepInput {
      const fields = parseFields(NAME, raw, {
        pattern: "string",
        path: "string",
        include: "string",
        ignore_case: "boolean",
      });
      const pattern = requireNonEmpty(NAME, fields, "pattern");
      const path = requireAbsolute(NAME, requireNonEmpty(NAME, fields, "path"));
      const input: { -readonly [K in keyof GrepInput]: GrepInput[K] } = { pattern, path };
      if (typeof fields.include === "string" && fields.include !== "") {
        input.include = fields.include;
      }
      if (fields.ignore_case === true) input.ignore_case = true;
      return input;
    },
    execute: grep,
  });
}

function compilePattern(input: GrepInput): RE2JS {
  const flags = RE2JS.MULTILINE | (input.ignore_case ? RE2JS.CASE_INSENSITIVE : 0);
  try {
    return RE2JS.compile(input.pattern, flags);
  } catch (error) {
    // re2js quotes the pattern with the flags it prepends (`(?m)(`); compiling it bare
    // gives the same error about the pattern as the model wrote it.
    let detail = error instanceof Error ? error.message : String(error);
    try {
      RE2JS.compile(input.pattern);
    } catch (bare) {
      if (bare instanceof Error) detail = bare.message;
    }
    throw new ToolError(NAME, `${NAME}: compile pattern: ${detail}`, { cause: error });
  }
}

function compileInclude(include: string | undefined): ((name: string) => boolean) | undefined {
  if (include === undefined) return undefined;
  try {
    return compileGlob(include);
  } catch (error) {
    if (!(error instanceof GlobSyntaxError)) throw error;
    throw new ToolError(
      NAME,
      `${NAME}: bad include glob ${JSON.stringify(include)}: syntax error in pattern`,
    );
  }
}

interface Candidate {
  /** Path to open (may be a symlink). */
  readonly open: string;
  /** Path as reported. */
  readonly display: string;
  /** True when `open` is a symlink, to be resolved and confined before it is opened. */
  readonly link: boolean;
}

// READ_FLAGS is non-blocking, so a FIFO reached through a symlink cannot hang the walk.
// No-follow, so that a file swapped for a symlink after the walk saw it is refused rather
// than opened (links are resolved before the open).
const OPEN_FLAGS = READ_FLAGS | constants.O_NOFOLLOW;

const ENCODER = new TextEncoder();

function byName(a: Deno.DirEntry & { key: Uint8Array }, b: { key: Uint8Array }): number {
  return Buffer.compare(a.key, b.key);
}

/** Files below `dir` in lexical byte order, depth first, skipping the usual build dirs. */
function* walk(
  dir: string,
  display: string,
  accept: ((name: string) => boolean) | undefined,
): Generator<Candidate> {
  // Synchronous, like the reads: an async generator costs a promise per file per level.
  const entries: Array<Deno.DirEntry & { key: Uint8Array }> = [];
  try {
    for (const entry of Deno.readDirSync(dir)) {
      entries.push(Object.assign(entry, { key: ENCODER.encode(entry.name) }));
    }
  } catch {
    return; // unreadable directories are skipped silently
  }
  entries.sort(byName);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    const shown = join(display, entry.name);
    if (entry.isDirectory) {
      if (!SKIPPED_DIRS.has(entry.name)) yield* walk(path, shown, accept);
    } else if ((entry.isFile || entry.isSymlink) && (accept === undefined || accept(entry.name))) {
      // Symlinks are resolved at open time: directories are not descended, targets outside
      // the workspace are dropped.
      yield { open: path, display: shown, link: entry.isSymlink };
    }
  }
}

/** The file's bytes, or undefined when it must be skipped (too big, binary, unreadable, outside). */
/**
 * Reads one candidate synchronously (see `openConfinedSync`); undefined when it must be
 * skipped: too big, binary, unreadable, not a regular file, or outside the workspace.
 * `scratch` is reused for the first read of every file.
 */
function loadSync(
  candidate: Candidate,
  workspace: Workspace,
  maxBytes: number,
  scratch: Buffer,
): string | undefined {
  let fd: number | undefined;
  try {
    // A link is resolved first: a target outside the workspace is never opened.
    const real = candidate.link ? Deno.realPathSync(candidate.open) : candidate.open;
    if (candidate.link && !isInside(workspace, real)) return undefined;
    fd = openConfinedSync(real, workspace, OPEN_FLAGS);
    if (fd === undefined) return undefined;
    // Most source files fit one small read; only a full first read asks for the size.
    let buffer = scratch;
    let filled = readSync(fd, buffer, 0, buffer.length, null);
    if (filled === buffer.length) {
      const info = fstatSync(fd);
      if (!info.isFile() || info.size > maxBytes) return undefined;
      const grown = Buffer.allocUnsafe(Math.max(info.size, filled) + 1);
      buffer.copy(grown, 0, 0, filled);
      buffer = grown;
      for (;;) {
        const n = readSync(fd, buffer, filled, buffer.length - filled, null);
        if (n === 0) break;
        filled += n;
        if (filled === buffer.length) break;
      }
    }
    if (filled > maxBytes) return undefined;
    // Decoding first is cheaper than searching bytes: V8 scans strings far faster.
    const text = decodeUtf8(buffer.subarray(0, filled));
    return text.includes("\0") ? undefined : text;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function* single(
  candidate: Candidate,
  accept: ((name: string) => boolean) | undefined,
): Generator<Candidate> {
  // The name as given: a root that is a link is filtered by the link's name, as in a walk.
  if (accept === undefined || accept(basename(candidate.display))) yield candidate;
}

function cutRow(text: string): string {
  if (text.length <= GREP_MAX_LINE_CHARS) return text;
  const chars = Array.from(text);
  return chars.length <= GREP_MAX_LINE_CHARS
    ? text
    : chars.slice(0, GREP_MAX_LINE_CHARS).join("") + "…";
}

/**
 * Calls `emit(lineNumber, lineText)` for each matching line until it returns false.
 * `whole` allows the whole-buffer fast path (see NEEDS_LINES).
 */
/**
 * For a pattern that is a plain alternation of word literals (`foo|bar_baz`), the literals:
 * a file containing none of them cannot match, and V8 finds a literal far faster than the
 * RE2 engine scans for an alternation. Undefined for anything else.
 */
export function literalAlternatives(pattern: string, ignoreCase: boolean): string[] | undefined {
  if (ignoreCase || !/^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$/.test(pattern)) return undefined;
  return pattern.split("|");
}

function searchText(
  re: RE2JS,
  decoded: string,
  whole: boolean,
  emit: (line: number, text: string) => boolean,
  literals?: readonly string[],
): void {
  if (literals !== undefined && !literals.some((literal) => decoded.includes(literal))) return;
  let text = decoded;
  // A trailing \r is not part of a line: drop it from every line up front, so the whole
  // text can be searched at once (`$` does not match before a \r).
  if (text.includes("\r")) {
    text = text.replaceAll("\r\n", "\n");
    if (text.endsWith("\r")) text = text.slice(0, -1);
  }
  if (text.length === 0) return;
  const end = text.endsWith("\n") ? text.length - 1 : text.length;
  if (!whole) {
    let line = 0;
    for (let start = 0; start <= end;) {
      let stop = text.indexOf("\n", start);
      if (stop === -1 || stop > end) stop = end;
      line++;
      const body = text.slice(start, stop);
      if (re.test(body) && !emit(line, cutRow(body))) return;
      start = stop + 1;
    }
    return;
  }
  if (literals === undefined && !re.test(text)) return;
  // Where the next match may start: the RE2 matcher, or for literal alternations the nearest
  // literal, which V8 finds much faster. Each candidate's line is then tested exactly.
  const matcher = literals === undefined ? re.matcher(text) : undefined;
  const nextStart = (from: number): number => {
    if (matcher !== undefined) return matcher.find(from) ? matcher.start() : -1;
    let best = -1;
    for (const literal of literals!) {
      const at = text.indexOf(literal, from);
      if (at !== -1 && (best === -1 || at < best)) best = at;
    }
    return best;
  };
  let line = 1;
  let counted = 0; // text before this offset has been counted into `line`
  for (let from = 0; from <= end;) {
    const at = nextStart(from);
    if (at === -1) return;
    const start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
    if (start > end) return; // an empty match after the final newline
    let stop = text.indexOf("\n", at);
    if (stop === -1) stop = text.length;
    for (
      let i = text.indexOf("\n", counted);
      i !== -1 && i < start;
      i = text.indexOf("\n", i + 1)
    ) {
      line++;
    }
    counted = start;
    const body = text.slice(start, stop);
    if (re.test(body) && !emit(line, cutRow(body))) return;
    from = stop + 1;
  }
}

async function grep(input: GrepInput, context: ToolContext): Promise<string> {
  const { workspace, limits, signal } = context;
  const re = compilePattern(input);
  const accept = compileInclude(input.include);
  const whole = !NEEDS_LINES.test(input.pattern);
  const literals = literalAlternatives(input.pattern, input.ignore_case === true);
  signal.throwIfAborted();
  const root = normalize(input.path).replace(/(.)\/+$/, "$1");
  const real = await confine(NAME, input.path, workspace, "stat");
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(real);
  } catch (error) {
    throw new ToolError(NAME, `${NAME}: ${pathError("stat", input.path, error)}`, {
      cause: error,
    });
  }
  const candidates = info.isDirectory
    ? walk(real, root, accept)
    : single({ open: real, display: root, link: false }, accept);

  const max = limits.grepMaxMatches;
  let out = "";
  let rows = 0;
  let truncated = false;
  const scratch = Buffer.allocUnsafe(FIRST_READ_BYTES);
  let yielded = performance.now();
  try {
    for (const candidate of candidates) {
      // Files are read synchronously; give the event loop (cancellation, other calls) a
      // turn every few milliseconds.
      if (performance.now() - yielded > YIELD_EVERY_MS) {
        await new Promise((resolve) => setTimeout(resolve, 0));
        yielded = performance.now();
      }
      signal.throwIfAborted();
      const text = loadSync(candidate, workspace, limits.grepMaxFileBytes, scratch);
      if (text === undefined) continue;
      searchText(re, text, whole, (line, row) => {
        if (rows === max) {
          truncated = true;
          return false;
        }
        rows++;
        out += `${candidate.display}:${line}: ${row}\n`;
        return true;
      }, literals);
      if (truncated) break;
    }
  } finally {
    candidates.return(undefined);
  }
  if (rows === 0) return "no matches";
  return truncated ? `${out}(truncated at ${max} matches)\n` : out;
}
