/**
 * What undo knows about a path, and how it learns it: entries (a file's content hash and
 * mode, a link's target, a directory's mode), a content-addressed object store holding the
 * bytes of files as they were, and an incremental scan of the workspace ("the mirror").
 *
 * The mirror exists because a shell command's effects are unknown before it runs and the
 * old bytes of what it changes are gone after it ran: before each call that may change the
 * tree, every file is stat'ed and only those whose metadata (size, mtime, ctime, inode,
 * mode) changed since the last scan are read, hashed and copied again — the approach of
 * git's index (racy-git rule included: an entry changed within {@linkcode RACY_MS} of the
 * scan that saw it is never trusted from the cache).
 *
 * Not scanned: `.git` directories (git's own store; undo does not touch commits, the index
 * or refs) and rousseau's protected paths (the config and the state directory).
 *
 * @module
 */

import { closeSync, constants, openSync, readSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { isCleanPath, isUnder } from "./undo_check.ts";

/** The state of one path; `null` stands for "absent". */
export type Entry =
  | {
    readonly kind: "file";
    readonly mode: number;
    readonly size: number;
    /** SHA-256 of the content; `meta:`/`unreadable:` fingerprints for files not read. */
    readonly hash: string;
    /** True when the object store holds the content (so it can be put back). */
    readonly stored: boolean;
    /** Why the content is not stored. */
    readonly why?: string;
  }
  | { readonly kind: "symlink"; readonly target: string }
  | { readonly kind: "dir"; readonly mode: number }
  | { readonly kind: "other"; readonly mode: number };

/** An entry of the mirror: the entry plus the metadata that says whether it is still true. */
export interface Cached {
  readonly entry: Entry;
  readonly type: string;
  readonly size: number;
  readonly mtime: number;
  readonly ctime: number;
  readonly ino: number;
  /** Permission bits. */
  readonly mode: number;
  /** When the scan that read it started (ms since the epoch). */
  readonly seen: number;
}

/** Path (absolute) to what the last scan saw there. */
export type Mirror = Map<string, Cached>;

/** A change of one path: how it was, how it is. */
export interface Change {
  readonly path: string;
  readonly before: Entry | null;
  readonly after: Entry | null;
}

/** Entries changed within this many ms of the scan that saw them are hashed again. */
export const RACY_MS = 2_000;

/** Files larger than this are never copied (reported as not undoable when changed). */
export const DEFAULT_UNDO_MAX_FILE_BYTES = 16 * 1024 * 1024;

/** Where file contents go; `put` says false when the store's budget is spent. */
export interface ObjectSink {
  put(hash: string, bytes: Uint8Array): boolean;
  /** False when `bytes` more would not fit (so a file not kept for want of room is not read again). */
  room?(bytes: number): boolean;
}

/** SHA-256 in hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** True when both describe the same state (content and mode). */
export function sameEntry(a: Entry | null, b: Entry | null): boolean {
  if (a === null || b === null) return a === b;
  switch (a.kind) {
    case "file":
      return b.kind === "file" && a.hash === b.hash && a.mode === b.mode;
    case "symlink":
      return b.kind === "symlink" && a.target === b.target;
    case "dir":
      return b.kind === "dir" && a.mode === b.mode;
    case "other":
      return b.kind === "other" && a.mode === b.mode;
  }
}

function isMode(m: unknown): boolean {
  return typeof m === "number" && Number.isInteger(m) && m >= 0 && m <= 0o7777;
}

/** True when `value` (read back from JSON) has the shape of an {@linkcode Entry}. */
export function isEntry(value: Entry): boolean {
  if (typeof value !== "object" || value === null) return false;
  switch (value.kind) {
    case "file":
      return isMode(value.mode) && Number.isSafeInteger(value.size) && value.size >= 0 &&
        typeof value.hash === "string" && typeof value.stored === "boolean" &&
        (!value.stored || /^[0-9a-f]{64}$/.test(value.hash)) &&
        (value.why === undefined || typeof value.why === "string");
    case "symlink":
      return typeof value.target === "string" && value.target !== "" &&
        !value.target.includes("\0");
    case "dir":
    case "other":
      return isMode(value.mode);
    default:
      return false;
  }
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** What a scan learns of a path without reading it. */
interface Stat {
  /** `f` regular file, `d` directory, `l` symbolic link, `o` anything else. */
  readonly type: "f" | "d" | "l" | "o";
  /** Permission bits (`0o7777`). */
  readonly mode: number;
  readonly size: number;
  /** Milliseconds, with the sub-millisecond part when the source gives it. */
  readonly mtime: number;
  /**
   * The mtime truncated to whole milliseconds, exactly as `Deno.lstat` gives it: the
   * fingerprint of a file not read must be the same whichever walk saw it.
   */
  readonly mtimeMs: number;
  readonly ctime: number;
  readonly ino: number;
}

/** `%T@` (`seconds.fraction`) in whole milliseconds, truncated, without float rounding. */
function wholeMs(text: string): number {
  const [seconds, fraction = ""] = text.split(".");
  return Number(seconds) * 1000 + Number(fraction.padEnd(3, "0").slice(0, 3));
}

function statOf(info: Deno.FileInfo): Stat {
  return {
    type: info.isFile ? "f" : info.isDirectory ? "d" : info.isSymlink ? "l" : "o",
    mode: (info.mode ?? 0) & 0o7777,
    size: info.size,
    mtime: info.mtime?.getTime() ?? 0,
    mtimeMs: info.mtime?.getTime() ?? 0,
    ctime: info.ctime?.getTime() ?? 0,
    ino: info.ino ?? 0,
  };
}

/** Reads a regular file without following a link or blocking on a FIFO swapped in meanwhile. */
function readRegular(path: string, size: number): Uint8Array {
  const fd = openSync(path, READ_FLAGS);
  try {
    // One byte more than expected: a file that grew meanwhile is read whole.
    let buffer = new Uint8Array(size + 1);
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        const bigger = new Uint8Array(buffer.length * 2);
        bigger.set(buffer);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

/** A regular file's entry; its bytes go to `sink` when given. */
function fileEntry(
  path: string,
  stat: Stat,
  sink: ObjectSink | undefined,
  maxFileBytes: number,
): Entry {
  const { mode } = stat;
  const stamp = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  if (stat.size > maxFileBytes) {
    return {
      kind: "file",
      mode,
      size: stat.size,
      hash: `meta:${stamp}`,
      stored: false,
      why: `over the size limit of ${maxFileBytes} bytes`,
    };
  }
  let bytes: Uint8Array;
  try {
    bytes = readRegular(path, stat.size);
  } catch (error) {
    return {
      kind: "file",
      mode,
      size: stat.size,
      hash: `unreadable:${stamp}`,
      stored: false,
      why: `unreadable: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const hash = sha256Hex(bytes);
  const stored = sink === undefined ? false : sink.put(hash, bytes);
  return {
    kind: "file",
    mode,
    size: bytes.length,
    hash,
    stored,
    ...(stored || sink === undefined
      ? {}
      : { why: "the undo store is full (state.undo.max_bytes)" }),
  };
}

/** The entry for `path`, from what lstat said of it. */
function entryOf(
  path: string,
  stat: Stat,
  sink: ObjectSink | undefined,
  maxFileBytes: number,
): Entry {
  switch (stat.type) {
    case "l":
      return { kind: "symlink", target: Deno.readLinkSync(path) };
    case "d":
      return { kind: "dir", mode: stat.mode };
    case "f":
      return fileEntry(path, stat, sink, maxFileBytes);
    default:
      return { kind: "other", mode: stat.mode };
  }
}

/** The current state of one path (lstat: links are not followed). */
export function captureEntry(
  path: string,
  options: { sink?: ObjectSink; maxFileBytes?: number } = {},
): Entry | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return null;
    }
    throw error;
  }
  return entryOf(
    path,
    statOf(info),
    options.sink,
    options.maxFileBytes ?? DEFAULT_UNDO_MAX_FILE_BYTES,
  );
}

/** What a scan needs. */
export interface ScanOptions {
  /** Workspace roots (real paths). */
  readonly roots: readonly string[];
  /** The previous scan, whose unchanged entries are reused. */
  readonly previous?: Mirror;
  /** Receives the bytes of files read. */
  readonly sink: ObjectSink;
  /** Paths (and everything under them) never scanned. */
  readonly skip?: readonly string[];
  /** @default {DEFAULT_UNDO_MAX_FILE_BYTES} */
  readonly maxFileBytes?: number;
  /** @default {Date.now} */
  readonly now?: () => number;
  /** Walk with Deno's own calls even when GNU find is there (tests). */
  readonly noFind?: boolean;
}

function under(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(p.endsWith("/") ? p : p + "/"));
}

function reusable(cached: Cached | undefined, stat: Stat, sink: ObjectSink): cached is Cached {
  if (cached === undefined) return false;
  const entry = cached.entry;
  // Contents that could not be stored for want of room are tried again once there is room;
  // until then they are not read again at every scan (a tree larger than the budget).
  if (
    entry.kind === "file" && !entry.stored && entry.why?.startsWith("the undo store") &&
    (sink.room?.(stat.size) ?? true)
  ) {
    return false;
  }
  return entry.kind === "file" && stat.type === "f" && cached.size === stat.size &&
    cached.mtime === stat.mtime && cached.ctime === stat.ctime && cached.ino === stat.ino &&
    cached.mode === stat.mode && cached.seen - stat.ctime > RACY_MS;
}

/** `find -printf` field order; every field ends with NUL, so any name parses. */
const FIND_FORMAT = "%y\\0%m\\0%s\\0%T@\\0%C@\\0%i\\0%p\\0";

/** A `-path` pattern matching `path` literally. */
function globEscape(path: string): string {
  return path.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

/** The `find` that lists `roots` with the stat of every path (GNU `-printf`). */
function findCommand(roots: readonly string[], skip: readonly string[]): Deno.Command {
  const prune = ["(", "-name", ".git", ...skip.flatMap((p) => ["-o", "-path", globEscape(p)]), ")"];
  return new Deno.Command("find", {
    args: [...roots, "-mindepth", "1", ...prune, "-prune", "-o", "-printf", FIND_FORMAT],
    env: { LC_ALL: "C" },
    stdout: "piped",
    stderr: "null",
  });
}

/**
 * Every path under `roots` with its stat, by GNU find (one process walks the tree far faster
 * than a stat call per file from JavaScript); undefined when find is not there or not GNU.
 */
function findTree(roots: readonly string[], skip: readonly string[]): [string, Stat][] | undefined {
  let output: Deno.CommandOutput;
  try {
    output = findCommand(roots, skip).outputSync();
  } catch {
    return undefined;
  }
  return parseFind(output);
}

/** The same as {@linkcode findTree}, without blocking the event loop while find runs. */
async function findTreeAsync(
  roots: readonly string[],
  skip: readonly string[],
): Promise<[string, Stat][] | undefined> {
  let output: Deno.CommandOutput;
  try {
    output = await findCommand(roots, skip).output();
  } catch {
    return undefined;
  }
  return parseFind(output);
}

/** find's `-printf` output as paths and stats; undefined when it is not GNU find's. */
function parseFind(output: Deno.CommandOutput): [string, Stat][] | undefined {
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success && text === "") return undefined;
  const fields = text.split("\0");
  const out: [string, Stat][] = [];
  for (let i = 0; i + 7 <= fields.length; i += 7) {
    const [y, m, size, mtime, ctime, ino, path] = fields.slice(i, i + 7) as string[];
    const mode = parseInt(m!, 8);
    if (!/^[0-7]+$/.test(m!) || !Number.isFinite(Number(mtime))) return undefined; // not GNU
    out.push([path!, {
      type: y === "f" ? "f" : y === "d" ? "d" : y === "l" ? "l" : "o",
      mode,
      size: Number(size),
      mtime: Number(mtime) * 1000,
      mtimeMs: wholeMs(mtime!),
      ctime: Number(ctime) * 1000,
      ino: Number(ino),
    }]);
  }
  return out;
}

/** The same as {@linkcode findTree} with Deno's calls. */
function walkTree(roots: readonly string[], skip: readonly string[]): [string, Stat][] {
  const out: [string, Stat][] = [];
  const walk = (dir: string) => {
    let names: Deno.DirEntry[];
    try {
      names = [...Deno.readDirSync(dir)];
    } catch {
      return; // vanished or unreadable meanwhile: nothing under it is known
    }
    for (const { name } of names) {
      if (name === ".git") continue;
      const path = join(dir, name);
      if (under(path, skip)) continue;
      let info: Deno.FileInfo;
      try {
        info = Deno.lstatSync(path);
      } catch {
        continue; // removed between the listing and the stat
      }
      out.push([path, statOf(info)]);
      if (info.isDirectory) walk(path);
    }
  };
  for (const root of roots) walk(root);
  return out;
}

/** How far a scan is: listing the tree (`files` unknown yet), then reading what changed. */
export interface ScanProgress {
  /** Regular files in the tree, once listed. */
  readonly files?: number;
  /** Paths looked at so far (of `paths`). */
  readonly done: number;
  /** Paths in the tree (files, directories, links), once listed. */
  readonly paths?: number;
}

/** Options of {@linkcode scanTreeAsync}. */
export interface AsyncScanOptions extends ScanOptions {
  /** Called as the scan goes (at each pause), and once the tree is listed. */
  readonly onProgress?: (progress: ScanProgress) => void;
  /** How long the scan works between pauses for the event loop, in ms. @default {40} */
  readonly sliceMs?: number;
}

/**
 * The scan itself, one path at a time; yields the number of paths done every so often, so a
 * caller may pause between steps. Returns the new mirror.
 */
function* scanSteps(
  options: ScanOptions,
  seen: number,
  listed: readonly [string, Stat][],
): Generator<number, Mirror> {
  const skip = options.skip ?? [];
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_UNDO_MAX_FILE_BYTES;
  const previous = options.previous ?? new Map();
  const mirror: Mirror = new Map();
  let done = 0;
  for (const [path, stat] of listed) {
    if ((++done & 63) === 0) yield done;
    if (under(path, skip)) continue;
    const cached = previous.get(path);
    let entry: Entry;
    try {
      entry = reusable(cached, stat, options.sink)
        ? cached.entry
        : entryOf(path, stat, options.sink, maxFileBytes);
    } catch {
      continue; // removed between the listing and the read
    }
    const { mtimeMs: _, ...kept } = stat;
    mirror.set(path, { entry, ...kept, seen });
  }
  return mirror;
}

/**
 * Scans the roots (synchronously: no promise per file) and returns the new mirror. Entries
 * whose metadata did not change are reused.
 */
export function scanTree(options: ScanOptions): Mirror {
  const seen = (options.now ?? Date.now)();
  const skip = options.skip ?? [];
  const listed = (options.noFind ? undefined : findTree(options.roots, skip)) ??
    walkTree(options.roots, skip);
  const steps = scanSteps(options, seen, listed);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** A pause that lets timers and I/O callbacks run (a spinner, a Ctrl+C). */
function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The same scan as {@linkcode scanTree}, giving the event loop a turn every `sliceMs` of work
 * (a first scan of a large tree reads every file: seconds during which a terminal would
 * otherwise freeze) and saying how far it is. The result is the same.
 */
export async function scanTreeAsync(options: AsyncScanOptions): Promise<Mirror> {
  const seen = (options.now ?? Date.now)();
  const skip = options.skip ?? [];
  const slice = options.sliceMs ?? 40;
  const listed = (options.noFind ? undefined : await findTreeAsync(options.roots, skip)) ??
    walkTree(options.roots, skip);
  let files = 0;
  for (const [, stat] of listed) if (stat.type === "f") files++;
  const report = (done: number) => options.onProgress?.({ files, done, paths: listed.length });
  report(0);
  const steps = scanSteps(options, seen, listed);
  let since = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - since < slice) continue;
    report(step.value);
    await pause();
    since = performance.now();
  }
}

/** True when both scans saw the same paths with the same metadata and entries. */
export function sameMirror(a: Mirror, b: Mirror): boolean {
  if (a.size !== b.size) return false;
  for (const [path, x] of a) {
    const y = b.get(path);
    if (
      y === undefined || x.type !== y.type || x.size !== y.size || x.mtime !== y.mtime ||
      x.ctime !== y.ctime || x.ino !== y.ino || x.mode !== y.mode || !sameEntry(x.entry, y.entry)
    ) return false;
  }
  return true;
}

/** The paths whose entries differ between two scans, sorted. */
export function diffMirrors(before: Mirror, after: Mirror): Change[] {
  const changes: Change[] = [];
  for (const [path, old] of before) {
    const now = after.get(path);
    if (!sameEntry(old.entry, now?.entry ?? null)) {
      changes.push({ path, before: old.entry, after: now?.entry ?? null });
    }
  }
  for (const [path, now] of after) {
    if (!before.has(path)) changes.push({ path, before: null, after: now.entry });
  }
  return changes.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** A mirror as JSON-ready rows. */
export function mirrorToJson(mirror: Mirror): unknown[] {
  return [...mirror].map((
    [path, c],
  ) => [path, c.entry, c.type, c.size, c.mtime, c.ctime, c.ino, c.mode, c.seen]);
}

/**
 * The inverse of {@linkcode mirrorToJson}; throws on a malformed row, and (with `roots`) on
 * a path that is not a clean absolute path below them: a mirror's rows become the `before` of
 * what a call changed, so a row elsewhere would become a path `undo` writes.
 */
export function mirrorFromJson(rows: unknown, roots?: readonly string[]): Mirror {
  if (!Array.isArray(rows)) throw new TypeError("mirror: want an array of rows");
  const mirror: Mirror = new Map();
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 9 || typeof row[0] !== "string") {
      throw new TypeError("mirror: malformed row");
    }
    const [path, entry, type, size, mtime, ctime, ino, mode, seen] = row;
    if (!isEntry(entry) || ![size, mtime, ctime, ino, mode, seen].every(Number.isFinite)) {
      throw new TypeError("mirror: malformed row");
    }
    if (
      roots !== undefined &&
      (!isCleanPath(path) || !isUnder(path, roots) || roots.includes(path))
    ) {
      throw new TypeError(`mirror: ${JSON.stringify(path)} is not below its roots`);
    }
    mirror.set(path, { entry, type, size, mtime, ctime, ino, mode, seen });
  }
  return mirror;
}
