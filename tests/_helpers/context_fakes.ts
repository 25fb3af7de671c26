/**
 * A model with a context window, on a loopback port: a front server that counts each model
 * request's tokens and refuses one over the window with the server's real 400 body, and
 * forwards everything else to the scripted fake of `fake_providers.ts` (so replies keep that
 * helper's real wire formats).
 *
 * The refusals, as the servers send them:
 * - Anthropic: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is
 *   too long: 38111 tokens > 30000 maximum"},"request_id":...}` (anthropics/claude-code issues
 *   quoting the API; docs.anthropic.com "Errors");
 * - OpenAI: `{"error":{"message":"This model's maximum context length is 30000 tokens.
 *   However, your messages resulted in 38111 tokens. Please reduce the length of the
 *   messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`;
 * - llama.cpp `llama-server`: `{"error":{"code":400,"message":"request (38111 tokens) exceeds
 *   the available context size (30000 tokens), try increasing it","type":
 *   "exceed_context_size_error","n_prompt_tokens":38111,"n_ctx":30000}}` (ggml-org/llama.cpp
 *   tools/server: server_task_result_error::to_json adds n_prompt_tokens and n_ctx).
 *
 * @module
 */

import {
  type FakeServer,
  type RecordedRequest,
  startFakeAnthropic,
  startFakeOpenAI,
  type Step,
} from "./fake_providers.ts";

/** Which server's refusal to send. */
export type Wire = "anthropic" | "openai" | "llama.cpp";

/** A request the front received, and what became of it. */
export interface SeenRequest extends RecordedRequest {
  /** Tokens the front counted. */
  readonly tokens: number;
  /** True when it was refused as too long. */
  readonly refused: boolean;
}

/** A running windowed model. */
export interface WindowedModel extends AsyncDisposable {
  /** Base URL for the SDK (with `/v1` for the OpenAI wire). */
  readonly url: string;
  /** Every model request, refused or not, in order. */
  readonly requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * The token count of a request body: its system prompt, messages and tool definitions as JSON,
 * four characters a token (a stand-in tokenizer; the agent is told the count in `usage`).
 */
export function countTokens(body: Record<string, unknown>): number {
  return Math.ceil(
    JSON.stringify([body.system ?? "", body.messages ?? [], body.tools ?? []]).length / 4,
  );
}

function refusal(wire: Wire, tokens: number, window: number, n: number): Response {
  const headers = { "content-type": "application/json" };
  if (wire === "anthropic") {
    return Response.json({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `prompt is too long: ${tokens} tokens > ${window} maximum`,
      },
      "request_id": `req_window_${n}`,
    }, { status: 400, headers: { ...headers, "request-id": `req_window_${n}` } });
  }
  if (wire === "openai") {
    return Response.json({
      error: {
        message:
          `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    }, { status: 400, headers: { ...headers, "x-request-id": `req_window_${n}` } });
  }
  return Response.json({
    error: {
      code: 400,
      message:
        `request (${tokens} tokens) exceeds the available context size (${window} tokens), try increasing it`,
      type: "exceed_context_size_error",
      "n_prompt_tokens": tokens,
      "n_ctx": window,
    },
  }, { status: 400, headers });
}

/**
 * Starts a model with a `window`-token context: `model` answers every request that fits (it
 * may keep state; it is called once per accepted request, in order).
 */
export function startWindowedModel(
  wire: Wire,
  window: number,
  model: (request: RecordedRequest) => Step,
): WindowedModel {
  const steps: Step[] = Array.from({ length: 500 }, () => model);
  const inner: FakeServer = wire === "anthropic"
    ? startFakeAnthropic(steps)
    : startFakeOpenAI(steps);
  const innerOrigin = new URL(inner.url).origin;
  const requests: SeenRequest[] = [];
  const modelPath = wire === "anthropic" ? "/v1/messages" : "/v1/chat/completions";

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = req.method === "POST" ? await req.text() : undefined;
    if (req.method === "POST" && url.pathname === modelPath) {
      const body = JSON.parse(text!) as Record<string, unknown>;
      const tokens = countTokens(body);
      const refused = tokens > window;
      requests.push({
        path: url.pathname,
        headers: Object.fromEntries(req.headers),
        body,
        tokens,
        refused,
      });
      if (refused) return refusal(wire, tokens, window, requests.length);
    }
    const headers = new Headers(req.headers);
    headers.delete("host");
    headers.delete("content-length");
    const answer = await fetch(innerOrigin + url.pathname + url.search, {
      method: req.method,
      headers,
      ...(text === undefined ? {} : { body: text }),
    });
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  const suffix = wire === "anthropic" ? "" : "/v1";
  let closing: Promise<void> | undefined;
  const fake: WindowedModel = {
    url: `http://127.0.0.1:${server.addr.port}${suffix}`,
    requests,
    close() {
      closing ??= (async () => {
        await server.shutdown();
        await inner.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return fake.close();
    },
  };
  return fake;
}

/** The text of the last tool result in a request body (both wire formats), if any. */
export function lastToolResult(body: Record<string, unknown>): string | undefined {
  const messages = body.messages as Record<string, unknown>[];
  const last = messages.at(-1);
  if (last === undefined) return undefined;
  if (last.role === "tool") return String(last.content);
  if (last.role === "user" && Array.isArray(last.content)) {
    const results = (last.content as Record<string, unknown>[]).filter((b) =>
      b.type === "tool_result"
    );
    const block = results.at(-1);
    return block === undefined ? undefined : String(block.content);
  }
  return undefined;
}

/** The system prompt of a request body (both wire formats). */
export function systemPrompt(body: Record<string, unknown>): string {
  if (Array.isArray(body.system)) {
    return (body.system as { text: string }[]).map((b) => b.text).join("");
  }
  if (typeof body.system === "string") return body.system;
  const first = (body.messages as { role: string; content: unknown }[])[0];
  return first?.role === "system" ? String(first.content) : "";
}

/** True when the body has tool definitions (a summary request has none). */
export function hasTools(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.length > 0;
}
