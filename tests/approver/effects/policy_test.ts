/**
 * Effects (spec "What an allow grants: effects"): what the engine reads from one command,
 * the reasons a denial names, the opt-in `effects` field, its validation and lint, and the
 * issue's git fsmonitor chain refused end to end through the CLI with nothing run.
 */

import { join } from "node:path";
import {
  compilePolicy,
  createApprover,
  type Effect,
  effectsOf,
  type PolicyConfig,
  PolicyError,
  splitCommands,
  testPolicy,
} from "../../../approver/mod.ts";
import { resolveReal } from "../../../tools/mod.ts";
import { runCli } from "../../_helpers/cli.ts";
import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

/** The effects of the first simple command of `line`, without `via` texts. */
async function effects(line: string): Promise<unknown[]> {
  const split = await splitCommands(line);
  return effectsOf(split.commands[0]!).map((e: Effect) => {
    switch (e.kind) {
      case "write":
        return ["write", e.path, e.tree];
      case "run":
        return ["run", e.command.argv.join(" ")];
      case "script":
        return ["script", e.script];
      default:
        return [e.kind];
    }
  });
}

Deno.test("effects: what the engine reads from one command", async (t) => {
  const rows: Array<[string, unknown[]]> = [
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
    ["find . -name x -exec grep -l y {} +", [["run", "grep -l y {}"]]],
    ["find /tmp -delete", [["write", "/tmp", true]]],
    ["xargs -0 grep x", [["run", "grep x \u0000"]]],
    ["env -C sub FOO=1 make", [["run", "make"]]],
    ["timeout -s KILL 5 sort -o o f", [["run", "sort -o o f"]]],
    ["sudo -u bob -- ls", [["run", "ls"]]],
    ["watch -n 1 'ls | wc -l'", [["script", "ls | wc -l"]]],
    ["flock /tmp/l make", [["write", "/tmp/l", false], ["run", "make"]]],
    ["strace -o trace.txt ls", [["write", "trace.txt", false], ["run", "ls"]]],
    ["sed -n '/a/{p;q}' f", []],
    ["sed -i.bak -e 's/a/b/w changed.txt' f", [
      ["write", "changed.txt", false],
      ["write", "f", false],
    ]],
    ["awk 'BEGIN { while ((\"ls\" | getline l) > 0) n++ }'", [["script", "ls"]]],
    ["awk -v x=1 '{ print x > \"/dev/stderr\" }' f", []],
    ["rg --pre=./conv.sh x", [["run", "./conv.sh"]]],
    ["sort --parallel=2 -S 1G f", []],
    ["tee -a log.txt", [["write", "log.txt", false]]],
    ["cp -r src dst", [["write", "dst", true]]],
    ["mv a b", [["write", "a", false], ["write", "b", false]]],
    ["ln -s target link", [["write", "link", false]]],
    ["chmod -R 755 bin", [["write", "bin", true]]],
    ["dd if=/dev/zero of=disk.img bs=1M count=1", [["write", "disk.img", false]]],
    ["install -m 755 -s tool /usr/local/bin", [["run", "strip"], [
      "write",
      "/usr/local/bin",
      false,
    ]]],
    ["truncate -s 0 log", [["write", "log", false]]],
    ["split -l 10 big part-", [["write", "part-", false]]],
    ["csplit f 1", [["write", "xx", false]]],
    ["tar -C vendor -xzf deps.tgz", [["write", "vendor", true]]],
    ["tar -cf - src", []],
    ["make -j4 check", []],
    ["make CC=evil", [["unknown"]]],
    ["npm run build", []],
    ["npx -y prettier --check .", [["run", "prettier --check ."]]],
    ["python3 -c 'print(1)'", [["unknown"]]],
    ["perl script.pl", []],
    ["sh -c 'ls; rm -rf x'", [["script", "ls; rm -rf x"]]],
    ["bash --rcfile evil -i", [["unknown"]]],
    ["LD_PRELOAD=x.so ls", [["shell"]]],
    ["LC_ALL=C sort f", []],
    ["export GIT_PAGER=cat", [["shell"]]],
    ["export LANG=C", []],
    ["alias ls='rm -rf x'", [["shell"]]],
    [". ./env.sh", [["shell"]]],
    ["ls > out.txt 2>&1", [["write", "out.txt", false]]],
    ["ls >| all.log", [["write", "all.log", false]]],
    ["cat <> rw.txt", [["write", "rw.txt", false]]],
    ["ls >&2", []],
    ["ls 2>/dev/null >/dev/stdout", []],
    ["less f", [["unknown"]]],
    ["vim f", [["unknown"]]],
    ["curl -o page.html https://x", [["write", "page.html", false]]],
  ];
  for (const [line, want] of rows) {
    await t.step(line, async () => assertEquals(await effects(line), want));
  }
});

