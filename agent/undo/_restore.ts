/**
 * Putting back what turns changed, from their records (`_store.ts`). Nothing is
 * written when a path changed after the turn (its state is not the one the turn left), unless
 * `force`; a path already back to how it was before the turn is left alone. Files whose old
 * content was not kept (over the size limit, a full store) are named, never silently skipped.
 *
 * Every path is checked again just before it is written (`_guard.ts`): nothing is
 * written through a symbolic link on the way, outside the turn's workspace, or into
 * rousseau's own files; a file comes back without set-user-ID or set-group-ID bits. Nothing
 * at all is written while a record is damaged, a turn's workspace is gone, or (for chat's
 * `/undo`) a turn changed another workspace than the caller's.
 *
 * @module
 */

import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { DEFAULT_UNDO_MAX_FILE_BYTES, type Entry, sameEntry } from "./_entry.ts";
import { isUnder } from "./_check.ts";
import { chmodDirectory, createRestoreGuard, rootGone, SET_ID_BITS } from "./_guard.ts";
import { settlePending } from "./_recorder.ts";
import type { TurnRecord, UndoStore } from "./_store.ts";

/** What `undo` did (or would not do). */
export interface UndoOutcome {
  /** The turns undone (or that would have been), oldest first. */
  readonly turns: number[];
  /** Paths written back: contents, modes, links, directories. */
  readonly restored: string[];
  /** Paths the turns created, removed. */
  readonly removed: string[];
  /** Paths changed after the turns; when not forced, nothing was written. */
  readonly conflicts: string[];
  /** Paths that could not be put back, with the reason. */
  readonly notUndoable: { path: string; why: string }[];
  /** Directories the turns created that still hold other files, left in place. */
  readonly kept: string[];
  /**
   * Why nothing at all was written and the turns stay undoable: a damaged record, a
   * workspace moved away, turns of another workspace than the caller's.
   */
  readonly refusal?: string;
  /**
   * True when some paths could not be written for now (a link or a file on their way) and the
   * turns were left undoable: undoing again once the way is clear puts back the rest (what
   * was put back already is left alone).
   */
  readonly again?: boolean;
}

/** Options of {@linkcode undoTurns}. */
export interface UndoOptions {
  /** How many of the last turns (that changed something). @default {1} */
  readonly turns?: number;
  /** Restore even over later changes. */
  readonly force?: boolean;
  /** Rousseau's own paths: never scanned (to settle a call that was killed), never written. */
  readonly skip?: readonly string[];
  /** @default {DEFAULT_UNDO_MAX_FILE_BYTES} */
  readonly maxFileBytes?: number;
  /**
   * The caller's workspace roots (chat's `/undo`, `undo` without SESSION): turns that changed
   * files elsewhere are refused, never undone there behind the caller's back.
   */
  readonly workspace?: readonly string[];
}

/** True when the record changed something (or tried and could not keep it). */
export function hasChanges(record: TurnRecord): boolean {
  return Object.keys(record.changes).length > 0 || Object.keys(record.problems).length > 0;
}

/**
 * The session's records, oldest first, after settling the calls a killed process left
 * pending (what they did is worked out from the mirror). Call under the store's lock.
 */
export function settledTurns(
  store: UndoStore,
  sessionId: string,
  skip: readonly string[] = [],
): TurnRecord[] {
  const records = store.listTurns(sessionId).filter((r) => r.damaged === undefined);
  for (const key of new Set(records.map((r) => r.mirror))) {
    const roots = records.find((r) => r.mirror === key)!.roots;
    settlePending(store, key, roots, [...skip, store.dir]);
  }
  return store.listTurns(sessionId);
}

/** The session's turns that can still be undone, oldest first. */
export function undoableTurns(
  store: UndoStore,
  sessionId: string,
  skip: readonly string[] = [],
): TurnRecord[] {
  return settledTurns(store, sessionId, skip).filter((r) =>
    r.undone === undefined && hasChanges(r)
  );
}

