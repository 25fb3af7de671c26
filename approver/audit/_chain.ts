/**
 * The chain of the audit log: each line's `prev` is the SHA-256 of the line before, and the
 * head (the last line's `seq` and hash) is kept beside the log in `<log>.head`, replaced in
 * one step with every line. Here: the hashes, the head file, the lines of an open log, and
 * where the next line hooks on.
 *
 * @module
 */

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

/**
 * `{"seq": N, "<field>": "<64 hex>"}` read from `text` (N ≥ 1), or the reason it is not one:
 * the shape of a head file (`hash`) and of a start file (`prev`).
 */
export function parseSeqHash(text: string, field: "hash" | "prev"): ChainHead | string {
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

/** The head file's text for `head`. */
function headText(head: ChainHead): string {
  return JSON.stringify({ seq: head.seq, hash: head.hash }) + "\n";
}

/** The head beside the log at `path`: undefined when there is none, a string when damaged. */
export function readHeadSync(path: string): ChainHead | string | undefined {
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
export function writeHeadSync(path: string, head: ChainHead): void {
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
export function fieldsOf(line: string): { seq?: number; prev?: string } {
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

/** The first line of the open file (of `size` bytes), without its newline. */
export function firstLine(file: Deno.FsFile, size: number): string | undefined {
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

/** The last line of the open file (of `size` bytes), without its newline. */
export function lastLine(file: Deno.FsFile, size: number): string | undefined {
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
export async function nextLink(
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
