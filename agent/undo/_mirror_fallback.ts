/**
 * The mirror: the FALLBACK way of learning what a call changed, used when the call's changes
 * cannot be observed before they land (bash without the overlay, custom and MCP tools). Its
 * walk also lists the tree under a directory an overlay change set deletes or replaces.
 *
 * The mirror exists because a shell command's effects are unknown before it runs and the
 * old bytes of what it changes are gone after it ran: before each call that may change the
 * tree, every file is stat'ed and only those whose metadata (size, mtime, ctime, inode,
 * mode) changed since the last scan are read, hashed and copied again — the approach of
 * git's index (racy-git rule included: an entry changed within {@linkcode RACY_MS} of the
 * scan that saw it is never trusted from the cache). The difference between the scans before
 * and after the call ({@linkcode diffMirrors}) is the call's change set. Its cost grows with
 * the tree; the overlay's (`tools/_overlay.ts`) only with what the command changed.
 *
 * Not scanned: `.git` directories (git's own store; undo does not touch commits, the index
 * or refs) and rousseau's protected paths (the config and the state directory).
 *
 * @module
 */

import { join } from "node:path";
import { isCleanPath, isUnder } from "./_check.ts";
import {
  type Change,
  DEFAULT_UNDO_MAX_FILE_BYTES,
  type Entry,
  entryOf,
  isEntry,
  type ObjectSink,
  sameEntry,
  type Stat,
  statOf,
} from "./_entry.ts";

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

/** Entries changed within this many ms of the scan that saw them are hashed again. */
export const RACY_MS = 2_000;

/** `%T@` (`seconds.fraction`) in whole milliseconds, truncated, without float rounding. */
function wholeMs(text: string): number {
  const [seconds, fraction = ""] = text.split(".");
  return Number(seconds) * 1000 + Number(fraction.padEnd(3, "0").slice(0, 3));
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
