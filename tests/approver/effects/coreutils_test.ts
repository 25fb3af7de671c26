/**
 * Effects (spec "What an allow grants: effects"), dd and split, csplit: writes the plain table
 * cannot state (`approver/effects/coreutils.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["dd if=/dev/zero of=disk.img bs=1M count=1", [["write", "disk.img", false]]],
    ["split -l 10 big part-", [["write", "part-", false]]],
    ["csplit f 1", [["write", "xx", false]]],
  ];
  await checkRows(t, rows);
});
