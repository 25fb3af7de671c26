/**
 * `rousseau run` on long tasks, end to end: the real CLI against loopback models with a
 * 30k-token window that refuse an oversize request with their server's real 400 body
 * (tests/_helpers/context_fakes.ts), on the Anthropic, OpenAI and llama.cpp wires.
 * The issue's scenario: a task that reads twelve 24 KB files (about three windows' worth)
 * then fixes a bug died at step 3 of 9 with exit 1; it must now complete with exit 0.
 */

import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import {
  hasTools,
  lastToolResult,
  startWindowedModel,
  systemPrompt,
  type Wire,
} from "../../_helpers/context_fakes.ts";
import {
  type RecordedRequest,
  startFakeAnthropic,
  type Step,
} from "../../_helpers/fake_providers.ts";
import { providerArgs as wireArgs, providerEnv, runWithModel } from "../../_helpers/run_json.ts";
import { tmpDir, type TmpWorkspace, tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const WINDOW = 30_000;
const FILES = 12;
const FILE_BYTES = 24 * 1024;
const BUG = "const limit = items.length - 1; // BUG: skips the last item";
const FIX = "const limit = items.length;";
const BUGGY = 7;

function name(i: number): string {
  return `f${String(i).padStart(2, "0")}.ts`;
}

/** A 24 KB source file with unique lines; file 7 holds the bug. */
function fileText(i: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let n = 1; size < FILE_BYTES - 200; n++) {
    const line = `// ${name(i)} line ${String(n).padStart(4, "0")}: ${
      "lorem ipsum dolor ".repeat(4)
    }`;
    lines.push(line);
    size += line.length + 1;
  }
  if (i === BUGGY) lines.splice(40, 0, BUG);
  const text = lines.join("\n") + "\n";
  return text + "/".repeat(Math.max(0, FILE_BYTES - text.length - 1)) + "\n";
}

async function workspace(): Promise<TmpWorkspace> {
  const files: Record<string, string> = {};
  for (let i = 1; i <= FILES; i++) files[name(i)] = fileText(i);
  return await tmpWorkspace({ files });
}

/** The flags and environment that point the CLI at a model at `url` speaking `wire`. */
function providerArgs(wire: Wire, url: string): { args: string[]; env: Record<string, string> } {
  const speaks = spoken(wire);
  return { args: wireArgs(speaks), env: providerEnv(speaks, url) };
}

/** llama.cpp's server speaks the OpenAI wire. */
function spoken(wire: Wire): "anthropic" | "openai" {
  return wire === "anthropic" ? "anthropic" : "openai";
}

/** A model that reads every file, one a step, then fixes the bug, then answers. */
function longTask(ws: TmpWorkspace) {
  const state = { step: 0, intact: [] as boolean[], summaries: 0 };
  const model = (request: RecordedRequest): Step => {
    const body = request.body as Record<string, unknown>;
    const usage = { input: Math.ceil(JSON.stringify(body).length / 4), output: 40 };
    if (!hasTools(body)) {
      state.summaries++;
      return { text: "Summary: read some files; the bug is in f07.ts.", usage };
    }
    const step = state.step++;
    if (step >= 1 && step <= FILES) {
      // The result of the read just made must reach the model whole.
      state.intact.push(lastToolResult(body) === fileText(step));
    }
    if (step < FILES) {
      return { tools: [{ name: "read", input: { path: ws.path(name(step + 1)) } }], usage };
    }
    if (step === FILES) {
      return {
        text: "The off-by-one is in f07.ts.",
        tools: [{
          name: "edit",
          input: { path: ws.path(name(BUGGY)), "old_string": BUG, "new_string": FIX },
        }],
        usage,
      };
    }
    return { text: "Fixed the off-by-one in f07.ts.", usage };
  };
  return { state, model };
}

for (const wire of ["anthropic", "openai", "llama.cpp"] as const) {
  Deno.test(`run (${wire}): twelve 24 KB reads in a 30k window compact ≥ 3 times and the edit lands`, async () => {
    await using ws = await workspace();
    const task = longTask(ws);
    await using server = startWindowedModel(wire, WINDOW, task.model);
    const out = await runWithModel(spoken(wire), server, [
      "--workspace",
      ws.root,
      "--allow",
      "edit",
      "run",
      "--output",
      "json",
      "--no-instructions",
      "read every file, then fix the off-by-one",
    ]);
    assertEquals(out.code, 0, out.stderr);
    const result = out.json;
    assertEquals(result.subtype, "success");
    assertEquals(result.result, "Fixed the off-by-one in f07.ts.");
    assertEquals(await Deno.readTextFile(ws.path(name(BUGGY))), fileText(BUGGY).replace(BUG, FIX));
    // The window was learned from the server's own refusal, then respected.
    assertEquals(result.context.window, WINDOW);
    assert(result.context.compactions >= 3, JSON.stringify(result.context));
    assert(
      result.context.used > 0 && result.context.used <= WINDOW,
      JSON.stringify(result.context),
    );
    assertEquals(
      server.requests.filter((r) => r.refused).length,
      1,
      "one refusal teaches the window",
    );
    // Every request after a read carried that read's result intact.
    assertEquals(task.state.intact, Array(FILES).fill(true));
    // Old results became stubs that say how to get them back.
    const last = JSON.stringify(server.requests.at(-1)!.body);
    assertStringIncludes(last, "[elided to save context: the result of read");
    assertStringIncludes(last, "call the tool again if you need it]");
    for (const request of server.requests.filter((r) => !r.refused)) {
      assert(request.tokens <= WINDOW, `a request of ${request.tokens} tokens was sent`);
    }
  });
}

