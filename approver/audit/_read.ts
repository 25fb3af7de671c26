/**
 * Reading the audit log for checks: the log and its head, or the log with its rotated files,
 * head and start, each set read together under a shared lock on the log.
 *
 * @module
 */

import type { ChainHead } from "./_chain.ts";
import { readHead } from "./_head.ts";
import { type ChainStart, parseStart, rotatedFiles, startPathOf } from "./_rotation.ts";

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
