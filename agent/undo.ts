/**
 * Putting back what turns changed, from their records (`agent/undo_store.ts`). Nothing is
 * written when a path changed after the turn (its state is not the one the turn left), unless
 * `force`; a path already back to how it was before the turn is left alone. Files whose old
 * content was not kept (over the size limit, a full store) are named, never silently skipped.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { captureEntry, DEFAULT_UNDO_MAX_FILE_BYTES, type Entry, sameEntry } from "./snapshot.ts";
import { settlePending } from "./undo_recorder.ts";
import type { TurnRecord, UndoStore } from "./undo_store.ts";

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
}

/** Options of {@linkcode undoTurns}. */
export interface UndoOptions {
  /** How many of the last turns (that changed something). @default {1} */
  readonly turns?: number;
  /** Restore even over later changes. */
  readonly force?: boolean;
  /** Paths never scanned (to settle a call that was killed). */
  readonly skip?: readonly string[];
  /** @default {DEFAULT_UNDO_MAX_FILE_BYTES} */
  readonly maxFileBytes?: number;
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
  const records = store.listTurns(sessionId);
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

function writeFileAtomic(path: string, bytes: Uint8Array, mode: number): void {
  Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const temp = join(dirname(path), `.${crypto.randomUUID()}.rousseau-undo`);
  try {
    Deno.writeFileSync(temp, bytes, { mode });
    Deno.chmodSync(temp, mode); // the umask narrowed the create mode
    Deno.renameSync(temp, path);
  } catch (error) {
    try {
      Deno.removeSync(temp);
    } catch { /* never created */ }
    throw error;
  }
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

  // The earliest `before` and the latest `after` of each path.
  const combined = new Map<string, { before: Entry | null; after: Entry | null | "pending" }>();
  const problems = new Map<string, string>();
  for (const record of selected) {
    for (const [path, change] of Object.entries(record.changes)) {
      const known = combined.get(path);
      combined.set(path, { before: known ? known.before : change.before, after: change.after });
    }
    for (const [path, why] of Object.entries(record.problems)) {
      if (!problems.has(path)) problems.set(path, why);
    }
  }

  const plan: {
    path: string;
    before: Entry | null;
    current: Entry | null;
    blocked?: boolean;
  }[] = [];
  for (const [path, { before, after }] of combined) {
    const current = captureEntry(path, { maxFileBytes });
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
    plan.push({ path, before, current });
  }
  for (const [path, why] of problems) {
    if (!combined.has(path)) outcome.notUndoable.push({ path, why });
  }
  outcome.conflicts.sort();
  if (outcome.conflicts.length > 0 && !options.force) {
    return { ...outcome, restored: [], removed: [], notUndoable: [], kept: [] };
  }

  // Every kept copy is read and checked before anything is written.
  const contents = new Map<string, Uint8Array>();
  for (const step of plan) {
    const before = step.before;
    if (before?.kind !== "file") continue;
    if (step.current?.kind === "file" && step.current.hash === before.hash) continue;
    const bytes = store.get(before.hash);
    if (bytes === undefined) {
      outcome.notUndoable.push({ path: step.path, why: "its kept copy is missing or damaged" });
    } else contents.set(step.path, bytes);
  }
  const broken = new Set(outcome.notUndoable.map((n) => n.path));
  const steps = plan.filter((s) => !broken.has(s.path));

  const done = (list: string[], path: string) => {
    if (!list.includes(path)) list.push(path);
  };
  // 1. What is in the way, deepest first: what the turns created, and entries of another kind.
  for (const step of [...steps].sort((a, b) => byDepth(b.path, a.path))) {
    const { path, before, current } = step;
    if (current === null) continue;
    const replace = before === null || before.kind !== current.kind ||
      (before.kind === "symlink" && !sameEntry(before, current));
    if (!replace) continue;
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
    } else Deno.removeSync(path);
    step.current = null;
    if (before === null) done(outcome.removed, path);
  }
  // 2. Then what was there before, shallowest first.
  for (const step of [...steps].sort((a, b) => byDepth(a.path, b.path))) {
    const { path, before, current } = step;
    if (before === null || step.blocked) continue;
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
      const bytes = contents.get(path);
      if (bytes !== undefined) writeFileAtomic(path, bytes, before.mode);
      else Deno.chmodSync(path, before.mode); // same content, other mode
      done(outcome.restored, path);
    }
  }
  // 3. Directory modes last, so a read-only directory does not refuse its own files.
  for (const step of [...steps].sort((a, b) => byDepth(b.path, a.path))) {
    if (step.before?.kind !== "dir" || step.blocked) continue;
    Deno.chmodSync(step.path, step.before.mode);
    done(outcome.restored, step.path);
  }

  const now = new Date().toISOString();
  for (const record of selected) {
    record.undone = now;
    store.writeTurn(record);
  }
  outcome.restored.sort();
  outcome.removed.sort();
  return outcome;
}
