/**
 * `rousseau run` and the model's stop reasons, reasoning and provider errors, end to end: the
 * real CLI against loopback servers speaking llama.cpp's, OpenAI's and Anthropic's wire.
 * Each case is one of issue 17's findings against a real llama-server.
 */

import { cutCallMessage } from "../../../agent/loop.ts";
import type { Provider } from "../../../providers/types.ts";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import {
  type FakeServer,
  llamaCppNoJinja,
  startFakeOpenAI,
} from "../../_helpers/fake_providers.ts";
import { runWithModel, startFake, type Wire } from "../../_helpers/run_json.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const start = startFake;

/** `runWithModel`, with extra environment as the last argument. */
function run(wire: Wire, server: FakeServer, args: string[], env: Record<string, string> = {}) {
  return runWithModel(wire, server, args, { env });
}

/** A provider as the loop sees it, for the exact texts the model is told. */
function named(name: string, maxTokens?: number): Provider {
  return {
    name,
    model: "m",
    // The OpenAI wire without a configured limit sends one derived from the window.
    ...(maxTokens === undefined
      ? name === "openai" ? { derivesOutputLimit: true } : {}
      : { maxTokens }),
    complete() {
      throw new Error("not called");
    },
  };
}

for (const kind of ["anthropic", "openai"] as const) {
  // Issue 17: llama-server's `finish_reason: "length"` was reported as success, exit 0.
  Deno.test(`run (${kind}): a reply cut by the output limit is error_max_tokens, exit 1`, async () => {
    await using ws = await tmpWorkspace();
    await using server = start(kind, [{ text: "The first half of the answ", stop: "max_tokens" }]);
    const out = await run(kind, server, [
      "--workspace",
      ws.root,
      "--max-tokens",
      "64",
      "run",
      "--output",
      "json",
      "explain",
    ]);
    assertEquals(out.code, 1, out.stderr);
    assertEquals(out.json.subtype, "error_max_tokens");
    assertEquals(out.json.is_error, true);
    assertEquals(
      out.json.result,
      "agent: the reply was cut off by the output-token limit (max_tokens 64) after 26 " +
        `characters (raise it with --max-tokens or ${kind}.max_tokens, or ask for a shorter answer)`,
    );
    assertEquals(server.requests[0]!.body.max_tokens, 64);

    await using again = start(kind, [{ text: "cut", stop: "max_tokens" }]);
    const text = await run(kind, again, ["--workspace", ws.root, "run", "explain"]);
    assertEquals(text.code, 1);
    assertEquals(text.stdout, "", "a cut answer is not printed as the answer");
    assertStringIncludes(text.stderr, "rousseau: agent: the reply was cut off by the output-token");
  });

  // Issue 17: a cut tool call came back as `write: parse input: invalid JSON: Unterminated
  // string...` with no word about the limit.
  Deno.test(`run (${kind}): a tool call cut by the output limit tells the model why`, async () => {
    await using ws = await tmpWorkspace();
    const raw = '{"path": "big.txt", "content": "line 1\\nline 2\\nline';
    await using server = start(kind, [
      { tools: [{ id: "call_cut", name: "write", raw }], stop: "max_tokens" },
      { text: "I will write it in parts." },
    ]);
    const out = await run(kind, server, [
      "--workspace",
      ws.root,
      "--allow",
      "write",
      "run",
      "--output",
      "json",
      "write big.txt",
    ]);
    assertEquals(out.code, 0, out.stderr);
    assertEquals(out.json.subtype, "success");
    const limit = kind === "anthropic" ? 8192 : undefined;
    const expected = cutCallMessage(named(kind, limit), {
      type: "tool_use",
      id: "call_cut",
      name: "write",
      input: {},
    });
    assertStringIncludes(expected, "cut off by the output-token limit");
    assertStringIncludes(expected, "write a large file in parts");
    const second = server.requests[1]!.body;
    if (kind === "openai") {
      const tool = second.messages.find((m: { role: string }) => m.role === "tool");
      assertEquals(tool.content, expected);
      // The cut arguments go back exactly as the model sent them, not as "{}".
      const call = second.messages.find((m: { tool_calls?: unknown }) => m.tool_calls);
      assertEquals(call.tool_calls[0].function.arguments, raw);
    } else {
      const result = second.messages[2].content[0];
      assertEquals(result.type, "tool_result");
      assertEquals(result.content, expected);
      assertEquals(result.is_error, true);
    }
    const shown = await runCli(["session", "show", out.json.session_id]);
    assertStringIncludes(
      shown.stdout,
      '→ write (input not valid JSON, as sent: {"path": "big.txt", "content": "line 1',
    );
    await Deno.stat(ws.path("big.txt")).then(
      () => assert(false, "a cut write must not run"),
      () => {},
    );
  });
}

