/**
 * The note after undo's first slow or large scan (cli/terminal/undo_progress.ts): said once per
 * process, for a scan slower than 2 s or of 10,000 files or more, never for a small fast one.
 * Counted, not timed: the scan events carry their own figures.
 */

import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import {
  createSlowScanNotice,
  LARGE_SCAN_FILES,
  SLOW_SCAN_MS,
} from "../../../cli/terminal/undo_progress.ts";

/** The event that ends a scan of `files` files that took `ms`. */
function end(files: number, ms: number) {
  return { type: "scan_end" as const, tool: "bash", files, ms };
}

Deno.test("undo's scan note: a small fast scan says nothing", () => {
  const notice = createSlowScanNotice();
  assertEquals(notice(end(LARGE_SCAN_FILES - 1, SLOW_SCAN_MS - 1)), undefined);
  assertEquals(notice({ type: "scan", tool: "bash", done: 5 }), undefined);
});

Deno.test("undo's scan note: a large scan is told of however fast it went, and only once", () => {
  const notice = createSlowScanNotice();
  const said = notice(end(20_000, 300));
  assertStringIncludes(
    said ?? "",
    "undo: snapshotting 20,000 files took 0.3s; without the overlay",
  );
  assertEquals(notice(end(20_000, 300)), undefined);
  assertEquals(notice(end(100, 5_000)), undefined);
});

Deno.test("undo's scan note: a slow scan of few files is told of", () => {
  const notice = createSlowScanNotice();
  assertStringIncludes(notice(end(500, SLOW_SCAN_MS)) ?? "", "snapshotting 500 files took 2.0s");
});