Deno.test("run --session: a resumed session that no longer fits is compacted and completes", async () => {
  await using ws = await workspace();
  await using tmpHome = await tmpDir("rousseau-ctx-home-");
  const home = tmpHome.path;
  const env = { XDG_CONFIG_HOME: join(home, "config"), XDG_DATA_HOME: join(home, "data") };
  // Day one, on a model with a large window: a pasted 60 KB log, then every file read.
  const log = Array.from({ length: 1200 }, (_, i) => `2026-12-03T10:${i} worker ${i} ok`).join(
    "\n",
  ).padEnd(60 * 1024, ".");
  const first: Step[] = [];
  for (let i = 1; i <= FILES; i++) {
    first.push({ tools: [{ name: "read", input: { path: ws.path(name(i)) } }] });
  }
  first.push({ text: "Read them all; the log shows nothing wrong." });
  await using big = startFakeAnthropic(first);
  const day1 = await runCli([
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "--no-instructions",
    "-",
  ], {
    env: { ...env, ANTHROPIC_BASE_URL: big.url, ANTHROPIC_API_KEY: "k" },
    stdin: `Here is the log:\n${log}\nRead every file.`,
  });
  assertEquals(day1.code, 0, day1.stderr);
  const session = JSON.parse(day1.stdout).session_id as string;

  // Day two, the same session on a 30k-window model: ~95k tokens of history.
  const seen: { summary: string[]; intactPrompt: boolean[] } = { summary: [], intactPrompt: [] };
  await using small = startWindowedModel("anthropic", WINDOW, (request) => {
    const body = request.body as Record<string, unknown>;
    const usage = { input: Math.ceil(JSON.stringify(body).length / 4), output: 30 };
    if (!hasTools(body)) {
      seen.summary.push(systemPrompt(body));
      return {
        text: "Summary: the user pasted a worker log (all ok) and asked to read files.",
        usage,
      };
    }
    const text = JSON.stringify(body.messages);
    seen.intactPrompt.push(text.includes("now fix the off-by-one in f07.ts"));
    return { text: "Done: nothing else needed.", usage };
  });
  const day2 = await runCli([
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "--no-instructions",
    "--session",
    session,
    "now fix the off-by-one in f07.ts",
  ], { env: { ...env, ANTHROPIC_BASE_URL: small.url, ANTHROPIC_API_KEY: "k" } });
  assertEquals(day2.code, 0, day2.stderr);
  const result = JSON.parse(day2.stdout);
  assertEquals(result.subtype, "success");
  assertEquals(result.session_id, session);
  assertEquals(result.context.window, WINDOW);
  assert(result.context.compactions >= 1, JSON.stringify(result.context));
  // The pasted log cannot be elided: it took one summary request.
  assertEquals(seen.summary.length, 1);
  assertStringIncludes(seen.summary[0]!, "You summarise the conversation of a coding agent");
  assertEquals(seen.intactPrompt, [true]);
  const sent = small.requests.at(-1)!;
  assertEquals(sent.refused, false);
  assertStringIncludes(JSON.stringify(sent.body), "[context compacted: the 1 earliest message(s)");
  assertStringIncludes(JSON.stringify(sent.body), "Summary: the user pasted a worker log");

  // The stored session still holds every original message, and says what was compacted.
  const shown = await runCli(["session", "show", session, "--json"], { env });
  assertEquals(shown.code, 0, shown.stderr);
  const stored = JSON.parse(shown.stdout);
  assertStringIncludes(JSON.stringify(stored.messages[0]), "Here is the log:");
  assertEquals(stored.messages.length, 2 + 2 * FILES + 2);
  const compactions = stored.context.filter((r: { type: string }) => r.type === "compaction");
  assert(compactions.length >= 1);
  assertEquals(compactions.at(-1).summary.through, 1);
  const text = await runCli(["session", "show", session], { env });
  assertStringIncludes(text.stdout, "— context compacted (the server said the prompt is too long)");
});

