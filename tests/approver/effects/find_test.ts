/**
 * Effects (spec "What an allow grants: effects"), find: `-exec` runs a command judged as its own,
 * `-delete` writes its starting points (`approver/effects/find.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["find . -name x -exec grep -l y {} +", [["run", "grep -l y {}"]]],
    ["find /tmp -delete", [["write", "/tmp", true]]],
  ];
  await checkRows(t, rows);
});