const README: PolicyConfig = {
  mode: "pattern",
  default: "deny",
  deny: [{ tool: "bash", command: "^rm( |$)" }],
  allow: [
    { tool: "read" },
    { tool: "grep" },
    { tool: "bash", command: "^git (status|diff|log)( |$)" },
  ],
};

Deno.test("effects: the deny reason names the effect that decided", async (t) => {
  const approver = createApprover(
    {
      ...README,
      allow: [
        ...README.allow!,
        { tool: "bash", command: "^(find|sort|ls|grep)( |$)" },
        { tool: "write", path: "^/ws/out/" },
      ],
      deny: [...README.deny!, { tool: "write", path: "^/ws/secrets/", reason: "no secrets" }],
    },
    { workspace: { roots: ["/ws"] }, protectedPaths: ["/ws/.rousseau"] },
  );
  const rows: Array<[string, string, string, string | undefined]> = [
    [
      "git log --output=.git/config",
      "deny",
      "default",
      "git log --output writes /ws/.git/config, and no rule allows writing there",
    ],
    ["find . -exec rm {} \\;", "deny", "deny[0]", "denied by pattern policy"],
    [
      "find . -exec touch x {} +",
      "deny",
      "default",
      "find -exec runs touch x {}, and no rule allows it",
    ],
    [
      "find . -delete",
      "deny",
      "effect",
      "find -delete writes /ws, which holds a protected path",
    ],
    [
      "sort -o /etc/passwd f",
      "deny",
      "effect",
      "sort -o writes /etc/passwd, outside the workspace",
    ],
    ["sort -o secrets/k f", "deny", "deny[1]", "sort -o writes /ws/secrets/k: no secrets"],
    [
      "sort -o .rousseau/x f",
      "deny",
      "effect",
      "sort -o writes /ws/.rousseau/x, which is a protected path",
    ],
    ["sort -o out/x f", "allow", "allow[3]+allow[4]", undefined],
    [
      "ls() { ls | ls & }; ls",
      "deny",
      "default",
      "defining the function ls changes the shell, which command rules never allow",
    ],
    [
      "PAGER=less git log",
      "deny",
      "default",
      "denied by pattern policy",
    ],
    [
      "grep -r x . | sort -T /tmp",
      "deny",
      "effect",
      "sort -T writes /tmp, outside the workspace",
    ],
    [
      "ls | sort -o out/x && ls -l out/x",
      "allow",
      "allow[3]+allow[4]",
      undefined,
    ],
  ];
  for (const [line, decision, rule, reason] of rows) {
    await t.step(line, async () => {
      const got = await approver.approve({ tool: "bash", input: { command: line } });
      assertEquals(
        got,
        reason === undefined ? { decision, rule } as never : { decision, reason, rule } as never,
      );
    });
  }
});

