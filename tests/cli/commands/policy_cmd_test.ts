/**
 * `policy check|test|replay` and `audit verify` through the real CLI: outputs and exit codes,
 * and the derived grants of a read-only policy.
 */

import { join } from "node:path";
import { compilePolicy, testPolicy } from "../../../approver/mod.ts";
import { grantsFor } from "../../../cli/layers/grants.ts";
import { createWorkspace } from "../../../tools/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const POLICY = `agent:
  approver:
    mode: pattern
    deny:
      - tool: bash
        command: "^rm "
        reason: never delete
        examples: [{command: "rm -rf /"}, {command: "ls; rm x"}]
        not_examples: [{command: "git rm --cached x"}]
    allow:
      - tool: read
      - tool: bash
        command: "^git (status|diff)( |$)"
        examples: [{command: "git status"}, {command: "git diff; git status"}]
        not_examples: [{command: "git status; rm -rf ~"}, {command: "git push"}]
`;

const LINTED = `agent:
  approver:
    mode: pattern
    deny:
      - tool: write
    ask:
      - tool: bash
    allow:
      - tool: write
        path: "^/srv/"
      - tool: bsh
      - tool: bash
        match: '^"command"'
      - tool: read
        command: "^cat"
      - tool: grep
        examples: [{pattern: x}]
      - tool: edit
        match: "danger"
        examples: [{path: /a, old_string: safe, new_string: ok}]
