/**
 * Effects (spec "What an allow grants: effects"), make: variables on the command line can change
 * what the recipes run (`approver/effects/make.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["make -j4 check", []],
    ["make CC=evil", [["unknown"]]],
  ];
  await checkRows(t, rows);
});
