/**
 * Effects (spec "What an allow grants: effects"), redirections: which write a file and which only
 * duplicate a descriptor (`approver/effects/engine.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["ls > out.txt 2>&1", [["write", "out.txt", false]]],
    ["ls >| all.log", [["write", "all.log", false]]],
    ["cat <> rw.txt", [["write", "rw.txt", false]]],
    ["ls >&2", []],
    ["ls 2>/dev/null >/dev/stdout", []],
  ];
  await checkRows(t, rows);
});