`;

async function withPolicy(text: string) {
  const ws = await tmpWorkspace();
  const path = join(ws.outside, "policy.yaml");
  await Deno.writeTextFile(path, text);
  return Object.assign(ws, { config: path });
}

Deno.test("policy check: allow, deny and ask with the deciding rule; exit 0, 1, 4", async () => {
  await using ws = await withPolicy(POLICY + "    default: ask\n");
  const check = (tool: string, json: string, ...extra: string[]) =>
    runCli([
      "--config",
      ws.config,
      "--workspace",
      ws.root,
      "policy",
      "check",
      tool,
      json,
      ...extra,
    ]);

  let out = await check("bash", '{"command":"git status"}');
  assertEquals([out.code, out.stdout], [0, "allow (rule allow[1])\n"], out.stderr);
  out = await check("bash", '{"command":"git status; rm -rf /"}');
  assertEquals([out.code, out.stdout], [1, "deny (rule deny[0]): never delete\n"]);
  out = await check("write", `{"path":"${ws.path("x")}","content":"x"}`);
  assertEquals([out.code, out.stdout], [4, "ask (rule default): write needs approval\n"]);
  out = await check("bash", '{"command":"git push"}', "--json");
  assertEquals(out.code, 4);
  assertEquals(JSON.parse(out.stdout), {
    decision: "ask",
    rule: "default",
    reason: "bash needs approval",
  });
  out = await check("bash", "{command: git}");
  assertEquals(out.code, 2);
  assertEquals(out.stdout, "");
  assertStringIncludes(out.stderr, "policy check: the input is not valid JSON");
  out = await runCli(["--config", ws.config, "policy", "check", "bash"]);
  assertEquals(out.code, 2);
  assertStringIncludes(out.stderr, "policy check: usage: rousseau policy check TOOL JSON");
});

Deno.test("policy check: the default run policy, and --for chat", async () => {
  await using ws = await tmpWorkspace();
  const input = `{"path":"${ws.path("a")}","content":"x"}`;
  let out = await runCli(["--workspace", ws.root, "policy", "check", "write", input]);
  assertEquals(out.code, 1);
  assertStringIncludes(out.stdout, "deny (rule default): not allowed by the default policy");
  out = await runCli(["--workspace", ws.root, "policy", "check", "write", input, "--for", "chat"]);
  assertEquals([out.code, out.stdout], [4, "ask (rule ask[0]): write needs approval\n"]);
  out = await runCli(["policy", "check", "write", input, "--for", "ci"]);
  assertEquals(out.code, 2);
  assertStringIncludes(out.stderr, "--for: want one of run, chat, mcp, tool");
});

Deno.test("policy test: examples hold; exit 0 with no warnings", async () => {
  await using ws = await withPolicy(POLICY);
  const out = await runCli(["--config", ws.config, "--workspace", ws.root, "policy", "test"]);
  assertEquals(out.code, 0, out.stdout + out.stderr);
  assertEquals(out.stdout, "policy test: 3 rules, 7 examples: 0 failed, 0 warnings\n");
});

Deno.test("policy test: a failing example exits 1; lint warnings name the rule", async () => {
  await using ws = await withPolicy(LINTED);
  const out = await runCli(["--config", ws.config, "--workspace", ws.root, "policy", "test"]);
  assertEquals(out.code, 1, out.stderr);
  assertEquals(
    out.stdout,
    [
      "FAIL  allow[5]  example 1 " +
      '{"path":"/a","old_string":"safe","new_string":"ok"} does not match the rule',
      "warn  allow[0]  shadowed by deny[0], which denies every write call first: " +
      "this rule never decides",
      'warn  allow[1]  tool "bsh" is not registered (did you mean bash?)',
      'warn  allow[2]  match "^\\"command\\"" is anchored with ^ on something other than {, ' +
      "but the input's canonical JSON always starts with {: it can never match",
      "warn  allow[2]  shadowed by ask[0], which asks for every bash call first: " +
      "this rule never decides",
      "warn  allow[3]  command only applies to bash, but the rule is for read: it can never match",
      "policy test: 8 rules, 2 examples: 1 failed, 5 warnings",
      "",
    ].join("\n"),
  );
  const json = await runCli(["--config", ws.config, "policy", "test", "--json"]);
  assertEquals(json.code, 1);
  const report = JSON.parse(json.stdout);
  assertEquals([report.rules, report.examples, report.failures.length], [8, 2, 1]);
  assertEquals(report.warnings[1], {
    rule: "allow[1]",
    message: 'tool "bsh" is not registered (did you mean bash?)',
  });
});

Deno.test("policy test: warnings alone pass, and fail with --strict", async () => {
  await using ws = await withPolicy("agent:\n  approver:\n    allow:\n      - tool: bsh\n");
  let out = await runCli(["--config", ws.config, "policy", "test"]);
  assertEquals(out.code, 0);
  assertStringIncludes(out.stdout, "warn  allow[0]");
  out = await runCli(["--config", ws.config, "policy", "test", "--strict"]);
  assertEquals(out.code, 1);
  assertStringIncludes(out.stdout, "FAIL  allow[0]");
});

Deno.test("testPolicy: a rule without a tool wants {tool, input} examples", async () => {
  const policy = compilePolicy({
    deny: [{
      match: "secret",
      examples: [{ tool: "read", input: { path: "/secret" } }, { path: "/secret" }],
    }],
  });
  const report = await testPolicy(policy, { registered: ["read"] });
  assertEquals(report.failures, [{
    rule: "deny[0]",
    message:
      "example 2: this rule names no tool, so each example must be {tool: NAME, input: {...}}",
  }]);
  assertEquals(report.examples, 2);
});

Deno.test("policy replay: a stored session's calls under a stricter policy, nothing runs", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "one\n" } });
  const marker = ws.path("ran");
  await using server = startFakeAnthropic([
    {
      tools: [
        { name: "read", input: { path: ws.path("a.txt") } },
        { name: "bash", input: { command: `touch ${marker}` } },
      ],
    },
    { text: "done" },
  ]);
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "k" };
  const first = await runCli(
    ["--workspace", ws.root, "--allow", "bash", "run", "--output", "json", "go"],
    { env },
  );
  assertEquals(first.code, 0, first.stderr);
  const session = JSON.parse(first.stdout).session_id;
  await Deno.remove(marker);

  // The default run policy (no --allow bash) would now deny the bash call.
  let out = await runCli(["--workspace", ws.root, "policy", "replay", session]);
  assertEquals(out.code, 1, out.stderr);
  const lines = out.stdout.trimEnd().split("\n");
  assertEquals(lines[0], `#1  allow (rule allow[0])  read {"path":"${ws.path("a.txt")}"}`);
  assertStringIncludes(lines[1]!, "#2  deny (rule default): not allowed by the default policy");
  assertStringIncludes(lines[1]!, `bash {"command":"touch ${marker}"}`);
  assertEquals(
    lines[2],
    `policy replay: 2 calls in session ${session}: 1 allowed, 1 denied, 0 ask`,
  );
  assert(!await Deno.stat(marker).then(() => true, () => false), "replay ran a tool");

  out = await runCli(["--allow", "bash", "policy", "replay", session.slice(0, 8), "--json"]);
  assertEquals(out.code, 0, out.stderr);
  const replay = JSON.parse(out.stdout);
  assertEquals(replay.session_id, session);
  assertEquals(replay.calls.map((c: { decision: string }) => c.decision), ["allow", "allow"]);

  out = await runCli(["policy", "replay", "nope-nope"]);
  assertEquals(out.code, 2);
  assertStringIncludes(out.stderr, 'policy replay: no session "nope-nope"');
});

Deno.test("layers: a read-only policy derives no write and no run grant", async () => {
  await using ws = await tmpWorkspace();
  const policy = compilePolicy({ allow: [{ tool: "read" }, { tool: "grep" }] });
  const grants = grantsFor(policy, await createWorkspace([ws.root]), undefined);
  assert(grants !== null);
  assertEquals(grants.write, []);
  assertEquals(grants.run, []);
  assertEquals(grants.read.includes(ws.root), true);
});

