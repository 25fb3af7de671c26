/**
 * The audit file sink: each line appended under an exclusive lock on the log, chained onto
 * the line before, its head updated with it, the log rotated when full; a line a full disk
 * cuts short is taken back, so the log and its head still agree.
 *
 * Group commit: the events recorded while the writer waits for the lock (calls in flight
 * together) are written under one lock, one look at the file and one room check, each line
 * still followed by its own head record before the next line is written, so a process
 * stopped anywhere leaves the log and its head as a one-line-at-a-time writer would. Each
 * `record` resolves only once its line and head record are written.
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
import { createHeadKeeper, readHeadSync, releaseHead, writeHeadSync } from "./_head.ts";
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
  /**
   * Keep the log and its head file open between lines (a long-running server): fewer system
   * calls a line. Which files they are is still checked by name under the lock for every
   * batch, as when they are opened anew. `close()` closes them. @default {false}
   */
  readonly keepOpen?: boolean;
}

/**
 * How long a long-running writer (`keepOpen`) may keep the log's lock after a batch, counted
 * from when it took the lock: taking and releasing it are two system calls a line, which a
 * server answering one call at a time (two lines a call) pays in full. Another process
 * wanting the lock waits at most this long (plus a batch) for its turn, whatever the
 * server's load: a lease is never renewed, and it is released when it runs out, between
 * batches or by its timer.
 */
export const AUDIT_LOCK_LEASE_MS = 10;

/** How many inputs' fields a writer keeps for their second line (calls in flight at once). */
const RECENT_INPUTS = 64;
/** Longest input (in UTF-16 units) whose fields are kept. */
const RECENT_INPUT_CHARS = 16 * 1024;

