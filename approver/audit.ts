/**
 * The audit trail: one JSON object a line, appended under an exclusive lock, each line
 * holding `prev`, the SHA-256 of the line before it, so any edit, removal or reordering
 * breaks the chain, and `seq`, its position, so the break can be named. Inputs are cut to
 * 1 KiB and secrets are redacted before writing.
 *
 * The chain's head (the last line's `seq` and hash) is kept beside the log, in `<log>.head`,
 * replaced atomically under the same lock with every line: the chain alone cannot tell a log
 * whose last lines were dropped, or that was emptied or rewritten whole, from an intact one.
 * A writer that finds the log and its head disagreeing never papers over it: it chains the
 * next line onto the head (so the gap stays visible in the log), or, with no head at all
 * beside a non-empty log, starts the next line with an all-zero `prev` (see `verifyChain`).
 *
 * Rotation (`maxBytes`): a log that has reached the size is renamed, under its lock, to
 * `<log>.<first seq, 9 digits>` (`audit.jsonl.000000001`), and the next line starts a new
 * `<log>` chained onto the head, so the files read oldest first are one chain. With `keep`,
 * the oldest rotated files beyond that many are removed; `<log>.start` then records where
 * the chain now begins (the `seq` and `prev` of the oldest file's first line), so removing
 * a rotated file by hand is told from retention (as the head tells a dropped end).
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { sha256Hex } from "./_sha256.ts";

/** The kinds of audit events. */
export type AuditEventName = "tool.execute" | "tool.denied" | "tool.error" | "tool.done";

/** One event, before `time` and `prev` are added. */
export interface AuditEvent {
  /** What happened. */
  readonly event: AuditEventName;
  /** Tool name. */
  readonly tool: string;
  /** Canonical JSON of the input (cut and redacted on write). */
  readonly input: string;
  /** Deciding rule. */
  readonly rule?: string;
  /** Denial reason or error text. */
  readonly reason?: string;
  /** Call duration (tool.done, tool.error). */
  readonly "duration_ms"?: number;
  /** Session id. */
  readonly "session_id"?: string;
  /** Who made the call: cli, model, mcp. */
  readonly source?: string;
  /**
   * What a bash call under the overlay changed (tool.done, tool.error): `A`/`M`/`D`, a space,
   * the path, in path order.
   */
  readonly changes?: readonly string[];
  /** Whether the gate allowed `changes` (applying them can still fail: then tool.error). */
  readonly "changes_allowed"?: boolean;
}

/** Where events go. */
export interface AuditSink {
  /**
   * Records one event. Rejects when it cannot (a full disk): callers let that end the call,
   * so nothing runs unrecorded; the file sink leaves the log as it was (no partial line).
   */
  record(event: AuditEvent): Promise<void>;
}

