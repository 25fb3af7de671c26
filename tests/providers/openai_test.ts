/**
 * The OpenAI-compatible provider against a loopback server speaking the chat-completions
 * wire as llama.cpp, vLLM, Ollama and OpenAI do: reasoning deltas, `finish_reason: "length"`,
 * cut tool calls replayed verbatim, the output limit sent, and errors that say what to do.
 */

import { createOpenAiProvider, maxTokensField, openAiMessages } from "../../providers/openai.ts";
import {
  type CompletionRequest,
  type Message,
  ProviderError,
  type StreamEvent,
} from "../../providers/types.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import {
  type FakeServer,
  llamaCppContextOverflow,
  llamaCppLoadingModel,
  llamaCppNoJinja,
  ollamaModelNotFound,
  ollamaNoTools,
  openAiContextLengthExceeded,
  openAiModelNotFound,
  startFakeOpenAI,
  type Step,
  vllmNoToolParser,
} from "../_helpers/fake_providers.ts";

const TOOLS = [{
  name: "write",
  description: "write a file",
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
}];

function request(messages: Message[] = [{
  role: "user",
  content: [{ type: "text", text: "hi" }],
}]): CompletionRequest {
  return { system: "sys", messages, tools: TOOLS };
}

function provider(server: FakeServer, maxTokens?: number) {
  return createOpenAiProvider({
    apiKey: "k",
    model: "local-model",
    baseUrl: server.url,
    baseDelayMs: 1,
    ...(maxTokens === undefined ? {} : { maxTokens }),
  });
}

async function collect(
  p: ReturnType<typeof provider>,
  req = request(),
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of p.complete(req, new AbortController().signal)) events.push(event);
  return events;
}

async function failure(
  p: ReturnType<typeof provider>,
  req = request(),
): Promise<ProviderError> {
  try {
    await collect(p, req);
  } catch (error) {
    assert(error instanceof ProviderError, String(error));
    return error;
  }
  throw new Error("expected a ProviderError");
}

function final(events: StreamEvent[]) {
  const last = events.at(-1);
  assert(last?.type === "message");
  return last;
}

// Reasoning field names: llama.cpp / DeepSeek `reasoning_content`, vLLM >= 0.10 and Ollama
// `reasoning` (strands-agents/harness-sdk#2191, vllm-project/vllm#34030).
for (const field of ["reasoning_content", "reasoning"] as const) {
  Deno.test(`openai: streamed ${field} deltas become thinking events and a thinking block`, async () => {
    await using server = startFakeOpenAI([{
      thinking: "The user greets; answer briefly.",
      reasoningField: field,
      text: "Hello!",
    }]);
    const events = await collect(provider(server));
    const thinking = events.filter((e) => e.type === "thinking").map((e) => e.text).join("");
    assertEquals(thinking, "The user greets; answer briefly.");
    const message = final(events);
    assertEquals(message.message.content, [
      { type: "thinking", text: "The user greets; answer briefly." },
      { type: "text", text: "Hello!" },
    ]);
    assertEquals(message.stopReason, "end_turn");
  });
}

Deno.test("openai: finish_reason length is max_tokens, with or without a cut tool call", async () => {
  const cut = '{"path": "big.txt", "content": "line 1\\nline 2\\nli';
  await using server = startFakeOpenAI([
    { text: "Here is a long answer that was cu", stop: "max_tokens" },
    { tools: [{ id: "call_9", name: "write", raw: cut }], stop: "max_tokens" },
  ]);
  const p = provider(server);
  const text = final(await collect(p));
  assertEquals(text.stopReason, "max_tokens");
  assertEquals(text.message.content, [{ type: "text", text: "Here is a long answer that was cu" }]);
  const tool = final(await collect(p));
  assertEquals(tool.stopReason, "max_tokens");
  const block = tool.message.content[0];
  assert(block?.type === "tool_use");
  assertEquals(block.rawInput, cut);
  assertEquals(block.input, {});
  assertStringIncludes(block.inputError ?? "", "invalid JSON");
});