for (const kind of ["anthropic", "openai"] as const) {
  Deno.test(`run (${kind}): AGENTS.md, the CLAUDE.md fallback and the user's file reach the model's system prompt`, async () => {
    await using ws = await tmpWorkspace({
      files: {
        ".git/HEAD": "ref: refs/heads/main\n",
        "AGENTS.md": "Always run deno fmt before you finish.",
        "pkg/CLAUDE.md": "In pkg, prefer small functions.",
        "pkg/other/AGENTS.md": "Below the workspace: not read up front.",
      },
    });
    await using tmpHome = await tmpDir("rousseau-instr-home-");
    const home = tmpHome.path;
    await Deno.mkdir(join(home, "config", "rousseau"), { recursive: true });
    await Deno.writeTextFile(join(home, "config", "rousseau", "AGENTS.md"), "Answer tersely.");
    await using server = startWindowedModel(kind, 1_000_000, () => ({ text: "ok" }));
    const provider = providerArgs(kind, server.url);
    const env = {
      ...provider.env,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
    };
    const args = [
      ...provider.args,
      "--workspace",
      ws.path("pkg"),
      "run",
      "--output",
      "stream-json",
    ];
    const out = await runCli([...args, "hello"], { env });
    assertEquals(out.code, 0, out.stderr);
    const init = JSON.parse(out.stdout.split("\n")[0]!);
    const files = [
      join(home, "config", "rousseau", "AGENTS.md"),
      ws.path("AGENTS.md"),
      ws.path("pkg", "CLAUDE.md"),
    ];
    assertEquals(init.instructions, files);
    const system = systemPrompt(server.requests[0]!.body as Record<string, unknown>);
    assert(system.startsWith("You are rousseau"), system.slice(0, 80));
    const at = [
      system.indexOf("# Project instructions"),
      system.indexOf(`## ${files[0]} (the user's instructions)\n\nAnswer tersely.`),
      system.indexOf(`## ${files[1]}\n\nAlways run deno fmt before you finish.`),
      system.indexOf(`## ${files[2]}\n\nIn pkg, prefer small functions.`),
    ];
    assert(at.every((i, n) => i > (n === 0 ? 0 : at[n - 1]!)), `${at}\n${system}`);
    assert(!system.includes("Below the workspace"), system);

    // --no-instructions: none of it.
    const bare = await runCli([...args, "--no-instructions", "hello"], { env });
    assertEquals(bare.code, 0, bare.stderr);
    assertEquals(JSON.parse(bare.stdout.split("\n")[0]!).instructions, []);
    const plain = systemPrompt(server.requests[1]!.body as Record<string, unknown>);
    assert(!plain.includes("Project instructions") && !plain.includes("Answer tersely"), plain);
  });
}

Deno.test("run: a configured window (ROUSSEAU_AGENT_CONTEXT_WINDOW) compacts before any refusal", async () => {
  await using ws = await workspace();
  const task = longTask(ws);
  await using server = startWindowedModel("anthropic", WINDOW, task.model);
  const out = await runWithModel("anthropic", server, [
    "--workspace",
    ws.root,
    "--allow",
    "edit",
    "run",
    "--output",
    "stream-json",
    "--no-instructions",
    "read every file, then fix the off-by-one",
  ], { env: { ROUSSEAU_AGENT_CONTEXT_WINDOW: String(WINDOW) } });
  assertEquals(out.code, 0, out.stderr);
  const lines = out.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const result = lines.at(-1);
  assertEquals(result.subtype, "success");
  assertEquals(server.requests.filter((r) => r.refused).length, 0);
  const compactions = lines.filter((line) => line.type === "compaction");
  assert(compactions.length >= 3, out.stdout);
  assertEquals(compactions.length, result.context.compactions);
  for (const event of compactions) {
    assertEquals(Object.keys(event), [
      "type",
      "reason",
      "elided",
      "summarized",
      "tokens_before",
      "tokens_after",
      "window",
    ]);
    assertEquals([event.reason, event.window], ["threshold", WINDOW]);
    assert(event.tokens_after < event.tokens_before / 2, JSON.stringify(event));
  }
  assertEquals(task.state.intact, Array(FILES).fill(true));
  assertEquals(await Deno.readTextFile(ws.path(name(BUGGY))), fileText(BUGGY).replace(BUG, FIX));
});

Deno.test("run: --context-window must be a whole number of tokens", async () => {
  const out = await runCli(["run", "--context-window", "lots", "hi"], {
    env: { ANTHROPIC_API_KEY: "test-key" },
  });
  assertEquals(out.code, 2);
  assertEquals(
    out.stderr.trim(),
    'rousseau: --context-window: want a whole number of tokens of at least 1, got "lots"',
  );
});
