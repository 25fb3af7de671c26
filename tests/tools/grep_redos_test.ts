/**
 * grep stays linear on the classic catastrophic-backtracking patterns now that it runs them on
 * V8 (tools/_grep_matcher.ts): through the real CLI, whose process carries the V8 flags, and
 * against a control process that runs the same translations without the fallback flag and
 * never finishes. No timing assertions: a test that lost linearity would hang until its kill
 * timer fires, and the control shows that timer does fire when the fallback is missing.
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { CLI_ARGS, REPO, spawnCli } from "../_helpers/cli.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { GREP_V8_FLAGS } from "../../tools/grep.ts";

const CHILD = join(REPO, "tests", "testdata", "regex_engine_child.ts");
/** Long enough for the CLI on a loaded machine; a lost fallback needs hours or centuries. */
const KILL_AFTER_MS = 120_000;
/** The control: 2^40 backtracking steps do not finish in this time on any machine. */
const CONTROL_MS = 3_000;

/** The families, each with an input on which backtracking is exponential (or polynomial of high degree). */
const FAMILIES: ReadonlyArray<readonly [string, string]> = [
  ["(a+)+$", `${"a".repeat(40)}!`],
  ["(a|a)*b", "a".repeat(40)],
  ["(a|aa)+$", `${"a".repeat(60)}!`],
  // One `a` short of a match, spread over a long line.
  ["(.*a){12}", `a${"x".repeat(20)}`.repeat(11)],
  ["(.*a){20}", `a${"x".repeat(10)}`.repeat(19)],
  ["(\\w+\\s?)+$", `${"word ".repeat(20)}!`],
  ["(a*)*b", "a".repeat(40)],
  ["(x+x+)+y", "x".repeat(40)],
  ["^(([a-z])+.)+[A-Z]([a-z])+$", `${"aaaaaaaaaa".repeat(4)}!`],
];

interface Ended {
  readonly killed: boolean;
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Waits for `child`; kills it (SIGKILL) after `ms`. */
async function ended(child: Deno.ChildProcess, ms: number): Promise<Ended> {
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, ms);
  try {
    const { code, stdout, stderr } = await child.output();
    const decoder = new TextDecoder();
    return { killed, code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs deno with `args`; kills it after `ms`. */
function runDeno(args: readonly string[], ms: number): Promise<Ended> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return ended(child, ms);
}

/** `deno run` arguments of the engine child, with or without grep's V8 flags. */
function childArgs(flags: boolean, request: unknown): string[] {
  return [
    "run",
    "--quiet",
    "-A",
    "--config",
    `${REPO}deno.json`,
    ...(flags ? [`--v8-flags=${GREP_V8_FLAGS}`] : []),
    CHILD,
    JSON.stringify(request),
  ];
}

Deno.test("grep answers every catastrophic-backtracking family through the CLI without hanging", async () => {
  await using ws = await tmpWorkspace({
    files: Object.fromEntries(FAMILIES.map(([, input], i) => [`f${i}.txt`, `${input}\n`])),
  });
  // The CLI as `deno task cli` runs it (see the launcher test below): its process carries the
  // flags.
  assert(CLI_ARGS.includes(`--v8-flags=${GREP_V8_FLAGS}`));
  for (const [i, [pattern]] of FAMILIES.entries()) {
    const input = JSON.stringify({ pattern, path: ws.path(`f${i}.txt`) });
    const run = await ended(
      spawnCli(["--workspace", ws.root, "tool", "grep", input]),
      KILL_AFTER_MS,
    );
    assertEquals(run.killed, false, `grep ${pattern} did not finish`);
    assertEquals([run.code, run.stdout.trim()], [0, "no matches"], `${pattern}: ${run.stderr}`);
  }
});

Deno.test("grep runs the families on V8 with the flags, and on re2js without them", async () => {
  const request = { engines: FAMILIES.map(([pattern]) => [pattern, false]) };
  const on = await runDeno(childArgs(true, request), KILL_AFTER_MS);
  // (.*a){20} too: re2js's simplification spells the repeat out as 20 copies, a plain
  // concatenation V8's linear engine accepts (it refuses a `{20}` of its own).
  assertEquals(on.stdout.trim().split("\n"), FAMILIES.map(() => "v8"), on.stderr);
  const off = await runDeno(childArgs(false, request), KILL_AFTER_MS);
  assertEquals(off.stdout.trim().split("\n"), FAMILIES.map(() => "re2js"), off.stderr);
});

Deno.test("grep's V8 translation of (a+)+$ finishes only where the fallback flag is on", async () => {
  const request = { raw: "(a+)+$", input: `${"a".repeat(40)}!` };
  const on = await runDeno(childArgs(true, request), KILL_AFTER_MS);
  assertEquals([on.killed, on.code, on.stdout.trim()], [false, 0, "false"], on.stderr);
  // The control: the same match without the fallback backtracks ~2^40 times and is killed.
  const off = await runDeno(childArgs(false, request), CONTROL_MS);
  assertEquals([off.killed, off.stdout], [true, ""], off.stderr);
});

Deno.test("every launcher passes grep's V8 flags", async () => {
  const flag = `--v8-flags=${GREP_V8_FLAGS}`;
  const config = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json")));
  for (const task of ["cli", "install"]) {
    const words = String(config.tasks[task]).split(" ");
    assert(words.includes(flag), `deno.json task ${task} lacks ${flag}`);
    assert(words.indexOf(flag) < words.indexOf("main.ts"), `task ${task}: ${flag} after main.ts`);
  }
  const bin = await Deno.readTextFile(join(REPO, "bin", "rousseau.cjs"));
  assert(bin.includes(JSON.stringify(flag)), "bin/rousseau.cjs lacks the flags");
});
