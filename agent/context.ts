/**
 * Context management: a turn never dies because the conversation outgrew the model's window
 * (cli.md "Context").
 *
 * The history (`messages`) is never rewritten: it is what happened, and the session stores it
 * whole. What the model is sent is a *view* of it, derived from the history and a list of
 * compaction records (stored beside the session, so a resumed session sees the same view):
 * - results of old tool calls named by an `elide` record become a one-line stub saying what
 *   was there and how to get it back;
 * - messages before a summary's `through` index are replaced by the model's own summary of
 *   them (the latest user request, when it falls inside, is repeated verbatim);
 * - any single tool result over `maxResultShare` of the window is cut with a note on paging.
 *
 * Before each request the size of the view is estimated; over the budget (window minus the
 * reply's reserve) the manager compacts: old tool results first, oldest first, then one
 * summary request for the older turns. A "too long" error from the server (context_errors.ts)
 * teaches the window, compacts and retries once. The latest user message and the latest tool
 * results are never elided.
 *
 * Approach credits: Claude Code's auto-compact and /compact (summary by the model), Codex's
 * "context left" gauge, opencode's tool-output pruning (stubs before summaries).
 *
 * @module
 */

import type {
  CompletionRequest,
  ContentBlock,
  Message,
  Provider,
  StreamEvent,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from "../providers/types.ts";
import { addUsage, defaultOutputLimit, NO_USAGE, ProviderError } from "../providers/types.ts";
import { parseOverflow } from "./context_errors.ts";
import { knownContextWindow } from "./context_windows.ts";
import type { AgentEvent, Compaction, CompactionReason } from "./types.ts";

/** `agent.max_result_share`: the most of the window one tool result may take. */
export const DEFAULT_MAX_RESULT_SHARE = 0.25;

/**
 * Characters per token of the estimate. BPE tokenizers average 3.5–4.5 characters a token on
 * English and code, so this can be ~25% low on dense code or JSON. It is safe because (1) it
 * only ever measures what was added since the provider's last exact count (usage), never the
 * whole conversation once a count exists; (2) compaction starts at the budget, which already
 * leaves the reply's reserve free, and brings the view down to half of it; (3) if the server
 * still says "too long", that error is recognised, compacts and retries once.
 */
export const CHARS_PER_TOKEN = 4;

/** After a compaction the view should be at most this share of the budget. */
const TARGET_SHARE = 0.5;
/** The most of the budget the latest step's results may take together. */
const LATEST_SHARE = 0.6;
/** Results shorter than this are not worth a stub. */
const STUB_MIN_CHARS = 400;
/** Room kept for the summary text itself when choosing what to summarise (tokens). */
const SUMMARY_ALLOWANCE = 1_000;
/** The summary request's reply budget is whatever the provider uses; its transcript share: */
const TRANSCRIPT_SHARE = 0.6;
/** Transcript cap when the window is unknown (tokens). */
const UNKNOWN_WINDOW_TRANSCRIPT = 100_000;
/** One block's share of the transcript sent for summarising (characters). */
const TRANSCRIPT_BLOCK_CHARS = 4_000;

/** A compaction as stored with the session. */
export interface CompactionRecord {
  readonly type: "compaction";
  /** Length of the history when it was made. */
  readonly at: number;
  readonly reason: CompactionReason;
  /** Tool-use ids whose results are now stubs. */
  readonly elided: readonly string[];
  /** Messages `[0, through)` are replaced by `text` from here on. */
  readonly summary?: { readonly through: number; readonly text: string };
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** A window the server stated in a "too long" error, for this model. */
export interface WindowRecord {
  readonly type: "window";
  readonly at: number;
  readonly model: string;
  readonly tokens: number;
}

/** What the session stores about its context, in order. */
export type ContextRecord = CompactionRecord | WindowRecord;

/** Settings of a context manager. */
export interface ContextOptions {
  /** The model; picks the known window and the learned one. */
  readonly model: string;
  /** `agent.context_window` (or `--context-window`); beats the known-model table. */
  readonly window?: number;
  /** @default DEFAULT_MAX_RESULT_SHARE */
  readonly maxResultShare?: number;
  /** Tokens kept free for the reply (the provider's max_tokens); capped at a quarter window. */
  readonly reserveTokens?: number;
  /** Records stored with a resumed session. */
  readonly records?: readonly ContextRecord[];
  /** Called with each new record, to store it. */
  readonly onRecord?: (record: ContextRecord) => void;
}

/** What `compact()` did; `undefined` from it means there was nothing to compact. */
export type CompactionDone = Compaction;

/** The context of one session. */
export interface ContextManager {
  /** The window in tokens: learned, else configured, else known; undefined when none is. */
  readonly window: number | undefined;
  /** Tokens the conversation took at the last request (reported, else estimated). */
  readonly used: number;
  /** Compactions made by this manager (this process). */
  readonly compactions: number;
  /** Tokens spent on summary requests. */
  readonly summaryUsage: Usage;
  /** Every record, stored and new. */
  readonly records: readonly ContextRecord[];
  /** A provider that sends views, compacts when needed and retries once on "too long". */
  wrap(provider: Provider, emit?: (event: AgentEvent) => void): Provider;
  /** The messages the model would be sent for `messages` now. */
  view(messages: readonly Message[]): Message[];
  /** Compacts now (chat's `/compact`): every old tool result, then a summary. */
  compact(
    provider: Provider,
    request: CompletionRequest,
    signal: AbortSignal,
  ): Promise<CompactionDone | undefined>;
}

/** Estimated tokens of a text. */
export function estimateText(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function estimateBlock(block: ContentBlock): number {
  switch (block.type) {
    case "text":
      return estimateText(block.text);
    case "tool_use":
      return 8 + estimateText(block.name + JSON.stringify(block.input ?? {}));
    case "tool_result":
      return 8 + estimateText(block.content);
    default:
      // A block kind added later (reasoning, images): count its JSON, never zero.
      return 8 + estimateText(JSON.stringify(block));
  }
}

/** Estimated tokens of messages (a few tokens of framing each). */
export function estimateMessages(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) {
    total += 4;
    for (const block of message.content) total += estimateBlock(block);
  }
  return total;
}

/** Estimated tokens of a whole request: system prompt, tool definitions, messages. */
export function estimateRequest(request: CompletionRequest): number {
  return estimateText(request.system) + estimateText(JSON.stringify(request.tools)) +
    estimateMessages(request.messages);
}

/**
 * Input tokens the provider counted. Anthropic reports cache reads and writes apart from
 * `input_tokens`; OpenAI-compatible servers count cached tokens inside `prompt_tokens`.
 */
function inputTokens(provider: string, usage: Usage): number {
  return provider === "anthropic"
    ? usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens
    : usage.inputTokens;
}

function shorten(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The stub an elided result becomes: what was there and how to get it back. */
export function elisionStub(call: ToolUseBlock | undefined, result: ToolResultBlock): string {
  const what = call === undefined
    ? "an earlier tool call"
    : `${call.name} ${shorten(JSON.stringify(call.input ?? {}), 200)}`;
  return `[elided to save context: the ${
    result.isError ? "error " : ""
  }result of ${what} (${result.content.length} characters); call the tool again if you need it]`;
}

/**
 * A result over the share cap, cut for the model with a note on how to page. `together`:
 * the cut is because the results of one step do not fit side by side.
 */
export function cutResult(
  content: string,
  maxChars: number,
  share: number,
  together = false,
): string {
  if (content.length <= maxChars) return content;
  const why = together
    ? "and the results of this step together do not fit the context window"
    : `more than ${Math.round(share * 100)}% of the context window`;
  const note =
    `\n[cut for the model: this result is ${content.length} characters, ${why}; read the file in parts with read's offset and limit, or narrow the grep pattern or the command's output]`;
  const keep = Math.max(0, maxChars - note.length);
  const cut = content.lastIndexOf("\n", keep);
  return content.slice(0, cut > keep / 2 ? cut : keep) + note;
}

/** The text that stands in for summarised messages. */
export function summaryFrame(text: string, count: number, latestRequest?: string): string {
  const head =
    `[context compacted: the ${count} earliest message(s) of this conversation were summarised to fit the model's context window; tool results in them are gone, call the tools again if you need them]\n${text.trim()}`;
  return latestRequest === undefined
    ? head
    : `${head}\n\n[the user's latest request, verbatim]\n${latestRequest}`;
}

const SUMMARY_SYSTEM = [
  "You summarise the conversation of a coding agent so that it can continue its task with less context.",
  "Keep: every request and constraint of the user; decisions taken; files read or changed (absolute paths) and what was learned from them; commands run and their outcome; errors met; what remains to do.",
  "Drop file contents and long outputs (they can be read again). Plain text, concise, no preamble.",
].join("\n");

function isToolResults(message: Message): boolean {
  return message.content.some((b) => b.type === "tool_result");
}

function isUserText(message: Message): boolean {
  return message.role === "user" && !isToolResults(message) &&
    message.content.some((b) => b.type === "text");
}

function textOf(message: Message): string {
  return message.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
}

/** Indexes the derived state needs: latest tool results, latest request, calls by id. */
function landmarks(messages: readonly Message[]) {
  let latestResults = -1;
  let latestRequest = -1;
  const calls = new Map<string, ToolUseBlock>();
  messages.forEach((message, i) => {
    if (isToolResults(message)) latestResults = i;
    if (isUserText(message)) latestRequest = i;
    for (const block of message.content) if (block.type === "tool_use") calls.set(block.id, block);
  });
  return { latestResults, latestRequest, calls };
}

/** Creates the context manager of one session. */
export function createContextManager(options: ContextOptions): ContextManager {
  const share = options.maxResultShare ?? DEFAULT_MAX_RESULT_SHARE;
  const records: ContextRecord[] = [...(options.records ?? [])];
  const elided = new Set<string>();
  let summary: { through: number; text: string } | undefined;
  let learned: number | undefined;
  for (const record of records) apply(record);
  let compactions = 0;
  let used = 0;
  let summaryUsage: Usage = NO_USAGE;
  /** The provider's count for the last request, and what the view was then. */
  let report: { total: number; viewLength: number; version: number; estimate: number } | undefined;
  /** Bumped whenever the view's derivation changes (a compaction, a new window). */
  let version = 0;

  function apply(record: ContextRecord): void {
    if (record.type === "window") {
      if (record.model === options.model) learned = record.tokens;
      return;
    }
    for (const id of record.elided) elided.add(id);
    if (record.summary !== undefined && record.summary.through > (summary?.through ?? 0)) {
      summary = { ...record.summary };
    }
  }

  function add(record: ContextRecord): void {
    records.push(record);
    apply(record);
    version++;
    options.onRecord?.(record);
  }

  function windowNow(): number | undefined {
    return learned ?? options.window ?? knownContextWindow(options.model);
  }

  /**
   * Tokens kept free for the reply: the configured reserve, or, for a provider that sends
   * no limit of its own, the limit it derives from the window (`defaultOutputLimit`).
   */
  let derivedReserve = false;

  /** The most input tokens a request may carry. */
  function budget(): number | undefined {
    const window = windowNow();
    if (window === undefined) return undefined;
    const wanted = derivedReserve ? defaultOutputLimit(window) : options.reserveTokens ?? 0;
    const reserve = Math.min(wanted, Math.floor(window / 4));
    return window - reserve;
  }

  function resultCap(): number | undefined {
    const window = windowNow();
    return window === undefined ? undefined : Math.floor(window * share * CHARS_PER_TOKEN);
  }

  /**
   * The latest results cannot be elided, so when one step's results (parallel reads) would
   * not fit side by side, each gets an equal part of most of the budget (characters).
   */
  function groupCap(latest: Message | undefined): number | undefined {
    const limit = budget();
    if (latest === undefined || limit === undefined) return undefined;
    const results = latest.content.filter((b) => b.type === "tool_result");
    const total = results.reduce((sum, b) => sum + b.content.length, 0);
    const room = Math.floor(limit * LATEST_SHARE * CHARS_PER_TOKEN);
    return total <= room ? undefined : Math.floor(room / results.length);
  }

  /** The view with the current records, or with `extra` elisions and summary tried on top. */
  function viewOf(
    messages: readonly Message[],
    extra: { elided?: ReadonlySet<string>; summary?: { through: number; text: string } } = {},
  ): Message[] {
    const marks = landmarks(messages);
    const cut = extra.summary ?? summary;
    const start = Math.min(cut?.through ?? 0, messages.length);
    const cap = resultCap();
    const stubbed = (id: string) => elided.has(id) || (extra.elided?.has(id) ?? false);
    const group = groupCap(messages[marks.latestResults]);
    const out: Message[] = messages.slice(start).map((message, k) => {
      if (!isToolResults(message)) return message;
      const shared = start + k === marks.latestResults ? group : undefined;
      return {
        role: message.role,
        content: message.content.map((block): ContentBlock => {
          if (block.type !== "tool_result") return block;
          if (stubbed(block.toolUseId)) {
            return { ...block, content: elisionStub(marks.calls.get(block.toolUseId), block) };
          }
          if (shared !== undefined && (cap === undefined || shared < cap)) {
            return { ...block, content: cutResult(block.content, shared, share, true) };
          }
          return cap === undefined
            ? block
            : { ...block, content: cutResult(block.content, cap, share) };
        }),
      };
    });
    if (cut === undefined || start === 0) return out;
    const latest = marks.latestRequest >= 0 && marks.latestRequest < start
      ? textOf(messages[marks.latestRequest]!)
      : undefined;
    const head: ContentBlock = { type: "text", text: summaryFrame(cut.text, start, latest) };
    const first = out[0];
    if (first?.role === "user") out[0] = { role: "user", content: [head, ...first.content] };
    else out.unshift({ role: "user", content: [head] });
    return out;
  }

  function estimateView(request: CompletionRequest, view: readonly Message[]): number {
    return estimateRequest({ ...request, messages: view });
  }

  /** Tokens the request would take: the last count plus an estimate of what came since. */
  function usedBy(request: CompletionRequest, view: readonly Message[]): number {
    const estimate = estimateView(request, view);
    if (report === undefined) return estimate;
    if (report.version === version && view.length > report.viewLength) {
      // The view grew by the reply (counted in the report's output) and what followed it.
      return Math.max(estimate, report.total + estimateMessages(view.slice(report.viewLength + 1)));
    }
    // Compacted since: scale the estimate by how far the last one was from the count.
    const ratio = Math.min(3, Math.max(1, report.total / Math.max(1, report.estimate)));
    return Math.ceil(estimate * ratio);
  }

  /** Text of a transcript of `messages` for the summary request, within `maxChars`. */
  function transcript(messages: readonly Message[], maxChars: number): string {
    const marks = landmarks(messages);
    const parts: string[] = [];
    for (const message of messages) {
      for (const block of message.content) {
        const clip = (text: string) =>
          text.length > TRANSCRIPT_BLOCK_CHARS
            ? `${text.slice(0, TRANSCRIPT_BLOCK_CHARS / 2)}\n[… ${
              text.length - TRANSCRIPT_BLOCK_CHARS
            } characters left out …]\n${text.slice(-TRANSCRIPT_BLOCK_CHARS / 2)}`
            : text;
        if (block.type === "text" && block.text !== "") {
          parts.push(`[${message.role}]\n${clip(block.text)}`);
        } else if (block.type === "tool_use") {
          parts.push(
            `[assistant calls ${block.name}] ${shorten(JSON.stringify(block.input), 500)}`,
          );
        } else if (block.type === "tool_result") {
          const name = marks.calls.get(block.toolUseId)?.name ?? "tool";
          parts.push(`[${name} ${block.isError ? "error" : "result"}]\n${clip(block.content)}`);
        }
      }
    }
    let text = parts.join("\n\n");
    if (text.length > maxChars) {
      const half = Math.floor(maxChars / 2);
      text = `${text.slice(0, half)}\n[… ${
        text.length - 2 * half
      } characters of the middle left out …]\n${text.slice(-half)}`;
    }
    return text;
  }

  async function summarise(
    provider: Provider,
    messages: readonly Message[],
    through: number,
    fresh: ReadonlySet<string>,
    signal: AbortSignal,
  ): Promise<string> {
    const start = summary?.through ?? 0;
    const window = windowNow();
    let maxChars = Math.floor(
      (window === undefined ? UNKNOWN_WINDOW_TRANSCRIPT : (budget() ?? window) * TRANSCRIPT_SHARE) *
        CHARS_PER_TOKEN,
    );
    // The part to summarise as the model sees it now: stubs (new ones too) stay stubs.
    const part = viewOf(messages.slice(0, through), { elided: fresh });
    for (let attempt = 0;; attempt++) {
      const previous = summary === undefined || start === 0
        ? ""
        : "(The first messages below hold the summary of an even earlier part.)\n\n";
      const request: CompletionRequest = {
        system: SUMMARY_SYSTEM,
        messages: [{
          role: "user",
          content: [{
            type: "text",
            text: `${previous}Summarise this conversation for the agent that will continue it:\n\n${
              transcript(part, maxChars)
            }`,
          }],
        }],
        tools: [],
      };
      try {
        let text = "";
        for await (const event of provider.complete(request, signal)) {
          if (event.type === "message") {
            summaryUsage = addUsage(summaryUsage, event.usage);
            text = textOf(event.message);
          }
        }
        if (text.trim() === "") {
          throw new ProviderError(`${provider.name}: the summary request returned no text`);
        }
        return text.trim();
      } catch (error) {
        const overflow = signal.aborted || attempt > 0 ? undefined : parseOverflow(error);
        if (overflow === undefined) throw error;
        learn(overflow.window, messages.length);
        maxChars = Math.floor(maxChars / 2);
      }
    }
  }

  function learn(window: number | undefined, at: number): void {
    if (window === undefined || window === learned) return;
    add({ type: "window", at, model: options.model, tokens: window });
  }

  /**
   * Brings the view of `request` under `target` tokens (server's count scale `scale`): stubs
   * for old tool results, oldest first; then a summary of older turns when that is not enough.
   */
  async function compactTo(
    provider: Provider,
    request: CompletionRequest,
    target: number,
    reason: CompactionReason,
    signal: AbortSignal,
    scale: number,
  ): Promise<Compaction | undefined> {
    const messages = request.messages;
    const marks = landmarks(messages);
    const before = Math.ceil(estimateView(request, viewOf(messages)) * scale);
    const size = (extra: Parameters<typeof viewOf>[1]) =>
      Math.ceil(estimateView(request, viewOf(messages, extra)) * scale);
    const start = summary?.through ?? 0;
    const fresh = new Set<string>();
    // 1. Old tool results become stubs, oldest first (never the latest results).
    for (let i = start; i < messages.length && size({ elided: fresh }) > target; i++) {
      if (i === marks.latestResults) continue;
      for (const block of messages[i]!.content) {
        if (
          block.type === "tool_result" && !elided.has(block.toolUseId) &&
          block.content.length >= STUB_MIN_CHARS
        ) fresh.add(block.toolUseId);
      }
    }
    // 2. Still too big: summarise older turns, keeping as much of the recent part as fits.
    let cut: { through: number; text: string } | undefined;
    if (size({ elided: fresh }) > target || reason === "manual") {
      // The kept part must start at an assistant message or a user request (a tool result
      // must follow its call) and must keep the latest tool results with their calls.
      const limit = marks.latestResults >= 0 ? marks.latestResults - 1 : messages.length;
      const bounds: number[] = [];
      for (let i = start + 1; i <= limit; i++) {
        const message = messages[i];
        if (message === undefined || message.role === "assistant" || isUserText(message)) {
          bounds.push(i);
        }
      }
      const through = reason === "manual"
        ? bounds.at(-1)
        : bounds.find((i) =>
          size({ elided: fresh, summary: { through: i, text: "" } }) + SUMMARY_ALLOWANCE <= target
        ) ?? bounds.at(-1);
      if (through !== undefined) {
        cut = { through, text: await summarise(provider, messages, through, fresh, signal) };
      }
    }
    if (fresh.size === 0 && cut === undefined) return undefined;
    const after = size({ elided: fresh, ...(cut === undefined ? {} : { summary: cut }) });
    add({
      type: "compaction",
      at: messages.length,
      reason,
      elided: [...fresh],
      ...(cut === undefined ? {} : { summary: cut }),
      tokensBefore: before,
      tokensAfter: after,
    });
    compactions++;
    used = after;
    return {
      reason,
      elided: fresh.size,
      summarized: cut === undefined ? 0 : cut.through - start,
      tokensBefore: before,
      tokensAfter: after,
      window: windowNow(),
    };
  }

  /** A summary request that was itself too long: say what to do. */
  function stillTooLong(failure: unknown, signal: AbortSignal): unknown {
    if (signal.aborted || parseOverflow(failure) === undefined) return failure;
    return new ProviderError(
      `${(failure as Error).message} (while summarising the conversation to fit the context window${
        windowNow() === undefined ? "" : ` of ${windowNow()} tokens`
      }; start a new session or set a model with a larger window)`,
      { cause: failure },
    );
  }

  const manager: ContextManager = {
    get window() {
      return windowNow();
    },
    get used() {
      return used;
    },
    get compactions() {
      return compactions;
    },
    get summaryUsage() {
      return summaryUsage;
    },
    records,
    view: (messages) => viewOf(messages),
    async compact(provider, request, signal) {
      const target = Math.floor((budget() ?? estimateRequest(request)) * TARGET_SHARE);
      return await compactTo(provider, request, target, "manual", signal, 1);
    },
    wrap(provider, emit = () => {}) {
      // A provider without an output limit of its own sends one derived from the window.
      derivedReserve = provider.maxTokens === undefined && provider.derivesOutputLimit === true;
      const send = (request: CompletionRequest, view: Message[]): CompletionRequest => {
        const window = windowNow();
        return { ...request, messages: view, ...(window === undefined ? {} : { window }) };
      };
      return {
        name: provider.name,
        model: provider.model,
        async *complete(request, signal): AsyncGenerator<StreamEvent> {
          let view = viewOf(request.messages);
          used = usedBy(request, view);
          const limit = budget();
          if (limit !== undefined && used > limit) {
            const ratio = used / Math.max(1, estimateView(request, view));
            const done = await compactTo(
              provider,
              request,
              Math.floor(limit * TARGET_SHARE),
              "threshold",
              signal,
              ratio,
            ).catch((failure) => {
              throw stillTooLong(failure, signal);
            });
            if (done !== undefined) emit({ type: "compaction", ...done });
            view = viewOf(request.messages);
          }
          let relimited = false;
          for (let retried = false;;) {
            let shown = false;
            const estimate = estimateView(request, view);
            try {
              for await (const event of provider.complete(send(request, view), signal)) {
                // Once anything reached the screen a retry would show it twice.
                if (event.type !== "message" && event.type !== "retry") shown = true;
                if (event.type === "message") {
                  const total = inputTokens(provider.name, event.usage) + event.usage.outputTokens;
                  if (total > 0) {
                    used = total;
                    report = { total, viewLength: view.length, version, estimate };
                  }
                }
                yield event;
              }
              return;
            } catch (error) {
              if (signal.aborted || shown) throw error;
              const overflow = parseOverflow(error);
              if (overflow === undefined) throw error;
              // Refused because the derived output limit did not fit a window not known
              // until now (a server that checks prompt + max_tokens): with the window
              // learned, the limit shrinks; the same view is sent once more as it is.
              const before = windowNow();
              learn(overflow.window, request.messages.length);
              if (
                !relimited && derivedReserve && overflow.window !== undefined &&
                before !== overflow.window && estimate <= budget()!
              ) {
                relimited = true;
                continue;
              }
              if (retried) {
                throw new ProviderError(
                  `${
                    (error as Error).message
                  } (the conversation still does not fit the context window${
                    windowNow() === undefined ? "" : ` of ${windowNow()} tokens`
                  } after compacting it; start a new session or set a model with a larger window)`,
                  { cause: error },
                );
              }
              retried = true;
              // The server's count is the truth: scale our estimate to it.
              const scale = overflow.promptTokens === undefined
                ? 1
                : Math.max(1, overflow.promptTokens / Math.max(1, estimate));
              // Without a stated window, aim below what the server just refused.
              const refused = overflow.promptTokens ?? Math.ceil(estimate * scale);
              const basis = overflow.window !== undefined
                ? budget()!
                : Math.min(budget() ?? refused, refused);
              const target = Math.floor(basis * TARGET_SHARE);
              const done = await compactTo(provider, request, target, "overflow", signal, scale)
                .catch((failure) => {
                  throw stillTooLong(failure, signal);
                });
              if (done === undefined) {
                throw new ProviderError(
                  `${
                    (error as Error).message
                  } (nothing left to compact: the latest request and tool results alone do not fit; start a new session or set a model with a larger window)`,
                  { cause: error },
                );
              }
              emit({ type: "compaction", ...done });
              view = viewOf(request.messages);
            }
          }
        },
      };
    },
  };
  return manager;
}
