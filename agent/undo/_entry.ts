/**
 * What undo knows about one path (an {@linkcode Entry}: a file's content hash and mode, a
 * link's target, a directory's mode) and how it takes it: lstat, then the bytes of a regular
 * file read without following a link or blocking on a FIFO, hashed and handed to the content
 * store ({@linkcode ObjectSink}). Both ways of learning a change set use it: the paths an
 * overlay change set names, and every path of the mirror fallback's scan.
 *
 * @module
 */

import { closeSync, constants, openSync, readSync } from "node:fs";
import { createHash } from "node:crypto";

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

/** A change of one path: how it was, how it is. */
export interface Change {
  readonly path: string;
  readonly before: Entry | null;
  readonly after: Entry | null;
}

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

/** What lstat (or the mirror fallback's `find`) says of a path, without reading it. */
export interface Stat {
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

/** The {@linkcode Stat} of what `Deno.lstat` said. */
export function statOf(info: Deno.FileInfo): Stat {
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
export function entryOf(
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
