/**
 * Effects (spec "What an allow grants: effects"), wrappers (`xargs`, `env`, `timeout`, `sudo`,
 * `watch`, `flock`, `strace`): the command they run is judged as its own
 * (`approver/effects/wrappers.ts`, `WRAPPERS` in `_table.ts`).
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["xargs -0 grep x", [["run", "grep x \u0000"]]],
    ["env -C sub FOO=1 make", [["run", "make"]]],
    ["timeout -s KILL 5 sort -o o f", [["run", "sort -o o f"]]],
    ["sudo -u bob -- ls", [["run", "ls"]]],
    ["watch -n 1 'ls | wc -l'", [["script", "ls | wc -l"]]],
    ["flock /tmp/l make", [["write", "/tmp/l", false], ["run", "make"]]],
    ["strace -o trace.txt ls", [["write", "trace.txt", false], ["run", "ls"]]],
  ];
  await checkRows(t, rows);
});
