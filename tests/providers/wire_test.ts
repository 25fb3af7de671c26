/**
 * Daily-use fixes on the wire (issue 27): no SDK line reaches the screen on a malformed
 * stream, an HTML error page is named (its body goes to the debug log), a refused connection
 * to this machine fails at once while remote hosts keep their retries, the OpenAI wire sends
 * an output limit derived from the window, and the Anthropic wire authenticates with
 * `x-api-key` (a loopback server that accepts nothing else).
 */

import { createAnthropicProvider } from "../../providers/anthropic.ts";
import { createOpenAiProvider } from "../../providers/openai.ts";
import { explainConnection, isLoopback } from "../../providers/_errors.ts";
import {
  type CompletionRequest,
  defaultOutputLimit,
  type Provider,
  ProviderError,
  type StreamEvent,
} from "../../providers/types.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { startFakeOpenAI } from "../_helpers/fake_providers.ts";

const REQUEST: CompletionRequest = {
  system: "sys",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
};

/** A loopback server answering every request with `respond`; records the requests. */
function serve(respond: (request: Request, body: string) => Response | Promise<Response>) {
  const requests: { headers: Headers; body: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
    const body = await r.text();
    requests.push({ headers: r.headers, body });
    return await respond(r, body);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** console.error and console.warn captured (the SDKs' default logger), restored on dispose. */
function captureConsole(): Disposable & { lines: string[] } {
  const lines: string[] = [];
  // The one stub here: the SDKs' default logger is the global console.
  const target = globalThis.console;
  const saved = { error: target.error, warn: target.warn, log: target.log };
  const grab = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  Object.assign(target, { error: grab, warn: grab, log: grab });
  return {
    lines,
    [Symbol.dispose]() {
      Object.assign(target, saved);
    },
  };
}

async function drain(provider: Provider, request = REQUEST): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const e of provider.complete(request, new AbortController().signal)) events.push(e);
  return events;
}

async function failureOf(provider: Provider): Promise<ProviderError> {
  try {
    await drain(provider);
  } catch (error) {
    assert(error instanceof ProviderError, String(error));
    return error;
  }
  throw new Error("expected a ProviderError");
}

const SSE = { "content-type": "text/event-stream" };

Deno.test("openai: a malformed stream reaches no console; the SDK's lines go to the debug log", async () => {
  await using server = serve(() => new Response("data: {not json\n\n", { headers: SSE }));
  const debug: string[] = [];
  using screen = captureConsole();
  const provider = createOpenAiProvider({
    apiKey: "k",
    model: "m",
    baseUrl: `${server.url}/v1`,
    debug: (line) => debug.push(line),
  });
  const error = await failureOf(provider);
  assertEquals(
    error.message,
    "openai: unreadable reply: Error reading response: malformed server-sent event JSON.",
  );
  assertEquals(screen.lines, []);
  assert(debug.some((line) => line.startsWith("Could not parse message into JSON:")), `${debug}`);
});

Deno.test("anthropic: a malformed stream reaches no console; the SDK's lines go to the debug log", async () => {
  await using server = serve(() =>
    new Response("event: message_start\ndata: {not json\n\n", { headers: SSE })
  );
  const debug: string[] = [];
  using screen = captureConsole();
  const provider = createAnthropicProvider({
    apiKey: "k",
    model: "m",
    maxTokens: 16,
    baseUrl: server.url,
    maxRetries: 0,
    debug: (line) => debug.push(line),
  });
  const error = await failureOf(provider);
  assert(error.message.startsWith("anthropic: unreadable reply: "), error.message);
  assertEquals(screen.lines, []);
  assert(debug.some((line) => line.startsWith("Could not parse message into JSON:")), `${debug}`);
});

const PAGE = "<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head>" +
  "<body><h1>Internal Server Error</h1><hr>nginx</body></html>";

Deno.test("providers: a 500 with an HTML body says HTTP 500 (HTML page); the body goes to debug", async (t) => {
  await using server = serve(() =>
    new Response(PAGE, { status: 500, headers: { "content-type": "text/html" } })
  );
  for (const name of ["openai", "anthropic"] as const) {
    await t.step(name, async () => {
      const debug: string[] = [];
      const options = {
        apiKey: "k",
        model: "m",
        maxRetries: 0,
        debug: (l: string) => debug.push(l),
      };
      const provider = name === "openai"
        ? createOpenAiProvider({ ...options, baseUrl: `${server.url}/v1` })
        : createAnthropicProvider({ ...options, maxTokens: 16, baseUrl: server.url });
      const error = await failureOf(provider);
      assertEquals(error.message, `${name}: HTTP 500 (HTML page); status 500`);
      assert(debug.some((line) => line.includes("<h1>Internal Server Error</h1>")), `${debug}`);
    });
  }
});

Deno.test("providers: a refused connection to a loopback address fails at once, without retries", async (t) => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  for (const name of ["openai", "anthropic"] as const) {
    await t.step(name, async () => {
      const base = `http://127.0.0.1:${port}`;
      // The default retries (4, about 7 s in all) would apply to a transient failure.
      const provider = name === "openai"
        ? createOpenAiProvider({ apiKey: "", model: "m", baseUrl: `${base}/v1` })
        : createAnthropicProvider({ apiKey: "k", model: "m", maxTokens: 16, baseUrl: base });
      const events: StreamEvent[] = [];
      let failed = false;
      try {
        for await (const e of provider.complete(REQUEST, new AbortController().signal)) {
          events.push(e);
        }
      } catch (error) {
        failed = true;
        assert(error instanceof ProviderError, String(error));
        assert(error.message.includes("connection refused"), error.message);
        assert(!error.message.includes("gave up after"), error.message);
        assertEquals(error.transient, false);
      }
      assert(failed, "a refused connection must fail the request");
      // A retry is announced by a `retry` event before its wait.
      assertEquals(events.filter((e) => e.type === "retry"), []);
    });
  }
});