function byDepth(a: string, b: string): number {
  return a.split("/").length - b.split("/").length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Puts `bytes` at `path` by renaming a new file over it: the last component is replaced,
 * never followed (a link there, a hard link to a file elsewhere, a FIFO are not written
 * through). The new file is created exclusively and its mode set through its descriptor.
 */
function writeFileAtomic(path: string, bytes: Uint8Array, mode: number): void {
  Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const temp = join(dirname(path), `.${crypto.randomUUID()}.rousseau-undo`);
  const fd = openSync(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    try {
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      fchmodSync(fd, mode); // after the writes: the umask narrowed the create mode
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch { /* renamed or never created */ }
    throw error;
  }
}

/**
 * Sets the mode of the regular file at `path` through a descriptor opened without following
 * a link; false (nothing done) when it has other hard links, whose files elsewhere would
 * change too, or is no longer a regular file.
 */
function chmodFile(path: string, mode: number): boolean {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.nlink !== 1) return false;
    fchmodSync(fd, mode);
    return true;
  } finally {
    closeSync(fd);
  }
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, "0");
}

/**
 * Undoes the last `turns` turns of a session that changed something. Call under the store's
 * lock. Throws only when the workspace itself refuses a write (the outcome so far is in the
 * error's message).
 */
export function undoTurns(
  store: UndoStore,
  sessionId: string,
  options: UndoOptions = {},
): UndoOutcome {
  const count = options.turns ?? 1;
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_UNDO_MAX_FILE_BYTES;
  const selected = undoableTurns(store, sessionId, options.skip).slice(-count);
  const outcome: UndoOutcome = {
    turns: selected.map((r) => r.turn),
    restored: [],
    removed: [],
    conflicts: [],
    notUndoable: [],
    kept: [],
  };
  if (selected.length === 0) return outcome;

  // Refusals of the whole undo: nothing is written, the turns stay undoable.
  const refused = (why: string): UndoOutcome => ({ ...outcome, refusal: why });
  const damaged = selected.find((r) => r.damaged !== undefined);
  if (damaged !== undefined) return refused(`turn ${damaged.turn}: ${damaged.problems["*"]}`);
  const caller = options.workspace;
  if (caller !== undefined) {
    const elsewhere = selected.find((r) => !r.roots.every((root) => isUnder(root, caller)));
    if (elsewhere !== undefined) {
      return refused(
        `turn ${elsewhere.turn} of session ${sessionId} changed files in ${
          elsewhere.roots.join(", ")
        }, not in this workspace (${caller.join(", ")}); ` +
          `to undo it there, run: rousseau undo ${sessionId}`,
      );
    }
  }
  for (const record of selected) {
    for (const root of record.roots) {
      const gone = rootGone(root);
      if (gone !== undefined) {
        return refused(
          `${gone}; turn ${record.turn} changed files there: move it back, then undo`,
        );
      }
    }
  }
  const guard = createRestoreGuard([...(options.skip ?? []), store.dir]);

  // The earliest `before` and the latest `after` of each path.
  const combined = new Map<
    string,
    { before: Entry | null; after: Entry | null | "pending"; roots: readonly string[] }
  >();
  const problems = new Map<string, string>();
  for (const record of selected) {
    for (const [path, change] of Object.entries(record.changes)) {
      const known = combined.get(path);
      combined.set(path, {
        before: known ? known.before : change.before,
        after: change.after,
        roots: record.roots,
      });
    }
    for (const [path, why] of Object.entries(record.problems)) {
      if (!problems.has(path)) problems.set(path, why);
    }
  }

  interface Step {
    path: string;
    roots: readonly string[];
    before: Entry | null;
    current: Entry | null;
    blocked?: boolean;
  }
  const plan: Step[] = [];
  for (const [path, { before, after, roots }] of combined) {
    const never = guard.refusal(path, roots);
    if (never !== undefined) {
      outcome.notUndoable.push({ path, why: never });
      continue;
    }
    // Through a link on the way, nothing is at the turn's path (what is there is elsewhere).
    const current = guard.current(path, roots, maxFileBytes);
    if (sameEntry(current, before)) continue; // already as it was
    // A call killed while it ran left "pending": what is there now is what it did.
    if (after !== "pending" && !sameEntry(current, after)) outcome.conflicts.push(path);
    const why = problems.get(path);
    if (why !== undefined || before?.kind === "other") {
      outcome.notUndoable.push({
        path,
        why: why ?? "not a regular file, directory or symbolic link",
      });
      continue;
    }
    plan.push({ path, roots, before, current });
  }
  for (const [path, why] of problems) {
    if (!combined.has(path)) outcome.notUndoable.push({ path, why });
  }
  outcome.conflicts.sort();
  if (outcome.conflicts.length > 0 && !options.force) {
    return { ...outcome, restored: [], removed: [], notUndoable: [], kept: [] };
  }

  // Every kept copy is read and checked before anything is written. A file whose content is
  // the same needs its copy only when its mode cannot be set in place (other hard links).
  const contents = new Map<string, Uint8Array>();
  for (const step of plan) {
    const before = step.before;
    if (before?.kind !== "file") continue;
    const same = step.current?.kind === "file" && step.current.hash === before.hash;
    const bytes = before.stored ? store.get(before.hash) : undefined;
    if (bytes !== undefined) contents.set(step.path, bytes);
    else if (!same) {
      outcome.notUndoable.push({ path: step.path, why: "its kept copy is missing or damaged" });
    }
  }
  const broken = new Set(outcome.notUndoable.map((n) => n.path));
  const steps = plan.filter((s) => !broken.has(s.path));

  const done = (list: string[], path: string) => {
    if (!list.includes(path)) list.push(path);
  };
  let again = false;
  /** False (and named) when the way to the step's path cannot be written through now. */
  const clear = (step: Step): boolean => {
    if (step.blocked) return false;
    const why = guard.blocked(step.path, step.roots);
    if (why === undefined) return true;
    outcome.notUndoable.push({ path: step.path, why });
    step.blocked = true;
    again = true;
    return false;
  };
  // 1. What is in the way, deepest first: what the turns created, and entries of another kind.
  for (const step of [...steps].sort((a, b) => byDepth(b.path, a.path))) {
    const { path, before, current } = step;
    if (current === null) continue;
    const replace = before === null || before.kind !== current.kind ||
      (before.kind === "symlink" && !sameEntry(before, current));
    if (!replace || !clear(step)) continue;
    if (current.kind === "dir") {
      try {
        Deno.removeSync(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) {
          if (before === null) outcome.kept.push(path);
          else {
            outcome.notUndoable.push({ path, why: "a directory that is not empty is in the way" });
          }
          step.blocked = true;
          continue;
        }
      }
    } else Deno.removeSync(path); // unlinks: a link there is removed, never followed
    step.current = null;
    if (before === null) done(outcome.removed, path);
  }
  // 2. Then what was there before, shallowest first.
  for (const step of [...steps].sort((a, b) => byDepth(a.path, b.path))) {
    const { path, before, current } = step;
    if (before === null || step.blocked || !clear(step)) continue;
    if (before.kind === "dir") {
      if (current === null) {
        Deno.mkdirSync(path, { recursive: true, mode: before.mode });
        done(outcome.restored, path);
      }
    } else if (before.kind === "symlink") {
      if (current === null) {
        Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
        Deno.symlinkSync(before.target, path);
        done(outcome.restored, path);
      }
    } else if (before.kind === "file") {
      // Never a set-ID file: made by undo, it would belong to undo's user (often root).
      const mode = before.mode & ~SET_ID_BITS;
      const same = current?.kind === "file" && current.hash === before.hash;
      const bytes = contents.get(path);
      if (!(same && chmodFile(path, mode))) {
        if (bytes === undefined) {
          outcome.notUndoable.push({ path, why: "its kept copy is missing or damaged" });
          continue;
        }
        writeFileAtomic(path, bytes, mode);
      }
      done(outcome.restored, path);
      if (mode !== before.mode) {
        outcome.notUndoable.push({
          path,
          why: `put back as ${octal(mode)}, without its set-user-ID/set-group-ID bits (it was ${
            octal(before.mode)
          }): undo never makes a set-ID file; set them again by hand if they are wanted`,
        });
      }
    }
  }
  // 3. Directory modes last, so a read-only directory does not refuse its own files.
  for (const step of [...steps].sort((a, b) => byDepth(b.path, a.path))) {
    if (step.before?.kind !== "dir" || step.blocked || !clear(step)) continue;
    try {
      chmodDirectory(step.path, step.before.mode); // never through a link swapped in
    } catch (error) {
      outcome.notUndoable.push({
        path: step.path,
        why: `its mode could not be set: ${error instanceof Error ? error.message : error}`,
      });
      continue;
    }
    done(outcome.restored, step.path);
  }

  outcome.restored.sort();
  outcome.removed.sort();
  if (again) return { ...outcome, again: true };
  const now = new Date().toISOString();
  for (const record of selected) {
    record.undone = now;
    store.writeTurn(record);
  }
  return outcome;
}
