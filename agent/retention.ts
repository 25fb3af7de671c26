/**
 * Retention of the state directory, run as a `run` or `chat` starts: sessions expire by
 * age (last update) and by count (the newest are kept; none used in the last day), the
 * session being resumed never;
 * their undo data goes with them, and so does undo data whose session is gone some other
 * way (a crash between the two deletions, an older `session delete`); the undo store is
 * brought back within its cap; `sessions.db` is vacuumed when sessions were removed, so the
 * file shrinks. The audit log rotates by itself as it is written (`approver/audit/`).
 *
 * Cheap when there is nothing to do: one query, one directory listing of `undo/sessions/`
 * and the store's kept byte count. The undo part takes the store's lock, which another
 * process may hold for a long scan: it is returned as a promise, so a start never waits.
 *
 * @module
 */

import type { SessionStore } from "./session_store.ts";
import type { UndoStore } from "./undo/mod.ts";

/** The default of `state.sessions.max_age`: 30 days. */
export const DEFAULT_SESSIONS_MAX_AGE_MS = 30 * 86_400_000;

/** The default of `state.sessions.max_count`. */
export const DEFAULT_SESSIONS_MAX_COUNT = 1000;

/**
 * Sessions used this recently are never removed for the count (a chat left open in another
 * terminal, or a `run` in flight, may still be writing to one): the count is a soft limit
 * for a day.
 */
export const COUNT_SPARES_MS = 86_400_000;

/** How long sessions are kept. */
export interface SessionRetention {
  /** Sessions not updated for this long (ms) are removed; 0: no limit. */
  readonly maxAgeMs: number;
  /** Only the newest this many are kept; 0: no limit. */
  readonly maxCount: number;
}

/** What {@linkcode expireSessions} removed. */
export interface Expired {
  /** Ids of the sessions removed. */
  readonly sessions: readonly string[];
  /** Whether `sessions.db` was vacuumed (false also when there was nothing to vacuum). */
  readonly vacuumed: boolean;
}

/** Removes the sessions past `policy` (never `keep`), then vacuums the database if any went. */
export function expireSessions(
  sessions: SessionStore,
  policy: SessionRetention,
  options: { keep?: string; now?: number } = {},
): Expired {
  const now = options.now ?? Date.now();
  const removed = sessions.expire({
    ...(policy.maxAgeMs > 0 ? { before: new Date(now - policy.maxAgeMs).toISOString() } : {}),
    maxCount: policy.maxCount,
    spare: new Date(now - COUNT_SPARES_MS).toISOString(),
    ...(options.keep === undefined ? {} : { keep: options.keep }),
  });
  return { sessions: removed, vacuumed: removed.length > 0 && sessions.vacuum() };
}

/**
 * Removes the undo data of sessions `sessions` no longer holds, and brings the store within
 * its cap (`budget`). Returns the ids whose undo data went; does nothing, and takes no
 * lock, when nothing is to be done.
 */
export async function pruneUndo(
  undo: UndoStore,
  sessions: SessionStore,
  options: { budget: boolean },
): Promise<string[]> {
  // Listed before the database is asked: a session's row is written before any of its undo
  // data, so a directory seen here whose row is missing is one whose session is gone.
  const gone = undo.sessionIds().filter((id) => sessions.find(id)?.id !== id);
  // Read without the lock (the count kept at the last release): a cheap first look.
  const over = options.budget && undo.totalBytes() > undo.maxBytes;
  if (gone.length === 0 && !over) return [];
  using _lock = await undo.lock();
  if (gone.length > 0) undo.deleteSessions(gone);
  if (options.budget) undo.enforceBudget();
  return gone;
}
