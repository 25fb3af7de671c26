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

import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";

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
  readonly size: number;
  readonly mtime: number;
  readonly ctime: number;
  readonly ino: number;
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

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** A regular file's entry; its bytes go to `sink` when given. */
function fileEntry(
  path: string,
  info: Deno.FileInfo,
  sink: ObjectSink | undefined,
  maxFileBytes: number,
): Entry {
  const mode = (info.mode ?? 0) & 0o7777;
  const stamp = `${info.size}:${info.mtime?.getTime() ?? 0}:${info.ino ?? 0}`;
  if (info.size > maxFileBytes) {
    return {
      kind: "file",
      mode,
      size: info.size,
      hash: `meta:${stamp}`,
      stored: false,
      why: `over the size limit of ${maxFileBytes} bytes`,
    };
  }
  let bytes: Uint8Array;
  try {
    // Non-blocking and not following links: a FIFO or link swapped in meanwhile is refused.
    const fd = openSync(path, READ_FLAGS);
    try {
      if (!fstatSync(fd).isFile()) throw new Error("no longer a regular file");
      bytes = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return {
      kind: "file",
      mode,
      size: info.size,
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

/** The entry for `path` and its metadata, from `info` (lstat). */
function entryOf(
  path: string,
  info: Deno.FileInfo,
  sink: ObjectSink | undefined,
  maxFileBytes: number,
): Entry {
  const mode = (info.mode ?? 0) & 0o7777;
  if (info.isSymlink) return { kind: "symlink", target: Deno.readLinkSync(path) };
  if (info.isDirectory) return { kind: "dir", mode };
  if (info.isFile) return fileEntry(path, info, sink, maxFileBytes);
  return { kind: "other", mode };
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
  return entryOf(path, info, options.sink, options.maxFileBytes ?? DEFAULT_UNDO_MAX_FILE_BYTES);
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
}

function under(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path === p || path.startsWith(p.endsWith("/") ? p : p + "/"));
}

function reusable(cached: Cached | undefined, info: Deno.FileInfo): cached is Cached {
  if (cached === undefined) return false;
  const ctime = info.ctime?.getTime() ?? 0;
  const entry = cached.entry;
  // Contents that could not be stored for want of room are tried again.
  if (entry.kind === "file" && !entry.stored && entry.why?.startsWith("the undo store")) {
    return false;
  }
  return cached.size === info.size && cached.mtime === (info.mtime?.getTime() ?? 0) &&
    cached.ctime === ctime && cached.ino === (info.ino ?? 0) &&
    cached.mode === (info.mode ?? 0) && cached.seen - ctime > RACY_MS;
}

/**
 * Scans the roots (synchronously: a tree walk of stat calls is fastest without a promise per
 * file) and returns the new mirror. Entries whose metadata did not change are reused.
 */
export function scanTree(options: ScanOptions): Mirror {
  const now = options.now ?? Date.now;
  const seen = now();
  const skip = options.skip ?? [];
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_UNDO_MAX_FILE_BYTES;
  const previous = options.previous ?? new Map();
  const mirror: Mirror = new Map();
  const visit = (path: string, info: Deno.FileInfo) => {
    const cached = previous.get(path);
    const entry = !info.isDirectory && reusable(cached, info)
      ? cached.entry
      : entryOf(path, info, options.sink, maxFileBytes);
    mirror.set(path, {
      entry,
      size: info.size,
      mtime: info.mtime?.getTime() ?? 0,
      ctime: info.ctime?.getTime() ?? 0,
      ino: info.ino ?? 0,
      mode: info.mode ?? 0,
      seen,
    });
  };
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
      visit(path, info);
      if (info.isDirectory) walk(path);
    }
  };
  for (const root of options.roots) walk(root);
  return mirror;
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
  ) => [path, c.entry, c.size, c.mtime, c.ctime, c.ino, c.mode, c.seen]);
}

/** The inverse of {@linkcode mirrorToJson}; throws on a malformed row. */
export function mirrorFromJson(rows: unknown): Mirror {
  if (!Array.isArray(rows)) throw new TypeError("mirror: want an array of rows");
  const mirror: Mirror = new Map();
  for (const row of rows) {
    if (!Array.isArray(row) || row.length !== 8 || typeof row[0] !== "string") {
      throw new TypeError("mirror: malformed row");
    }
    const [path, entry, size, mtime, ctime, ino, mode, seen] = row;
    mirror.set(path, { entry, size, mtime, ctime, ino, mode, seen });
  }
  return mirror;
}