/** An event waiting to be written, and its caller's promise. */
interface Waiting {
  readonly event: AuditEvent;
  readonly recorded: InputFields;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** An audit file at `path`; `secrets` are values never to be written. */
export function createAuditFile(
  path: string,
  options: AuditFileOptions = {},
): AuditSink & { readonly path: string; close(): void } {
  const clock = options.clock ?? (() => new Date());
  const maxBytes = options.maxBytes ?? 0;
  const keep = options.keep ?? 0;
  const keepOpen = options.keepOpen ?? false;
  // Other processes may append to the same file, so lines are written under the lock after
  // a look at the file. While it is still the file and the size this process left, the last
  // line is the one this process wrote and is not read back. The steps under the lock are a
  // local append, a hash on this thread and the head's update, one batch at a time, in
  // order. Only taking the lock may wait (on another process), so only it is async.
  let tail: Tail | undefined;
  let madeDir = false;
  /** The log this process has open (kept between batches only with `keepOpen`). */
  let log: Deno.FsFile | undefined;
  /** Which file `log` is (device and inode, from the open file itself). */
  let logId: { readonly dev: number; readonly ino: number | null } | undefined;
  /**
   * The lock on `log` kept past a batch (`keepOpen` only; see AUDIT_LOCK_LEASE_MS): until
   * when, and the timer that releases it then. Closing `log` releases the lock with it.
   */
  let lease:
    | { readonly until: number; readonly timer: ReturnType<typeof setTimeout> }
    | undefined;
  /** Ends the lease, releasing the lock unless `unlock` is false (the log is being closed). */
  const endLease = (unlock: boolean) => {
    const held = lease;
    lease = undefined;
    if (held === undefined) return;
    clearTimeout(held.timer);
    if (!unlock) return;
    try {
      log?.unlockSync();
    } catch { /* closed already: closing released the lock */ }
  };
  const head = createHeadKeeper(keepOpen);
  /**
   * The input fields of recent inputs: a call's `tool.execute` and `tool.done` lines carry
   * the same input, and redacting it (every secret value, then the generic patterns) and
   * hashing it cost more than the rest of a line. Same input, same secrets: same fields.
   */
  const recent = new Map<string, InputFields>();
  const fieldsOf = (input: string): InputFields => {
    // Large inputs (a write's content) are not kept: memory stays under 64 × 16 KiB.
    if (input.length > RECENT_INPUT_CHARS) return inputFields(input, options.secrets);
    let fields = recent.get(input);
    if (fields === undefined) {
      fields = inputFields(input, options.secrets);
      if (recent.size >= RECENT_INPUTS) recent.delete(recent.keys().next().value!);
      recent.set(input, fields);
    }
    return fields;
  };
  /** Events not yet taken into a batch, oldest first. */
  let waiting: Waiting[] = [];
  let writing = false;
  const open = (): Deno.FsFile => {
    if (!madeDir) {
      Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      madeDir = true;
    }
    // Appending: every write lands at the end whatever the file's offset (no seek a line).
    return Deno.openSync(path, { read: true, append: true, create: true, mode: 0o600 });
  };
  const closeLog = () => {
    endLease(false);
    const file = log;
    log = undefined;
    logId = undefined;
    try {
      file?.close();
    } catch { /* closed already */ }
  };
  /**
   * The file at `path`, when it is still the open log (not rotated or removed): one look by
   * name, whose size is the open file's own (the same inode). Undefined otherwise.
   */
  const current = (): Deno.FileInfo | undefined => {
    try {
      const now = Deno.statSync(path);
      return now.ino === logId?.ino && now.dev === logId?.dev ? now : undefined;
    } catch {
      return undefined;
    }
  };
  /**
   * After a batch on `log`, keeps its lock while the lease runs (a new lease when the lock was
   * just taken, at `lockedAt`): true when kept.
   */
  const keepLease = (lockedAt: number | undefined): boolean => {
    const now = performance.now();
    if (lockedAt === undefined) return lease !== undefined && now < lease.until;
    const until = lockedAt + AUDIT_LOCK_LEASE_MS;
    if (now >= until) return false;
    const timer = setTimeout(() => {
      // A batch under way ends a run-out lease itself, or `drain` once it is done.
      if (!writing) endLease(true);
    }, Math.ceil(until - now));
    // Unreferenced: a lease never keeps the process alive (exiting releases the lock).
    Deno.unrefTimer(timer as unknown as number);
    lease = { until, timer };
    return true;
  };
  /** Appends one line and its head record; `roomFound`: a line of this batch found room. */
  const write = async (
    file: Deno.FsFile,
    info: Deno.FileInfo,
    size: number,
    { event, recorded }: Waiting,
    roomFound: boolean,
  ): Promise<number> => {
    let prev: string;
    let seq: number;
    if (
      tail !== undefined && tail.dev === info.dev && tail.ino === info.ino &&
      tail.size === size
    ) {
      prev = tail.hash;
      seq = tail.seq + 1;
    } else {
      ({ prev, seq } = await nextLink(lastLine(file, size), readHeadSync(path)));
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
    try {
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
      writeHeadSync(path, { seq, hash }, prev, { roomFound, keeper: head });
    } catch (error) {
      // Hazard: a full disk takes part of a line (a short write, then ENOSPC), or the whole
      // line and then refuses the head. Either way the line is taken back, so the log and its
      // head still agree and no torn line stays in the chain for `verifyChain` to report for
      // good. Shrinking a file needs no free space.
      try {
        file.truncateSync(size);
      } catch { /* the error below says what went wrong first */ }
      throw error;
    }
    tail = { dev: info.dev, ino: info.ino, size: size + bytes.length, hash, seq };
    return size + bytes.length;
  };
  /**
   * Writes `batch` under one lock, oldest first, settling each event's promise once its line
   * and head record are written. A failure rejects the event it struck; the events after it
   * go back to the front of the queue, each to get its own attempt, as one at a time.
   */
  const writeBatch = async (batch: Waiting[]): Promise<void> => {
    let done = 0;
    try {
      while (done < batch.length) {
        if (log === undefined) {
          const opened = open();
          try {
            const info = opened.statSync();
            logId = { dev: info.dev, ino: info.ino };
          } catch (error) {
            opened.close();
            throw error;
          }
          log = opened;
        }
        const file = log;
        // The lock is awaited: another process holding it must not stall this event loop.
        // Held already while a lease runs (see AUDIT_LOCK_LEASE_MS).
        const leased = lease !== undefined;
        if (!leased) await file.lock(true);
        const lockedAt = leased ? undefined : performance.now();
        let rotated: Deno.FsFile | undefined;
        let rotatedId: typeof logId;
        try {
          const info = current();
          // Rotated away (or removed) since the open: the lines go to the new log (and the
          // room is asked for beside it, not in the old place).
          if (info === undefined) {
            closeLog();
            releaseHead(head);
            continue;
          }
          if (maxBytes > 0 && info.size >= maxBytes) {
            rotated = await rotateLog(path, file, info, open, keep);
          }
          const target = rotated ?? file;
          const at = rotated === undefined ? info : rotated.statSync();
          if (rotated !== undefined) rotatedId = { dev: at.dev, ino: at.ino };
          let size = at.size;
          const first = done;
          // A full log is rotated before the next line (one line may pass the size): the
          // rest of the batch goes on under a new look at the file.
          while (done < batch.length && (done === first || maxBytes === 0 || size < maxBytes)) {
            size = await write(target, at, size, batch[done]!, done > first);
            batch[done]!.resolve();
            done++;
          }
        } finally {
          // Unlocking never waits: done here, not on another thread and back.
          if (rotated !== undefined) {
            rotated.unlockSync();
            // The new log is the one to append to from now on.
            if (log === file) {
              closeLog();
              log = rotated;
              logId = rotatedId;
            } else rotated.close();
          }
          // The lock stays for the next batch while the lease runs, on the same open log.
          if (!(keepOpen && rotated === undefined && log === file && keepLease(lockedAt))) {
            if (log === file) endLease(false);
            try {
              file.unlockSync();
            } catch { /* closed above: closing released the lock */ }
          }
          if (!keepOpen) {
            closeLog();
            releaseHead(head);
          }
        }
      }
    } catch (error) {
      tail = undefined;
      closeLog();
      releaseHead(head);
      batch[done]?.reject(error);
      waiting = [...batch.slice(done + 1), ...waiting];
    }
  };
  const drain = async () => {
    writing = true;
    try {
      while (waiting.length > 0) {
        const batch = waiting;
        waiting = [];
        await writeBatch(batch);
      }
    } finally {
      writing = false;
      // A lease that ran out while the batches were written: nothing else would end it now.
      if (lease !== undefined && performance.now() >= lease.until) endLease(true);
    }
  };
  return {
    path,
    record(event) {
      return new Promise<void>((resolve, reject) => {
        let recorded: InputFields;
        try {
          recorded = fieldsOf(event.input);
        } catch (error) {
          reject(error);
          return;
        }
        waiting.push({ event, recorded, resolve, reject });
        // Started a microtask later, so the events recorded in this same turn share a batch.
        if (!writing) {
          writing = true;
          queueMicrotask(() => void drain());
        }
      });
    },
    close() {
      closeLog();
      releaseHead(head);
    },
  };
}