Deno.test("explainConnection() keeps retrying a refused remote host; isLoopback() knows this machine", async (t) => {
  const refused = new Error("Connection error.", {
    cause: new TypeError("error sending request: Connection refused (os error 111)"),
  });
  const target = (baseUrl: string) => ({ provider: "openai", model: "m", baseUrl });
  await t.step("remote: transient", () => {
    assertEquals(explainConnection(target("http://10.0.0.7:8000/v1"), refused).transient, true);
    assertEquals(explainConnection(target("https://gpu.example.org/v1"), refused).transient, true);
  });
  await t.step("loopback: not transient", () => {
    assertEquals(explainConnection(target("http://127.0.0.1:11434/v1"), refused).transient, false);
    assertEquals(explainConnection(target("http://localhost:8080/v1"), refused).transient, false);
    assertEquals(explainConnection(target("http://[::1]:8080/v1"), refused).transient, false);
  });
  await t.step("isLoopback", () => {
    assertEquals(
      ["http://127.0.0.2/", "http://localhost/", "http://a.localhost/", "http://[::1]/"].map(
        isLoopback,
      ),
      [true, true, true, true],
    );
    assertEquals(["http://10.0.0.1/", "https://api.openai.com/v1", "nope"].map(isLoopback), [
      false,
      false,
      false,
    ]);
  });
});

Deno.test("openai: without max_tokens set, the limit sent is derived from the request's window", async () => {
  await using server = startFakeOpenAI([{ text: "a" }, { text: "b" }, { text: "c" }, {
    text: "d",
  }]);
  const provider = createOpenAiProvider({ apiKey: "k", model: "m", baseUrl: server.url });
  assertEquals(provider.derivesOutputLimit, true);
  await drain(provider);
  await drain(provider, { ...REQUEST, window: 16_000 });
  await drain(provider, { ...REQUEST, window: 1_000_000 });
  const set = createOpenAiProvider({
    apiKey: "k",
    model: "m",
    baseUrl: server.url,
    maxTokens: 300,
  });
  await drain(set, { ...REQUEST, window: 16_000 });
  assertEquals(server.requests.map((r) => r.body.max_tokens), [8192, 4000, 8192, 300]);
  assertEquals([undefined, 2048, 40_000, 200_000].map(defaultOutputLimit), [8192, 512, 8192, 8192]);
});

Deno.test("anthropic: the key goes as x-api-key with anthropic-version 2023-06-01 (a server accepting only that)", async () => {
  const stream = [
    ["message_start", {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [],
        "stop_reason": null,
        usage: { "input_tokens": 3, "output_tokens": 1 },
      },
    }],
    ["content_block_start", {
      type: "content_block_start",
      index: 0,
      "content_block": { type: "text", text: "" },
    }],
    ["content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "hello" },
    }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", {
      type: "message_delta",
      delta: { "stop_reason": "end_turn" },
      usage: { "output_tokens": 1 },
    }],
    ["message_stop", { type: "message_stop" }],
  ].map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
  await using server = serve((request) => {
    if (request.headers.get("x-api-key") !== "sk-test") {
      return Response.json({
        type: "error",
        error: { type: "authentication_error", message: "x-api-key header is required" },
      }, { status: 401 });
    }
    return new Response(stream, { headers: SSE });
  });
  const provider = createAnthropicProvider({
    apiKey: "sk-test",
    model: "m",
    maxTokens: 16,
    baseUrl: server.url,
    maxRetries: 0,
  });
  const events = await drain(provider);
  assertEquals(events.filter((e) => e.type === "text").map((e) => e.type === "text" && e.text), [
    "hello",
  ]);
  const headers = server.requests[0]!.headers;
  assertEquals(headers.get("anthropic-version"), "2023-06-01");
  assertEquals(headers.get("authorization"), null);
});
