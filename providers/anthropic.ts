/**
 * The Anthropic Messages API through the official SDK: streaming, tool use, extended
 * thinking (blocks kept with their signatures and sent back unchanged), prompt-caching
 * marks on the system prompt, the tool list and the latest user turns, usage totals. The SDK
 * is imported on first use, so commands that never call a model do not pay for loading it.
 * The SDK's own retries are off: `_retry.ts` owns retrying, for both providers alike.
 *
 * @module
 */

import { explainConnection, explainHttp, type Target } from "./_errors.ts";
import { type Failure, noted, retryAfterMs, type RetryOptions, withRetries } from "./_retry.ts";
import {
  type CompletionRequest,
  type ContentBlock,
  type DiagnosticOptions,
  type Message,
  type Provider,
  sdkLogger,
  type StopReason,
  type StreamEvent,
  type ToolUseBlock,
  type Usage,
} from "./types.ts";
import type { ProviderWire } from "./wire.ts";

type Sdk = typeof import("@anthropic-ai/sdk");
type Client = InstanceType<Sdk["default"]>;

/** Settings of the Anthropic provider. */
export interface AnthropicOptions extends RetryOptions, DiagnosticOptions {
  readonly apiKey: string;
  readonly model: string;
  readonly maxTokens: number;
  /** Without `/v1`; default `https://api.anthropic.com`. */
  readonly baseUrl?: string;
  /**
   * Extended thinking's budget in tokens (at least 1024, below `maxTokens`); unset, thinking
   * stays off.
   */
  readonly thinkingBudget?: number;
}

/** The SDK's default base URL. */
export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";

/**
 * The API version sent. The SDK in use sends a newer date that the official API and most
 * gateways do not know; 2023-06-01 is the version the API documents (features come through
 * `anthropic-beta` headers, not newer dates) and the one Claude Code sends.
 */
export const ANTHROPIC_VERSION = "2023-06-01";

/**
 * Authentication headers that every Anthropic-wire server accepts: the key as `x-api-key`
 * (the header the API documents; LiteLLM, cloud proxies and Claude Code use it), and no
 * `authorization` (the SDK in use sends `Bearer <key>`, which the API reserves for OAuth
 * tokens and servers that check only `x-api-key` refuse).
 */
export function anthropicHeaders(apiKey: string): Record<string, string | null> {
  return { "x-api-key": apiKey, authorization: null, "anthropic-version": ANTHROPIC_VERSION };
}

/** The stream ended without `message_stop`: the connection was lost part way. */
class StreamCut extends Error {}

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * A block as the API takes it; `undefined` drops it. Thinking goes back exactly as it came
 * (the API checks the signature, and requires the blocks of the turn in flight when tool use
 * follows); reasoning without a signature (from another server) cannot be sent at all.
 */
function wireBlock(block: ContentBlock): Record<string, unknown> | undefined {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "thinking":
      if (block.redacted !== undefined) return { type: "redacted_thinking", data: block.redacted };
      if (block.signature === undefined) return undefined;
      return { type: "thinking", thinking: block.text, signature: block.signature };
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
  thinkingBudget?: number,
): Record<string, unknown> {
  const messages = request.messages.map((message) => {
    const content = message.content.filter((b) => b.type !== "text" || b.text !== "")
      .map(wireBlock).filter((b) => b !== undefined);
    // An answer that was reasoning only, from a server whose reasoning cannot be sent here:
    // the API refuses empty content, so a placeholder says what was there.
    if (content.length === 0 && message.role === "assistant") {
      content.push({ type: "text", text: "(reasoning only; no answer)" });
    }
    return { role: message.role, content };
  });
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
    ...(thinkingBudget === undefined
      ? {}
      : { thinking: { type: "enabled", "budget_tokens": thinkingBudget } }),
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

function classify(sdk: Sdk, target: Target, error: unknown): Failure {
  const e = error as {
    status?: number;
    requestID?: string | null;
    headers?: Headers;
    error?: { error?: { type?: string; message?: string } };
    message?: string;
  };
  if (error instanceof sdk.APIConnectionError) return explainConnection(target, error);
  if (error instanceof sdk.APIError) {
    const type = e.error?.error?.type;
    const message = e.error?.error?.message ?? String(e.message);
    const status = typeof e.status === "number" ? e.status : undefined;
    const explained = status === undefined
      // An `error` event inside the stream: no status, the type decides.
      ? {
        transient: ["overloaded_error", "api_error", "rate_limit_error"].includes(type ?? ""),
        detail: type ? `${type}: ${message}` : message,
      }
      : explainHttp(target, { status, type, message });
    const wait = retryAfterMs(e.headers);
    return {
      ...explained,
      ...(status === undefined ? {} : { status }),
      ...(e.requestID ? { requestId: e.requestID } : {}),
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
      ...(type === undefined ? {} : { errorType: type }),
      providerMessage: message,
      ...(e.error === undefined ? {} : { body: e.error }),
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
    | { kind: "text"; text: string }
    | { kind: "thinking"; text: string; signature: string }
    | { kind: "redacted"; data: string }
    | { kind: "tool"; id: string; name: string; json: string }
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
        } else if (block?.type === "thinking") {
          open.set(event.index, {
            kind: "thinking",
            text: block.thinking ?? "",
            signature: block.signature ?? "",
          });
          if (block.thinking) yield { type: "thinking", text: block.thinking };
        } else if (block?.type === "redacted_thinking") {
          open.set(event.index, { kind: "redacted", data: block.data ?? "" });
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
        } else if (event.delta?.type === "thinking_delta" && current?.kind === "thinking") {
          current.text += event.delta.thinking;
          yield { type: "thinking", text: event.delta.thinking };
        } else if (event.delta?.type === "signature_delta" && current?.kind === "thinking") {
          current.signature += event.delta.signature;
        }
        break;
      }
      case "content_block_stop": {
        const current = open.get(event.index);
        open.delete(event.index);
        if (current?.kind === "text") blocks.push({ type: "text", text: current.text });
        else if (current?.kind === "thinking") {
          blocks.push({
            type: "thinking",
            text: current.text,
            ...(current.signature === "" ? {} : { signature: current.signature }),
          });
        } else if (current?.kind === "redacted") {
          blocks.push({ type: "thinking", text: "", redacted: current.data });
        } else if (current?.kind === "tool") {
          const decoded = decodeArguments(current.json);
          const block: ToolUseBlock = {
            type: "tool_use",
            id: current.id,
            name: current.name,
            input: decoded.input,
            ...(decoded.inputError === undefined
              ? {}
              : { inputError: decoded.inputError, rawInput: current.json }),
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
        defaultHeaders: anthropicHeaders(options.apiKey),
        ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
        maxRetries: 0,
        // The SDK's warnings and errors ("Could not parse message into JSON:") go to our
        // debug log, never to the console (its request tracing stays off).
        logger: sdkLogger(options.debug),
        logLevel: "warn",
      }),
    }));
  const target: Target = {
    provider: "anthropic",
    model: options.model,
    baseUrl: (options.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, ""),
  };
  return {
    name: "anthropic",
    model: options.model,
    maxTokens: options.maxTokens,
    async *complete(request, signal) {
      const { sdk, client } = await load();
      const body = anthropicBody(request, options.model, options.maxTokens, options.thinkingBudget);
      yield* withRetries(
        "anthropic",
        () => streamOnce(client, body, signal),
        (error) => noted(classify(sdk, target, error), options.debug),
        signal,
        options,
      );
    },
  };
}

