/**
 * Context management in the loop (agent/context.ts) with in-process providers: the "too long"
 * texts each server family sends, the known windows, stubs that keep the latest results,
 * the share cap, the summary, one retry and no more. The wire-level runs are in
 * tests/cli/commands/context_run_test.ts.
 */

import {
  createContextManager,
  cutResult,
  elisionStub,
  estimateRequest,
} from "../../agent/context.ts";
import { parseOverflow } from "../../agent/context_errors.ts";
import { knownContextWindow } from "../../agent/context_windows.ts";
import { runTurn, type TurnOptions } from "../../agent/loop.ts";
import type { AgentEvent } from "../../agent/types.ts";
import {
  type CompletionRequest,
  type Message,
  type Provider,
  ProviderError,
  type StreamEvent,
} from "../../providers/types.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { gateFor } from "../_helpers/gate.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";

Deno.test("parseOverflow() reads the window from each server's real too-long error", async (t) => {
  const rows: [string, unknown, { window?: number; promptTokens?: number } | undefined][] = [
    [
      // Anthropic 400 invalid_request_error, as the provider words it.
      "anthropic prompt is too long",
      new ProviderError(
        "anthropic: invalid_request_error: prompt is too long: 38111 tokens > 30000 maximum; status 400; request id req_1",
        { status: 400 },
      ),
      { window: 30000, promptTokens: 38111 },
    ],
    [
      "anthropic input + max_tokens over the limit",
      new ProviderError(
        "anthropic: invalid_request_error: input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again; status 400",
        { status: 400 },
      ),
      { window: 200000, promptTokens: 188240 },
    ],
    [
      "openai context_length_exceeded",
      new ProviderError(
        "openai: invalid_request_error: This model's maximum context length is 30000 tokens. However, your messages resulted in 38111 tokens. Please reduce the length of the messages.; status 400",
        { status: 400 },
      ),
      { window: 30000, promptTokens: 38111 },
    ],
    [
      "vLLM wording",
      new Error(
        "openai: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
      ),
      { window: 4096, promptTokens: 5000 },
    ],
    [
      "llama.cpp fields win over the text",
      new ProviderError(
        "openai: exceed_context_size_error: request (38111 tokens) exceeds the available context size (30000 tokens), try increasing it; status 400",
        {
          status: 400,
          cause: {
            error: {
              code: 400,
              type: "exceed_context_size_error",
              "n_prompt_tokens": 38112,
              "n_ctx": 30001,
            },
          },
        },
      ),
      { window: 30001, promptTokens: 38112 },
    ],
    [
      "older llama.cpp: no numbers",
      new ProviderError(
        "openai: invalid_request_error: the request exceeds the available context size, try increasing it; status 400",
        { status: 400 },
      ),
      {},
    ],
    [
      "a rate limit is not an overflow",
      new ProviderError("anthropic: rate_limit_error: too many tokens per minute; status 429", {
        status: 429,
      }),
      undefined,
    ],
    [
      "a 500 that mentions the context is not one either",
      new ProviderError("openai: prompt is too long: 5 tokens > 4 maximum; status 500", {
        status: 500,
      }),
      undefined,
    ],
    ["a bad key", new ProviderError("anthropic: authentication_error; status 401"), undefined],
  ];
  for (const [name, error, want] of rows) {
    await t.step(name, () => assertEquals(parseOverflow(error), want));
  }
});

Deno.test("knownContextWindow() knows the families and nothing else", () => {
  assertEquals(knownContextWindow("claude-sonnet-4-5"), 200_000);
  assertEquals(knownContextWindow("claude-3-5-haiku-latest"), 200_000);
  assertEquals(knownContextWindow("gpt-4.1-mini"), 1_047_576);
  assertEquals(knownContextWindow("gpt-4o-mini"), 128_000);
  assertEquals(knownContextWindow("gpt-4"), 8_192);
  assertEquals(knownContextWindow("o3-mini"), 200_000);
  assertEquals(knownContextWindow("qwen3:8b"), undefined);
  assertEquals(knownContextWindow("local-model"), undefined);
});

