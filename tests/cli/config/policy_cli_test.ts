/**
 * The policy from the command line: `--config` with `agent.approver`, the `--approver`,
 * `--allow` and `--deny` flags, start-up errors, and the done-when:
 * `tool bash '{"command":"git status; rm -rf build"}'` is blocked under an allow list that
 * permits git status.
 */

import { join } from "node:path";
import { createApprover, verifyChain } from "../../../approver/mod.ts";
import { resolvePolicy } from "../../../cli/config/policy.ts";
import { UsageError } from "../../../cli/errors.ts";
import { runCli } from "../../_helpers/cli.ts";
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../../_helpers/assert.ts";
import { type TmpWorkspace, tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const GIT_ONLY = `agent:
  approver:
    mode: pattern
    allow:
      - tool: bash
        command: "^git (status|diff|log)( |$)"
`;

/** A workspace that is a git repository with a build/ directory and a policy file. */
async function project(policy = GIT_ONLY): Promise<TmpWorkspace & { readonly policy: string }> {
  const ws = await tmpWorkspace({ files: { "build/out.js": "built", "README.md": "hi" } });
  const git = await new Deno.Command("git", {
    args: ["init", "-q"],
    cwd: ws.root,
    stdout: "null",
    stderr: "piped",
  }).output();
  assertEquals(git.code, 0, new TextDecoder().decode(git.stderr));
  const path = join(ws.outside, "policy.yaml");
  await Deno.writeTextFile(path, policy);
  return Object.assign(ws, { policy: path });
}

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

Deno.test("done when: git status; rm -rf build is blocked under a git status allow list", async () => {
  await using ws = await project();
  // Exactly the command line: a relative --config, read from the start directory.
  await Deno.copyFile(ws.policy, ws.path("policy.yaml"));
  const run = await runCli([
    "--config",
    "policy.yaml",
    "tool",
    "bash",
    '{"command":"git status; rm -rf build"}',
  ], { cwd: ws.root });
  assertEquals(run, {
    code: 1,
    stdout: "",
    stderr: "tool call blocked: denied by pattern policy\n",
  });
  assertEquals(await exists(ws.path("build/out.js")), true);
});

Deno.test("policy: nothing of a blocked line runs (marker file)", async () => {
  await using ws = await project();
  for (
    const command of [
      "git status; touch marker",
      "touch marker && git status",
      "git status\ntouch marker",
    ]
  ) {
    const run = await runCli(
      ["--config", ws.policy, "tool", "bash", JSON.stringify({ command })],
      { cwd: ws.root },
    );
    assertEquals(run.code, 1, command);
    assertStringIncludes(run.stderr, "tool call blocked: ");
    assertEquals(await exists(ws.path("marker")), false, command);
  }
});

Deno.test("policy: git status alone is allowed and runs", async () => {
  await using ws = await project();
  const run = await runCli(
    ["--config", ws.policy, "tool", "bash", '{"command":"git status"}'],
    { cwd: ws.root, env: { LC_ALL: "C" } },
  );
  assertEquals({ code: run.code, stderr: run.stderr }, { code: 0, stderr: "" });
  assertStringIncludes(run.stdout, "No commits yet");
});

Deno.test("policy: a configured policy also governs read (default deny)", async () => {
  await using ws = await project();
  const run = await runCli(
    ["--config", ws.policy, "tool", "read", JSON.stringify({ path: ws.path("README.md") })],
    { cwd: ws.root },
  );
  assertEquals(run, {
    code: 1,
    stdout: "",
    stderr: "tool call blocked: denied by pattern policy\n",
  });
});

Deno.test("policy: --allow adds to the configured allow list", async () => {
  await using ws = await project();
  const read = await runCli([
    "--config",
    ws.policy,
    "--allow",
    "read",
    "tool",
    "read",
    JSON.stringify({ path: ws.path("README.md") }),
  ], { cwd: ws.root });
  assertEquals(read, { code: 0, stdout: "hi", stderr: "" });
  // TOOL:REGEX matches the canonical JSON of the input.
  const echo = await runCli([
    "--config",
    ws.policy,
    "--allow",
    'bash:^\\{"command":"echo [a-z]+"\\}$',
    "tool",
    "bash",
    '{"command": "echo hello"}',
  ], { cwd: ws.root });
  assertEquals(echo, { code: 0, stdout: "hello\n", stderr: "" });
  const other = await runCli([
    "--config",
    ws.policy,
    "--allow",
    'bash:^\\{"command":"echo [a-z]+"\\}$',
    "tool",
    "bash",
    '{"command": "echo hello; touch marker"}',
  ], { cwd: ws.root });
  assertEquals(other.code, 1);
  assertEquals(await exists(ws.path("marker")), false);
});

Deno.test("policy: --deny bash:rm narrows the tool command's allow-all default", async () => {
  await using ws = await project();
  const denied = await runCli(
    ["--deny", "bash:rm", "tool", "bash", '{"command":"rm -rf build"}'],
    { cwd: ws.root },
  );
  assertEquals(denied, {
    code: 1,
    stdout: "",
    stderr: "tool call blocked: denied by pattern policy\n",
  });
  assertEquals(await exists(ws.path("build/out.js")), true);
  const allowed = await runCli(
    ["--deny", "bash:rm", "tool", "bash", '{"command":"echo fine"}'],
    { cwd: ws.root },
  );
  assertEquals(allowed, { code: 0, stdout: "fine\n", stderr: "" });
});

Deno.test("policy: --deny beats the configured allow list", async () => {
  await using ws = await project();
  const run = await runCli(
    ["--config", ws.policy, "--deny", "bash:status", "tool", "bash", '{"command":"git status"}'],
    { cwd: ws.root },
  );
  assertEquals(run.code, 1);
  assertEquals(run.stderr, "tool call blocked: denied by pattern policy\n");
});

Deno.test("policy: --approver deny_all denies everything", async () => {
  await using ws = await project();
  const run = await runCli(
    [
      "--approver",
      "deny_all",
      "tool",
      "bash",
      JSON.stringify({ command: `touch ${ws.path("marker")}` }),
    ],
    { cwd: ws.root },
  );
  assertEquals(run, { code: 1, stdout: "", stderr: "tool call blocked: denied by policy\n" });
  assertEquals(await exists(ws.path("marker")), false);
  const read = await runCli(
    ["--approver", " DENY ", "tool", "read", JSON.stringify({ path: ws.path("README.md") })],
    { cwd: ws.root },
  );
  assertEquals(read.stderr, "tool call blocked: denied by policy\n");
});

Deno.test("policy: --approver overrides the configured mode", async () => {
  await using ws = await project();
  const run = await runCli(
    ["--config", ws.policy, "--approver", "allow_all", "tool", "bash", '{"command":"echo ran"}'],
    { cwd: ws.root },
  );
  assertEquals(run, { code: 0, stdout: "ran\n", stderr: "" });
});

Deno.test("policy: --approver allow_all with --deny still denies", async () => {
  await using ws = await project();
  const run = await runCli(
    ["--approver", "allow_all", "--deny", "bash:rm", "tool", "bash", '{"command":"rm -rf build"}'],
    { cwd: ws.root },
  );
  assertEquals(run.code, 1);
  assertEquals(run.stderr, "tool call blocked: denied by pattern policy\n");
  assertEquals(await exists(ws.path("build/out.js")), true);
});

Deno.test("policy: ROUSSEAU_AGENT_APPROVER_MODE sets the mode", async () => {
  await using ws = await project();
  const run = await runCli(
    ["tool", "read", JSON.stringify({ path: ws.path("README.md") })],
    { cwd: ws.root, env: { ROUSSEAU_AGENT_APPROVER_MODE: "deny_all" } },
  );
  assertEquals(run, { code: 1, stdout: "", stderr: "tool call blocked: denied by policy\n" });
});

Deno.test("policy: denials and runs land in the audit file as a valid chain", async () => {
  await using ws = await project();
  const data = join(ws.outside, "data");
  // A provider key is a secret: it never reaches the audit file, even when typed in a call.
  const env = { XDG_DATA_HOME: data, ANTHROPIC_API_KEY: "test-key-0123456789" };
  await runCli(
    ["--config", ws.policy, "tool", "bash", '{"command":"git status; rm -rf build"}'],
    { cwd: ws.root, env },
  );
  await runCli(
    ["--config", ws.policy, "tool", "bash", '{"command":"echo test-key-0123456789"}'],
    { cwd: ws.root, env },
  );
  await runCli(
    ["--config", ws.policy, "tool", "bash", '{"command":"git status"}'],
    { cwd: ws.root, env },
  );
  const text = await Deno.readTextFile(join(data, "rousseau", "audit.jsonl"));
  assertEquals(await verifyChain(text), undefined);
  const events = text.trimEnd().split("\n").map((line) => JSON.parse(line));
  assertEquals(
    events.map((e) => [e.event, e.tool, e.rule, e.source]),
    [
      ["tool.denied", "bash", "default", "cli"],
      ["tool.denied", "bash", "default", "cli"],
      ["tool.execute", "bash", "allow[0]", "cli"],
      ["tool.done", "bash", undefined, "cli"],
    ],
  );
  assertEquals(events[0].input, '{"command":"git status; rm -rf build"}');
  assertEquals(events[0].reason, "denied by pattern policy");
  assertEquals(events[1].input, '{"command":"echo [REDACTED]"}');
  assert(!text.includes("test-key-0123456789"));
});

Deno.test("policy: a bad policy stops start-up with exit 2 and the position", async (t) => {
  await using ws = await project();
  const cases: Array<[string, string, string]> = [
    [
      "bad RE2 regex",
      `agent:\n  approver:\n    deny:\n      - tool: read\n      - tool: bash\n        command: "("\n`,
      "rousseau: approver: deny[1].command: error parsing regexp: missing closing ): `(`\n",
    ],
    [
      "lookahead",
      `agent:\n  approver:\n    allow:\n      - tool: bash\n        command: "^(?!rm)"\n`,
      "rousseau: approver: allow[0].command: error parsing regexp: invalid or unsupported Perl syntax: `(?!`\n",
    ],
    [
      "unknown mode",
      `agent:\n  approver:\n    mode: strict\n`,
      'rousseau: approver: unknown mode "strict" (want allow_all / deny_all / pattern)\n',
    ],
    [
      "unknown default",
      `agent:\n  approver:\n    default: sometimes\n`,
      'rousseau: approver: unknown default "sometimes"\n',
    ],
    [
      "unknown rule field",
      `agent:\n  approver:\n    deny:\n      - tol: bash\n`,
      "rousseau: approver: deny[0].tol: unknown field (want tool, match, command, path, reason, effects, examples, not_examples)\n",
    ],
  ];
  for (const [name, yaml, stderr] of cases) {
    await t.step(name, async () => {
      const path = join(ws.outside, `${name.replaceAll(" ", "_")}.yaml`);
      await Deno.writeTextFile(path, yaml);
      const run = await runCli(
        ["--config", path, "tool", "bash", JSON.stringify({ command: "touch marker" })],
        { cwd: ws.root },
      );
      assertEquals(run, { code: 2, stdout: "", stderr });
      assertEquals(await exists(ws.path("marker")), false);
    });
  }
  await t.step("a bad --deny regex names its place after the configured rules", async () => {
    const run = await runCli(
      ["--config", ws.policy, "--deny", "bash:(", "tool", "bash", '{"command":"touch marker"}'],
      { cwd: ws.root },
    );
    assertEquals(run, {
      code: 2,
      stdout: "",
      stderr: "rousseau: approver: deny[0].match: error parsing regexp: missing closing ): `(`\n",
    });
  });
  await t.step("a bad --approver", async () => {
    const run = await runCli(["--approver", "x", "tool", "bash", '{"command":"touch marker"}'], {
      cwd: ws.root,
    });
    assertEquals(run, {
      code: 2,
      stdout: "",
      stderr: 'rousseau: approver: unknown mode "x" (want allow_all / deny_all / pattern)\n',
    });
  });
  await t.step("--allow without a tool", async () => {
    const run = await runCli(["--allow", ":x", "tool", "bash", '{"command":"touch marker"}'], {
      cwd: ws.root,
    });
    assertEquals(run.code, 2);
    assertEquals(run.stderr, 'rousseau: --allow: want TOOL or TOOL:REGEX, got ":x"\n');
  });
  assertEquals(await exists(ws.path("marker")), false);
});

Deno.test("policy: an unknown config key gives a did-you-mean message", async (t) => {
  await using ws = await project();
  const cases: Array<[string, string, string]> = [
    [
      "agent.aprover",
      "agent:\n  aprover:\n    mode: deny_all\n",
      'agent.aprover: unknown key (did you mean "approver"?)',
    ],
    [
      "agent.approver.mdoe",
      "agent:\n  approver:\n    mdoe: deny_all\n",
      'agent.approver.mdoe: unknown key (did you mean "mode"?)',
    ],
    [
      "agent.approver.alow",
      "agent:\n  approver:\n    alow: []\n",
      'agent.approver.alow: unknown key (did you mean "allow"?)',
    ],
  ];
  for (const [name, yaml, message] of cases) {
    await t.step(name, async () => {
      const path = join(ws.outside, `${name}.yaml`);
      await Deno.writeTextFile(path, yaml);
      const run = await runCli(["--config", path, "tool", "bash", '{"command":"touch marker"}'], {
        cwd: ws.root,
      });
      assertEquals({ code: run.code, stdout: run.stdout }, { code: 2, stdout: "" });
      assertEquals(run.stderr, `rousseau: ${path}: ${message}\n`);
      assertEquals(await exists(ws.path("marker")), false);
    });
  }
});

Deno.test("resolvePolicy: defaults, flags and their combination", async (t) => {
  const decide = async (
    command: "tool" | "run" | "mcp" | "chat",
    flags: Parameters<typeof resolvePolicy>[2],
    tool: string,
    input: unknown,
    configured?: Parameters<typeof resolvePolicy>[1],
  ) => (await createApprover(resolvePolicy(command, configured, flags)).approve({ tool, input }));
  await t.step("tool with nothing configured allows", async () => {
    assertEquals(await decide("tool", {}, "bash", { command: "rm -rf /" }), {
      decision: "allow",
      rule: "mode",
    });
  });
  await t.step("run: --allow bash lets bash through the default", async () => {
    assertEquals((await decide("run", {}, "bash", { command: "ls" })).decision, "deny");
    assertEquals(await decide("run", { allow: ["bash"] }, "bash", { command: "ls" }), {
      decision: "allow",
      rule: "allow[2]",
    });
  });
  await t.step("chat: --allow edit lifts the default ask for edit only", async () => {
    assertEquals((await decide("chat", {}, "edit", { path: "/a" })).decision, "ask");
    assertEquals(
      (await decide("chat", { allow: ["edit"] }, "edit", { path: "/a" })).decision,
      "allow",
    );
    assertEquals(
      (await decide("chat", { allow: ["edit"] }, "bash", { command: "ls" })).decision,
      "ask",
    );
    // A regex allow lifts the ask for what it matches; calls it does not match are still asked.
    assertEquals(
      (await decide("chat", { allow: ['bash:"ls"'] }, "bash", { command: "ls" })).decision,
      "allow",
    );
    assertEquals(
      (await decide("chat", { allow: ['bash:"ls"'] }, "bash", { command: "ls; rm x" })).decision,
      "ask",
    );
  });
  await t.step(
    "chat: a configured ask is lifted by --allow (the flag beats the file)",
    async () => {
      const configured = { ask: [{ tool: "edit" }], allow: [{ tool: "read" }] };
      assertEquals(
        (await decide("chat", { allow: ["edit"] }, "edit", { path: "/a" }, configured)).decision,
        "allow",
      );
    },
  );
  await t.step("run: --deny read takes read away", async () => {
    assertEquals((await decide("run", { deny: ["read"] }, "read", { path: "/a" })).rule, "deny[0]");
  });
  await t.step("--approver deny_all wins over --allow", async () => {
    assertEquals(
      (await decide("tool", { approver: "deny_all", allow: ["read"] }, "read", { path: "/a" }))
        .decision,
      "deny",
    );
  });
  await t.step("--approver allow_all with --deny denies what --deny names", async () => {
    const flags = { approver: "allow_all", deny: ["bash:rm"] };
    assertEquals((await decide("run", flags, "bash", { command: "rm x" })).decision, "deny");
    assertEquals((await decide("run", flags, "bash", { command: "ls" })).decision, "allow");
  });
  await t.step("configured allow_all with --deny denies what --deny names", async () => {
    const configured = { mode: "allow_all" };
    assertEquals(
      (await decide("run", { deny: ["write"] }, "write", { path: "/a" }, configured)).decision,
      "deny",
    );
    assertEquals(
      (await decide("run", { deny: ["write"] }, "edit", { path: "/a" }, configured)).decision,
      "allow",
    );
  });
  await t.step("TOOL:REGEX keeps colons after the first in the regex", () => {
    const policy = resolvePolicy("run", undefined, { allow: ["bash:a:b"] });
    assertEquals(policy.lists.allow.at(-1)?.source, { tool: "bash", match: "a:b" });
  });
  await t.step("a bad policy is a usage error", () => {
    const error = assertThrows(() => resolvePolicy("tool", { mode: "x" }, {}), UsageError);
    assertEquals(
      error.message,
      'approver: unknown mode "x" (want allow_all / deny_all / pattern)',
    );
    assert(error instanceof UsageError);
  });
});

/** The config `rousseau init` writes: default ask, ask for write and edit, a deny for sudo. */
const INIT_LIKE = {
  mode: "pattern",
  default: "ask",
  deny: [{ tool: "bash", command: "^(sudo|rm -rf /)( |$)", reason: "not on this machine" }],
  ask: [{ tool: "write" }, { tool: "edit" }],
  allow: [{ tool: "read" }, { tool: "grep" }],
};

Deno.test("resolvePolicy() lets flags beat the file, per tool and verdict", async (t) => {
  type Row = [
    string,
    "run" | "chat" | "tool",
    Parameters<typeof resolvePolicy>[1],
    Parameters<typeof resolvePolicy>[2],
    string,
    Record<string, string>,
    "allow" | "deny" | "ask",
  ];
  const write = { path: "/ws/a.txt", content: "x" };
  const rows: Row[] = [
    ["file ask write, no flag: ask", "run", INIT_LIKE, {}, "write", write, "ask"],
    [
      "file ask write, --allow write: allow",
      "run",
      INIT_LIKE,
      { allow: ["write"] },
      "write",
      write,
      "allow",
    ],
    [
      "file ask write, --allow write in chat: allow",
      "chat",
      INIT_LIKE,
      { allow: ["write"] },
      "write",
      write,
      "allow",
    ],
    [
      "file ask edit, --allow write: edit still asks",
      "run",
      INIT_LIKE,
      { allow: ["write"] },
      "edit",
      { path: "/ws/a.txt" },
      "ask",
    ],
    [
      "file ask write, --allow WRITE (case): allow",
      "run",
      INIT_LIKE,
      { allow: ["WRITE"] },
      "write",
      write,
      "allow",
    ],
    [
      "file ask write, --allow write:REGEX matching: allow",
      "run",
      INIT_LIKE,
      { allow: ['write:"/ws/a\\.txt"'] },
      "write",
      write,
      "allow",
    ],
    [
      "file ask write, --allow write:REGEX not matching: ask",
      "run",
      INIT_LIKE,
      { allow: ['write:"/ws/b'] },
      "write",
      write,
      "ask",
    ],
    ["file default ask, --allow bash: allow", "run", INIT_LIKE, { allow: ["bash"] }, "bash", {
      command: "ls",
    }, "allow"],
    [
      "file deny sudo, --allow bash: deny always wins",
      "run",
      INIT_LIKE,
      { allow: ["bash"] },
      "bash",
      { command: "sudo ls" },
      "deny",
    ],
    ["file allow read, --deny read: deny", "run", INIT_LIKE, { deny: ["read"] }, "read", {
      path: "/ws/a",
    }, "deny"],
    [
      "file allow read, --allow read --deny read: deny",
      "run",
      INIT_LIKE,
      { allow: ["read"], deny: ["read"] },
      "read",
      { path: "/ws/a" },
      "deny",
    ],
    [
      "file deny_all, --allow write: allow",
      "run",
      { mode: "deny_all" },
      { allow: ["write"] },
      "write",
      write,
      "allow",
    ],
    [
      "file deny_all, --allow write: edit still denied",
      "run",
      { mode: "deny_all" },
      { allow: ["write"] },
      "edit",
      { path: "/ws/a" },
      "deny",
    ],
    [
      "file pattern, --approver allow_all: allow",
      "run",
      INIT_LIKE,
      { approver: "allow_all" },
      "write",
      write,
      "allow",
    ],
    [
      "file allow_all, --approver pattern: default list",
      "run",
      { mode: "allow_all" },
      { approver: "deny_all" },
      "read",
      { path: "/a" },
      "deny",
    ],
    [
      "file allow_all, --deny write: deny",
      "tool",
      { mode: "allow_all" },
      { deny: ["write"] },
      "write",
      write,
      "deny",
    ],
    [
      "environment mode allow_all over the file, --deny edit: edit denied",
      "run",
      { ...INIT_LIKE, mode: "allow_all" },
      { deny: ["edit"] },
      "edit",
      { path: "/a" },
      "deny",
    ],
    [
      "environment mode allow_all over the file: write allowed",
      "run",
      { ...INIT_LIKE, mode: "allow_all" },
      {},
      "write",
      write,
      "allow",
    ],
  ];
  for (const [name, command, configured, flags, tool, input, want] of rows) {
    await t.step(name, async () => {
      const approver = createApprover(resolvePolicy(command, configured, flags));
      assertEquals((await approver.approve({ tool, input })).decision, want);
    });
  }
  await t.step("a lifted ask keeps the other rules' labels", () => {
    const policy = resolvePolicy("run", INIT_LIKE, { allow: ["write"] });
    assertEquals(policy.lists.ask.map((rule) => rule.label), ["ask[1]"]);
  });
});

Deno.test("rousseau --allow write beats the config init writes (policy check, tool, env)", async () => {
  await using ws = await tmpWorkspace({});
  const home = join(ws.outside, "home");
  const env = { XDG_CONFIG_HOME: join(home, "config"), XDG_DATA_HOME: join(home, "data") };
  const init = await runCli(["init"], { cwd: ws.root, env });
  assertEquals(init.code, 0, init.stderr);
  const input = JSON.stringify({ path: ws.path("hello.txt"), content: "hi" });
  const asked = await runCli(["policy", "check", "write", input], { cwd: ws.root, env });
  assertEquals(asked.code, 4, asked.stdout);
  const checked = await runCli(["--allow", "write", "policy", "check", "write", input], {
    cwd: ws.root,
    env,
  });
  assertEquals(checked.code, 0, checked.stdout + checked.stderr);
  const wrote = await runCli(["--allow", "write", "tool", "write", input], { cwd: ws.root, env });
  assertEquals(wrote, { code: 0, stdout: `wrote 2 bytes to ${ws.path("hello.txt")}`, stderr: "" });
  const edit = JSON.stringify({ path: ws.path("hello.txt"), old_string: "hi", new_string: "ho" });
  const edited = await runCli(["--allow", "edit", "policy", "check", "edit", edit], {
    cwd: ws.root,
    env,
  });
  assertEquals(edited.code, 0, edited.stdout + edited.stderr);
  // The environment beats the file, and a flag beats the environment.
  const modeEnv = { ...env, ROUSSEAU_AGENT_APPROVER_MODE: "allow_all" };
  const viaEnv = await runCli(["policy", "check", "edit", edit], { cwd: ws.root, env: modeEnv });
  assertEquals(viaEnv.code, 0, viaEnv.stdout + viaEnv.stderr);
  const flagOverEnv = await runCli(["--deny", "edit", "policy", "check", "edit", edit], {
    cwd: ws.root,
    env: modeEnv,
  });
  assertEquals(flagOverEnv.code, 1, flagOverEnv.stdout + flagOverEnv.stderr);
});
