/**
 * The audit trail: one JSON object a line, appended under an exclusive lock, each line
 * holding `prev`, the SHA-256 of the line before it, so any edit, removal or reordering
 * breaks the chain, and `seq`, its position, so the break can be named. Inputs are cut to 1 KiB and secrets are redacted before writing.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { dirname } from "node:path";

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
}

/** Where events go. */
export interface AuditSink {
  /** Records one event; must not throw for the caller. */
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

/** SHA-256 of `text` (as UTF-8) in lower-case hex. */
function sha256Sync(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** SHA-256 of `text` as lower-case hex. */
export function sha256(text: string): Promise<string> {
  return Promise.resolve(sha256Sync(text));
}

/** The `prev` of the first line of a file. */
export const GENESIS = "0".repeat(64);

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

/** The chain's end as this process last wrote it. */
interface Tail {
  readonly dev: number;
  readonly ino: number | null;
  /** The file's size just after the line was written. */
  readonly size: number;
  readonly hash: string;
  readonly seq: number;
}

/** An audit file at `path`; `secrets` are values never to be written. */
export function createAuditFile(
  path: string,
  options: { secrets?: readonly string[]; clock?: () => Date } = {},
): AuditSink & { readonly path: string } {
  const clock = options.clock ?? (() => new Date());
  // Other processes may append to the same file, so each line is written under the lock
  // after a look at the file. While it is still the file and the size this process left,
  // the last line is the one this process wrote and is not read back. The steps under the
  // lock are synchronous (a local append takes microseconds) and one call at a time, in order.
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
  const append = async (event: AuditEvent): Promise<void> => {
    using file = open();
    // The lock is awaited: another process holding it must not stall this event loop (the
    // tool worker's confinement proofs are answered on it).
    await file.lock(true);
    try {
      const info = file.statSync();
      let prev = GENESIS;
      let seq = 1;
      if (
        tail !== undefined && tail.dev === info.dev && tail.ino === info.ino &&
        tail.size === info.size
      ) {
        prev = tail.hash;
        seq = tail.seq + 1;
      } else {
        const last = lastLine(file, info.size);
        if (last !== undefined) {
          prev = sha256Sync(last);
          try {
            const before = JSON.parse(last).seq;
            seq = typeof before === "number" ? before + 1 : 1;
          } catch {
            seq = 1; // a damaged last line: the chain check reports it
          }
        }
      }
      const entry = {
        seq,
        time: clock().toISOString(),
        ...event,
        input: cut(redact(event.input, options.secrets), MAX_INPUT),
        ...(event.reason === undefined ? {} : { reason: redact(event.reason, options.secrets) }),
        prev,
      };
      const line = JSON.stringify(entry);
      const bytes = new TextEncoder().encode(line + "\n");
      file.seekSync(0, Deno.SeekMode.End);
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
      tail = {
        dev: info.dev,
        ino: info.ino,
        size: info.size + bytes.length,
        hash: sha256Sync(line),
        seq,
      };
    } catch (error) {
      tail = undefined;
      throw error;
    } finally {
      await file.unlock();
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

/**
 * The first broken link of the chain in `text`, or undefined when it is intact.
 *
 * Detection is exact (a line's `prev` is the hash of the line before it); the diagnosis of
 * what happened uses `seq` and is best effort. The last line has no successor holding its
 * hash: an edit of it alone is only caught against a head hash kept elsewhere (`head`).
 */
export async function verifyChain(text: string): Promise<ChainBreak | undefined> {
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
    const expected = i === 0 ? GENESIS : hashes[i - 1];
    if (prev === expected) continue;
    const n = i + 1;
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

/** SHA-256 of the last line: kept elsewhere, it lets `verifyChain`'s blind spot be checked. */
export async function head(text: string): Promise<string> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.length === 0 ? GENESIS : await sha256(lines.at(-1)!);
}
