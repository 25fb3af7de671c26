/**
 * grep: RE2 search of a file or a directory tree, in lexical order, stopping at the cap.
 *
 * Speed comes from not running RE2 (re2js, a pure-JavaScript engine) over whole files. The
 * pattern's compiled program gives needles, byte runs that every match contains (see
 * `_grep_needles.ts`); each file's bytes are searched for them as a Latin-1 string, which V8
 * does at memchr speed, and only the lines that hold one are decoded and tested with RE2.
 * Patterns without needles (`^$`, `\d+`) fall back to one RE2 scan of the decoded file.
 * Files are walked and read synchronously, in batches between event-loop turns, and reported
 * in walk order. On a large tree a second thread, the prefilter worker (`_grep_pool.ts`), reads
 * files ahead and rules out those without a needle; the search itself stays here, in walk
 * order (`_grep_chunks.ts`), so the rows are the same with it or without.
 *
 * re2js and `ignore` are loaded by the first grep, not when the tool worker starts.
 *
 * Confinement is unchanged in what it allows, but a regular file found by the walk is proved
 * inside the workspace (`openConfinedSync`, the costliest step per file) only once it holds
 * a needle, and before any of its bytes are used; see `searchWalked`.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { basename, normalize } from "node:path";
import { setImmediate } from "node:timers";
import type { RE2JS } from "re2js";
import type { Re2Module } from "./_re2_to_js.ts";
import {
  countNewlines,
  type Emit,
  type LineMatcher,
  matcherFor,
  NEEDS_LINES,
  searchLines,
  V8_FLAGS,
} from "./_grep_matcher.ts";
import { defineTool, ToolError } from "./define.ts";
import { parseFields, requireAbsolute, requireNonEmpty } from "./_input.ts";
import { pathError } from "./_os_error.ts";
import {
  confine,
  isInside,
  isProtected,
  openConfinedSync,
  protectedError,
  READ_FLAGS,
} from "./_workspace.ts";
import { compileGlob, GlobSyntaxError } from "./_glob.ts";
import { NeedleFinder, needlesOf } from "./_grep_needles.ts";
import { ChunkedWalk } from "./_grep_chunks.ts";
import {
  type PrefilterPool,
  releasePool,
  START_AFTER_FILES,
  takePool,
  wantPool,
} from "./_grep_pool.ts";
import {
  type IgnoreLevels,
  isIgnored,
  isIgnoredRoot,
  levelsAbove,
  levelsAt,
  loadIgnore,
} from "./_grep_ignore.ts";
import { isProtectedPath, protectedNamesIn, protectedPathsOf } from "./_grep_protected.ts";
import { decodeUtf8 } from "./_text.ts";
import {
  DEFAULT_GREP_MAX_FILE_BYTES,
  DEFAULT_GREP_MAX_MATCHES,
  GREP_MAX_LINE_CHARS,
  GREP_MAX_PROGRAM_SIZE,
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

/**
 * The V8 flags under which grep runs patterns on V8 rather than re2js (one `--v8-flags=`
 * value): the launchers (deno.json tasks, bin/rousseau.cjs, `deno task compile`) pass them.
 */
export const GREP_V8_FLAGS: string = V8_FLAGS;

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
const FIRST_READ_BYTES = 256 * 1024;
/** Longest stretch of synchronous reading before the event loop gets a turn. */
const YIELD_EVERY_MS = 10;

