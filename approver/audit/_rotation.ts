/**
 * Rotation of the audit log: a log that has reached `maxBytes` is renamed, under its lock, to
 * `<log>.<first seq, 9 digits>`, and the next line starts a new `<log>` chained onto the head.
 * With `keep`, the oldest rotated files beyond that many go, and `<log>.start` records where
 * the chain now begins, so removing a rotated file by hand is told from retention.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { fieldsOf, firstLine, parseSeqHash } from "./_chain.ts";

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
 * Removes the oldest rotated files of the log at `path` beyond `keep` (0: none go), recording
 * where the chain now begins. Called under the log's exclusive lock.
 */
function pruneRotated(path: string, keep: number): void {
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
}

/** Renames the log at `path` to `target` unless that name is taken; false when it stays. */
function renameAway(path: string, target: string): boolean {
  try {
    Deno.lstatSync(target);
    return false;
  } catch { /* free */ }
  Deno.renameSync(path, target);
  return true;
}

/**
 * Renames the full log at `path` (`file`, locked, `info` its stat) to its rotated name and
 * returns the new log, from `open` and locked, or undefined when it stays (its first line
 * names no entry, or the name is taken): then the line goes to the full log, and nothing is
 * lost. Rotated files beyond `keep` are removed.
 */
export async function rotateLog(
  path: string,
  file: Deno.FsFile,
  info: Deno.FileInfo,
  open: () => Deno.FsFile,
  keep: number,
): Promise<Deno.FsFile | undefined> {
  const seq = fieldsOf(firstLine(file, info.size) ?? "").seq;
  if (seq === undefined || !renameAway(path, rotatedPathOf(path, seq))) return undefined;
  // The new log is locked before the old one is released, so a reader never finds the
  // chain's end in neither file.
  const next = open();
  try {
    await next.lock(true);
    pruneRotated(path, keep);
  } catch (error) {
    next.close();
    throw error;
  }
  return next;
}