Deno.test("elisionStub() and cutResult() say what is gone and how to get it back", () => {
  assertEquals(
    elisionStub(
      { type: "tool_use", id: "t1", name: "read", input: { path: "/ws/a.ts" } },
      { type: "tool_result", toolUseId: "t1", content: "x".repeat(5000), isError: false },
    ),
    '[elided to save context: the result of read {"path":"/ws/a.ts"} (5000 characters); call the tool again if you need it]',
  );
  const long = "line\n".repeat(1000);
  const cut = cutResult(long, 1000, 0.25);
  assert(cut.length <= 1000, `${cut.length}`);
  assert(cut.startsWith("line\nline\n"));
  assert(
    cut.endsWith(
      "\n[cut for the model: this result is 5000 characters, more than 25% of the context window; read the file in parts with read's offset and limit, or narrow the grep pattern or the command's output]",
    ),
    cut.slice(-250),
  );
  assertEquals(cutResult("short", 1000, 0.25), "short");
});

/**
 * A model with a `window`-token context (by the manager's own estimate, times `scale`): too
 * long requests get Anthropic's error; requests without tools are summary requests.
 */
function windowedProvider(
  window: number,
  script: (request: CompletionRequest) => Message["content"],
  scale = 1,
) {
  const requests: CompletionRequest[] = [];
  const provider: Provider & { requests: CompletionRequest[] } = {
    name: "anthropic",
    model: "claude-sonnet-4-5",
    requests,
    async *complete(request): AsyncGenerator<StreamEvent> {
      requests.push(structuredClone(request));
      const tokens = Math.ceil(estimateRequest(request) * scale);
      if (tokens > window) {
        throw new ProviderError(
          `anthropic: invalid_request_error: prompt is too long: ${tokens} tokens > ${window} maximum; status 400`,
          { status: 400 },
        );
      }
      await Promise.resolve();
      const content = request.tools.length === 0
        ? [{ type: "text" as const, text: "SUMMARY of the earlier work" }]
        : script(request);
      yield {
        type: "message",
        message: { role: "assistant", content },
        stopReason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
        usage: { inputTokens: tokens, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    },
  };
  return provider;
}

/** `runTurn` through `gate(ws)`, with the system prompt "test" and a signal never aborted. */
function turn(
  ws: TmpWorkspace,
  messages: Message[],
  options: Pick<TurnOptions, "provider" | "maxIterations" | "context" | "onEvent">,
) {
  return runTurn(messages, {
    ...options,
    gate: gate(ws),
    system: "test",
    signal: new AbortController().signal,
  });
}

/** The gate the turns here call tools through: allow all, PATH `/usr/bin:/bin` only. */
function gate(ws: TmpWorkspace) {
  return gateFor(ws, { mode: "allow_all" }, [], { PATH: "/usr/bin:/bin" });
}

function lastResult(request: CompletionRequest): string | undefined {
  const last = request.messages.at(-1)!;
  const block = last.content.findLast((b) => b.type === "tool_result");
  return block?.type === "tool_result" ? block.content : undefined;
}

Deno.test("runTurn() with a context: reads past the window, stubs old results, keeps the latest", async () => {
  const text = (i: number) => `file ${i}\n` + "0123456789abcdef\n".repeat(340);
  const files: Record<string, string> = {};
  for (let i = 0; i < 12; i++) files[`f${i}.txt`] = text(i);
  await using ws = await tmpWorkspace({ files });
  let step = 0;
  const provider = windowedProvider(8_000, () => {
    const i = step++;
    return i < 12
      ? [{ type: "tool_use", id: `t${i}`, name: "read", input: { path: ws.path(`f${i}.txt`) } }]
      : [{ type: "text", text: "done" }];
  });
  const records: unknown[] = [];
  const context = createContextManager({
    model: "unknown-model",
    onRecord: (r) => records.push(r),
  });
  const events: AgentEvent[] = [];
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "read all" }] }];
  const result = await turn(ws, messages, {
    provider,
    maxIterations: 30,
    context,
    onEvent: (e) => events.push(e),
  });
  assertEquals(result.subtype, "success", result.result);
  assertEquals(context.window, 8_000, "learned from the error");
  assert(context.compactions >= 2, `${context.compactions}`);
  // The history is whole: every read's full text is still in it.
  for (let i = 0; i < 12; i++) {
    const block = messages[2 + 2 * i]!.content[0]!;
    assertEquals(block.type === "tool_result" && block.content, text(i));
  }
  // Every accepted request after a read carried that read whole.
  const accepted = provider.requests.filter((r) => estimateRequest(r) <= 8_000);
  for (const request of accepted.slice(1)) {
    const got = lastResult(request);
    assert(got !== undefined && got.startsWith("file ") && !got.startsWith("[elided"), got);
    assertEquals(got, text(Number(got.split("\n")[0]!.slice(5))));
  }
  assertStringIncludes(JSON.stringify(accepted.at(-1)!.messages), "[elided to save context");
  const compactions = events.filter((e) => e.type === "compaction");
  assertEquals(compactions.length, context.compactions);
  assertEquals(compactions[0]!.type === "compaction" && compactions[0]!.reason, "overflow");
  assertEquals(records.filter((r) => (r as { type: string }).type === "window").length, 1);
});

