/**
 * The head file beside the audit log, `<log>.head`: the chain's end (the last line's `seq`
 * and hash), so `audit verify` tells a log whose last lines were cut off, or that was emptied
 * or replaced, from an intact one. Here: its format, reading it, and updating it per line.
 *
 * The format: 256 bytes, two records of 128 bytes, each a line
 * `{"seq":N,"hash":"<64 hex>","check":"<16 hex>"}` padded with spaces to 127 bytes, then a
 * newline. `check` is the start of the SHA-256 of `{"seq":N,"hash":"<64 hex>"}`, so a record
 * that a write left half old and half new fails it. Entry N's record goes to slot N % 2; the
 * head is the intact record with the higher `seq`. A head of the previous format (one line
 * `{"seq":N,"hash":"<64 hex>"}`) is still read; the next line replaces it with this one.
 *
 * The update and its crash-safety contract (`writeHeadSync`, under the log's exclusive lock):
 * - Line N's record is written in place with one write of 128 bytes, into the slot that held
 *   N−2's, while the other slot holds N−1's. Replacing the file (a new file renamed over it)
 *   cost 0.4–2.6 ms a line on ext4 here, which writes out the data of a file renamed over
 *   another (`auto_da_alloc`); in place, with the room check below, about 0.15 ms.
 * - A process killed between appending line N and writing its record leaves the head at
 *   N−1: `verifyHead` reports line N as written after the head ("rousseau stopped between
 *   writing a line and its head") and the next writer continues the chain from line N.
 * - A record write cut short (power lost mid-sector; a kill cannot split a 128-byte write
 *   inside one page) fails its check and is never taken as a head: the other slot, N−1,
 *   stands, which is the case above. Two records are never written at once, so two failing
 *   records mean an edit: the head is reported damaged.
 * - Neither the log nor its head is synced to disk (nor were they before): after a power loss
 *   the last line and its record may not both have reached the disk, and `audit verify` then
 *   reports them disagreeing. The head promises to catch a log cut after it was written.
 * - A full file system still refuses the line (`requireRoom`), as when each line cost a new
 *   head file: the record is written in place only after one byte found room elsewhere. Lines
 *   written together under one lock (a group commit, `_writer.ts`) ask once, for the first.
 *   A long-running writer keeps that byte's file open, its name removed at once, and asks
 *   again by writing the byte anew and emptying the file (a new block either way).
 * - The file is written in place only when the name holds this format in a plain file of
 *   its own (not a symlink or a hard link: checked by name before the open and on the open
 *   file after it, so a name swapped between the two is caught) whose other slot holds line
 *   N−1's record. Anything else (no head, the old format, a damaged or edited head, a chain
 *   restarted) is replaced whole in one step, a new file renamed over the name, with both
 *   slots holding N's record: no reader ever sees a part of it.
 *
 * @module
 */

import { sha256Hex } from "./_sha256.ts";
import { type ChainHead, parseSeqHash, seqHashOf } from "./_chain.ts";

/** Bytes of one record, its newline included. */
const SLOT = 128;
/** Bytes of a head file: two records. */
const HEAD_BYTES = 2 * SLOT;

/** Where the head of the log at `path` is kept: beside it, `<path>.head`. */
export function headPathOf(path: string): string {
  return `${path}.head`;
}

/** The start of the SHA-256 of the record's head, in hex: what `check` must hold. */
function checkOf(head: ChainHead): string {
  const text = JSON.stringify({ seq: head.seq, hash: head.hash });
  return sha256Hex(new TextEncoder().encode(text)).slice(0, 16);
}

/** The 128 bytes of `head`'s record. */
function recordBytes(head: ChainHead): Uint8Array<ArrayBuffer> {
  const text = JSON.stringify({ seq: head.seq, hash: head.hash, check: checkOf(head) });
  return new TextEncoder().encode(text.padEnd(SLOT - 1, " ") + "\n");
}

/** The slot entry `seq`'s record goes to, as a byte offset. */
function slotOffset(seq: number): number {
  return (seq % 2) * SLOT;
}