const MAX_INPUT = 1024;
const GENERIC_SECRETS: readonly RegExp[] = [
  /sk-[A-Za-z0-9_-]{16,}/g, // Anthropic and OpenAI keys
  /gh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /github_pat_[A-Za-z0-9_]{20,}/g,
  /AKIA[0-9A-Z]{16}/g, // AWS access key ids
  /xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack tokens
  /(?<=[Bb]earer\s+)[A-Za-z0-9._~+/=-]{12,}/g,
  // Quotes may come escaped (`\"`): inputs are JSON, and so are the files the model writes.
  /(?<=(?:api[_-]?key|token|secret|password|passwd)(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)[^\s"'\\,;]{6,}/gi,
];

/** Replaces known secret values and secret-looking tokens in `text` with `[REDACTED]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const value of secrets) {
    if (value.length < 6) continue;
    // Inputs are canonical JSON, where a value with quotes or backslashes appears escaped.
    for (const form of new Set([value, JSON.stringify(value).slice(1, -1)])) {
      out = out.split(form).join("[REDACTED]");
    }
  }
  for (const pattern of GENERIC_SECRETS) out = out.replace(pattern, "[REDACTED]");
  return out;
}

/** `text` cut to at most `max` UTF-8 bytes on a character boundary, `…` marking a cut. */
function cut(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a UTF-8 sequence
  return new TextDecoder().decode(bytes.subarray(0, end)) + "…";
}

/** What a line holds of a call's input. */
interface InputFields {
  /** The input, redacted, cut to `MAX_INPUT` bytes. */
  readonly input: string;
  /** SHA-256 of the whole redacted input, so what lies past the cut is still pinned down. */
  readonly "input_sha256": string;
  /** Length of the whole redacted input in UTF-8 bytes. */
  readonly "input_bytes": number;
}

/**
 * The input fields of a line. A cut alone would let a payload hide past 1 KiB of padding;
 * the hash and length of the whole input pin down what ran, and a transcript's call (say,
 * from `session show`) can be matched against the line by redacting and hashing it the same
 * way. The hash is of the *redacted* text on purpose: a hash of the raw input would let
 * anyone who reads the log confirm a guessed secret (put the guess back, hash, compare), an
 * offline dictionary attack on every short password or token that was redacted. The redacted
 * text still binds everything but the secret values.
 */
function inputFields(input: string, secrets: readonly string[] | undefined): InputFields {
  const redacted = redact(input, secrets);
  const bytes = new TextEncoder().encode(redacted);
  return {
    input: cut(redacted, MAX_INPUT),
    "input_sha256": sha256Hex(bytes),
    "input_bytes": bytes.length,
  };
}

/**
 * SHA-256 of `bytes` in lower-case hex, by Web Crypto: `node:crypto` would load Node's
 * compatibility layer into the CLI's start-up (about 25 ms measured) for every call.
 */
async function sha256Bytes(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of `text` (as UTF-8) in lower-case hex. */
export function sha256(text: string): Promise<string> {
  return sha256Bytes(new TextEncoder().encode(text));
}

/** The `prev` of the first line of a file. */
export const GENESIS = "0".repeat(64);

/** The default size at which the CLI rotates the log (`state.audit.max_bytes`): 64 MiB. */
export const DEFAULT_AUDIT_MAX_BYTES = 64 * 1024 * 1024;

/** The default number of rotated files the CLI keeps (`state.audit.keep`). */
export const DEFAULT_AUDIT_KEEP = 10;

/** Where the log at `path` goes when it is rotated: its first entry's `seq`, 9 digits. */
export function rotatedPathOf(path: string, seq: number): string {
  return `${path}.${String(seq).padStart(9, "0")}`;
}

/** Where the log at `path` records where its chain begins once rotated files were removed. */
export function startPathOf(path: string): string {
  return `${path}.start`;
}

/** The rotated files of the log at `path`, oldest first. */
export function rotatedFiles(path: string): string[] {
  const name = basename(path);
  const found: { seq: number; path: string }[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dirname(path))];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.startsWith(`${name}.`)) continue;
    const suffix = entry.name.slice(name.length + 1);
    if (!/^\d{9,}$/.test(suffix)) continue;
    found.push({ seq: Number(suffix), path: join(dirname(path), entry.name) });
  }
  return found.sort((a, b) => a.seq - b.seq).map((f) => f.path);
}

/** Where a chain begins: the `seq` and `prev` of its first line. */
export interface ChainStart {
  readonly seq: number;
  readonly prev: string;
}

/** The start kept in the text of a start file, or the reason the text is not one. */
export function parseStart(text: string): ChainStart | string {
  const read = parseSeqHash(text, "prev");
  return typeof read === "string" ? read : { seq: read.seq, prev: read.hash };
}

/**
 * `{"seq": N, "<field>": "<64 hex>"}` read from `text` (N ≥ 1), or the reason it is not one:
 * the shape of a head file (`hash`) and of a start file (`prev`).
 */
function parseSeqHash(text: string, field: "hash" | "prev"): ChainHead | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  const read = value as Record<string, unknown> | null;
  if (
    typeof read !== "object" || read === null || !Number.isSafeInteger(read.seq) ||
    (read.seq as number) < 1 || typeof read[field] !== "string" ||
    !/^[0-9a-f]{64}$/.test(read[field] as string)
  ) {
    return `not {"seq": N, "${field}": "<SHA-256>"}`;
  }
  return { seq: read.seq as number, hash: read[field] as string };
}

