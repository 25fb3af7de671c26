/**
 * The Anthropic Messages API through the official SDK: streaming, tool use, prompt-caching
 * marks on the system prompt, the tool list and the latest user turns, usage totals. The SDK
 * is imported on first use, so commands that never call a model do not pay for loading it.
 * The SDK's own retries are off: `_retry.ts` owns retrying, for both providers alike.
 *
 * @module
 */

import { type Failure, retryAfterMs, type RetryOptions, withRetries } from "./_retry.ts";
import type {
  CompletionRequest,
  ContentBlock,
  Message,
  Provider,
  StopReason,
  StreamEvent,
  ToolUseBlock,
  Usage,
} from "./types.ts";

type Sdk = typeof import("@anthropic-ai/sdk");
type Client = InstanceType<Sdk["default"]>;

/** Settings of the Anthropic provider. */
export interface AnthropicOptions extends RetryOptions {
  readonly apiKey: string;
  readonly model: string;
  readonly maxTokens: number;
  /** Without `/v1`; default `https://api.anthropic.com`. */
  readonly baseUrl?: string;
}

/** The stream ended without `message_stop`: the connection was lost part way. */
class StreamCut extends Error {}

const EPHEMERAL = { type: "ephemeral" } as const;

function wireBlock(block: ContentBlock): Record<string, unknown> {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "tool_use":
      return {
        type: "tool_use",
        id: block.id,
        name: block.name,
        input:
          typeof block.input === "object" && block.input !== null && !Array.isArray(block.input)
            ? block.input
            : {},
      };
    case "tool_result":
      return {
        type: "tool_result",
        "tool_use_id": block.toolUseId,
        content: block.content,
        "is_error": block.isError,
      };
  }
}

/**
 * The request body. Cache breakpoints (at most four): the system prompt, the last tool, and
 * the last block of the two latest user turns, so each step reads the previous step's prefix.
 */
export function anthropicBody(
  request: CompletionRequest,
  model: string,
  maxTokens: number,
): Record<string, unknown> {
  const messages = request.messages.map((message) => ({
    role: message.role,
    content: message.content.filter((b) => b.type !== "text" || b.text !== "").map(wireBlock),
  }));
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    const message = messages[i]!;
    const last = message.content.at(-1);
    if (message.role === "user" && last !== undefined) {
      last["cache_control"] = EPHEMERAL;
      marked++;
    }
  }
  const tools = request.tools.map((tool, i) => ({
    name: tool.name,
    description: tool.description,
    "input_schema": tool.inputSchema,
    ...(i === request.tools.length - 1 ? { "cache_control": EPHEMERAL } : {}),
  }));
  return {
    model,
    "max_tokens": maxTokens,
    ...(request.system === ""
      ? {}
      : { system: [{ type: "text", text: request.system, "cache_control": EPHEMERAL }] }),
    messages,
    ...(tools.length === 0 ? {} : { tools }),
    stream: true,
  };
}

/** Decodes a tool call's accumulated argument text. */
export function decodeArguments(
  text: string,
): { input: unknown; inputError?: string } {
  if (text.trim() === "") return { input: {} };
  try {
    const value = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return { input: value };
    }
    return { input: {}, inputError: `want a JSON object, got ${JSON.stringify(value)}` };
  } catch (error) {
    return { input: {}, inputError: `invalid JSON: ${(error as Error).message}` };
  }
}

const STOP_REASONS = new Set(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]);

function classify(sdk: Sdk, error: unknown): Failure {
  const e = error as {
    status?: number;
    requestID?: string | null;
    headers?: Headers;
    error?: { error?: { type?: string; message?: string } };
    message?: string;
  };
  if (error instanceof sdk.APIConnectionError) {
    return { transient: true, detail: `cannot reach the API: ${e.message}` };
  }
  if (error instanceof sdk.APIError) {
    const type = e.error?.error?.type;
    const text = e.error?.error?.message;
    const detail = type && text ? `${type}: ${text}` : String(e.message);
    const status = typeof e.status === "number" ? e.status : undefined;
    const transient = status === undefined
      ? ["overloaded_error", "api_error", "rate_limit_error"].includes(type ?? "")
      : status === 408 || status === 409 || status === 429 || status >= 500;
    const hint = status === 401 ? " (check ANTHROPIC_API_KEY or anthropic.api_key)" : "";
    const wait = retryAfterMs(e.headers);
    return {
      transient,
      detail: detail + hint,
      ...(status === undefined ? {} : { status }),
      ...(e.requestID ? { requestId: e.requestID } : {}),
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
    };
  }
  if (error instanceof SyntaxError) {
    return { transient: false, detail: `unreadable reply: ${error.message}` };
  }
  return { transient: true, detail: `connection lost: ${(error as Error)?.message ?? error}` };
}

