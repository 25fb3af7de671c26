/**
 * Effects (spec "What an allow grants: effects"), git: global options, `-c` configuration keys,
 * subcommands that write `.git` or the work tree, and the fsmonitor chain refused end to end
 * through the CLI with nothing run (`approver/effects/git.ts`, `git_config.ts`, the `GIT` entry of
 * `_table.ts`).
 */

import { join } from "node:path";
import { resolveReal } from "../../../tools/mod.ts";
import { runCli } from "../../_helpers/cli.ts";
import { assertEquals } from "../../_helpers/assert.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { checkRows, type Row } from "./_fixtures.ts";

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Row[] = [
    ["git log -p -1", []],
    ["git log --output=.git/config", [["write", ".git/config", false]]],
    ["git -c core.pager='less -R' log", [["script", "less -R"]]],
    ["git -c alias.st=status st", [["run", "git status"], ["unknown"]]],
    ["git -c color.ui=always log", []],
    ["git -c core.hooksPath=h commit -m x", [["unknown"], ["write", ".git", true]]],
    ["git branch -D old", [["write", ".git", true]]],
    ["git branch --list 'feat*'", []],
    ["git config user.name", []],
    ["git config user.name x", [["write", ".git/config", false]]],
    ["git format-patch -1 -o out", [["write", "out", true]]],
    ["git clean -fdx", [["write", ".", true]]],
    ["git push --receive-pack='sh x' origin", [["script", "sh x"]]],
    ["git difftool --extcmd=meld", [["script", "meld"], ["unknown"]]],
  ];
  await checkRows(t, rows);
});

/** git with a fixed identity and no user or system config, as the tool's bash sees it. */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("end to end: the git fsmonitor chain is refused by policy check and tool bash, and nothing ran", async () => {
  await using ws = await tmpWorkspace({ files: { "README.md": "hi\n" } });
  await git(ws.root, "init", "-q");
  await git(ws.root, "add", "README.md");
  await git(ws.root, "commit", "-qm", "first");
  const config = join(ws.outside, "policy.yaml");
  await Deno.writeTextFile(
    config,
    `agent:
  approver:
    mode: pattern
    default: deny
    deny:
      - { tool: bash, command: "^rm( |$)" }
    allow:
      - { tool: read }
      - { tool: grep }
      - { tool: bash, command: "^git (status|diff|log)( |$)" }
tools:
  bash:
    sandbox: none
`,
  );
  const before = await Deno.readTextFile(ws.path(".git/config"));
  const chain = `git log -1 --format='[core]%n%x09fsmonitor = "touch PWNED; false"' ` +
    "--output=.git/config";
  const input = JSON.stringify({ command: chain });
  const gitConfig = await resolveReal(ws.path(".git/config"));
  const check = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "policy",
    "check",
    "bash",
    input,
  ]);
  assertEquals(check, {
    code: 1,
    stdout:
      `deny (rule default): git log --output writes ${gitConfig}, and no rule allows writing there\n`,
    stderr: "",
  });
  const tool = await runCli(["--config", config, "tool", "bash", input], { cwd: ws.root });
  assertEquals(tool, {
    code: 1,
    stdout: "",
    stderr:
      `tool call blocked: git log --output writes ${gitConfig}, and no rule allows writing there\n`,
  });
  assertEquals(await Deno.readTextFile(ws.path(".git/config")), before, ".git/config unchanged");
  // The allowed half of the chain still runs, and finds no planted fsmonitor to run.
  const status = await runCli(
    ["--config", config, "tool", "bash", JSON.stringify({ command: "git status --short" })],
    { cwd: ws.root },
  );
  assertEquals(status.code, 0, status.stderr);
  assertEquals(await Deno.stat(ws.path("PWNED")).then(() => true, () => false), false);
});