Deno.test("runTurn() with a context: old text that cannot be stubbed is summarised by the model", async () => {
  await using ws = await tmpWorkspace();
  const big = "a pasted log line\n".repeat(2_000); // ~9k tokens of user text
  const provider = windowedProvider(6_000, () => [{ type: "text", text: "answered" }]);
  const context = createContextManager({ model: "m", window: 6_000 });
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: big }] },
    { role: "assistant", content: [{ type: "text", text: "noted" }] },
    { role: "user", content: [{ type: "text", text: "what next?" }] },
  ];
  const result = await turn(ws, messages, { provider, maxIterations: 3, context });
  assertEquals(result.subtype, "success", result.result);
  assertEquals(provider.requests.length, 2, "one summary request, then the turn's request");
  assertEquals(provider.requests[0]!.tools, []);
  const sent = provider.requests[1]!.messages;
  const head = sent[0]!.content[0]!;
  assert(head.type === "text");
  // Only the pasted text went; the recent exchange fits and stays as it was.
  assertStringIncludes(head.text, "[context compacted: the 1 earliest message(s)");
  assert(head.text.endsWith("\nSUMMARY of the earlier work"), head.text);
  assertEquals(sent.slice(1), messages.slice(1, 3));
  assertEquals(messages[0]!.content[0], { type: "text", text: big }, "the history is untouched");
});

Deno.test("runTurn() with a context: a second too-long error ends the turn with what to do", async () => {
  await using ws = await tmpWorkspace();
  const provider = windowedProvider(50, () => [{ type: "text", text: "never" }]);
  const context = createContextManager({ model: "m" });
  const messages: Message[] = [{
    role: "user",
    content: [{ type: "text", text: "x".repeat(800) }],
  }];
  const result = await turn(ws, messages, { provider, maxIterations: 3, context });
  assertEquals(result.subtype, "error");
  assertStringIncludes(result.result, "prompt is too long");
  assertStringIncludes(result.result, "start a new session or set a model with a larger window");
  assert(provider.requests.length <= 3, `${provider.requests.length} requests`);
});

Deno.test("runTurn() with a context: other provider errors are not retried", async () => {
  await using ws = await tmpWorkspace();
  let calls = 0;
  const provider: Provider = {
    name: "anthropic",
    model: "m",
    // deno-lint-ignore require-yield
    async *complete() {
      calls++;
      await Promise.resolve();
      throw new ProviderError("anthropic: authentication_error: invalid x-api-key; status 401", {
        status: 401,
      });
    },
  };
  const result = await turn(ws, [{ role: "user", content: [{ type: "text", text: "hi" }] }], {
    provider,
    maxIterations: 3,
    context: createContextManager({ model: "m" }),
  });
  assertEquals(result.subtype, "error");
  assertEquals(result.result, "anthropic: authentication_error: invalid x-api-key; status 401");
  assertEquals(calls, 1);
});

Deno.test("ContextManager: a result over the share cap is cut for the model, kept whole in the history", () => {
  const context = createContextManager({ model: "m", window: 1_000, maxResultShare: 0.25 });
  const messages: Message[] = [
    { role: "user", content: [{ type: "text", text: "go" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "t", name: "bash", input: {} }] },
    {
      role: "user",
      content: [{
        type: "tool_result",
        toolUseId: "t",
        content: "y\n".repeat(5_000),
        isError: false,
      }],
    },
  ];
  const view = context.view(messages);
  const block = view[2]!.content[0]!;
  assert(block.type === "tool_result");
  assert(block.content.length <= 1_000, `${block.content.length}`);
  assertStringIncludes(block.content, "[cut for the model: this result is 10000 characters");
  const kept = messages[2]!.content[0]!;
  assertEquals(kept.type === "tool_result" && kept.content.length, 10_000);
});