async function* streamOnce(
  client: Client,
  body: Record<string, unknown>,
  signal: AbortSignal,
): AsyncGenerator<StreamEvent> {
  // deno-lint-ignore no-explicit-any
  const stream = await client.messages.create(body as any, { signal }) as unknown as // deno-lint-ignore no-explicit-any
  AsyncIterable<any>;
  const blocks: ContentBlock[] = [];
  const open = new Map<
    number,
    { kind: "text"; text: string } | {
      kind: "tool";
      id: string;
      name: string;
      json: string;
    }
  >();
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let stopReason: StopReason = "end_turn";
  let stopped = false;
  for await (const event of stream) {
    switch (event.type) {
      case "message_start": {
        const u = event.message?.usage ?? {};
        usage.inputTokens = u.input_tokens ?? 0;
        usage.outputTokens = u.output_tokens ?? 0;
        usage.cacheReadTokens = u.cache_read_input_tokens ?? 0;
        usage.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
        break;
      }
      case "content_block_start": {
        const block = event.content_block;
        if (block?.type === "text") {
          open.set(event.index, { kind: "text", text: block.text ?? "" });
          if (block.text) yield { type: "text", text: block.text };
        } else if (block?.type === "tool_use") {
          open.set(event.index, { kind: "tool", id: block.id, name: block.name, json: "" });
          yield { type: "tool_use_start", id: block.id, name: block.name };
        }
        break;
      }
      case "content_block_delta": {
        const current = open.get(event.index);
        if (event.delta?.type === "text_delta" && current?.kind === "text") {
          current.text += event.delta.text;
          yield { type: "text", text: event.delta.text };
        } else if (event.delta?.type === "input_json_delta" && current?.kind === "tool") {
          current.json += event.delta.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const current = open.get(event.index);
        open.delete(event.index);
        if (current?.kind === "text") blocks.push({ type: "text", text: current.text });
        else if (current?.kind === "tool") {
          const decoded = decodeArguments(current.json);
          const block: ToolUseBlock = {
            type: "tool_use",
            id: current.id,
            name: current.name,
            input: decoded.input,
            ...(decoded.inputError === undefined ? {} : { inputError: decoded.inputError }),
          };
          blocks.push(block);
        }
        break;
      }
      case "message_delta": {
        if (STOP_REASONS.has(event.delta?.stop_reason)) stopReason = event.delta.stop_reason;
        if (typeof event.usage?.output_tokens === "number") {
          usage.outputTokens = event.usage.output_tokens;
        }
        break;
      }
      case "message_stop":
        stopped = true;
        break;
    }
  }
  if (!stopped) throw new StreamCut("the stream ended before the message was complete");
  const message: Message = { role: "assistant", content: blocks };
  yield { type: "message", message, stopReason, usage: usage satisfies Usage };
}

/** The Anthropic provider. */
export function createAnthropicProvider(options: AnthropicOptions): Provider {
  let loaded: Promise<{ sdk: Sdk; client: Client }> | undefined;
  const load = () =>
    loaded ??= import("@anthropic-ai/sdk").then((sdk) => ({
      sdk,
      client: new sdk.default({
        apiKey: options.apiKey,
        authToken: null,
        ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
        maxRetries: 0,
      }),
    }));
  return {
    name: "anthropic",
    model: options.model,
    async *complete(request, signal) {
      const { sdk, client } = await load();
      const body = anthropicBody(request, options.model, options.maxTokens);
      yield* withRetries(
        "anthropic",
        () => streamOnce(client, body, signal),
        (error) => classify(sdk, error),
        signal,
        options,
      );
    },
  };
}
