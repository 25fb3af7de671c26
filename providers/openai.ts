/**
 * Any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp server,
 * OpenRouter, LiteLLM) through the official SDK. Tool calls are mapped both ways; streamed
 * argument fragments are joined per call index; streamed reasoning (`reasoning_content`,
 * or `reasoning` from newer vLLM and Ollama) is kept as a thinking block. The SDK loads on
 * first use; its own retries are off (`_retry.ts` owns retrying).
 *
 * @module
 */

import { explainConnection, explainHttp, type Target } from "./_errors.ts";
import { type Failure, noted, retryAfterMs, type RetryOptions, withRetries } from "./_retry.ts";
import { decodeArguments } from "./anthropic.ts";
import {
  type CompletionRequest,
  type ContentBlock,
  defaultOutputLimit,
  type DiagnosticOptions,
  type Message,
  type Provider,
  sdkLogger,
  type StopReason,
  type StreamEvent,
} from "./types.ts";
import type { ProviderWire } from "./wire.ts";

/** The SDK's default base URL. */
export const OPENAI_BASE_URL = "https://api.openai.com/v1";

type Sdk = typeof import("openai");
type Client = InstanceType<Sdk["default"]>;

/** Settings of the OpenAI-compatible provider. */
export interface OpenAiOptions extends RetryOptions, DiagnosticOptions {
  /** May be empty for local servers that need none. */
  readonly apiKey: string;
  readonly model: string;
  /** With `/v1`; default `https://api.openai.com/v1`. */
  readonly baseUrl?: string;
  /**
   * The output-token limit, when set: sent as `max_tokens`, which llama.cpp, vLLM, Ollama
   * and LiteLLM read; to api.openai.com as `max_completion_tokens`, the only name its
   * reasoning models (o-series, gpt-5) accept. Unset, each request carries
   * `defaultOutputLimit` of its window (a quarter of it, at most 8192; 8192 when the window
   * is not known), since llama-server without one writes until its context is full.
   */
  readonly maxTokens?: number;
}

/** The request field that carries the output-token limit at `baseUrl`. */
export function maxTokensField(baseUrl: string): "max_tokens" | "max_completion_tokens" {
  try {
    return new URL(baseUrl).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens";
  } catch {
    return "max_tokens";
  }
}

class StreamCut extends Error {}

/**
 * The chat-completions message list for a conversation.
 *
 * Reasoning goes back only on assistant messages that called tools, as `reasoning_content`:
 * DeepSeek's thinking mode answers 400 when a tool-calling turn's reasoning is missing
 * ("The reasoning_content in the thinking mode must be passed back to the API",
 * https://api-docs.deepseek.com/guides/thinking_mode#tool-calls, reported in
 * anomalyco/opencode#24722), llama.cpp and vLLM accept the field on input (vLLM under either
 * name, vllm-project/vllm#34030). Plain answers go back without it, as every server expects.
 * A tool call whose arguments were not valid JSON is replayed with the model's own text.
 */
export function openAiMessages(request: CompletionRequest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  if (request.system !== "") out.push({ role: "system", content: request.system });
  for (const message of request.messages) {
    const text = message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    if (message.role === "assistant") {
      const calls = message.content.filter((b) => b.type === "tool_use").map((b) => ({
        id: b.id,
        type: "function",
        function: { name: b.name, arguments: b.rawInput ?? JSON.stringify(b.input ?? {}) },
      }));
      const reasoning = message.content.filter((b) => b.type === "thinking")
        .map((b) => b.text).join("");
      out.push({
        role: "assistant",
        // `null` only beside tool calls: OpenAI refuses an assistant message with neither.
        content: text !== "" ? text : calls.length > 0 ? null : "",
        ...(calls.length > 0 && reasoning !== "" ? { "reasoning_content": reasoning } : {}),
        ...(calls.length === 0 ? {} : { "tool_calls": calls }),
      });
      continue;
    }
    // Tool answers must directly follow the assistant message that asked for them.
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      out.push({ role: "tool", "tool_call_id": block.toolUseId, content: block.content });
    }
    if (text !== "") out.push({ role: "user", content: text });
  }
  return out;
}

function finishReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

function classify(sdk: Sdk, target: Target, error: unknown): Failure {
  const e = error as {
    status?: number;
    requestID?: string | null;
    headers?: Headers;
    error?: { message?: string; type?: string; code?: string | number };
    message?: string;
  };
  if (error instanceof sdk.APIConnectionError) return explainConnection(target, error);
  if (error instanceof sdk.APIError) {
    const status = typeof e.status === "number" ? e.status : undefined;
    const message = e.error?.message ?? e.message ?? "error";
    // llama.cpp's `code` is the HTTP status again; OpenAI's is a word (`model_not_found`).
    const code = typeof e.error?.code === "string" ? e.error.code : undefined;
    const type = code ?? e.error?.type;
    const explained = explainHttp(target, { status, type, message });
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
  const stream = await client.chat.completions.create(body as any, { signal }) as unknown as // deno-lint-ignore no-explicit-any
  AsyncIterable<any>;
  let text = "";
  let reasoning = "";
  const calls = new Map<number, { id: string; name: string; args: string; shown: boolean }>();
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  let finish: string | undefined;
  for await (const chunk of stream) {
    if (chunk.usage) {
      usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
      usage.outputTokens = chunk.usage.completion_tokens ?? 0;
      usage.cacheReadTokens = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    // llama.cpp, DeepSeek and older vLLM say `reasoning_content`; vLLM >= 0.10 and Ollama say
    // `reasoning` (strands-agents/harness-sdk#2191). The first one present wins.
    const thought = typeof delta.reasoning_content === "string"
      ? delta.reasoning_content
      : typeof delta.reasoning === "string"
      ? delta.reasoning
      : "";
    if (thought !== "") {
      reasoning += thought;
      yield { type: "thinking", text: thought };
    }
    if (typeof delta.content === "string" && delta.content !== "") {
      text += delta.content;
      yield { type: "text", text: delta.content };
    }
    for (const part of delta.tool_calls ?? []) {
      const index = typeof part.index === "number" ? part.index : calls.size;
      let call = calls.get(index);
      if (call === undefined) {
        call = { id: part.id || `call_${index}`, name: "", args: "", shown: false };
        calls.set(index, call);
      }
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.args += part.function.arguments;
      if (!call.shown && call.name !== "") {
        call.shown = true;
        yield { type: "tool_use_start", id: call.id, name: call.name };
      }
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  if (finish === undefined) throw new StreamCut("the stream ended before the reply was complete");
  const content: ContentBlock[] = [];
  if (reasoning !== "") content.push({ type: "thinking", text: reasoning });
  if (text !== "") content.push({ type: "text", text });
  for (const [, call] of [...calls].sort(([a], [b]) => a - b)) {
    const decoded = decodeArguments(call.args);
    content.push({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: decoded.input,
      ...(decoded.inputError === undefined
        ? {}
        : { inputError: decoded.inputError, rawInput: call.args }),
    });
  }
  // Some servers answer "stop" although they called tools; the calls decide — except a
  // `length` stop, which says the last call may be cut.
  const stopReason = finish === "length"
    ? "max_tokens"
    : calls.size > 0
    ? "tool_use"
    : finishReason(finish);
  const message: Message = { role: "assistant", content };
  yield { type: "message", message, stopReason, usage };
}

/** The OpenAI-compatible provider. */
export function createOpenAiProvider(options: OpenAiOptions): Provider {
  let loaded: Promise<{ sdk: Sdk; client: Client }> | undefined;
  const load = () =>
    loaded ??= import("openai").then((sdk) => ({
      sdk,
      client: new sdk.default({
        // The SDK refuses an empty key; local servers ignore the header.
        apiKey: options.apiKey || "none",
        ...(options.baseUrl === undefined ? {} : { baseURL: options.baseUrl }),
        maxRetries: 0,
        // The SDK's warnings and errors ("Could not parse message into JSON:") go to our
        // debug log, never to the console (its request tracing stays off).
        logger: sdkLogger(options.debug),
        logLevel: "warn",
      }),
    }));
  const target: Target = {
    provider: "openai",
    model: options.model,
    baseUrl: (options.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, ""),
  };
  return {
    name: "openai",
    model: options.model,
    ...(options.maxTokens === undefined
      ? { derivesOutputLimit: true }
      : { maxTokens: options.maxTokens }),
    async *complete(request, signal) {
      const { sdk, client } = await load();
      const body: Record<string, unknown> = {
        model: options.model,
        messages: openAiMessages(request),
        stream: true,
        "stream_options": { "include_usage": true },
        [maxTokensField(target.baseUrl)]: options.maxTokens ?? defaultOutputLimit(request.window),
      };
      if (request.tools.length > 0) {
        body.tools = request.tools.map((tool) => ({
          type: "function",
          function: {
            name: tool.name,
            description: tool.description,
            parameters: tool.inputSchema,
          },
        }));
      }
      yield* withRetries(
        "openai",
        () => streamOnce(client, body, signal),
        (error) => noted(classify(sdk, target, error), options.debug),
        signal,
        options,
      );
    },
  };
}

/** The model used when none is configured. */
export const OPENAI_DEFAULT_MODEL = "gpt-4.1";

/** Tokens kept free for a reply when no max_tokens is set. */
const OPENAI_REPLY_RESERVE = 4096;

/** The OpenAI-compatible Chat Completions wire, as the CLI sees it. */
export const openAiWire: ProviderWire = {
  name: "openai",
  defaultModel: OPENAI_DEFAULT_MODEL,
  defaultBaseUrl: OPENAI_BASE_URL,
  replyReserve: OPENAI_REPLY_RESERVE,
  environment: { api_key: "OPENAI_API_KEY", base_url: "OPENAI_BASE_URL" },
  configSchema: ({ z }) =>
    z.strictObject({
      api_key: z.string().optional(),
      model: z.string().optional(),
      base_url: z.url().optional(),
      max_tokens: z.int().positive().optional(),
    }),
  keyDocs: {
    api_key: {
      text: "API key (`OPENAI_API_KEY`); local servers (Ollama, vLLM, llama.cpp) need none.",
    },
    model: { default: `\`${OPENAI_DEFAULT_MODEL}\``, text: "Model name." },
    max_tokens: {
      default: "a quarter of the context window, at most 8192",
      text: "Most tokens in one reply, sent as `max_tokens` (`max_completion_tokens` to " +
        "api.openai.com). Unset, a quarter of the known or learned context window is sent, at " +
        "most 8192 (8192 while the window is unknown; llama-server without a limit writes until " +
        "its context is full). Also `ROUSSEAU_OPENAI_MAX_TOKENS`, `--max-tokens`.",
    },
    base_url: {
      default: `\`${OPENAI_BASE_URL}\``,
      text: "Chat Completions base URL, e.g. `http://127.0.0.1:11434/v1` for Ollama; also " +
        "`OPENAI_BASE_URL`, `--base-url`.",
    },
  },
  modelsRequest: (baseUrl, apiKey) => ({
    url: `${baseUrl}/models`,
    headers: { authorization: `Bearer ${apiKey ?? "none"}` },
  }),
  create(settings) {
    if (settings.apiKey === undefined && settings.baseUrl === undefined) {
      throw new Error(
        "openai: no API key: set OPENAI_API_KEY, or point --base-url (OPENAI_BASE_URL) at a " +
          "local server such as Ollama (http://127.0.0.1:11434/v1)",
      );
    }
    const { section: _, ...rest } = settings;
    return createOpenAiProvider({ ...rest, apiKey: settings.apiKey ?? "" });
  },
};
