/**
 * Effects (spec "What an allow grants: effects"), sed: its scripts' `w` and `e`, and the files `-i`
 * rewrites (`approver/effects/sed.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["sed -n '/a/{p;q}' f", []],
    ["sed -i.bak -e 's/a/b/w changed.txt' f", [
      ["write", "changed.txt", false],
      ["write", "f", false],
    ]],
  ];
  await checkRows(t, rows);
});