Deno.test("ContextManager: records replay into the same view (a resumed session)", async () => {
  const stored: import("../../agent/context.ts").ContextRecord[] = [];
  const provider = windowedProvider(1_000_000, () => [{ type: "text", text: "x" }]);
  const first = createContextManager({
    model: "m",
    window: 100_000,
    onRecord: (r) => stored.push(r),
  });
  const messages: Message[] = [];
  for (let i = 0; i < 4; i++) {
    messages.push(
      { role: "user", content: [{ type: "text", text: `task ${i}` }] },
      { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "read", input: {} }] },
      {
        role: "user",
        content: [{
          type: "tool_result",
          toolUseId: `t${i}`,
          content: "z".repeat(2_000),
          isError: false,
        }],
      },
      { role: "assistant", content: [{ type: "text", text: `done ${i}` }] },
    );
  }
  const done = await first.compact(
    provider,
    { system: "s", messages, tools: [] },
    new AbortController().signal,
  );
  assert(done !== undefined);
  assertEquals(done.reason, "manual");
  assert(done.summarized > 0);
  const again = createContextManager({ model: "m", window: 100_000, records: stored });
  assertEquals(again.view(messages), first.view(messages));
  // The latest tool results stay whole even after /compact.
  assertStringIncludes(JSON.stringify(again.view(messages)), "z".repeat(2_000));
});

Deno.test("runTurn() with a context: parallel reads too big side by side are cut, not dropped", async () => {
  // The case: four capped reads in one step are more than the whole window.
  const text = (i: number) => `file ${i}\n` + "0123456789abcdef\n".repeat(1_000);
  await using ws = await tmpWorkspace({
    files: Object.fromEntries([0, 1, 2, 3].map((i) => [`f${i}.txt`, text(i)])),
  });
  let step = 0;
  const provider = windowedProvider(12_000, () =>
    step++ === 0
      ? [0, 1, 2, 3].map((i) => ({
        type: "tool_use" as const,
        id: `t${i}`,
        name: "read",
        input: { path: ws.path(`f${i}.txt`) },
      }))
      : [{ type: "text", text: "read them" }]);
  const context = createContextManager({ model: "unknown-model" });
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "read 4" }] }];
  const result = await turn(ws, messages, { provider, maxIterations: 5, context });
  assertEquals(result.subtype, "success", result.result);
  assertEquals(context.window, 12_000);
  const sent = provider.requests.at(-1)!;
  assert(estimateRequest(sent) <= 12_000);
  const results = sent.messages.at(-1)!.content;
  assertEquals(results.length, 4, "every result is there");
  for (const [i, block] of results.entries()) {
    assert(block.type === "tool_result");
    assert(block.content.startsWith(`file ${i}\n0123456789abcdef\n`), block.content.slice(0, 40));
    assertStringIncludes(
      block.content,
      "characters, and the results of this step together do not fit the context window; read the file in parts",
    );
  }
});

Deno.test("ContextManager.wrap() sends the window; a derived output limit refused for a window learned now is resent smaller", async () => {
  const requests: CompletionRequest[] = [];
  const provider: Provider = {
    name: "openai",
    model: "unknown-model",
    derivesOutputLimit: true,
    async *complete(request): AsyncGenerator<StreamEvent> {
      requests.push(request);
      await Promise.resolve();
      if (request.window === undefined) {
        // vLLM checks prompt + max_tokens against its window up front.
        throw new ProviderError(
          "openai: This model's maximum context length is 4000 tokens. However, you requested " +
            "8250 tokens (58 in the messages, 8192 in the completion); status 400",
          { status: 400 },
        );
      }
      yield {
        type: "message",
        message: { role: "assistant", content: [{ type: "text", text: "ok" }] },
        stopReason: "end_turn",
        usage: { inputTokens: 58, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    },
  };
  const context = createContextManager({ model: "unknown-model" });
  const wrapped = context.wrap(provider);
  const events: StreamEvent[] = [];
  const request: CompletionRequest = {
    system: "s",
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    tools: [],
  };
  for await (const e of wrapped.complete(request, new AbortController().signal)) events.push(e);
  assertEquals(requests.map((r) => r.window), [undefined, 4000]);
  assertEquals(context.window, 4000);
  assertEquals(context.compactions, 0);
  assertEquals(events.at(-1)?.type, "message");
});
