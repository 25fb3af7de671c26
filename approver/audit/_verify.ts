/**
 * Verification of the audit log: the first broken link of a file's chain, of the files of a
 * rotated log, and of the log's end against its head, each named with the line to look at and
 * a best-effort account of what happened there.
 *
 * @module
 */

import { basename } from "node:path";
import { type ChainHead, fieldsOf, GENESIS, sha256 } from "./_chain.ts";
import type { AuditFileText } from "./_read.ts";
import { type ChainStart, startPathOf } from "./_rotation.ts";

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
