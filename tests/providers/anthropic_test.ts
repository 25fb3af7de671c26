/**
 * The Anthropic provider against a loopback server speaking the Messages wire: thinking
 * blocks with signatures kept and sent back unchanged, `stop_reason: "max_tokens"`, and the
 * API's real error bodies.
 */

import { anthropicBody, createAnthropicProvider } from "../../providers/anthropic.ts";
import {
  type CompletionRequest,
  type Message,
  ProviderError,
  type StreamEvent,
} from "../../providers/types.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import {
  anthropicOverloaded,
  anthropicPromptTooLong,
  type FakeServer,
  startFakeAnthropic,
} from "../_helpers/fake_providers.ts";

const TOOLS = [{
  name: "read",
  description: "read a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
}];

function request(messages: Message[]): CompletionRequest {
  return { system: "sys", messages, tools: TOOLS };
}

const HI: Message[] = [{ role: "user", content: [{ type: "text", text: "hi" }] }];

function provider(server: FakeServer, thinkingBudget?: number) {
  return createAnthropicProvider({
    apiKey: "k",
    model: "claude-fake",
    maxTokens: 4096,
    baseUrl: server.url,
    baseDelayMs: 1,
    ...(thinkingBudget === undefined ? {} : { thinkingBudget }),
  });
}

async function collect(
  p: ReturnType<typeof provider>,
  req: CompletionRequest,
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of p.complete(req, new AbortController().signal)) events.push(event);
  return events;
}

function final(events: StreamEvent[]) {
  const last = events.at(-1);
  assert(last?.type === "message");
  return last;
}

// Thinking blocks must be passed back unchanged, signature included, when tool use follows
// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking, "Preserving
// thinking blocks").
Deno.test("anthropic: a signed thinking block is kept and sent back unchanged", async () => {
  await using server = startFakeAnthropic([
    {
      thinking: "Read the file first.",
      signature: "sig_abc",
      tools: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }],
    },
    { text: "It says x." },
  ]);
  const p = provider(server, 2048);
  const events = await collect(p, request(HI));
  assertEquals(
    events.filter((e) => e.type === "thinking").map((e) => e.text).join(""),
    "Read the file first.",
  );
  const reply = final(events);
  assertEquals(reply.message.content, [
    { type: "thinking", text: "Read the file first.", signature: "sig_abc" },
    { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } },
  ]);
  const history: Message[] = [...HI, reply.message, {
    role: "user",
    content: [{ type: "tool_result", toolUseId: "toolu_1", content: "x", isError: false }],
  }];
  await collect(p, request(history));
  const sent = server.requests[1]!.body;
  assertEquals(sent.thinking, { type: "enabled", "budget_tokens": 2048 });
  assertEquals(sent.messages[1].content[0], {
    type: "thinking",
    thinking: "Read the file first.",
    signature: "sig_abc",
  });
});

Deno.test("anthropic: reasoning from another server is never sent; redacted goes back as is", () => {
  const body = anthropicBody(
    request([
      ...HI,
      {
        role: "assistant",
        content: [
          { type: "thinking", text: "local model musings" },
          { type: "thinking", text: "", redacted: "EncryptedBlob==" },
          { type: "text", text: "answer" },
        ],
      },
      { role: "assistant", content: [{ type: "thinking", text: "only reasoning" }] },
    ]),
    "claude-fake",
    100,
  );
  const messages = body.messages as { content: unknown[] }[];
  assertEquals(messages[1]!.content, [
    { type: "redacted_thinking", data: "EncryptedBlob==" },
    { type: "text", text: "answer" },
  ]);
  assertEquals(messages[2]!.content, [{ type: "text", text: "(reasoning only; no answer)" }]);
  assertEquals("thinking" in body, false);
});

Deno.test("anthropic: stop_reason max_tokens, and a cut tool call keeps its raw text", async () => {
  const cut = '{"path": "a.t';
  await using server = startFakeAnthropic([
    { text: "A long ans", stop: "max_tokens" },
    { tools: [{ id: "toolu_2", name: "read", raw: cut }], stop: "max_tokens" },
  ]);
  const p = provider(server);
  assertEquals(final(await collect(p, request(HI))).stopReason, "max_tokens");
  const tool = final(await collect(p, request(HI)));
  assertEquals(tool.stopReason, "max_tokens");
  const block = tool.message.content[0];
  assert(block?.type === "tool_use");
  assertEquals(block.rawInput, cut);
  assertStringIncludes(block.inputError ?? "", "invalid JSON");
  assertEquals(server.requests[0]!.body.max_tokens, 4096);
});

Deno.test("anthropic: prompt too long keeps its type and message; 529 is retried", async () => {
  await using server = startFakeAnthropic([
    anthropicPromptTooLong(38111, 30000),
    anthropicOverloaded(),
    { text: "ok" },
  ]);
  const p = provider(server);
  let error: unknown;
  try {
    await collect(p, request(HI));
  } catch (caught) {
    error = caught;
  }
  assert(error instanceof ProviderError);
  assertEquals(server.requests.length, 1);
  assertEquals(error.errorType, "invalid_request_error");
  assertEquals(error.providerMessage, "prompt is too long: 38111 tokens > 30000 maximum");
  assertEquals(error.status, 400);
  assertEquals((error.body as { request_id: string }).request_id, "req_fake_1");
  const events = await collect(p, request(HI));
  assertEquals(events.filter((e) => e.type === "retry").length, 1);
  assertEquals(final(events).message.content, [{ type: "text", text: "ok" }]);
});

Deno.test("anthropic: an unknown model and a refused connection say what to check", async () => {
  await using server = startFakeAnthropic([{
    status: 404,
    error: { type: "not_found_error", message: "model: claude-fake" },
  }]);
  let error: unknown;
  try {
    await collect(provider(server), request(HI));
  } catch (caught) {
    error = caught;
  }
  assert(error instanceof ProviderError);
  assertEquals(server.requests.length, 1);
  assertStringIncludes(
    error.message,
    `not_found_error: model: claude-fake (no model "claude-fake" here: check --model / ` +
      `anthropic.model and the base URL ${server.url})`,
  );

  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${listener.addr.port}`;
  listener.close();
  const down = createAnthropicProvider({
    apiKey: "k",
    model: "m",
    maxTokens: 1,
    baseUrl: url,
    maxRetries: 0,
  });
  try {
    for await (const _ of down.complete(request(HI), new AbortController().signal)) {
      // nothing arrives
    }
    throw new Error("expected a failure");
  } catch (caught) {
    assert(caught instanceof ProviderError);
    assertEquals(
      caught.message,
      `anthropic: cannot reach ${url}: connection refused — check the network or ANTHROPIC_BASE_URL`,
    );
  }
});