/** The first line of the open file (of `size` bytes), without its newline. */
function firstLine(file: Deno.FsFile, size: number): string | undefined {
  if (size === 0) return undefined;
  let block = 4096;
  for (;;) {
    const length = Math.min(size, block);
    file.seekSync(0, Deno.SeekMode.Start);
    const buffer = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const n = file.readSync(buffer.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    const text = new TextDecoder().decode(buffer.subarray(0, filled));
    const at = text.indexOf("\n");
    if (at !== -1) return text.slice(0, at);
    if (length === size) return text;
    block *= 4;
  }
}

function lastLine(file: Deno.FsFile, size: number): string | undefined {
  if (size === 0) return undefined;
  // Read backwards in blocks until a complete last line is in hand.
  let block = 4096;
  for (;;) {
    const start = Math.max(0, size - block);
    file.seekSync(start, Deno.SeekMode.Start);
    const buffer = new Uint8Array(size - start);
    let filled = 0;
    while (filled < buffer.length) {
      const n = file.readSync(buffer.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    const text = new TextDecoder().decode(buffer.subarray(0, filled)).replace(/\n$/, "");
    const at = text.lastIndexOf("\n");
    if (at !== -1 || start === 0) return text.slice(at + 1);
    block *= 4;
  }
}

/** The chain's end: the last line's `seq` and the SHA-256 of that line. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** Where the head of the log at `path` is kept: beside it, `<path>.head`. */
export function headPathOf(path: string): string {
  return `${path}.head`;
}

/**
 * The head kept in the text of a head file, or the reason the text is not one. A head is
 * `{"seq":N,"hash":"<64 hex>"}` and a newline.
 */
export function parseHead(text: string): ChainHead | string {
  return parseSeqHash(text, "hash");
}

/** The head file's text for `head`. */
function headText(head: ChainHead): string {
  return JSON.stringify({ seq: head.seq, hash: head.hash }) + "\n";
}

/** The head beside the log at `path`: undefined when there is none, a string when damaged. */
function readHeadSync(path: string): ChainHead | string | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(headPathOf(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return `unreadable: ${(error as Error).message}`;
  }
  return parseHead(text);
}

/**
 * Replaces the head beside the log at `path` in one step (a rename over it), so a reader
 * sees the old head or the new one, never a part. Called under the log's exclusive lock,
 * which is why one fixed temporary name is enough.
 */
function writeHeadSync(path: string, head: ChainHead): void {
  const target = headPathOf(path);
  const temporary = `${target}.tmp`;
  const text = headText(head);
  try {
    try {
      Deno.writeTextFileSync(temporary, text, { mode: 0o600, createNew: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      // Whatever a crash (or anyone) left under the temporary name goes first: a symlink there
      // is not followed (`createNew` refuses any existing name), it is removed.
      Deno.removeSync(temporary);
      Deno.writeTextFileSync(temporary, text, { mode: 0o600, createNew: true });
    }
    Deno.renameSync(temporary, target);
  } catch (error) {
    // A full disk fails the write after creating the file: leave no empty head behind.
    try {
      Deno.removeSync(temporary);
    } catch { /* never created, or renamed */ }
    throw error;
  }
}

/** The `seq` and `prev` of a line, where it has them. */
function fieldsOf(line: string): { seq?: number; prev?: string } {
  try {
    const entry = JSON.parse(line);
    return {
      ...(typeof entry?.seq === "number" ? { seq: entry.seq } : {}),
      ...(typeof entry?.prev === "string" ? { prev: entry.prev } : {}),
    };
  } catch {
    return {}; // a damaged line: the chain check reports it
  }
}

/**
 * Where the next line of the log hooks on, from the log's last line and the head beside it
 * (read under the lock): normally the last line, which the head names. When they disagree
 * (lines dropped from the end, an emptied or rewritten log) the next line hooks onto the
 * head, so `verifyChain` names the gap at that line for good; a last line one past the head
 * and chained onto it is a write whose head update was cut short (the process died between
 * the two), and is continued. With no usable head beside a non-empty log, nothing tells what
 * the log should end with: the next line starts over with an all-zero `prev`, which
 * `verifyChain` reports, instead of vouching for whatever the log now holds.
 */
async function nextLink(
  last: string | undefined,
  head: ChainHead | string | undefined,
): Promise<{ prev: string; seq: number }> {
  const fields = last === undefined ? {} : fieldsOf(last);
  if (typeof head === "object") {
    if (last !== undefined) {
      const hash = await sha256(last);
      if (hash === head.hash) return { prev: hash, seq: head.seq + 1 };
      if (fields.seq === head.seq + 1 && fields.prev === head.hash) {
        return { prev: hash, seq: fields.seq + 1 };
      }
    }
    return { prev: head.hash, seq: head.seq + 1 };
  }
  if (last === undefined) return { prev: GENESIS, seq: 1 };
  return { prev: GENESIS, seq: (fields.seq ?? 0) + 1 };
}

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
  // lock are a local append, a hash on this thread and the head's replacement, one call at a
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
  /** Removes the oldest rotated files beyond `keep`, recording where the chain now begins. */
  const prune = () => {
    const rotated = rotatedFiles(path);
    while (keep > 0 && rotated.length > keep) {
      const oldest = rotated.shift()!;
      using next = Deno.openSync(rotated[0]!, { read: true });
      const fields = fieldsOf(firstLine(next, next.statSync().size) ?? "");
      if (fields.seq === undefined || fields.prev === undefined) return; // damaged: keep all
      // The start first: a process killed between the two leaves an extra file, not a hole.
      const target = startPathOf(path);
      const temporary = `${target}.tmp`;
      try {
        Deno.removeSync(temporary);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      Deno.writeTextFileSync(
        temporary,
        JSON.stringify({ seq: fields.seq, prev: fields.prev }) + "\n",
        { mode: 0o600, createNew: true },
      );
      Deno.renameSync(temporary, target);
      Deno.removeSync(oldest);
    }
  };
  /** Renames the log to `target` unless that name is taken; false when it stays. */
  const renameAway = (target: string): boolean => {
    try {
      Deno.lstatSync(target);
      return false;
    } catch { /* free */ }
    Deno.renameSync(path, target);
    return true;
  };
  /**
   * Renames the full log (locked, `info` its stat) to its rotated name and returns the new
   * log, locked, or undefined when it stays (its first line names no entry, or the name is
   * taken): then the line goes to the full log, and nothing is lost.
   */
  const rotate = async (file: Deno.FsFile, info: Deno.FileInfo) => {
    const seq = fieldsOf(firstLine(file, info.size) ?? "").seq;
    if (seq === undefined || !renameAway(rotatedPathOf(path, seq))) return undefined;
    // The new log is locked before the old one is released, so a reader never finds the
    // chain's end in neither file.
    const next = open();
    try {
      await next.lock(true);
      prune();
    } catch (error) {
      next.close();
      throw error;
    }
    return next;
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
      writeHeadSync(path, { seq, hash });
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
        if (maxBytes > 0 && info.size >= maxBytes) rotated = await rotate(file, info);
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

/** A broken chain: the line to look at (1-based) and what happened there. */
export interface ChainBreak {
  readonly line: number;
  readonly problem: string;
}

/** Where the first line of a file must hook on when the chain does not begin in it. */
export interface FirstLink {
  /** The first line's `prev`; undefined: not checked (leftovers of a cut-short removal). */
  readonly prev: string | undefined;
  /** The first line's `seq`. */
  readonly seq: number;
  /** The file the chain comes from (its last line is the one `prev` hashes), for messages. */
  readonly after?: string;
  /** The start file that recorded `prev`, for messages. */
  readonly start?: string;
}

function linesWere(count: number): string {
  return count === 1 ? "1 line was" : `${count} lines were`;
}

function entryRange(from: number, to: number): string {
  return from === to ? `(entry ${from})` : `(entries ${from}–${to})`;
}

/** Why the first line does not hook on where `first` says. */
function firstLinkProblem(first: FirstLink, seq: unknown): string {
  const has = typeof seq === "number";
  if (first.after !== undefined) {
    const after = first.after;
    if (seq === first.seq) {
      return `line 1 does not hold the hash of the last line of ${after}: one of the two was edited`;
    }
    if (has && seq > first.seq) {
      return `${linesWere(seq - first.seq)} removed between ${after} and line 1 ${
        entryRange(first.seq, seq - 1)
      }`;
    }
    return has
      ? `line 1 is entry ${seq}, but ${after} ends at entry ${first.seq - 1}: files were ` +
        "reordered, copied or rewritten"
      : `line 1 does not continue the chain of ${after}: it was edited`;
  }
  const start = first.start ?? "the start file";
  if (seq === first.seq) {
    return `line 1 does not match the start recorded in ${start} (entry ${first.seq}): it was edited`;
  }
  if (has && seq > first.seq) {
    return `the log begins at entry ${seq}, but ${start} records that it begins at entry ` +
      `${first.seq}: ${linesWere(seq - first.seq)} removed from the start ${
        entryRange(first.seq, seq - 1)
      }, a rotated file deleted by hand or lines cut from the oldest one`;
  }
  return `line 1 does not match the start recorded in ${start} (entry ${first.seq}): the ` +
    "file was edited or replaced";
}

/**
 * The first broken link of the chain in `text`, or undefined when it is intact. The first
 * line starts the chain (an all-zero `prev`) unless `first` says where it hooks on (a file
 * after a rotation, or the oldest file kept once older ones were removed).
 *
 * Detection is exact (a line's `prev` is the hash of the line before it); the diagnosis of
 * what happened uses `seq` and is best effort. The last line has no successor holding its
 * hash: an edit of it alone is only caught against a head hash kept elsewhere (`head`).
 */
export async function verifyChain(
  text: string,
  first?: FirstLink,
): Promise<ChainBreak | undefined> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const entries: { prev?: unknown; seq?: unknown }[] = [];
  for (let i = 0; i < lines.length; i++) {
    try {
      const entry = JSON.parse(lines[i]!);
      if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new Error();
      entries.push(entry);
    } catch {
      return { line: i + 1, problem: "not a JSON object: the line was edited or cut" };
    }
  }
  const hashes = await Promise.all(lines.map(sha256));
  for (let i = 0; i < lines.length; i++) {
    const { prev, seq } = entries[i]!;
    if (i === 0 && first !== undefined) {
      if (first.prev === undefined || prev === first.prev) continue;
      return { line: 1, problem: firstLinkProblem(first, seq) };
    }
    const expected = i === 0 ? GENESIS : hashes[i - 1];
    if (prev === expected) continue;
    const n = i + 1;
    const previous = entries[i - 1]?.seq;
    if (i > 0 && prev === GENESIS && typeof previous === "number" && seq === previous + 1) {
      return {
        line: n,
        problem: `line ${n} starts a new chain after ${i} line${i === 1 ? "" : "s"}: ` +
          "when it was written the head file beside the log was missing or damaged, " +
          `so lines may have been removed from the end before line ${n}`,
      };
    }
    const other = hashes.indexOf(prev as string);
    if (other !== -1) {
      return {
        line: n,
        problem: `lines were reordered: line ${n} follows line ${other + 1} in the chain`,
      };
    }
    if (i === 0) {
      return {
        line: 1,
        problem: typeof seq === "number" && seq > 1
          ? `lines were removed from the start: the file begins at entry ${seq}`
          : "the first line does not start the chain: it was edited, or lines were removed from the start",
      };
    }
    const before = entries[i - 1]!.seq;
    if (typeof seq === "number" && typeof before === "number") {
      if (seq === before + 1) {
        return {
          line: n - 1,
          problem: `line ${n - 1} was edited: line ${n} holds the hash of a different line ${
            n - 1
          }`,
        };
      }
      if (seq > before + 1) {
        const count = seq - before - 1;
        return {
          line: n,
          problem: `${count} line${count === 1 ? " was" : "s were"} removed before line ${n} ` +
            (count === 1 ? `(entry ${seq - 1})` : `(entries ${before + 1}–${seq - 1})`),
        };
      }
      return {
        line: n,
        problem: `lines were reordered or copied: line ${n} is entry ${seq}, after entry ${before}`,
      };
    }
    return {
      line: n,
      problem: `prev does not match line ${n - 1}: line ${
        n - 1
      } was edited, or lines were removed or reordered here`,
    };
  }
  return undefined;
}

/** `count` lines, worded. */
function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * Checks the end of an intact chain (`verifyChain` found nothing) against the head kept
 * beside the log: `head` is what the head file held (undefined: no head file; a string: why
 * it is not a head). `headPath` names the file in messages. A log and a head that are both
 * absent or empty pass: nothing was audited yet.
 */
export async function verifyHead(
  text: string,
  head: ChainHead | string | undefined,
  headPath: string,
): Promise<ChainBreak | undefined> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const count = lines.length;
  if (head === undefined) {
    if (count === 0) return undefined;
    return {
      line: count,
      problem: `the head file ${headPath} is missing: lines may have been removed from the end ` +
        "(rousseau writes it with every line; check against a head kept elsewhere with --head)",
    };
  }
  if (typeof head === "string") {
    return {
      line: count,
      problem: `the head file ${headPath} is damaged (${head}): it was edited`,
    };
  }
  if (count === 0) {
    return {
      line: 1,
      problem: `the log is empty but its head records ${
        plural(head.seq, "entry", "entries")
      }: the log was emptied or replaced`,
    };
  }
  // Only two lines' hashes can matter: the last one's, and the one the head names.
  const seqs = lines.map((line, i) => fieldsOf(line).seq ?? i + 1);
  const last = seqs.at(-1)!;
  if (last === head.seq && await sha256(lines.at(-1)!) === head.hash) return undefined;
  const short = `${head.hash.slice(0, 12)}…`;
  if (last < head.seq) {
    const gone = head.seq - last;
    return {
      line: count + 1,
      problem: `the log ends at entry ${last} but its head records entry ${head.seq}: ` +
        `${plural(gone, "line was", "lines were")} removed from the end, or removed elsewhere ` +
        "and the chain after them rewritten",
    };
  }
  const at = seqs.indexOf(head.seq);
  if (last > head.seq && at !== -1 && await sha256(lines[at]!) === head.hash) {
    return {
      line: at + 2,
      problem:
        `${
          at + 2 === count ? `line ${count} comes` : `lines ${at + 2}–${count} come`
        } after the head (entry ${head.seq}): appended by something other than rousseau, or ` +
        "rousseau stopped between writing a line and its head",
    };
  }
  if (last === head.seq) {
    return {
      line: count,
      problem: `line ${count} does not match the head (entry ${head.seq}, hash ${short}): ` +
        "the last line was edited, or the chain was rewritten",
    };
  }
  return {
    line: count,
    problem: `the chain does not lead to the head (entry ${head.seq}, hash ${short}): ` +
      "the log was rewritten",
  };
}

/** SHA-256 of the last line: kept elsewhere, it lets `verifyChain`'s blind spot be checked. */
export async function head(text: string): Promise<string> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.length === 0 ? GENESIS : await sha256(lines.at(-1)!);
}

/** An audit log and its head as read together. */
export interface AuditSnapshot {
  /** The log's text; undefined when there is no log file. */
  readonly text: string | undefined;
  /** The head beside it: undefined when there is none, a string when it is damaged. */
  readonly head: ChainHead | string | undefined;
}

/**
 * Reads the log at `path` and its head under a shared lock on the log, so that a writer
 * (which holds the exclusive lock across a line and its head) is never seen half done.
 */
export async function readAuditLog(path: string): Promise<AuditSnapshot> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return { text: undefined, head: await readHead(path) };
  }
  try {
    await file.lock(false);
    const chunks: Uint8Array[] = [];
    for (;;) {
      const chunk = new Uint8Array(64 * 1024);
      const n = await file.read(chunk);
      if (n === null) break;
      chunks.push(chunk.subarray(0, n));
    }
    // The head is read while the lock is still held: closing the log releases it.
    const head = await readHead(path);
    const bytes = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    return { text: new TextDecoder().decode(bytes), head };
  } finally {
    file.close();
  }
}

async function readHead(path: string): Promise<ChainHead | string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(headPathOf(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return `unreadable: ${(error as Error).message}`;
  }
  return parseHead(text);
}

/** One file of a rotated log as read. */
export interface AuditFileText {
  readonly path: string;
  /** Its text; undefined when the file does not exist (the log itself, before any line). */
  readonly text: string | undefined;
}

/** A log with its rotated files, its head and its start, as read together. */
export interface AuditFiles {
  /** The rotated files, oldest first, then the log itself. */
  readonly files: readonly AuditFileText[];
  /** The head beside the log: undefined when there is none, a string when it is damaged. */
  readonly head: ChainHead | string | undefined;
  /** The start beside the log: undefined when there is none, a string when it is damaged. */
  readonly start: ChainStart | string | undefined;
}

async function readStart(path: string): Promise<ChainStart | string | undefined> {
  let text: string;
  try {
    text = await Deno.readTextFile(startPathOf(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    return `unreadable: ${(error as Error).message}`;
  }
  return parseStart(text);
}

/**
 * Reads the log at `path`, its rotated files, its head and its start under a shared lock on
 * the log: a writer rotates and prunes only under the exclusive lock, so the set is one
 * moment's.
 */
export async function readAuditFiles(path: string): Promise<AuditFiles> {
  for (;;) {
    let file: Deno.FsFile | undefined;
    try {
      file = await Deno.open(path, { read: true });
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    try {
      if (file !== undefined) {
        await file.lock(false);
        const info = file.statSync();
        const now = await Deno.stat(path).catch(() => undefined);
        if (now?.ino !== info.ino || now?.dev !== info.dev) continue; // rotated meanwhile
      }
      const rotated: AuditFileText[] = [];
      for (const older of rotatedFiles(path)) {
        rotated.push({ path: older, text: await Deno.readTextFile(older) });
      }
      let text: string | undefined;
      if (file !== undefined) {
        const chunks: Uint8Array[] = [];
        for (;;) {
          const chunk = new Uint8Array(64 * 1024);
          const n = await file.read(chunk);
          if (n === null) break;
          chunks.push(chunk.subarray(0, n));
        }
        const bytes = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
        let at = 0;
        for (const chunk of chunks) {
          bytes.set(chunk, at);
          at += chunk.length;
        }
        text = new TextDecoder().decode(bytes);
      }
      return {
        files: [...rotated, { path, text }],
        head: await readHead(path),
        start: await readStart(path),
      };
    } finally {
      file?.close();
    }
  }
}

/** A break found in one file of a rotated log. */
export interface FileBreak extends ChainBreak {
  /** The file it is in. */
  readonly file: string;
}

function splitLines(text: string | undefined): string[] {
  const out = (text ?? "").split("\n");
  if (out.at(-1) === "") out.pop();
  return out;
}

/**
 * The first broken link across the files of a rotated log (oldest first), or undefined: each
 * file's chain, each file's first line hooked onto the last line of the file before, and the
 * oldest file's first line onto the start of the chain (an all-zero `prev`, or the `start`
 * recorded when older files were removed). `logPath` names the start file in messages.
 */
export async function verifyFiles(
  files: readonly AuditFileText[],
  start: ChainStart | string | undefined,
  logPath: string,
): Promise<FileBreak | undefined> {
  const present = files.filter((f) => f.text !== undefined);
  if (present.length === 0) return undefined;
  const startName = basename(startPathOf(logPath));
  if (typeof start === "string") {
    return {
      file: present[0]!.path,
      line: 1,
      problem: `the start file ${startPathOf(logPath)} is damaged (${start}): it was edited`,
    };
  }
  let link: FirstLink | undefined;
  if (start !== undefined) {
    const matches = (f: AuditFileText) => {
      const fields = fieldsOf(splitLines(f.text)[0] ?? "");
      return fields.seq === start.seq && fields.prev === start.prev;
    };
    // Files older than the one the start names are left from a removal that was cut short.
    const at = present.findIndex(matches);
    link = at > 0
      ? { prev: undefined, seq: 1 }
      : { prev: start.prev, seq: start.seq, start: startName };
  }
  for (const file of present) {
    const found = await verifyChain(file.text!, link);
    if (found !== undefined) return { file: file.path, ...found };
    const last = splitLines(file.text).at(-1);
    if (last === undefined) continue; // an empty file: the next hooks onto the one before
    const seq = fieldsOf(last).seq;
    link = {
      prev: await sha256(last),
      seq: (seq ?? 0) + 1,
      after: basename(file.path),
    };
  }
  return undefined;
}