/** Creates the grep tool. */
export function createGrepTool(): Tool<GrepInput> {
  return defineTool({
    name: NAME,
    description: "Search file contents with an RE2 regular expression (Go syntax: no " +
      "backreferences or lookaround). path is an absolute file or directory; directories are " +
      `searched recursively in name order, skipping ${[...SKIPPED_DIRS].join(", ")}, ` +
      "what .gitignore files and .git/info/exclude ignore (a path given directly is " +
      `searched anyway), binary files and files over ${DEFAULT_GREP_MAX_FILE_BYTES} bytes. ` +
      "Returns " +
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
    facts: {
      path: "walk",
      summary: ["pattern", "path"],
      example: '{"pattern": "TODO", "path": "/abs/dir"}',
    },
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

let loadingRe2: Promise<Re2Module> | undefined;

/**
 * re2js, loaded on the first grep rather than when the tool worker starts (a worker serving
 * only `read` never needs it). Hazard: the specifier must stay a string literal; see
 * `loadIgnore` in `_grep_ignore.ts`.
 */
function loadRe2(): Promise<Re2Module> {
  loadingRe2 ??= import("re2js").then(
    (module) => ({ RE2JS: module.RE2JS, RE2Set: module.RE2Set }),
    (error) => {
      loadingRe2 = undefined;
      throw error;
    },
  );
  return loadingRe2;
}

function compilePattern(engine: typeof RE2JS, input: GrepInput): RE2JS {
  const flags = engine.MULTILINE | (input.ignore_case ? engine.CASE_INSENSITIVE : 0);
  let re: RE2JS;
  try {
    re = engine.compile(input.pattern, flags);
  } catch (error) {
    // re2js quotes the pattern with the flags it prepends (`(?m)(`); compiling it bare
    // gives the same error about the pattern as the model wrote it.
    let detail = error instanceof Error ? error.message : String(error);
    try {
      engine.compile(input.pattern);
    } catch (bare) {
      if (bare instanceof Error) detail = bare.message;
    }
    throw new ToolError(NAME, `${NAME}: compile pattern: ${detail}`, { cause: error });
  }
  const size = re.programSize();
  if (size > GREP_MAX_PROGRAM_SIZE) {
    throw new ToolError(
      NAME,
      `${NAME}: compile pattern: the pattern is too large (${size} instructions; the limit is ` +
        `${GREP_MAX_PROGRAM_SIZE}): use fewer alternatives or smaller repeat counts, or search ` +
        "in several calls",
    );
  }
  return re;
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
  /**
   * True for a regular file the walk found in a confined directory: it may be read before
   * its confinement is proved, which is then proved before anything from it is used.
   */
  readonly walked: boolean;
}

// READ_FLAGS is non-blocking, so a FIFO reached through a symlink cannot hang the walk.
// No-follow, so that a file swapped for a symlink after the walk saw it is refused rather
// than opened (links are resolved before the open).
const OPEN_FLAGS = READ_FLAGS | constants.O_NOFOLLOW;

const ENCODER = new TextEncoder();
/** Names whose UTF-16 order may differ from their UTF-8 byte order. */
const WIDE = /[\uD800-\uFFFF]/;

/** `entries` in lexical byte order of their names. */
function sortByName(entries: Deno.DirEntry[]): Deno.DirEntry[] {
  // Below U+D800, UTF-16 code units compare like UTF-8 bytes, and names rarely go higher.
  if (!entries.some((entry) => WIDE.test(entry.name))) {
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  const keys = new Map(entries.map((entry) => [entry, ENCODER.encode(entry.name)]));
  return entries.sort((a, b) => Buffer.compare(keys.get(a)!, keys.get(b)!));
}

/** The entries of `dir` in name order; none when it cannot be read (skipped silently). */
function listSync(dir: string): Deno.DirEntry[] {
  try {
    return sortByName(Array.from(Deno.readDirSync(dir)));
  } catch {
    return [];
  }
}

interface Frame {
  /** Real directory path, with a trailing slash. */
  readonly dir: string;
  /** Directory as reported, with a trailing slash. */
  readonly shown: string;
  readonly entries: readonly Deno.DirEntry[];
  /** The ignore files that apply to the entries (see `_grep_ignore.ts`). */
  readonly levels: IgnoreLevels;
  /** Entries that are rousseau's own files, skipped silently (see `_grep_protected.ts`). */
  readonly guarded: ReadonlySet<string> | undefined;
  next: number;
}

/** `levels` with what the directory `dir`, holding `entries`, adds to them. */
function levelsOf(levels: IgnoreLevels, dir: string, entries: readonly Deno.DirEntry[]) {
  let git = false;
  let gitignore = false;
  for (const entry of entries) {
    if (entry.name === ".git") git = true;
    else if (entry.name === ".gitignore" && entry.isFile) gitignore = true;
  }
  return levelsAt(levels, dir, { git, gitignore });
}

/** `path` with one trailing slash, ready for a name to be appended. */
function slashed(path: string): string {
  return path.endsWith("/") ? path : `${path}/`;
}

/**
 * Files below `dir` in lexical byte order, depth first, skipping the usual build dirs and
 * what the repository ignores; `above` are the ignore files that apply above `dir`.
 */
function* walk(
  dir: string,
  display: string,
  accept: ((name: string) => boolean) | undefined,
  above: IgnoreLevels,
  guard: readonly string[],
): Generator<Candidate> {
  // Synchronous, like the reads, with one explicit stack: an async or nested generator costs
  // a promise or a resumption per file per level. Paths are joined by hand: both sides are
  // clean and a name holds no slash, so `join` would only spend time finding that out.
  const entries = listSync(dir);
  const stack: Frame[] = [{
    dir: slashed(dir),
    shown: slashed(display),
    entries,
    levels: levelsOf(above, dir, entries),
    guarded: protectedNamesIn(guard, slashed(dir)),
    next: 0,
  }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const entry = frame.entries[frame.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    const path = frame.dir + entry.name;
    const levels = frame.levels;
    if (frame.guarded?.has(entry.name)) continue;
    if (entry.isDirectory) {
      if (SKIPPED_DIRS.has(entry.name)) continue;
      if (levels.length > 0 && isIgnored(levels, path, true)) continue;
      const entries = listSync(path);
      stack.push({
        dir: `${path}/`,
        shown: `${frame.shown}${entry.name}/`,
        entries,
        levels: levelsOf(levels, path, entries),
        guarded: protectedNamesIn(guard, `${path}/`),
        next: 0,
      });
    } else if (
      (entry.isFile || entry.isSymlink) && (accept === undefined || accept(entry.name)) &&
      (levels.length === 0 || !isIgnored(levels, path, false))
    ) {
      // Symlinks are resolved at open time: directories are not descended, targets outside
      // the workspace are dropped.
      yield {
        open: path,
        display: frame.shown + entry.name,
        link: entry.isSymlink,
        walked: entry.isFile,
      };
    }
  }
}

/**
 * Where the bytes of a file came from, for a per-file check (`ToolContext.mayReturn`): the
 * resolved path of the file, and the identity of the file that was opened. After the check,
 * the path must still name that file, so a directory or file swapped in between cannot pass
 * one file's content off under another's path.
 */
interface Origin {
  readonly real: string;
  readonly dev: number;
  readonly ino: number;
}

/** The origin of the open file `fd`, opened by `path`. */
function originOf(fd: number, path: string): Origin {
  const info = fstatSync(fd);
  // Resolved after the open: a directory on the way swapped for a symlink shows here.
  return { real: Deno.realPathSync(path), dev: info.dev, ino: info.ino };
}

/** True when `origin.real` still names the file that was read. */
function stillNamesSync(origin: Origin): boolean {
  try {
    const info = Deno.statSync(origin.real);
    return info.dev === origin.dev && info.ino === origin.ino;
  } catch {
    return false;
  }
}

/** Read buffers reused from file to file. */
interface Buffers {
  /** The first read of every file. */
  readonly scratch: Buffer;
  /** Files larger than `scratch`, grown as needed. */
  large: Buffer;
}

/** Largest `large` buffer kept between calls: one default-limit file. */
const KEEP_LARGE_BYTES = DEFAULT_GREP_MAX_FILE_BYTES + 1;
// The buffers of the last finished call, for the next one: a fresh multi-megabyte buffer
// costs a page fault per 4 KiB on its first fill. A call takes them whole (concurrent calls
// get their own), and only between awaits is a buffer not in use.
let spareBuffers: Buffers | undefined;

function takeBuffers(): Buffers {
  const buffers = spareBuffers ?? {
    scratch: Buffer.allocUnsafe(FIRST_READ_BYTES),
    large: Buffer.allocUnsafe(0),
  };
  spareBuffers = undefined;
  return buffers;
}

function returnBuffers(buffers: Buffers): void {
  if (buffers.large.length > KEEP_LARGE_BYTES) buffers.large = Buffer.allocUnsafe(0);
  spareBuffers = buffers;
}

/**
 * Reads one candidate synchronously (see `openConfinedSync`); undefined when it must be
 * skipped: too big, unreadable, not a regular file, or outside the workspace. The bytes are
 * a view of `buffers`, valid until the next read.
 */
function loadSync(
  candidate: Candidate,
  workspace: Workspace,
  maxBytes: number,
  buffers: Buffers,
  guard: readonly string[],
  track?: (origin: Origin) => void,
): Buffer | undefined {
  let fd: number | undefined;
  try {
    // A link is resolved first: a target outside the workspace, or one of rousseau's own
    // files, is never opened.
    const real = candidate.link ? Deno.realPathSync(candidate.open) : candidate.open;
    if (candidate.link && (!isInside(workspace, real) || isProtectedPath(guard, real))) {
      return undefined;
    }
    fd = openConfinedSync(real, workspace, OPEN_FLAGS);
    if (fd === undefined) return undefined;
    if (track !== undefined) track(originOf(fd, real));
    return readOpenedSync(fd, maxBytes, buffers, null);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The whole content of the open file `fd`, or undefined when it is too big, not a regular
 * file or unreadable. `from` is 0 to read by position (pread), which a pipe or a terminal
 * refuses instead of giving up its data, or null to read from the current offset.
 */
function readOpenedSync(
  fd: number,
  maxBytes: number,
  buffers: Buffers,
  from: 0 | null,
): Buffer | undefined {
  try {
    // Most source files fit one small read; only a full first read asks for the size.
    let buffer = buffers.scratch;
    let filled = readSync(fd, buffer, 0, buffer.length, from);
    if (filled === buffer.length) {
      const info = fstatSync(fd);
      if (!info.isFile() || info.size > maxBytes) return undefined;
      // One byte more than the size tells a file that grew since the fstat.
      const want = Math.max(info.size, filled) + 1;
      if (buffers.large.length < want) buffers.large = Buffer.allocUnsafe(want);
      buffer.copy(buffers.large, 0, 0, filled);
      buffer = buffers.large;
      while (filled < want) {
        const n = readSync(fd, buffer, filled, want - filled, from === null ? null : filled);
        if (n === 0) break;
        filled += n;
      }
    }
    if (filled > maxBytes) return undefined;
    return buffer.subarray(0, filled);
  } catch {
    return undefined;
  }
}

/**
 * True when the open file `fd`, opened by `path` without the confinement proof, is the file
 * a confined open of `path` gets now (see `openConfinedSync`): then its bytes are the bytes
 * of a file inside the workspace, whatever happened to the path in between.
 */
function provenInside(fd: number, path: string, workspace: Workspace): boolean {
  const confined = openConfinedSync(path, workspace, OPEN_FLAGS);
  if (confined === undefined) return false;
  try {
    const a = fstatSync(fd);
    const b = fstatSync(confined);
    return a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  } finally {
    closeSync(confined);
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
 * The search of one file's bytes through its needles: only lines holding one are decoded and
 * tested with RE2. A file without a needle is not even checked for NUL bytes: it has no row
 * either way. `prove`, when given, must pass before the first row.
 */
function searchNeedles(
  re: LineMatcher,
  bytes: Buffer,
  finder: NeedleFinder,
  emit: Emit,
  prove?: () => boolean,
): void {
  // One code unit per byte: needles are byte strings, and positions are byte offsets.
  const text = bytes.toString("latin1", 0, bytes.length);
  finder.reset(text);
  let at = finder.find(0);
  if (at === -1 || text.includes("\0")) return;
  if (prove !== undefined && !prove()) return;
  let line = 1;
  let counted = 0; // newlines before this offset have been counted into `line`
  while (at !== -1) {
    const start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
    let stop = text.indexOf("\n", at);
    if (stop === -1) stop = text.length;
    line += countNewlines(text, counted, start);
    counted = start;
    // A trailing \r is not part of the line. Cutting it before decoding gives the same text:
    // newlines and carriage returns never belong to a multi-byte sequence.
    const end = stop > start && text.charCodeAt(stop - 1) === 0x0d ? stop - 1 : stop;
    const body = decodeUtf8(bytes.subarray(start, end));
    if (re.test(body) && !emit(line, cutRow(body))) return;
    if (stop === text.length) return;
    at = finder.find(stop + 1);
  }
}

/**
 * The search of one file without needles: RE2 over the decoded text. `whole` allows one RE2
 * scan of the whole buffer to find candidate lines (see NEEDS_LINES); otherwise every line is
 * tested on its own.
 */
function searchText(re: LineMatcher, bytes: Buffer, whole: boolean, emit: Emit): void {
  let text = decodeUtf8(bytes);
  if (text.includes("\0")) return;
  // A trailing \r is not part of a line: drop it from every line up front, so the whole
  // text can be searched at once (`$` does not match before a \r).
  if (text.includes("\r")) {
    text = text.replaceAll("\r\n", "\n");
    if (text.endsWith("\r")) text = text.slice(0, -1);
  }
  searchLines(re, text, whole, (line, body) => emit(line, cutRow(body)));
}

/** Walked files searched with a late proof, and how many of them needed the proof. */
interface Proofs {
  files: number;
  needed: number;
}

// A late proof costs several times the check it replaces: once more than one walked file in
// PROOF_SHARE holds a needle (past the first PROOFS_FREE), files are proved before they are
// read again.
const PROOFS_FREE = 64;
const PROOF_SHARE = 8;

/**
 * Searches a regular file the walk found, reading it before its confinement is proved and
 * proving it (`provenInside`) only when it holds a needle, before any of it is used: most
 * files hold none, and the proof is the costliest step of a read. The read is by position,
 * so that a pipe or terminal swapped in under a directory gives up no data.
 */
function searchWalked(
  path: string,
  re: LineMatcher,
  finder: NeedleFinder,
  emit: Emit,
  state: {
    readonly workspace: Workspace;
    readonly maxBytes: number;
    readonly buffers: Buffers;
    readonly proofs: Proofs;
    readonly track: ((origin: Origin) => void) | undefined;
  },
): void {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch {
    return; // unreadable files are skipped silently
  }
  try {
    const bytes = readOpenedSync(fd, state.maxBytes, state.buffers, 0);
    if (bytes === undefined) return;
    searchNeedles(re, bytes, finder, emit, () => {
      state.proofs.needed++;
      if (!provenInside(fd, path, state.workspace)) return false;
      try {
        state.track?.(originOf(fd, path));
      } catch {
        return false;
      }
      return true;
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the walked regular file at `path` may give rows: 0 when it holds no needle (or a NUL
 * byte, or cannot be read), 1 otherwise. Read without the confinement proof, like
 * `searchWalked` before its proof: nothing of it is used but this answer, and a file that
 * passes is searched again from its first byte, proved before anything of it is used. The
 * prefilter worker gives the same answer (`_grep_pool.ts`).
 */
function answerWalked(
  path: string,
  finder: NeedleFinder,
  maxBytes: number,
  buffers: Buffers,
): number {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch {
    return 1; // the search skips it, or says why
  }
  try {
    const bytes = readOpenedSync(fd, maxBytes, buffers, 0);
    if (bytes === undefined) return 0; // skipped by the search too
    const text = bytes.toString("latin1", 0, bytes.length);
    finder.reset(text);
    return finder.find(0) !== -1 && !text.includes("\0") ? 1 : 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * The ignore files above the search root `real`. A root named directly is searched even when
 * it is ignored itself: then the patterns above it do not apply below it either (the ones
 * inside it still do).
 */
function namedLevels(real: string, workspace: Workspace): IgnoreLevels {
  const above = levelsAbove(real, workspace);
  return above.length > 0 && isIgnoredRoot(above, real) ? [] : above;
}

/** Gives the event loop a turn (timers, messages, cancellation) without a timer's delay. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function grep(input: GrepInput, context: ToolContext): Promise<string> {
  const { workspace, limits, signal } = context;
  const re2 = await loadRe2();
  const compiled = compilePattern(re2.RE2JS, input);
  const re = matcherFor(re2, compiled, input.pattern, input.ignore_case === true);
  const accept = compileInclude(input.include);
  const whole = !NEEDS_LINES.test(input.pattern);
  const needles = needlesOf(compiled, re2.RE2JS);
  const finder = needles === undefined ? undefined : new NeedleFinder(needles);
  signal.throwIfAborted();
  const root = normalize(input.path).replace(/(.)\/+$/, "$1");
  const real = await confine(NAME, input.path, workspace, "stat");
  // rousseau's own files: a root among them is refused, like every tool refuses them; below
  // the root they are skipped silently.
  const guard = protectedPathsOf(workspace);
  if (isProtected(workspace, real, true)) throw protectedError(NAME, input.path);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(real);
  } catch (error) {
    throw new ToolError(NAME, `${NAME}: ${pathError("stat", input.path, error)}`, {
      cause: error,
    });
  }
  if (info.isDirectory) await loadIgnore();
  const candidates = info.isDirectory
    ? walk(real, root, accept, namedLevels(real, workspace), guard)
    : single({ open: real, display: root, link: false, walked: false }, accept);

  const max = limits.grepMaxMatches;
  let out = "";
  let rows = 0;
  let truncated = false;
  let display = "";
  // Under a per-file check, a file's rows wait in `held` until the check passes; without one
  // they go straight out.
  const check = context.mayReturn;
  let held: string[] = [];
  let origin: Origin | undefined;
  const track = check === undefined ? undefined : (found: Origin) => origin = found;
  const emit = (line: number, row: string): boolean => {
    if (rows + held.length === max) {
      truncated = true;
      return false;
    }
    const text = `${display}:${line}: ${row}\n`;
    if (check === undefined) {
      rows++;
      out += text;
    } else held.push(text);
    return true;
  };
  const buffers = takeBuffers();
  const maxBytes = limits.grepMaxFileBytes;
  const proofs: Proofs = { files: 0, needed: 0 };
  // On a large tree a second thread rules out files without a needle (see _grep_pool.ts): the
  // one there is, or, past START_AFTER_FILES, one asked for now and used once it is ready.
  let pool: PrefilterPool | undefined;
  const poolNow = (taken: number): PrefilterPool | undefined => {
    if (pool !== undefined || finder === undefined || !info.isDirectory) return pool;
    pool = takePool(workspace.roots);
    if (pool !== undefined) pool.setPlan(finder.plan(), maxBytes);
    else if (taken >= START_AFTER_FILES) wantPool(workspace.roots);
    return pool;
  };
  const chunks = new ChunkedWalk(candidates, {
    pool: poolNow,
    pathOf: (candidate) => finder !== undefined && candidate.walked ? candidate.open : undefined,
    answer: (path) => answerWalked(path, finder!, maxBytes, buffers),
  });
  let yielded = performance.now();
  try {
    for (let batch = await chunks.next(); batch !== undefined; batch = await chunks.next()) {
      // Files are read synchronously; give the event loop (cancellation, other calls) a turn
      // every few milliseconds, between chunks (which may hold no file to search) and files.
      if (performance.now() - yielded > YIELD_EVERY_MS) {
        await yieldToEventLoop();
        yielded = performance.now();
      }
      signal.throwIfAborted();
      for (const candidate of batch) {
        if (performance.now() - yielded > YIELD_EVERY_MS) {
          await yieldToEventLoop();
          yielded = performance.now();
        }
        signal.throwIfAborted();
        display = candidate.display;
        origin = undefined;
        if (
          finder !== undefined && candidate.walked &&
          proofs.needed <= PROOFS_FREE + proofs.files / PROOF_SHARE
        ) {
          proofs.files++;
          searchWalked(candidate.open, re, finder, emit, {
            workspace,
            maxBytes,
            buffers,
            proofs,
            track,
          });
        } else {
          const bytes = loadSync(candidate, workspace, maxBytes, buffers, guard, track);
          if (bytes === undefined) continue;
          if (finder === undefined) searchText(re, bytes, whole, emit);
          else searchNeedles(re, bytes, finder, emit);
        }
        if (held.length > 0) {
          // The file's content leaves only if its resolved path passes, and still names the
          // file that was read; otherwise it is skipped like a file outside the workspace.
          const found = origin as Origin | undefined;
          const allowed = found !== undefined && await check!(found.real) &&
            stillNamesSync(found);
          if (allowed) {
            rows += held.length;
            out += held.join("");
          } else truncated = false;
          held = [];
        }
        if (truncated) break;
      }
      if (truncated) break;
    }
  } finally {
    candidates.return(undefined);
    returnBuffers(buffers);
    if (pool !== undefined) releasePool(pool);
  }
  if (rows === 0) return "no matches";
  return truncated ? `${out}(truncated at ${max} matches)\n` : out;
}
