/**
 * Recognising a provider's "the prompt is too long" error, and reading the window it states.
 * Knowledge, not logic: one row per server family with the body it answers, matched against
 * the error text and the error object the SDK kept (`cause.error`). A recognised error makes
 * the loop compact and retry once instead of failing the turn.
 *
 * @module
 */

/** What an overflow error told us. */
export interface Overflow {
  /** The window the server enforces, when it said. */
  readonly window?: number;
  /** How many tokens the refused prompt had, when it said. */
  readonly promptTokens?: number;
}

interface OverflowRow {
  /** Matched against the error message (and the nested error message). */
  readonly pattern: RegExp;
  /** Capture group numbers of the window and the prompt size, when the text carries them. */
  readonly window?: number;
  readonly prompt?: number;
  readonly source: string;
}

/** Texts that mean "does not fit", with where each comes from. */
const ROWS: readonly OverflowRow[] = [
  {
    // {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long:
    // 38111 tokens > 30000 maximum"}}
    pattern: /prompt is too long: (\d+) tokens > (\d+) maximum/,
    prompt: 1,
    window: 2,
    source: "Anthropic Messages API 400 (anthropics/claude-code issues, 'prompt is too long')",
  },
  {
    // Newer Claude models refuse prompt + max_tokens over the window up front.
    pattern: /input length and `max_tokens` exceed context limit: (\d+) \+ \d+ > (\d+)/,
    prompt: 1,
    window: 2,
    source: "Anthropic Messages API 400 (docs.anthropic.com, context windows)",
  },
  {
    // {"error":{"message":"This model's maximum context length is 30000 tokens. However, your
    // messages resulted in 38111 tokens...","code":"context_length_exceeded"}}; vLLM says
    // "However, you requested 5000 tokens".
    pattern:
      /maximum context length is (\d+) tokens\.?(?:.*?(?:resulted in|requested) (\d+) tokens)?/s,
    window: 1,
    prompt: 2,
    source: "OpenAI Chat Completions 400 context_length_exceeded; vLLM",
  },
  {
    // llama.cpp server-context.cpp: "request (%d tokens) exceeds the available context size
    // (%d tokens), try increasing it", type exceed_context_size_error, n_prompt_tokens, n_ctx.
    pattern: /request \((\d+) tokens\) exceeds (?:the available )?context size \((\d+) tokens\)/,
    prompt: 1,
    window: 2,
    source: "llama.cpp tools/server/server-context.cpp (ERROR_TYPE_EXCEED_CONTEXT_SIZE)",
  },
  {
    // Older llama.cpp builds: no numbers in the text.
    pattern: /exceeds the available context size|exceed_context_size_error/,
    source: "llama.cpp tools/server (older builds)",
  },
  {
    pattern:
      /context_length_exceeded|context length exceeded|input is too long|exceeds the context window|model_context_window_exceeded/i,
    source: "OpenAI (Responses wording), OpenRouter, LiteLLM",
  },
];

/** Statuses a "too long" answer comes with; anything else is some other failure. */
const STATUSES = new Set([400, 413, 422]);

function positive(value: unknown): number | undefined {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The error object the SDK parsed from the body, whatever nesting the provider uses. */
function bodyError(error: unknown): Record<string, unknown> {
  const cause = (error as { cause?: unknown })?.cause ?? error;
  const outer = (cause as { error?: unknown })?.error;
  if (typeof outer !== "object" || outer === null) return {};
  const inner = (outer as { error?: unknown }).error;
  return (typeof inner === "object" && inner !== null ? inner : outer) as Record<string, unknown>;
}

/** The overflow `error` reports, or undefined when it is some other failure. */
export function parseOverflow(error: unknown): Overflow | undefined {
  const status = (error as { status?: unknown })?.status;
  if (typeof status === "number" && !STATUSES.has(status)) return undefined;
  const body = bodyError(error);
  const text = [
    error instanceof Error ? error.message : String(error),
    typeof body.message === "string" ? body.message : "",
    typeof body.type === "string" ? body.type : "",
    typeof body.code === "string" ? body.code : "",
  ].join("\n");
  const row = ROWS.find((r) => r.pattern.test(text));
  if (row === undefined) return undefined;
  const match = row.pattern.exec(text)!;
  // llama.cpp also sends the numbers as fields; they win over the text.
  const window = positive(body["n_ctx"]) ??
    (row.window === undefined ? undefined : positive(match[row.window]));
  const promptTokens = positive(body["n_prompt_tokens"]) ??
    (row.prompt === undefined ? undefined : positive(match[row.prompt]));
  return {
    ...(window === undefined ? {} : { window }),
    ...(promptTokens === undefined ? {} : { promptTokens }),
  };
}
