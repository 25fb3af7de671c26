/**
 * Effects (spec "What an allow grants: effects"), awk: its programs' pipes, `system()` and `print
 * >` (`approver/effects/awk.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["awk 'BEGIN { while ((\"ls\" | getline l) > 0) n++ }'", [["script", "ls"]]],
    ["awk -v x=1 '{ print x > \"/dev/stderr\" }' f", []],
  ];
  await checkRows(t, rows);
});
