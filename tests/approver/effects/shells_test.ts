/**
 * Effects (spec "What an allow grants: effects"), changes to the shell (assignments, `export`,
 * `alias`, `.`) and shells a command starts (`sh -c`, `bash --rcfile`)
 * (`approver/effects/shells.ts`, `engine.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["sh -c 'ls; rm -rf x'", [["script", "ls; rm -rf x"]]],
    ["bash --rcfile evil -i", [["unknown"]]],
    ["LD_PRELOAD=x.so ls", [["shell"]]],
    ["LC_ALL=C sort f", []],
    ["export GIT_PAGER=cat", [["shell"]]],
    ["export LANG=C", []],
    ["alias ls='rm -rf x'", [["shell"]]],
    [". ./env.sh", [["shell"]]],
  ];
  await checkRows(t, rows);
});
