/**
 * The provider-neutral conversation and the one interface every provider implements.
 * Messages use content blocks (text, tool use, tool result); each provider maps them to
 * its own wire format both ways.
 *
 * @module
 */

/** Plain text from the model or the user. */
export interface TextBlock {
  readonly type: "text";
  readonly text: string;
}

/** A tool call the model made. */
export interface ToolUseBlock {
  readonly type: "tool_use";
  /** Provider-assigned id the result refers to. */
  readonly id: string;
  readonly name: string;
  /** Parsed arguments; `{}` when the model's argument text was not a JSON object. */
  readonly input: unknown;
  /** Set when the model's argument text could not be decoded: what was wrong with it. */
  readonly inputError?: string;
  /**
   * The argument text exactly as the model sent it, kept when it could not be decoded, so
   * the history replays what the model said (OpenAI-compatible wires carry it verbatim;
   * Anthropic's wire only takes an object and gets `{}`).
   */
  readonly rawInput?: string;
}

/**
 * The model's reasoning (Anthropic thinking blocks; `reasoning_content` / `reasoning` of
 * OpenAI-compatible servers such as llama.cpp, vLLM and DeepSeek). Kept in the history and
 * shown, never taken for the answer.
 */
export interface ThinkingBlock {
  readonly type: "thinking";
  readonly text: string;
  /**
   * Anthropic's signature: a signed block must go back unchanged when tool use follows;
   * an unsigned one (from another server) is never sent to Anthropic.
   */
  readonly signature?: string;
  /** Anthropic `redacted_thinking` data (encrypted; `text` is empty), sent back as is. */
  readonly redacted?: string;
}

/** The answer to one tool call. */
export interface ToolResultBlock {
  readonly type: "tool_result";
  /** The id of the `tool_use` block answered. */
  readonly toolUseId: string;
  readonly content: string;
  readonly isError: boolean;
}

/** Any content block. */
export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock;

/** One turn of the conversation. */
export interface Message {
  readonly role: "user" | "assistant";
  readonly content: readonly ContentBlock[];
}

/** Why the model stopped. */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "refusal";

/** Token counts; cache fields are Anthropic's and stay 0 elsewhere. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

/** A tool as the model sees it. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** One model call. */
export interface CompletionRequest {
  readonly system: string;
  readonly messages: readonly Message[];
  /** Sorted by name, so the prefix the provider caches stays the same across runs. */
  readonly tools: readonly ToolSpec[];
  /**
   * The model's context window in tokens, as known or learned (agent/context.ts sets it); a
   * provider without a configured output limit derives one from it (`defaultOutputLimit`).
   */
  readonly window?: number;
}

/** The output-token limit sent when none is configured and the window is not known. */
export const DEFAULT_OUTPUT_TOKENS = 8192;

/**
 * The output-token limit for a request when none is configured: a quarter of the context
 * window, at most `DEFAULT_OUTPUT_TOKENS` (pi sends 8192, qwen-code 8000), and
 * `DEFAULT_OUTPUT_TOKENS` when the window is not known. Without any limit llama-server
 * writes until its context is full.
 */
export function defaultOutputLimit(window: number | undefined): number {
  if (window === undefined) return DEFAULT_OUTPUT_TOKENS;
  return Math.max(1, Math.min(DEFAULT_OUTPUT_TOKENS, Math.floor(window / 4)));
}

/** Where a provider's diagnostics go (its SDK's own log lines, raw error bodies). */
export interface DiagnosticOptions {
  /**
   * The debug log; libraries never write to the user's screen themselves.
   * @default nowhere
   */
  readonly debug?: (message: string) => void;
}

/** An SDK `logger` that sends every line to `debug` (or nowhere), never to the console. */
export function sdkLogger(debug: ((message: string) => void) | undefined): {
  error: (...args: unknown[]) => void;
  warn: (...args: unknown[]) => void;
  info: (...args: unknown[]) => void;
  debug: (...args: unknown[]) => void;
} {
  const send = (...args: unknown[]) =>
    debug?.(args.map((a) => typeof a === "string" ? a : JSON.stringify(a) ?? String(a)).join(" "));
  return { error: send, warn: send, info: send, debug: send };
}

/** What a completion streams, in order; exactly one `message` ends a successful stream. */
export type StreamEvent =
  | { readonly type: "text"; readonly text: string }
  /** A piece of the model's reasoning, as it streams. */
  | { readonly type: "thinking"; readonly text: string }
  | { readonly type: "tool_use_start"; readonly id: string; readonly name: string }
  | {
    readonly type: "retry";
    readonly attempt: number;
    readonly delayMs: number;
    readonly reason: string;
  }
  | {
    readonly type: "message";
    readonly message: Message;
    readonly stopReason: StopReason;
    readonly usage: Usage;
  };

/** A model behind one small interface. */
export interface Provider {
  /** `anthropic` or `openai`. */
  readonly name: string;
  /** The model requests go to. */
  readonly model: string;
  /** The output-token limit sent with each request, when one is (for messages). */
  readonly maxTokens?: number;
  /**
   * True when, with no `maxTokens`, each request carries `defaultOutputLimit` of its
   * `window` instead: the context manager then keeps that much free for the reply.
   */
  readonly derivesOutputLimit?: boolean;
  /** Streams one completion; throws `ProviderError` once retries are spent. */
  complete(request: CompletionRequest, signal: AbortSignal): AsyncIterable<StreamEvent>;
}

/** A provider failure after retries: names the provider, the status and the request id. */
export class ProviderError extends Error {
  /** HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** The provider's request id, when it sent one. */
  readonly requestId: string | undefined;
  /** True when trying again later might work (rate limit, overload, network). */
  readonly transient: boolean;
  /**
   * The provider's own error type or code, as sent (`invalid_request_error`,
   * `context_length_exceeded`, `exceed_context_size_error`, `overloaded_error`, ...).
   */
  readonly errorType: string | undefined;
  /** The provider's error message, as sent (without our hints). */
  readonly providerMessage: string | undefined;
  /** The parsed error body, when the server sent JSON (llama.cpp puts `n_ctx` here). */
  readonly body: unknown;

  constructor(
    message: string,
    options: {
      status?: number;
      requestId?: string;
      transient?: boolean;
      cause?: unknown;
      errorType?: string;
      providerMessage?: string;
      body?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProviderError";
    this.status = options.status;
    this.requestId = options.requestId;
    this.transient = options.transient ?? false;
    this.errorType = options.errorType;
    this.providerMessage = options.providerMessage;
    this.body = options.body;
  }
}

/** Zero usage. */
export const NO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/** The sum of two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}
