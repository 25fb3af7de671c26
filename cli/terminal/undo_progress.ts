/**
 * What `chat` and `run` say while undo scans a large workspace (bash without the overlay:
 * every file is looked at before and after each call, and read on the first call): a status
 * label for the spinner, and once per process, after the first scan slower than
 * {@linkcode SLOW_SCAN_MS} or of {@linkcode LARGE_SCAN_FILES} files or more, how to turn it off
 * or avoid it.
 *
 * @module
 */

import type { UndoProgress } from "../../agent/undo/mod.ts";

/** A scan slower than this is worth a word on how to avoid it. */
export const SLOW_SCAN_MS = 2_000;
/**
 * So is a scan of this many files, however fast it went: it is repeated around every bash
 * call, and a fast disk today is not a promise (and what is said does not hang on a clock).
 */
export const LARGE_SCAN_FILES = 10_000;

function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** The spinner's words while a scan runs: `snapshotting 86,585 files for undo… 40%`. */
export function scanLabel(progress: Extract<UndoProgress, { type: "scan" }>): string {
  if (progress.files === undefined || progress.paths === undefined) {
    return "listing the workspace for undo…";
  }
  const share = progress.paths === 0 ? 100 : Math.floor((progress.done / progress.paths) * 100);
  return `snapshotting ${count(progress.files)} files for undo… ${share}%`;
}

/** The note after a slow scan: what it cost and the keys that turn it off or avoid it. */
export function slowScanNote(files: number, ms: number): string {
  return `undo: snapshotting ${count(files)} files took ${(ms / 1000).toFixed(1)}s; without ` +
    "the overlay the workspace is scanned around every bash call. Turn undo off with " +
    "state.undo.max_bytes: 0 (ROUSSEAU_STATE_UNDO_MAX_BYTES=0), or let bash run over the " +
    "overlay (tools.bash.overlay: auto, with bubblewrap) so only what a command changes is kept";
}

/** The note for the first slow or large scan that ends, once; undefined for every other event. */
export function createSlowScanNotice(): (progress: UndoProgress) => string | undefined {
  let said = false;
  return (progress) => {
    if (said || progress.type !== "scan_end") return undefined;
    if (progress.ms < SLOW_SCAN_MS && progress.files < LARGE_SCAN_FILES) return undefined;
    said = true;
    return slowScanNote(progress.files, progress.ms);
  };
}