// Issue 17: a thinking model's `reasoning_content` was dropped: `"result": ""`, success.
Deno.test("run: reasoning is streamed as thinking events, kept apart from the answer", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeOpenAI([
    { thinking: "The user wants a greeting.", text: "Hello." },
  ]);
  const out = await run("openai", server, [
    "--workspace",
    ws.root,
    "run",
    "--output",
    "stream-json",
    "greet",
  ]);
  assertEquals(out.code, 0, out.stderr);
  const thinking = out.objects.filter((o) => o.type === "thinking").map((o) => o.text).join("");
  assertEquals(thinking, "The user wants a greeting.");
  const text = out.objects.filter((o) => o.type === "text").map((o) => o.text).join("");
  assertEquals(text, "Hello.");
  assertEquals(out.last.result, "Hello.");
  // Stored in the session, and shown by `session show`.
  const shown = await runCli(["session", "show", out.last.session_id]);
  assertStringIncludes(shown.stdout, "(thinking: The user wants a greeting.)");
});

Deno.test("run: a reply of reasoning only is an error that says so, not an empty success", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeOpenAI([{ thinking: "Hmm. The answer is 4." }]);
  const out = await run("openai", server, [
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "2+2",
  ]);
  assertEquals(out.code, 1, out.stderr);
  assertEquals(out.json.subtype, "error");
  assertEquals(
    out.json.result,
    "agent: the model ended its reply with reasoning only and no answer (21 characters of " +
      "reasoning, kept in the session); if the answer is in the reasoning, the server's " +
      "reasoning parser may have swallowed it (llama-server: --reasoning-format none)",
  );

  await using cut = startFakeOpenAI([{ thinking: "Let me think step by", stop: "max_tokens" }]);
  const limited = await run(
    "openai",
    cut,
    ["--workspace", ws.root, "run", "--output", "json", "q"],
    {
      ROUSSEAU_OPENAI_MAX_TOKENS: "20",
    },
  );
  assertEquals(limited.json.subtype, "error_max_tokens");
  assertStringIncludes(limited.json.result, "(max_tokens 20) cut the reply off while the model");
});

Deno.test("run: openai.max_tokens comes from the file, the environment, then the flag", async () => {
  await using ws = await tmpWorkspace();
  const config = ws.path("..", "rousseau-max-tokens.yaml");
  await Deno.writeTextFile(config, "openai:\n  max_tokens: 300\n");
  await using server = startFakeOpenAI([{ text: "a" }, { text: "b" }, { text: "c" }, {
    text: "d",
  }]);
  const base = ["--config", config, "--workspace", ws.root];
  assertEquals((await run("openai", server, [...base, "run", "x"])).code, 0);
  assertEquals(
    (await run("openai", server, [...base, "run", "x"], { ROUSSEAU_OPENAI_MAX_TOKENS: "200" }))
      .code,
    0,
  );
  assertEquals(
    (await run("openai", server, [...base, "--max-tokens", "100", "run", "x"], {
      ROUSSEAU_OPENAI_MAX_TOKENS: "200",
    })).code,
    0,
  );
  assertEquals(server.requests.map((r) => r.body.max_tokens), [300, 200, 100]);
  const bad = await run("openai", server, [...base, "--max-tokens", "lots", "run", "x"]);
  assertEquals(bad.code, 2);
  assertStringIncludes(bad.stderr, '--max-tokens: want a whole number of at least 1, got "lots"');
  await Deno.remove(config);
});

// Issue 17: `llama-server --no-jinja` was retried 5 times over 7 s and gave up with no hint.
Deno.test("run: a server that refuses tools fails at once and says to add --jinja", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeOpenAI([llamaCppNoJinja(), llamaCppNoJinja(), llamaCppNoJinja()]);
  const out = await run("openai", server, ["--workspace", ws.root, "run", "hi"]);
  assertEquals(out.code, 1);
  assertEquals(server.requests.length, 1);
  assertStringIncludes(out.stderr, "tools param requires --jinja flag");
  assertStringIncludes(out.stderr, "restart it with --jinja");
});