/** Anthropic's reply budget when none is configured. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

/** The model used when none is configured. */
export const ANTHROPIC_DEFAULT_MODEL = "claude-sonnet-4-5";

/** The Anthropic Messages wire, as the CLI sees it. */
export const anthropicWire: ProviderWire = {
  name: "anthropic",
  defaultModel: ANTHROPIC_DEFAULT_MODEL,
  defaultBaseUrl: ANTHROPIC_BASE_URL,
  replyReserve: ANTHROPIC_DEFAULT_MAX_TOKENS,
  environment: { api_key: "ANTHROPIC_API_KEY", base_url: "ANTHROPIC_BASE_URL" },
  configSchema: ({ z }) =>
    z.strictObject({
      api_key: z.string().optional(),
      model: z.string().optional(),
      max_tokens: z.int().positive().optional(),
      base_url: z.url().optional(),
      thinking_budget: z.int().min(1024).optional(),
    }),
  keyDocs: {
    api_key: {
      text: "API key; prefer the `ANTHROPIC_API_KEY` environment variable to a file.",
    },
    model: { default: `\`${ANTHROPIC_DEFAULT_MODEL}\``, text: "Model name." },
    max_tokens: {
      default: String(ANTHROPIC_DEFAULT_MAX_TOKENS),
      text: "Most tokens in one reply (thinking included); a final reply cut by it ends `run` " +
        "with `error_max_tokens`. Also `ROUSSEAU_ANTHROPIC_MAX_TOKENS`, `--max-tokens`.",
    },
    thinking_budget: {
      default: "off",
      text: "Turns on extended thinking with this many tokens for it (at least 1024, below " +
        "`anthropic.max_tokens`); the thinking is shown dimmed in chat and kept in the session.",
    },
    base_url: {
      default: `\`${ANTHROPIC_BASE_URL}\``,
      text: "Messages API base URL (a proxy or gateway); also `ANTHROPIC_BASE_URL`, `--base-url`.",
    },
  },
  modelsRequest: (baseUrl, apiKey) => ({
    url: `${baseUrl}/v1/models`,
    headers: { "x-api-key": apiKey ?? "", "anthropic-version": ANTHROPIC_VERSION },
  }),
  probeKeepsLimit: (section) => section.thinking_budget !== undefined,
  create(settings) {
    if (settings.apiKey === undefined) {
      throw new Error(
        "anthropic: no API key: set ANTHROPIC_API_KEY or anthropic.api_key in the config file " +
          "(or use --provider openai with a local OpenAI-compatible server)",
      );
    }
    const budget = settings.section.thinking_budget as number | undefined;
    const limit = settings.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
    if (budget !== undefined && budget >= limit) {
      throw new Error(
        `anthropic.thinking_budget (${budget}) must be below the output-token limit (${limit}): ` +
          "raise anthropic.max_tokens (--max-tokens) or lower the budget",
      );
    }
    const { section: _, maxTokens: __, ...rest } = settings;
    return createAnthropicProvider({
      ...rest,
      apiKey: settings.apiKey,
      maxTokens: limit,
      ...(budget === undefined ? {} : { thinkingBudget: budget }),
    });
  },
};