Deno.test("audit verify: intact, then an edited, a removed and a swapped line are each caught", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "x\n" } });
  const state = join(ws.outside, "state");
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, `state:\n  dir: ${state}\n`);
  for (let i = 0; i < 3; i++) {
    const out = await runCli(
      [
        "--config",
        config,
        "--workspace",
        ws.root,
        "tool",
        "read",
        `{"path":"${ws.path("a.txt")}"}`,
      ],
    );
    assertEquals(out.code, 0, out.stderr);
  }
  const file = join(state, "audit.jsonl");
  const original = await Deno.readTextFile(file);
  const lines = original.trimEnd().split("\n");
  assertEquals(lines.length, 6); // execute + done for each call

  let out = await runCli(["--config", config, "audit", "verify"]);
  assertEquals(out.code, 0, out.stderr);
  assert(out.stdout.startsWith(`audit verify: ${file}: intact, 6 lines, head `), out.stdout);
  const headHash = out.stdout.trim().split(" ").at(-1)!;

  const tampered = join(ws.outside, "tampered.jsonl");
  const verify = async (content: string[], ...extra: string[]) => {
    await Deno.writeTextFile(tampered, content.join("\n") + "\n");
    return await runCli(["audit", "verify", tampered, ...extra]);
  };
  out = await verify(
    lines.map((l, i) => i === 2 ? l.replace('"tool":"read"', '"tool":"bash"') : l),
  );
  assertEquals([out.code, out.stdout], [
    1,
    `audit verify: ${tampered}: line 3: line 3 was edited: line 4 holds the hash of a different line 3\n`,
  ]);
  out = await verify(lines.filter((_, i) => i !== 3));
  assertEquals([out.code, out.stdout], [
    1,
    `audit verify: ${tampered}: line 4: 1 line was removed before line 4 (entry 4)\n`,
  ]);
  out = await verify([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)], "--json");
  assertEquals(out.code, 1);
  assertEquals(JSON.parse(out.stdout), {
    file: tampered,
    lines: 6,
    intact: false,
    line: 2,
    problem: "lines were reordered: line 2 follows line 3 in the chain",
  });
  // The last line has no successor: the head beside the log catches its edit, and so does
  // --head with a hash kept elsewhere when there is no head file.
  const last = lines.map((l, i) => i === 5 ? l.replace('"tool.done"', '"tool.error"') : l);
  await Deno.copyFile(`${file}.head`, `${tampered}.head`);
  out = await verify(last);
  assertEquals(out.code, 1);
  assertStringIncludes(out.stdout, "line 6: line 6 does not match the head (entry 6, hash");
  await Deno.remove(`${tampered}.head`);
  out = await verify(last, "--head", headHash);
  assertEquals(out.code, 1);
  assertStringIncludes(out.stdout, "line 6: the last line's hash is");
  out = await runCli(["audit", "verify", join(ws.outside, "missing.jsonl")]);
  assertEquals(out.code, 1);
  assertStringIncludes(out.stderr, "no such file");
});

Deno.test("init: writes a commented config that loads, passes policy test, and never overwrites", async () => {
  await using ws = await tmpWorkspace();
  const path = join(ws.outside, "conf", "config.yaml");
  let out = await runCli(["--config", path, "init"]);
  assertEquals([out.code, out.stdout], [0, ""], out.stderr);
  assertStringIncludes(out.stderr, `rousseau: wrote ${path}; check it with: rousseau doctor`);
  const text = await Deno.readTextFile(path);
  assert(text.startsWith("# rousseau configuration"), text.slice(0, 80));
  assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
  out = await runCli(["--config", path, "--workspace", ws.root, "policy", "test"]);
  assertEquals(out.code, 0, out.stdout + out.stderr);
  assertStringIncludes(out.stdout, "0 failed, 0 warnings");
  out = await runCli(["--config", path, "init"]);
  assertEquals(out.code, 2);
  assertStringIncludes(out.stderr, `init: ${path} already exists; pass --force to replace it`);
  assertEquals(await Deno.readTextFile(path), text);
  out = await runCli(["--config", path, "--provider", "openai", "init", "--force"]);
  assertEquals(out.code, 0, out.stderr);
  const openai = await Deno.readTextFile(path);
  assertStringIncludes(openai, "provider: openai\n");
  assertStringIncludes(openai, "\n  base_url: http://127.0.0.1:11434/v1");
  // --print writes the same file to stdout; the doctor accepts it (a key comes from env).
  out = await runCli(["--provider", "openai", "init", "--print"]);
  assertEquals(out.stdout, openai);
  // The doctor connects to the base URL (127.0.0.1:11434 in the file): something must listen.
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/v1`;
  out = await runCli(["--config", path, "--workspace", ws.root, "--base-url", url, "doctor"]);
  assertEquals(out.code, 0, out.stdout);
  assertStringIncludes(out.stdout, `ok    config        ${path} is valid`);
});