/** The record in `bytes` (one slot), or why it is not an intact one. */
function parseRecord(bytes: Uint8Array): ChainHead | string {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return "not JSON";
  }
  const head = seqHashOf(value, "hash");
  const check = (value as Record<string, unknown> | null)?.check;
  if (head === undefined || typeof check !== "string" || !/^[0-9a-f]{16}$/.test(check)) {
    return `not {"seq": N, "hash": "<SHA-256>", "check": "<16 hex>"}`;
  }
  if (check !== checkOf(head)) return "fails its check";
  return head;
}

/** True when `bytes` have the shape of a head file of this format (two records). */
function isTwoRecords(bytes: Uint8Array): boolean {
  return bytes.length === HEAD_BYTES && bytes[SLOT - 1] === 0x0a && bytes[HEAD_BYTES - 1] === 0x0a;
}

/**
 * The head kept in the bytes of a head file, or the reason they hold none: the intact record
 * with the higher `seq`, or a head of the previous format.
 */
export function parseHeadBytes(bytes: Uint8Array): ChainHead | string {
  if (!isTwoRecords(bytes)) return parseHead(new TextDecoder().decode(bytes));
  const records = [parseRecord(bytes.subarray(0, SLOT)), parseRecord(bytes.subarray(SLOT))];
  const intact = records.filter((r): r is ChainHead => typeof r === "object");
  if (intact.length === 0) {
    return `neither record is intact (first: ${records[0]}; second: ${records[1]})`;
  }
  return intact.reduce((a, b) => b.seq > a.seq ? b : a);
}

/**
 * The head kept in the text of a head file, or the reason the text is not one: a head of
 * this format (two records) or of the previous one, `{"seq":N,"hash":"<64 hex>"}` and a
 * newline.
 */
export function parseHead(text: string): ChainHead | string {
  const bytes = new TextEncoder().encode(text);
  return isTwoRecords(bytes) ? parseHeadBytes(bytes) : parseSeqHash(text, "hash");
}

/** The head beside the log at `path`: undefined when there is none, a string when damaged. */
export function readHeadSync(path: string): ChainHead | string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(headPathOf(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return `unreadable: ${(error as Error).message}`;
  }
  return parseHeadBytes(bytes);
}

