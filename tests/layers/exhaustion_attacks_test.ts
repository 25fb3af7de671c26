/**
 * Resource exhaustion through the real CLI: patterns and globs sized to blow up, hundreds of
 * read-only calls in one turn. The promises: every call ends (no hang, no worker held for
 * hours), with an exact error where a cap refuses it; results stay in order.
 *
 * Public reports of the same class in other agents' tools:
 * - BaseIntelligence/bounty-challenge#50175 and #5648: a model-supplied grep regex with no
 *   work budget holds the agent's thread; aden-hive/hive#1673: the same in an MCP grep tool.
 *   An RE2 engine removes backtracking, but not the cost per byte of a huge program: hence
 *   the program-size cap tested here.
 * - usestrix/strix#1018: a fan-out of concurrent work ran the process out of file
 *   descriptors (EMFILE) and every later open failed.
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { runCli } from "../_helpers/cli.ts";
import { startFakeAnthropic } from "../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { serveMcp } from "../_helpers/mcp_client.ts";
import { GREP_MAX_PROGRAM_SIZE } from "../../tools/limits.ts";

async function grepCli(ws: string, input: Record<string, unknown>) {
  return await runCli(["--workspace", ws, "tool", "grep", "-", "--json"], {
    stdin: JSON.stringify(input),
  });
}

function toolOutput(run: { stdout: string }): { output: string; is_error: boolean } {
  return JSON.parse(run.stdout);
}

function tooLarge(size: number): string {
  return `grep: compile pattern: the pattern is too large (${size} instructions; the limit is ` +
    `${GREP_MAX_PROGRAM_SIZE}): use fewer alternatives or smaller repeat counts, or search in ` +
    "several calls";
}

// Nine `a{1000}` and 998 `b` compile to exactly 10,000 RE2 instructions (re2js programSize).
const AT_CAP = "a{1000}".repeat(9) + "b".repeat(998);

Deno.test("grep stays linear: a pattern at the program-size cap runs, one instruction over is refused", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "b".repeat(4000) + "\n" } });
  assertEquals(GREP_MAX_PROGRAM_SIZE, 10_000);
  const at = toolOutput(await grepCli(ws.root, { pattern: AT_CAP, path: ws.root }));
  assertEquals(at, { output: "no matches", "is_error": false });
  const over = toolOutput(await grepCli(ws.root, { pattern: AT_CAP + "b", path: ws.root }));
  assertEquals(over, { output: tooLarge(10_001), "is_error": true });
});

Deno.test("grep stays linear: a 100,000-way alternation (1 MB) is refused before any walk", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "w5x\n" } });
  const pattern = Array.from({ length: 100_000 }, (_, i) => `w${i}x`).join("|");
  const out = toolOutput(await grepCli(ws.root, { pattern, path: ws.root }));
  assertEquals(out.is_error, true);
  assert(out.output.startsWith("grep: compile pattern: the pattern is too large ("), out.output);
});

Deno.test("grep stays linear: nested quantifiers over a 1 MB line end with the answer", async () => {
  // The classic backtracking blow-up, (x+x+)+y over x…x with no y: RE2 answers in one pass.
  await using ws = await tmpWorkspace({ files: { "x.txt": "x".repeat(1024 * 1024) + "\n" } });
  for (const pattern of ["(x+x+)+y", "(a|aa)*b", "(x*)*$z", "^(([a-z])+.)+[A-Z]([a-z])+$"]) {
    const out = toolOutput(await grepCli(ws.root, { pattern, path: ws.root }));
    assertEquals(out, { output: "no matches", "is_error": false }, pattern);
  }
});

Deno.test("grep include: 1,024 brace alternatives run, 2,048 or 2^40 are a bad glob", async () => {
  await using ws = await tmpWorkspace({ files: { "ab.txt": "hit\n" } });
  const ten = "{a,b}".repeat(10); // 1,024 names
  const ok = toolOutput(await grepCli(ws.root, { pattern: "hit", path: ws.root, include: ten }));
  assertEquals(ok, { output: "no matches", "is_error": false });
  for (const include of ["{a,b}".repeat(40), "{a,b}".repeat(10) + "{c,d}"]) {
    const out = toolOutput(await grepCli(ws.root, { pattern: "hit", path: ws.root, include }));
    assertEquals(out, {
      output: `grep: bad include glob ${JSON.stringify(include)}: syntax error in pattern`,
      "is_error": true,
    });
  }
  // `**/` repeated is no path glob here (include matches base names): it ends, matching nothing.
  const deep = "**/".repeat(5000) + "*";
  const out = toolOutput(await grepCli(ws.root, { pattern: "hit", path: ws.root, include: deep }));
  assertEquals(out, { output: "no matches", "is_error": false });
});

Deno.test("run: 500 read-only calls in one turn all answer, in order, without running out of files", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 500; i++) files[`f${i}.txt`] = `content ${i}\n`;
  await using ws = await tmpWorkspace({ files });
  const tools = Array.from(
    { length: 500 },
    (_, i) =>
      i % 2 === 0 ? { id: `toolu_${i}`, name: "read", input: { path: ws.path(`f${i}.txt`) } } : {
        id: `toolu_${i}`,
        name: "grep",
        input: { pattern: `content ${i}$`, path: ws.path(`f${i}.txt`) },
      },
  );
  await using server = startFakeAnthropic([{ tools }, { text: "read them all" }]);
  const out = await runCli(["--workspace", ws.root, "run", "--output", "json", "read all"], {
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" },
  });
  assertEquals(out.code, 0, out.stderr);
  assertEquals(JSON.parse(out.stdout).result, "read them all");
  const results = server.requests[1]!.body.messages.at(-1).content as {
    type: string;
    tool_use_id: string;
    content: string;
    is_error?: boolean;
  }[];
  assertEquals(results.length, 500);
  for (const [i, result] of results.entries()) {
    assertEquals(result.type, "tool_result");
    assertEquals(result.tool_use_id, `toolu_${i}`);
    const want = i % 2 === 0 ? `content ${i}\n` : `${join(ws.root, `f${i}.txt`)}:1: content ${i}\n`;
    assertEquals([result.content, result.is_error ?? false], [want, false], `call ${i}`);
  }
});

Deno.test("mcp: 500 concurrent read and grep calls all answer, each with its own result, fds bounded", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 500; i++) files[`f${i}.txt`] = `content ${i}\n`;
  await using ws = await tmpWorkspace({ files });
  const served = await serveMcp(ws.root);
  const { client, pid } = served;
  let fds = 0;
  const sampler = setInterval(() => {
    try {
      fds = Math.max(fds, [...Deno.readDirSync(`/proc/${pid}/fd`)].length);
    } catch { /* gone */ }
  }, 20);
  try {
    const calls = Array.from({ length: 500 }, (_, i) =>
      client.callTool({
        name: i % 2 === 0 ? "read" : "grep",
        arguments: i % 2 === 0
          ? { path: ws.path(`f${i}.txt`) }
          : { pattern: `content ${i}$`, path: ws.path(`f${i}.txt`) },
      }));
    const results = await Promise.all(calls);
    for (const [i, result] of results.entries()) {
      const text = (result.content as { text: string }[])[0]!.text;
      const want = i % 2 === 0 ? `content ${i}\n` : `${ws.path(`f${i}.txt`)}:1: content ${i}\n`;
      assertEquals([text, result.isError === true], [want, false], `call ${i}`);
    }
  } finally {
    clearInterval(sampler);
    await served.close();
  }
  // Measured here: a peak of 34; 500 calls must not each hold a file open at once.
  assert(fds > 0 && fds < 400, `peak fds ${fds}`);
});
