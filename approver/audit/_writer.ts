/**
 * The audit file sink: each line appended under an exclusive lock on the log, chained onto
 * the line before, its head updated with it, the log rotated when full; a line a full disk
 * cuts short is taken back, so the log and its head still agree.
 *
 * @module
 */

import { dirname } from "node:path";
import {
  type AuditEvent,
  type AuditSink,
  type InputFields,
  inputFields,
  redact,
} from "./_event.ts";
import { lastLine, nextLink } from "./_chain.ts";
import { readHeadSync, writeHeadSync } from "./_head.ts";
import { rotateLog } from "./_rotation.ts";
import { sha256Hex } from "./_sha256.ts";

/** The chain's end as this process last wrote it. */
interface Tail {
  readonly dev: number;
  readonly ino: number | null;
  /** The file's size just after the line was written. */
  readonly size: number;
  readonly hash: string;
  readonly seq: number;
}

/** Options of {@linkcode createAuditFile}. */
export interface AuditFileOptions {
  /** Values never to be written. */
  readonly secrets?: readonly string[];
  readonly clock?: () => Date;
  /** The log is rotated once it has reached this size (one line may pass it); 0: never. */
  readonly maxBytes?: number;
  /** Rotated files kept (the oldest beyond go); 0: all. @default {0} */
  readonly keep?: number;
}

/** An audit file at `path`; `secrets` are values never to be written. */
export function createAuditFile(
  path: string,
  options: AuditFileOptions = {},
): AuditSink & { readonly path: string } {
  const clock = options.clock ?? (() => new Date());
  const maxBytes = options.maxBytes ?? 0;
  const keep = options.keep ?? 0;
  // Other processes may append to the same file, so each line is written under the lock
  // after a look at the file. While it is still the file and the size this process left,
  // the last line is the one this process wrote and is not read back. The steps under the
  // lock are a local append, a hash on this thread and the head's update, one call at a
  // time, in order. Only taking the lock may wait (on another process), so only it is async.
  let tail: Tail | undefined;
  let queue: Promise<void> = Promise.resolve();
  let madeDir = false;
  const open = (): Deno.FsFile => {
    if (!madeDir) {
      Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      madeDir = true;
    }
    return Deno.openSync(path, { read: true, write: true, create: true, mode: 0o600 });
  };
  /** True while the open file is still the one at `path` (not rotated or removed). */
  const isCurrent = (info: Deno.FileInfo): boolean => {
    try {
      const now = Deno.statSync(path);
      return now.ino === info.ino && now.dev === info.dev;
    } catch {
      return false;
    }
  };
  const write = async (
    file: Deno.FsFile,
    info: Deno.FileInfo,
    event: AuditEvent,
    recorded: InputFields,
  ) => {
    let prev: string;
    let seq: number;
    if (
      tail !== undefined && tail.dev === info.dev && tail.ino === info.ino &&
      tail.size === info.size
    ) {
      prev = tail.hash;
      seq = tail.seq + 1;
    } else {
      ({ prev, seq } = await nextLink(lastLine(file, info.size), readHeadSync(path)));
    }
    const entry = {
      seq,
      time: clock().toISOString(),
      ...event,
      ...recorded,
      ...(event.reason === undefined ? {} : { reason: redact(event.reason, options.secrets) }),
      prev,
    };
    const line = JSON.stringify(entry);
    const bytes = new TextEncoder().encode(line + "\n");
    const hash = sha256Hex(bytes.subarray(0, bytes.length - 1));
    file.seekSync(0, Deno.SeekMode.End);
    try {
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
      writeHeadSync(path, { seq, hash }, prev);
    } catch (error) {
      // Hazard: a full disk takes part of a line (a short write, then ENOSPC), or the whole
      // line and then refuses the head. Either way the line is taken back, so the log and its
      // head still agree and no torn line stays in the chain for `verifyChain` to report for
      // good. Shrinking a file needs no free space.
      try {
        file.truncateSync(info.size);
      } catch { /* the error below says what went wrong first */ }
      throw error;
    }
    tail = {
      dev: info.dev,
      ino: info.ino,
      size: info.size + bytes.length,
      hash,
      seq,
    };
  };
  const append = async (event: AuditEvent): Promise<void> => {
    const recorded = inputFields(event.input, options.secrets);
    for (;;) {
      using file = open();
      // The lock is awaited: another process holding it must not stall this event loop (the
      // tool worker's confinement proofs are answered on it).
      await file.lock(true);
      let rotated: Deno.FsFile | undefined;
      try {
        const info = file.statSync();
        // Rotated away (or removed) between the open and the lock: the line goes to the new log.
        if (!isCurrent(info)) continue;
        if (maxBytes > 0 && info.size >= maxBytes) {
          rotated = await rotateLog(path, file, info, open, keep);
        }
        if (rotated === undefined) await write(file, info, event, recorded);
        else await write(rotated, rotated.statSync(), event, recorded);
        return;
      } catch (error) {
        tail = undefined;
        throw error;
      } finally {
        // Unlocking never waits: done here, not on another thread and back.
        if (rotated !== undefined) {
          rotated.unlockSync();
          rotated.close();
        }
        file.unlockSync();
      }
    }
  };
  return {
    path,
    record(event) {
      const done = queue.then(() => append(event));
      queue = done.catch(() => {});
      return done;
    },
  };
}
