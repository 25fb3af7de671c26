/**
 * Effects (spec "What an allow grants: effects"), tar: the tree it extracts into and the archive it
 * creates (`approver/effects/tar.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["tar -C vendor -xzf deps.tgz", [["write", "vendor", true]]],
    ["tar -cf - src", []],
  ];
  await checkRows(t, rows);
});
