/**
 * Effects (spec "What an allow grants: effects"), interpreters and package runners: inline code
 * cannot be judged, `npx PKG` is judged as `PKG` (`approver/effects/interpreters.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["npx -y prettier --check .", [["run", "prettier --check ."]]],
    ["python3 -c 'print(1)'", [["unknown"]]],
    ["perl script.pl", []],
  ];
  await checkRows(t, rows);
});
