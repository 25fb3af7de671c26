/**
 * Habits people bring from other agents (cli.md "Habits"), and the daily-use fixes of the
 * daily-use issue that live in the command line: `-h`, `-v`, `-p`, bare `rousseau`,
 * `-c`/`--resume`, `session list`, unknown tool names in flags and config, `init` keeping
 * chat's asks, `tool` for people, the JSON log header, misspelled variables, completion.
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { runCli } from "../_helpers/cli.ts";
import { type FakeServer, startFakeOpenAI } from "../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { rewriteHabits } from "../../cli/mod.ts";
import { Command, Option } from "commander";

function openaiEnv(server: FakeServer): Record<string, string> {
  return { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" };
}
const OPENAI = ["--provider", "openai", "--model", "local-model"];

Deno.test("habits: -h is --help and -v is --version, on stdout, exit 0", async () => {
  const help = await runCli(["-h"]);
  assertEquals(help.code, 0);
  assertStringIncludes(help.stdout, "Usage: rousseau");
  const runHelp = await runCli(["run", "-h"]);
  assertEquals(runHelp.code, 0);
  assertStringIncludes(runHelp.stdout, "Usage: rousseau run");
  const version = await runCli(["-v"]);
  assertEquals(version.code, 0);
  assertMatch(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

Deno.test("habits: bare rousseau without a terminal prints help on stderr and exits 2", async () => {
  const out = await runCli([]);
  assertEquals(out.code, 2);
  assertEquals(out.stdout, "");
  assertStringIncludes(out.stderr, "Usage: rousseau");
});

Deno.test("habits: only words before the command are rewritten", () => {
  const program = new Command("rousseau")
    .addOption(new Option("--config <file>"))
    .addOption(new Option("--allow <rule>"));
  assertEquals(rewriteHabits(["-p", "hi"], program, false), ["run", "hi"]);
  assertEquals(rewriteHabits(["--print", "hi", "--output", "json"], program, false), [
    "run",
    "hi",
    "--output",
    "json",
  ]);
  assertEquals(rewriteHabits(["--print=hi"], program, false), ["run", "hi"]);
  assertEquals(rewriteHabits(["--config", "-p", "chat"], program, true), [
    "--config",
    "-p",
    "chat",
  ]);
  assertEquals(rewriteHabits(["run", "-p"], program, false), ["run", "-p"]);
  assertEquals(rewriteHabits(["--allow", "edit"], program, true), ["--allow", "edit", "chat"]);
  assertEquals(rewriteHabits(["--allow", "edit"], program, false), undefined);
  assertEquals(rewriteHabits([], program, true), ["chat"]);
  assertEquals(rewriteHabits(["-h"], program, false), ["-h"]);
});

Deno.test("rewriteHabits() moves run and chat options typed before the command after it", () => {
  const program = new Command("rousseau").addOption(new Option("--allow <rule>"));
  program.command("run").option("-c, --continue").option("--session <id>");
  program.command("chat").option("-c, --continue").option("--resume [id]");
  program.command("tools");
  const rows: [string[], boolean, string[] | undefined][] = [
    [["-c", "-p", "again"], false, ["run", "-c", "again"]],
    [["-p", "again", "-c"], false, ["run", "again", "-c"]],
    [["--allow", "edit", "-c", "-p", "x"], false, ["--allow", "edit", "run", "-c", "x"]],
    [["--session", "abcd", "-pagain"], false, ["run", "again", "--session", "abcd"]],
    [["-c", "chat"], false, ["chat", "-c"]],
    [["-c"], true, ["chat", "-c"]],
    [["--resume", "abcd"], true, ["chat", "--resume", "abcd"]],
    [["--resume", "chat"], false, ["chat", "--resume"]],
    [["--resume", "-c"], true, ["chat", "--resume", "-c"]],
    [["-c", "tools"], false, ["tools", "-c"]],
    [["-c"], false, undefined],
    [["-x"], false, ["-x"]],
  ];
  for (const [args, interactive, want] of rows) {
    assertEquals(rewriteHabits(args, program, interactive), want, args.join(" "));
  }
});

Deno.test("habits: an unknown option is a rousseau: error with a did-you-mean, exit 2", async (t) => {
  const rows: [string[], string][] = [
    [["--allwo", "write", "tools"], "rousseau: unknown option '--allwo' (did you mean --allow?)"],
    [["tools", "--jsn"], "rousseau: unknown option '--jsn' (did you mean --json?)"],
    [["tools", "--contniue"], "rousseau: unknown option '--contniue' (did you mean --continue?)"],
    [
      ["tools", "-c"],
      "rousseau: unknown option '-c' (-c is an option of run, chat: rousseau run -c)",
    ],
    [["-x"], "rousseau: unknown option '-x'"],
    [["bogus"], "rousseau: unknown command 'bogus'"],
  ];
  for (const [args, first] of rows) {
    await t.step(args.join(" "), async () => {
      const out = await runCli(args);
      assertEquals([out.code, out.stdout, out.stderr.split("\n")[0]], [2, "", first]);
    });
  }
});

Deno.test("habits: -c -p PROMPT continues the last session, as -p PROMPT -c does", async () => {
  await using server = startFakeOpenAI([{ text: "first" }, { text: "second" }, { text: "third" }]);
  await using ws = await tmpWorkspace();
  const env = openaiEnv(server);
  const base = [...OPENAI, "--workspace", ws.root];
  const first = await runCli([...base, "-p", "one", "--output", "json"], { env });
  assertEquals(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id as string;
  const before = await runCli([...base, "-c", "-p", "again", "--output", "json"], { env });
  assertEquals(before.code, 0, before.stderr);
  assertEquals(JSON.parse(before.stdout).session_id, id);
  const after = await runCli([...base, "-p", "again", "-c", "--output", "json"], { env });
  assertEquals(after.code, 0, after.stderr);
  assertEquals(JSON.parse(after.stdout).session_id, id);
});

Deno.test("habits: -p PROMPT runs one turn like run PROMPT, run flags after it", async () => {
  await using server = startFakeOpenAI([{ text: "hello from -p" }]);
  await using ws = await tmpWorkspace();
  const out = await runCli(
    [...OPENAI, "--workspace", ws.root, "-p", "say hi", "--output", "json"],
    { env: openaiEnv(server) },
  );
  assertEquals(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout);
  assertEquals(result.result, "hello from -p");
  assertEquals(result.subtype, "success");
});

Deno.test("habits: -c continues this workspace's newest session; another workspace's is named", async () => {
  await using server = startFakeOpenAI([
    { text: "first" },
    { text: "second" },
    { text: "third" },
    { text: "fourth" },
  ]);
  await using ws = await tmpWorkspace();
  await using other = await tmpWorkspace();
  const env = openaiEnv(server);
  const first = await runCli(
    [...OPENAI, "--workspace", ws.root, "run", "--output", "json", "one"],
    {
      env,
    },
  );
  assertEquals(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id as string;

  const second = await runCli(
    [...OPENAI, "--workspace", ws.root, "run", "-c", "--output", "json", "two"],
    { env },
  );
  assertEquals(second.code, 0, second.stderr);
  assertEquals(JSON.parse(second.stdout).session_id, id);
  // The second request carried the first turn.
  const texts = JSON.stringify(server.requests[1]!.body.messages);
  assertStringIncludes(texts, "one");
  assertStringIncludes(texts, "first");

  // -c in a workspace with no session starts a new one and says so.
  const fresh = await runCli(
    [...OPENAI, "--workspace", other.root, "run", "-c", "--output", "json", "three"],
    { env },
  );
  assertEquals(fresh.code, 0, fresh.stderr);
  assert(JSON.parse(fresh.stdout).session_id !== id);
  assertStringIncludes(fresh.stderr, `no earlier session in ${other.root}; starting a new one`);

  // --resume ID of another workspace's session continues it and says where it started.
  const resumed = await runCli(
    [...OPENAI, "--workspace", other.root, "run", "--resume", id, "--output", "json", "four"],
    { env },
  );
  assertEquals(resumed.code, 0, resumed.stderr);
  assertEquals(JSON.parse(resumed.stdout).session_id, id);
  assertStringIncludes(
    resumed.stderr,
    `session ${id} was started in ${ws.root}; continuing it in ${other.root}`,
  );

  const both = await runCli([...OPENAI, "run", "-c", "--session", id, "x"], { env });
  assertEquals(both.code, 2);
  assertStringIncludes(both.stderr, "--session and --continue cannot be used together");
});

Deno.test("session list: a header with workspace, age, turns and first prompt; empty says so", async () => {
  await using ws = await tmpWorkspace();
  const state = join(ws.root, "state");
  const empty = await runCli(["session", "list"], { env: { ROUSSEAU_STATE_DIR: state } });
  assertEquals(empty.code, 0, empty.stderr);
  assertEquals(empty.stdout, "no sessions yet\n");

  await using server = startFakeOpenAI([{ text: "ok" }]);
  const env = { ...openaiEnv(server), ROUSSEAU_STATE_DIR: state };
  const run = await runCli([
    ...OPENAI,
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "list me",
  ], {
    env,
  });
  assertEquals(run.code, 0, run.stderr);
  const id = JSON.parse(run.stdout).session_id as string;
  const list = await runCli(["session", "list"], { env });
  const [header, row, ...rest] = list.stdout.split("\n");
  assertMatch(header!, /^ID +WORKSPACE +AGE +TURNS +FIRST PROMPT$/);
  assertMatch(row!, new RegExp(`^${id} +${ws.root} +now +1 +list me$`));
  assertEquals(rest, [""]);
});

Deno.test("unknown tool names: --allow bsh is a usage error with a did-you-mean; config names the rule", async () => {
  await using ws = await tmpWorkspace();
  const typo = await runCli([
    "--workspace",
    ws.root,
    "--allow",
    "bsh",
    "tool",
    "read",
    JSON.stringify({ path: join(ws.root, "x") }),
  ]);
  assertEquals(typo.code, 2);
  assertStringIncludes(typo.stderr, '--allow bsh: unknown tool "bsh" (did you mean "bash"?)');
  assertStringIncludes(typo.stderr, "registered tools: bash, edit, grep, read, write");

  const config = join(ws.root, "rousseau.yaml");
  await Deno.writeTextFile(
    config,
    "agent:\n  approver:\n    mode: pattern\n    allow:\n      - tool: read\n      - tool: grpe\n",
  );
  const fromFile = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "read",
    JSON.stringify({ path: config }),
  ]);
  assertEquals(fromFile.code, 1);
  assertStringIncludes(
    fromFile.stderr,
    'agent.approver.allow[1].tool: unknown tool "grpe" (did you mean "grep"?)',
  );
});

Deno.test("tool for people: a mistyped name gets a did-you-mean; empty stdin says what to send", async () => {
  const typo = await runCli(["tool", "Read", "{}"]);
  assertEquals(typo.code, 2);
  assertStringIncludes(typo.stderr, 'tool: unknown tool "Read" (did you mean "read"?)');
  const empty = await runCli(["tool", "bash", "-"], { stdin: "" });
  assertEquals(empty.code, 1);
  assertEquals(
    empty.stderr,
    `bash: parse input: no input: want one JSON object, e.g. '{"command": "ls"}'\n`,
  );
});

Deno.test("init: the written config keeps chat asking about bash, and run denying it", async () => {
  await using ws = await tmpWorkspace();
  const config = join(ws.root, "rousseau.yaml");
  const init = await runCli(["--config", config, "init"]);
  assertEquals(init.code, 0, init.stderr);
  const npmTest = JSON.stringify({ command: "npm test" });
  const chat = await runCli([
    "--config",
    config,
    "policy",
    "check",
    "--for",
    "chat",
    "bash",
    npmTest,
  ]);
  assertEquals(chat.code, 4, chat.stdout + chat.stderr);
  assertMatch(chat.stdout, /^ask/);
  const run = await runCli([
    "--config",
    config,
    "policy",
    "check",
    "--for",
    "run",
    "bash",
    npmTest,
  ]);
  assertEquals(run.code, 4, run.stdout + run.stderr);
});

Deno.test("--log-format json keeps stderr all JSON, the run header included", async () => {
  await using server = startFakeOpenAI([{ text: "done" }]);
  await using ws = await tmpWorkspace();
  const out = await runCli(
    [...OPENAI, "--log-format", "json", "--workspace", ws.root, "run", "hi"],
    { env: openaiEnv(server) },
  );
  assertEquals(out.code, 0, out.stderr);
  const lines = out.stderr.trim().split("\n");
  assert(lines.length >= 1);
  for (const line of lines) {
    const record = JSON.parse(line);
    assertEquals(typeof record.msg, "string");
  }
  assertStringIncludes(lines[0]!, '"layers"');
});

Deno.test("a misspelled ROUSSEAU_ variable is named on stderr with the closest setting", async () => {
  const out = await runCli(["tools"], { env: { ROUSSEAU_LOG_LEVLE: "debug" } });
  assertEquals(out.code, 0, out.stderr);
  assertStringIncludes(
    out.stderr,
    "rousseau: environment: ROUSSEAU_LOG_LEVLE is not a setting and is ignored " +
      "(did you mean ROUSSEAU_LOG_LEVEL?)",
  );
  const secret = await runCli(["tools"], { env: { ROUSSEAU_DEPLOY_TOKEN: "x" } });
  assertEquals(secret.stderr, "");
});

async function shellCompletes(shell: "bash" | "fish", line: string): Promise<string[]> {
  const script = await runCli(["completion", shell]);
  assertEquals(script.code, 0, script.stderr);
  await using ws = await tmpWorkspace();
  const file = join(ws.root, `rousseau.${shell}`);
  await Deno.writeTextFile(file, script.stdout);
  const words = line.split(" ");
  const program = shell === "bash"
    ? `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${
      words.length - 1
    }; _rousseau; printf '%s\\n' "\${COMPREPLY[@]}"`
    : `source ${file}; complete -C '${line}'`;
  const out = await new Deno.Command(shell, { args: ["-c", program], stdout: "piped" }).output();
  assertEquals(out.code, 0);
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).map((l) =>
    l.split("\t")[0]!
  );
}

function available(program: string): boolean {
  try {
    new Deno.Command(program, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync();
    return true;
  } catch {
    return false;
  }
}

Deno.test("completion: bash completes commands, flags, choices and actions from the command table", async () => {
  assertEquals(await shellCompletes("bash", "rousseau ru"), ["run"]);
  assertEquals(await shellCompletes("bash", "rousseau run --out"), ["--output"]);
  assertEquals(await shellCompletes("bash", "rousseau --provider "), ["anthropic", "openai"]);
  assertEquals(await shellCompletes("bash", "rousseau --config x sess"), ["session"]);
  assertEquals(await shellCompletes("bash", "rousseau session "), ["list", "show", "delete"]);
  assertEquals(await shellCompletes("bash", "rousseau run --output "), [
    "text",
    "json",
    "stream-json",
  ]);
  const unknown = await runCli(["completion", "tcsh"]);
  assertEquals(unknown.code, 2);
  assertStringIncludes(unknown.stderr, 'completion: unknown shell "tcsh" (want bash, zsh, fish)');
});

Deno.test({
  name: "completion: fish completes the same; zsh's script parses",
  ignore: !available("fish") || !available("zsh"),
  async fn() {
    assertEquals(await shellCompletes("fish", "rousseau ru"), ["run"]);
    assertEquals((await shellCompletes("fish", "rousseau session ")).sort(), [
      "delete",
      "list",
      "show",
    ]);
    const zsh = await runCli(["completion", "zsh"]);
    await using ws = await tmpWorkspace();
    const file = join(ws.root, "_rousseau");
    await Deno.writeTextFile(file, zsh.stdout);
    const check = await new Deno.Command("zsh", { args: ["-n", file] }).output();
    assertEquals(check.code, 0, new TextDecoder().decode(check.stderr));
  },
});
