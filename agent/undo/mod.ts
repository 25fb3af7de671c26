/**
 * Undo: each turn's change set is kept in a content store, and restored from it on demand.
 *
 * 1. Change set. bash under the overlay (`tools/_overlay.ts`) reads what its command wrote
 *    in the upper layer and hands that set, through `ToolContext.settleChanges`, to the gate
 *    (`agent/tool_host.ts`): once judged, and before it is applied, the gate calls `keep`
 *    with its paths ({@linkcode UndoRecorder.aroundObserved}), whose entries are taken then
 *    and again after. `write` and `edit` name their file. The fallback, when a call's changes
 *    cannot be seen before they land (bash without the overlay, custom and MCP tools): the
 *    mirror, a scan of the whole tree before and after the call (`_mirror_fallback.ts`).
 * 2. Store. Old bytes go to the content store by SHA-256, each path's before and after to
 *    the turn's record (`_store.ts`, `<state dir>/undo/`), within `state.undo.max_bytes`.
 * 3. Restore. {@linkcode undoTurns} puts back each path's first `before` from the store,
 *    refusing later changes unless forced, each write re-checked on disk (`_guard.ts`).
 *
 * @module
 */

export { DEFAULT_UNDO_MAX_FILE_BYTES, type Entry, type ObjectSink, sha256Hex } from "./_entry.ts";
export {
  DEFAULT_UNDO_MAX_BYTES,
  DROPPED,
  mirrorKey,
  openUndoStore,
  type Pending,
  type RecordedChange,
  type TurnRecord,
  type UndoStore,
} from "./_store.ts";
export {
  createUndoRecorder,
  type Keep,
  type KeptPath,
  PROGRESS_AFTER_MS,
  type UndoProgress,
  type UndoRecorder,
  type UndoRecorderOptions,
  workspaceLocks,
} from "./_recorder.ts";
export {
  hasChanges,
  settledTurns,
  undoableTurns,
  type UndoOptions,
  type UndoOutcome,
  undoTurns,
} from "./_restore.ts";
