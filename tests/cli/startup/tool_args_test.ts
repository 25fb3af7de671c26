// The start-up fast path's parse of `tool` calls (cli/startup/tool_args.ts) against commander's, word
// list by word list: whatever the fast path decides must be exactly what the full CLI parses.
import assert from "node:assert/strict";
import { CommanderError } from "commander";
import { buildProgram } from "../../../cli/mod.ts";
import { parseToolArgs, type ToolCall } from "../../../cli/startup/tool_args.ts";

/** commander's parse of `args`: the tool call, or "error"/"other" (not a tool call). */
async function commanderParse(args: readonly string[]): Promise<ToolCall | "error" | "other"> {
  let call: ToolCall | undefined;
  const program = buildProgram((_work, tool) => call = tool, new AbortController().signal);
  const quiet = { writeOut: () => {}, writeErr: () => {}, outputError: () => {} };
  program.configureOutput(quiet);
  for (const command of program.commands) command.configureOutput(quiet);
  try {
    await program.parseAsync([...args], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return "error";
    throw error;
  }
  return call ?? "other";
}

/** A small deterministic generator (xorshift32), so a failure names a reproducible case. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

const WORDS = [
  "tool",
  "read",
  "grep",
  "bash",
  "-",
  "--",
  '{"path":"/w/a.txt"}',
  "{}",
  "--json",
  "--json=1",
  "--timeout",
  "5s",
  "--timeout=2m",
  "--max-matches",
  "10",
  "--max-file-bytes=100",
  "--config",
  "c.yaml",
  "--config=c.yaml",
  "--workspace",
  "/w",
  "--workspace=/w",
  "--add-dir",
  "a",
  "--add-dir=b",
  "--allow",
  "read",
  "--allow=bash:^ls",
  "--deny",
  "edit",
  "--approver",
  "pattern",
  "--provider",
  "openai",
  "--provider=nope",
  "--log-level",
  "debug",
  "--log-level=loud",
  "--log-format=json",
  "--model",
  "m",
  "--base-url=http://x",
  "--max-tokens",
  "100",
  "-h",
  "--help",
  "-v",
  "--version",
  "-p",
  "--print",
  "run",
  "chat",
  "--unknown",
  "-x",
  "",
  "--timeout=",
];

Deno.test("every tool call the fast path decides is the call commander parses", async () => {
  const cases: string[][] = [
    ["tool", "read", '{"path":"/w/a.txt"}'],
    ["tool", "read"],
    ["tool", "read", "-"],
    ["tool", "read", "{}", "--json"],
    ["--workspace", "/w", "tool", "grep", "{}", "--max-matches", "5", "--json"],
    ["--add-dir", "a", "--add-dir=b", "--allow", "read", "--allow", "edit", "tool", "edit", "{}"],
    ["--provider", "openai", "--log-level=warn", "--log-format", "json", "tool", "bash", "{}"],
    ["tool", "bash", "{}", "--timeout", "5s", "--max-file-bytes=100"],
    ["tool", "read", "{}", "--workspace", "/w"],
    ["tool", "read", "{}", "--json", "--json"],
    ["--config", "a", "--config", "b", "tool", "read"],
    ["tool", "-h"],
    ["tool", "read", "a", "b"],
    ["tool"],
    ["--provider", "nope", "tool", "read"],
    ["tool", "read", "--", "{}"],
  ];
  const next = rng(20261203);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const globals = [
    ["--config", "c.yaml"],
    ["--config=c.yaml"],
    ["--workspace", "/w"],
    ["--workspace=/w"],
    ["--add-dir", "a"],
    ["--add-dir=b"],
    ["--allow", "read"],
    ["--allow=bash:^ls"],
    ["--deny", "edit"],
    ["--approver", "pattern"],
    ["--provider", "openai"],
    ["--provider=anthropic"],
    ["--log-level", "debug"],
    ["--log-format=json"],
    ["--model", "m"],
    ["--base-url=http://x"],
    ["--max-tokens", "100"],
  ];
  const toolOptions = [
    ["--json"],
    ["--timeout", "5s"],
    ["--timeout=2m"],
    ["--max-matches", "10"],
    ["--max-file-bytes=100"],
  ];
  for (let n = 0; n < 1500; n++) {
    // A well-formed call, then (often) one word from WORDS put anywhere in it.
    const words = [
      ...Array.from({ length: Math.floor(next() * 4) }, () => pick(globals)).flat(),
      "tool",
      pick(["read", "grep", "bash", "edit"]),
      ...(next() < 0.7 ? [pick(['{"path":"/w/a.txt"}', "{}", "-"])] : []),
      ...Array.from({ length: Math.floor(next() * 3) }, () => pick(toolOptions)).flat(),
    ];
    if (next() < 0.6) words.splice(Math.floor(next() * (words.length + 1)), 0, pick(WORDS));
    cases.push(words);
  }
  let decided = 0;
  for (const args of cases) {
    const fast = parseToolArgs(args);
    if (fast === undefined) continue;
    decided++;
    const full = await commanderParse(args);
    assert.deepEqual(
      full === "error" || full === "other"
        ? full
        : { name: full.name, json: full.json, flags: { ...full.flags } },
      fast,
      JSON.stringify(args),
    );
  }
  // The corpus must exercise the fast path, not only its refusals.
  assert.ok(decided >= 200, `only ${decided} of ${cases.length} word lists were decided`);
});

Deno.test("the fast path decides the plain shapes and leaves the rest to commander", () => {
  assert.deepEqual(parseToolArgs(["tool", "read", '{"path":"/a"}']), {
    name: "read",
    json: '{"path":"/a"}',
    flags: {},
  });
  assert.deepEqual(
    parseToolArgs(["--workspace=/w", "--add-dir", "a", "tool", "grep", "-", "--json"]),
    { name: "grep", json: "-", flags: { workspace: "/w", addDir: ["a"], json: true } },
  );
  for (
    const args of [
      ["tool"],
      ["tool", "--help"],
      ["tool", "read", "-h"],
      ["run", "tool"],
      ["-p", "tool", "read"],
      ["--workspace", "tool", "read"],
      ["--workspace", "-w", "tool", "read"],
      ["tool", "read", "{}", "--workspace", "/elsewhere"],
      ["tool", "read", "{}", "extra"],
      ["tool", "read", "--", "{}"],
      ["--log-level", "loud", "tool", "read"],
      ["--model", "a", "--model", "b", "tool", "read"],
      ["version"],
    ]
  ) {
    assert.equal(parseToolArgs(args), undefined, args.join(" "));
  }
});