/** The head beside the log at `path`, read asynchronously (see `readHeadSync`). */
export async function readHead(path: string): Promise<ChainHead | string | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(headPathOf(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return `unreadable: ${(error as Error).message}`;
  }
  return parseHeadBytes(bytes);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * What a writer keeps between lines (see {@linkcode createHeadKeeper}): the head file it last
 * wrote in place, still open, and the last record it wrote there.
 */
export interface HeadKeeper {
  /** The open head file and who it is; only used again while the name still leads to it. */
  file?:
    | { readonly handle: Deno.FsFile; readonly dev: number; readonly ino: number | null }
    | undefined;
  /** Where the open head file's offset is, when known (a seek to it is skipped). */
  offset?: number | undefined;
  /** The last record written, with its bytes (its check is not hashed again). */
  last?: { readonly seq: number; readonly hash: string; readonly bytes: Uint8Array } | undefined;
  /**
   * The room probe of a long-running writer (see `requireRoom`): a file beside the head whose
   * name was removed once it was created, so nothing is left behind whatever happens.
   */
  probe?: Deno.FsFile | undefined;
  /** Whether the open head file stays open after a line (a long-running writer). */
  readonly keepOpen: boolean;
}

/** A keeper for one writer; `keepOpen` keeps the head file open between lines. */
export function createHeadKeeper(keepOpen: boolean): HeadKeeper {
  return { keepOpen };
}

/** Closes the head file and the room probe `keeper` holds open, if any. */
export function releaseHead(keeper: HeadKeeper): void {
  releaseHeadFile(keeper);
  releaseProbe(keeper);
}

/** Closes the head file `keeper` holds open, if any (its room probe stays). */
function releaseHeadFile(keeper: HeadKeeper): void {
  const file = keeper.file;
  keeper.file = undefined;
  keeper.offset = undefined;
  try {
    file?.handle.close();
  } catch { /* closed already */ }
}

function releaseProbe(keeper: HeadKeeper): void {
  const probe = keeper.probe;
  keeper.probe = undefined;
  try {
    probe?.close();
  } catch { /* closed already */ }
}

/** The bytes of `head`'s record, from `keeper` when it wrote that record last. */
function keptRecordBytes(head: ChainHead, keeper: HeadKeeper | undefined): Uint8Array {
  const last = keeper?.last;
  if (last !== undefined && last.seq === head.seq && last.hash === head.hash) return last.bytes;
  return recordBytes(head);
}

/**
 * Writes `head`'s record in place into the head file at `target`, when that file is a head of
 * this format, a plain file of its own, whose other slot holds `previous`'s record; false
 * (nothing written) otherwise. Throws when the write itself fails. With a `keeper`, the file
 * opened for the last line is used again when the name still leads to it (same device and
 * inode, a plain file, one link: the look below is made every time, by name).
 */
function writeInPlace(
  target: string,
  head: ChainHead,
  previous: ChainHead,
  keeper: HeadKeeper | undefined,
): boolean {
  let named: Deno.FileInfo;
  try {
    named = Deno.lstatSync(target);
  } catch {
    return false;
  }
  if (!named.isFile || named.nlink !== 1 || named.size !== HEAD_BYTES) return false;
  let file: Deno.FsFile;
  const kept = keeper?.file;
  if (kept !== undefined && kept.dev === named.dev && kept.ino === named.ino) {
    file = kept.handle;
  } else {
    if (keeper !== undefined) releaseHeadFile(keeper);
    try {
      // Read and write, so a FIFO swapped in after the look above cannot block the open.
      file = Deno.openSync(target, { read: true, write: true });
    } catch {
      return false;
    }
    // The open followed whatever the name held by then: only the file looked at is written.
    let opened: Deno.FileInfo;
    try {
      opened = file.statSync();
    } catch (error) {
      file.close();
      throw error;
    }
    if (
      !opened.isFile || opened.ino !== named.ino || opened.dev !== named.dev ||
      opened.nlink !== 1 || opened.size !== HEAD_BYTES
    ) {
      file.close();
      return false;
    }
    if (keeper !== undefined) {
      keeper.file = { handle: file, dev: opened.dev, ino: opened.ino };
      keeper.offset = 0;
    }
  }
  /** Moves the file's offset to `at`, unless the keeper knows it is there. */
  const seek = (at: number) => {
    if (keeper?.offset === at) return;
    if (keeper !== undefined) keeper.offset = undefined;
    file.seekSync(at, Deno.SeekMode.Start);
    if (keeper !== undefined) keeper.offset = at;
  };
  let done = false;
  try {
    const other = slotOffset(previous.seq);
    const held = new Uint8Array(SLOT);
    seek(other);
    let filled = 0;
    // Unknown until the read is done: a read that fails part way leaves it anywhere.
    if (keeper !== undefined) keeper.offset = undefined;
    while (filled < SLOT) {
      const n = file.readSync(held.subarray(filled));
      if (n === null) return false;
      filled += n;
    }
    if (keeper !== undefined) keeper.offset = other + SLOT;
    if (!sameBytes(held, keptRecordBytes(previous, keeper))) return false;
    const record = recordBytes(head);
    seek(slotOffset(head.seq));
    if (keeper !== undefined) keeper.offset = undefined;
    // One write: a record is never written in two parts (a short write to a regular file
    // happens only when the disk refuses, and then the error below ends the line).
    const n = file.writeSync(record);
    if (keeper !== undefined && n === SLOT) keeper.offset = slotOffset(head.seq) + SLOT;
    if (n !== SLOT) {
      throw new Error(`the head file ${target}: wrote ${n} of ${SLOT} bytes`);
    }
    if (keeper !== undefined) keeper.last = { seq: head.seq, hash: head.hash, bytes: record };
    done = true;
    return true;
  } finally {
    // Kept open only while it is in use for this writer's lines; anything else closes it.
    if (keeper === undefined) file.close();
    else if (!done || !keeper.keepOpen) releaseHeadFile(keeper);
  }
}

/**
 * Creates the file `temporary` holding `bytes` (mode 0600). Whatever a crash (or anyone) left
 * under that name goes first: a symlink there is not followed (`createNew` refuses any
 * existing name), it is removed. Called under the log's exclusive lock, which is why one
 * fixed temporary name is enough.
 */
function createTemporary(temporary: string, bytes: Uint8Array): void {
  try {
    Deno.writeFileSync(temporary, bytes, { mode: 0o600, createNew: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    Deno.removeSync(temporary);
    Deno.writeFileSync(temporary, bytes, { mode: 0o600, createNew: true });
  }
}

/** Removes `temporary` if it is there. */
function removeTemporary(temporary: string): void {
  try {
    Deno.removeSync(temporary);
  } catch { /* never created, or renamed */ }
}

/**
 * Replaces the head file at `target` in one step (a new file renamed over it), both slots
 * holding `head`'s record, so a reader sees the old head or the new one, never a part.
 */
function replaceHead(target: string, head: ChainHead): void {
  const temporary = `${target}.tmp`;
  const record = recordBytes(head);
  const bytes = new Uint8Array(HEAD_BYTES);
  bytes.set(record, 0);
  bytes.set(record, SLOT);
  try {
    createTemporary(temporary, bytes);
    Deno.renameSync(temporary, target);
  } catch (error) {
    // A full disk fails the write after creating the file: leave no empty head behind.
    removeTemporary(temporary);
    throw error;
  }
}

const ONE_BYTE = new Uint8Array(1);

/**
 * Throws (ENOSPC) when the file system holding the head has no room left for a new file: one
 * byte written to a file under the head's temporary name, then removed. A line used to cost
 * a new head file, so a full state directory always stopped the call at the audit, with its
 * clear error, before the session or undo stores met the full disk in the middle of their
 * own writes; a record rewritten in place needs no room, so the room is asked for here.
 * About 20 µs, none of it a flush.
 *
 * A `keeper` that keeps files open keeps the probe too, its name already removed, and empty:
 * the next ask writes its byte into it and empties it again. Emptying frees the block the byte
 * took, so each ask needs a new block as a new file does, and the probe holds none between
 * asks (a disk filled meanwhile leaves it none to reuse); two system calls instead of five,
 * and no change to the directory. A failure closes it; the next ask creates one anew.
 */
function requireRoom(target: string, keeper: HeadKeeper | undefined): void {
  const kept = keeper?.probe;
  if (kept !== undefined) {
    try {
      // Opened to append: the byte lands at the start of the empty file.
      kept.writeSync(ONE_BYTE);
      kept.truncateSync(0);
      return;
    } catch (error) {
      releaseProbe(keeper!);
      throw error;
    }
  }
  const temporary = `${target}.tmp`;
  const keep = keeper?.keepOpen === true;
  try {
    // Opened and written by hand, not by `createTemporary`: the probe lives for two calls
    // (or, kept, without a name), so its mode needs no `fchmod` past the umask (0600 or
    // narrower either way).
    const options = { append: true, createNew: true, mode: 0o600 } as const;
    let probe: Deno.FsFile;
    try {
      probe = Deno.openSync(temporary, options);
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      Deno.removeSync(temporary);
      probe = Deno.openSync(temporary, options);
    }
    let kept = false;
    try {
      probe.writeSync(ONE_BYTE);
      if (keep) {
        probe.truncateSync(0);
        kept = true;
      }
    } finally {
      if (kept) keeper!.probe = probe;
      else probe.close();
    }
  } finally {
    removeTemporary(temporary);
  }
}

/**
 * Makes `head` (line N) the head beside the log at `path`; `prev` is line N's `prev`, the hash
 * of line N−1. In place when the file holds line N−1's record, else replaced whole (see the
 * module's contract); either way it throws, head untouched, when the file system is full.
 * Called under the log's exclusive lock. `roomFound`: a line written before this one under
 * the same lock found room already (a group commit), so none is asked for again. `keeper`
 * keeps the head file between lines (see {@linkcode HeadKeeper}).
 */
export function writeHeadSync(
  path: string,
  head: ChainHead,
  prev: string,
  { roomFound = false, keeper }: { roomFound?: boolean; keeper?: HeadKeeper } = {},
): void {
  const target = headPathOf(path);
  if (head.seq > 1) {
    if (!roomFound) requireRoom(target, keeper);
    if (writeInPlace(target, head, { seq: head.seq - 1, hash: prev }, keeper)) return;
  }
  if (keeper !== undefined) {
    // The name gets a new file: the one kept open is no longer the head.
    releaseHeadFile(keeper);
    keeper.last = undefined;
  }
  replaceHead(target, head);
}