Deno.test("openai: a cut call's arguments and tool-call reasoning are replayed as sent", async () => {
  const cut = '{"path": "a.txt", "content": "unterminated';
  const history: Message[] = [
    { role: "user", content: [{ type: "text", text: "write it" }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", text: "I will write the file." },
        {
          type: "tool_use",
          id: "call_1",
          name: "write",
          input: {},
          inputError: "invalid JSON: Unterminated string",
          rawInput: cut,
        },
      ],
    },
    {
      role: "user",
      content: [{ type: "tool_result", toolUseId: "call_1", content: "cut", isError: true }],
    },
    {
      role: "assistant",
      content: [{ type: "thinking", text: "Just answer." }, { type: "text", text: "Done." }],
    },
    { role: "user", content: [{ type: "text", text: "thanks" }] },
  ];
  const wire = openAiMessages(request(history));
  assertEquals(wire[2], {
    role: "assistant",
    content: null,
    "reasoning_content": "I will write the file.",
    "tool_calls": [{ id: "call_1", type: "function", function: { name: "write", arguments: cut } }],
  });
  // A plain answer goes back without its reasoning.
  assertEquals(wire[4], { role: "assistant", content: "Done." });
  // And through the real SDK to the server, unchanged.
  await using server = startFakeOpenAI([{ text: "ok" }]);
  await collect(provider(server), request(history));
  assertEquals(server.requests[0]!.body.messages[2].tool_calls[0].function.arguments, cut);
});

Deno.test("openai: max_tokens is sent as set, else derived (8192 without a window)", async () => {
  await using server = startFakeOpenAI([{ text: "a" }, { text: "b" }]);
  await collect(provider(server, 512));
  await collect(provider(server));
  assertEquals(server.requests[0]!.body.max_tokens, 512);
  assertEquals(server.requests[1]!.body.max_tokens, 8192);
  assertEquals("max_completion_tokens" in server.requests[0]!.body, false);
  assertEquals(maxTokensField("https://api.openai.com/v1"), "max_completion_tokens");
  assertEquals(maxTokensField("http://127.0.0.1:8080/v1"), "max_tokens");
});

Deno.test("openai: llama-server without --jinja fails at once and says to add it", async () => {
  await using server = startFakeOpenAI([llamaCppNoJinja(), llamaCppNoJinja()]);
  const error = await failure(provider(server));
  assertEquals(server.requests.length, 1, "a 500 that can never pass is not retried");
  assertEquals(
    error.message,
    "openai: server_error: tools param requires --jinja flag (this llama-server does not " +
      "accept tools: restart it with --jinja, without --no-jinja (jinja is the default since " +
      "ggml-org/llama.cpp#17524), and a model whose chat template supports tool calls); " +
      "status 500; request id req_fake_1",
  );
  assertEquals(error.transient, false);
});

Deno.test("openai: vLLM without a tool parser fails at once and names the flags", async () => {
  await using server = startFakeOpenAI([vllmNoToolParser(), vllmNoToolParser()]);
  const error = await failure(provider(server));
  assertEquals(server.requests.length, 1);
  assertEquals(
    error.message,
    'openai: BadRequestError: "auto" tool choice requires --enable-auto-tool-choice and ' +
      "--tool-call-parser to be set (this vLLM server does not accept tools: restart it with " +
      "--enable-auto-tool-choice --tool-call-parser <the model's parser, e.g. hermes for " +
      "Qwen>); status 400; request id req_fake_1",
  );
});

