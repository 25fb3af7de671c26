/**
 * Effects (spec "What an allow grants: effects"), programs known by plain rows of the table
 * (`approver/effects/_table.ts`, read by `generic.ts`): options that write or run, operands that
 * are written, subcommands, pagers and editors.
 */

import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["rg --pre=./conv.sh x", [["run", "./conv.sh"]]],
    ["sort --parallel=2 -S 1G f", []],
    ["tee -a log.txt", [["write", "log.txt", false]]],
    ["cp -r src dst", [["write", "dst", true]]],
    ["mv a b", [["write", "a", false], ["write", "b", false]]],
    ["ln -s target link", [["write", "link", false]]],
    ["chmod -R 755 bin", [["write", "bin", true]]],
    ["install -m 755 -s tool /usr/local/bin", [["run", "strip"], [
      "write",
      "/usr/local/bin",
      false,
    ]]],
    ["truncate -s 0 log", [["write", "log", false]]],
    ["npm run build", []],
    ["less f", [["unknown"]]],
    ["vim f", [["unknown"]]],
    ["curl -o page.html https://x", [["write", "page.html", false]]],
  ];
  await checkRows(t, rows);
});
