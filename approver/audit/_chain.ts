/**
 * The chain of the audit log: each line's `prev` is the SHA-256 of the line before, and the
 * head (the last line's `seq` and hash) is kept beside the log in `<log>.head` (see
 * `_head.ts`). Here: the hashes, the lines of an open log, and where the next line hooks on.
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

/**
 * `{"seq": N, "<field>": "<64 hex>"}` read from `text` (N ≥ 1), or the reason it is not one:
 * the shape of a start file (`prev`) and of a head file of the previous format (`hash`).
 */
export function parseSeqHash(text: string, field: "hash" | "prev"): ChainHead | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  return seqHashOf(value, field) ?? `not {"seq": N, "${field}": "<SHA-256>"}`;
}

/** The `seq` (N ≥ 1) and the SHA-256 under `field` of a parsed object, if it has them. */
export function seqHashOf(value: unknown, field: "hash" | "prev"): ChainHead | undefined {
  const read = value as Record<string, unknown> | null;
  if (
    typeof read !== "object" || read === null || !Number.isSafeInteger(read.seq) ||
    (read.seq as number) < 1 || typeof read[field] !== "string" ||
    !/^[0-9a-f]{64}$/.test(read[field] as string)
  ) {
    return undefined;
  }
  return { seq: read.seq as number, hash: read[field] as string };
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