Deno.test("openai: an unknown model fails at once, naming the model and what to check", async () => {
  await using openai = startFakeOpenAI([openAiModelNotFound("local-model")]);
  const gone = await failure(provider(openai));
  assertEquals(openai.requests.length, 1);
  assertStringIncludes(gone.message, "model_not_found: The model `local-model` does not exist");
  assertStringIncludes(gone.message, 'the server has no model "local-model"');
  assertStringIncludes(gone.message, `check --model / openai.model against ${openai.url}/models`);
  assertStringIncludes(gone.message, "status 404");

  await using ollama = startFakeOpenAI([ollamaModelNotFound("local-model")]);
  const unpulled = await failure(provider(ollama));
  assertEquals(ollama.requests.length, 1);
  assertStringIncludes(unpulled.message, "ollama pull local-model");

  await using noTools = startFakeOpenAI([ollamaNoTools("gemma2:latest")]);
  const cannot = await failure(provider(noTools));
  assertEquals(noTools.requests.length, 1);
  assertStringIncludes(cannot.message, "does not support tools");
  assertStringIncludes(cannot.message, "cannot call tools on this server");
});

Deno.test("openai: a bad key and an invalid request are not retried and say so", async () => {
  await using server = startFakeOpenAI([
    { status: 401, error: { type: "invalid_request_error", message: "Incorrect API key" } },
    {
      status: 400,
      error: { type: "invalid_request_error", message: "Invalid value for 'tool_choice'" },
    },
  ]);
  const p = provider(server);
  const key = await failure(p);
  assertStringIncludes(key.message, "the API key was refused: check OPENAI_API_KEY");
  const bad = await failure(p);
  assertStringIncludes(bad.message, "retrying the same request will not help");
  assertEquals(server.requests.length, 2);
});

// A large GGUF takes longer to load than the usual 4 retries (about 7 s) wait: a loading model
// gets up to 14, each wait capped at 5 s.
Deno.test("openai: llama-server's 503 Loading model is waited out past the usual retries", async () => {
  const loading = Array.from({ length: 6 }, () => llamaCppLoadingModel());
  await using server = startFakeOpenAI([...loading, { text: "ready" }]);
  const events = await collect(provider(server));
  const retries = events.filter((e) => e.type === "retry");
  assertEquals(retries.length, 6);
  assertStringIncludes(
    retries[0]!.type === "retry" ? retries[0]!.reason : "",
    "openai: unavailable_error: Loading model (the server is still loading the model); status 503",
  );
  assertEquals(final(events).message.content, [{ type: "text", text: "ready" }]);

  // A caller that fixed its retries (doctor: none) is answered at once, with the reason.
  await using once = startFakeOpenAI([llamaCppLoadingModel()]);
  const p = createOpenAiProvider({ apiKey: "", model: "m", baseUrl: once.url, maxRetries: 0 });
  const error = await failure(p as ReturnType<typeof provider>);
  assertStringIncludes(error.message, "the server is still loading the model");
  assertEquals(once.requests.length, 1);
});

Deno.test("openai: context overflows keep the server's type and body for the caller", async () => {
  const cases: [Step, string][] = [
    [llamaCppContextOverflow(5000, 4096), "exceed_context_size_error"],
    [openAiContextLengthExceeded(130000), "context_length_exceeded"],
  ];
  for (const [step, type] of cases) {
    await using server = startFakeOpenAI([step, step]);
    const error = await failure(provider(server));
    assertEquals(server.requests.length, 1);
    assertEquals(error.status, 400);
    assertEquals(error.errorType, type);
    if (type === "exceed_context_size_error") {
      assertEquals((error.body as { n_ctx: number }).n_ctx, 4096);
      assertEquals((error.body as { n_prompt_tokens: number }).n_prompt_tokens, 5000);
      assertEquals(
        error.providerMessage,
        "the request exceeds the available context size, try increasing it",
      );
    } else {
      assertStringIncludes(error.providerMessage ?? "", "maximum context length is 128000 tokens");
    }
  }
});

Deno.test("openai: a refused connection names the URL and the likely cause", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const url = `http://127.0.0.1:${port}/v1`;
  const p = createOpenAiProvider({ apiKey: "", model: "m", baseUrl: url, maxRetries: 0 });
  const error = await failure(p as ReturnType<typeof provider>);
  assertEquals(
    error.message,
    `openai: cannot reach ${url}: connection refused — is the server running? ` +
      "(ollama serve / llama-server --jinja / vllm serve)",
  );
});