Deno.test("effects: writes whose place is decided at run time cannot be judged", async (t) => {
  const approver = createApprover({
    mode: "pattern",
    allow: [
      { tool: "bash", command: "^(find|sort|grep|ln|cd)( |$)" },
      { tool: "write", path: "^/ws/out/" },
    ],
  }, { workspace: { roots: ["/ws"] } });
  const rows: Array<[string, string, string | undefined]> = [
    ["find . -exec sort -o out/x {} \\;", "allow", undefined],
    [
      "find out -execdir sort -o out/x {} \\;",
      "deny",
      "sort -o writes out/x in a directory chosen at run time, which cannot be judged from the text",
    ],
    ["find . -execdir grep x {} +", "allow", undefined],
    ["ln -s a out/b", "allow", undefined],
    [
      "ln -s ../.git/config out/l && sort -o out/l f",
      "deny",
      "sort -o writes /ws/out/l in a line where ln can create links, so where it writes " +
      "cannot be judged from the text",
    ],
    [
      "cd out && sort -o x f",
      "deny",
      "sort -o writes x after a cd, so where it writes cannot be judged from the text",
    ],
  ];
  for (const [line, decision, reason] of rows) {
    await t.step(line, async () => {
      const got = await approver.approve({ tool: "bash", input: { command: line } });
      assertEquals({ decision: got.decision, reason: got.reason }, { decision, reason });
    });
  }
});

Deno.test("effects: a write the policy asks about makes the line ask", async () => {
  const approver = createApprover({
    mode: "pattern",
    ask: [{ tool: "write" }],
    allow: [{ tool: "bash", command: "^sort( |$)" }],
  }, { workspace: { roots: ["/ws"] } });
  assertEquals(await approver.approve({ tool: "bash", input: { command: "sort -o x f" } }), {
    decision: "ask",
    reason: "sort -o writes /ws/x, which needs approval",
    rule: "allow[0]",
  });
});

Deno.test("effects: a rule opts in with effects: [write] and a path, or [run]", async () => {
  const approver = createApprover({
    mode: "pattern",
    allow: [
      { tool: "bash", command: "^sed -i ", effects: ["write"], path: "^/ws/src/" },
      { tool: "bash", command: "^find ", effects: ["run"] },
    ],
  }, { workspace: { roots: ["/ws"] } });
  const decide = async (command: string) =>
    (await approver.approve({ tool: "bash", input: { command } })).decision;
  assertEquals(await decide("sed -i s/a/b/ src/a.ts"), "allow");
  assertEquals(await decide("sed -i s/a/b/ README.md"), "deny");
  assertEquals(await decide("sed -i s/a/b/ /etc/hosts"), "deny");
  assertEquals(await decide("sed -i 's/a/b/;1e id' src/a.ts"), "deny");
  assertEquals(await decide("find . -name '*.o' -exec wc -c {} +"), "allow");
  assertEquals(await decide("find . -delete"), "deny");
  assertEquals(await decide("PATH=/x find . -exec ls {} +"), "deny");
});

Deno.test("effects: the field is validated, and lint says where it cannot apply", async () => {
  assertEquals(
    assertThrows(
      () => compilePolicy({ allow: [{ tool: "bash", command: "^x", effects: ["delete"] }] }),
      PolicyError,
    ).message,
    'approver: allow[0].effects[0]: unknown effect "delete" (want a list of write, run, ' +
      "e.g. effects: [write] with a path)",
  );
  assertEquals(
    assertThrows(
      () => compilePolicy({ allow: [{ tool: "bash", effects: "write" } as never] }),
      PolicyError,
    ).message,
    "approver: allow[0].effects: want a list of write, run, e.g. effects: [write] with a path",
  );
  const report = await testPolicy(
    compilePolicy({
      allow: [
        { tool: "bash", command: "^sed -i ", effects: ["write"], path: "^/ws/src/" },
        { tool: "read", effects: ["write"] },
        { tool: "bash", command: "^ls", path: "^/ws/" },
      ],
    }),
    { registered: ["bash", "read"] },
  );
  assertEquals(report.warnings.map((w) => w.rule), ["allow[1]", "allow[2]"]);
  assert(/effects only apply to bash rules/.test(report.warnings[0]!.message));
  assert(/only applies with effects: \[write\]/.test(report.warnings[1]!.message));
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
