/**
 * The agent loop: ask the model, run the tools it calls through the gate, feed the results
 * back, until it answers without tools or the iteration budget is spent. Every failure of a
 * call (a tool error, a denial, an unknown tool, undecodable input) becomes an error tool
 * result the model sees; only provider failures and cancellation end a turn early.
 *
 * Stop reasons are honoured: a final answer cut by the output-token limit ends the turn as
 * `error_max_tokens`, never as success; a tool call cut by it goes back to the model as an
 * error result saying so; a reply of reasoning only, with no answer, is an error too.
 *
 * @module
 */

import type {
  ContentBlock,
  Message,
  Provider,
  StopReason,
  ToolResultBlock,
  ToolSpec,
  ToolUseBlock,
} from "../providers/types.ts";
import {
  addUsage,
  DEFAULT_OUTPUT_TOKENS,
  NO_USAGE,
  ProviderError,
  type Usage,
} from "../providers/types.ts";
import type { ContextManager } from "./context.ts";
import { callTool, type GateOptions } from "./tool_host.ts";
import type { AgentEvent, Denial, TurnResult } from "./types.ts";

/** The default iteration budget. */
export const DEFAULT_MAX_ITERATIONS = 32;

/** What a turn needs. */
export interface TurnOptions {
  readonly provider: Provider;
  /** Approves and runs calls; its registry lists the tools the model is offered. */
  readonly gate: GateOptions;
  readonly system: string;
  readonly maxIterations: number;
  /**
   * Called with every message the turn adds, as soon as it is complete (persistence). It may
   * return a promise that settles once the message is on disk: the calls a reply asks for
   * wait for it before they may change anything, and are not run if it rejects.
   */
  readonly onMessage?: (message: Message) => void | Promise<void>;
  /** Called with progress events. */
  readonly onEvent?: (event: AgentEvent) => void;
  /** Stops the provider stream and the running tools. */
  readonly signal: AbortSignal;
  /** Keeps the requests inside the model's window (compaction; agent/context.ts). */
  readonly context?: ContextManager;
}

/** The error text of an exhausted budget. */
export function budgetExhausted(iterations: number): string {
  return `agent: iteration budget exhausted (${iterations} iterations)`;
}

function textOf(message: Message): string {
  return message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
}

function reasoningOf(message: Message): string {
  return message.content.filter((b) => b.type === "thinking").map((b) => b.text).join("");
}

/**
 * The output limit in words: `max_tokens 4096`, the default derived from the window, or the
 * server's own when none was sent.
 */
function limitOf(provider: Provider): string {
  if (provider.maxTokens !== undefined) return `max_tokens ${provider.maxTokens}`;
  return provider.derivesOutputLimit === true
    ? `the default: a quarter of the context window, at most ${DEFAULT_OUTPUT_TOKENS} tokens`
    : "the server's own limit; none was set";
}

/** What the model is told about a tool call the output-token limit cut. */
export function cutCallMessage(provider: Provider, call: ToolUseBlock): string {
  return `${call.name}: this call was cut off by the output-token limit (${
    limitOf(provider)
  }) before its input was complete, so it was not run. Send it again in smaller pieces: ` +
    "write a large file in parts (write the first part, then add the rest with edit calls), " +
    "and keep each call's input short.";
}

/** The turn's error when the final reply was cut by the output-token limit. */
export function cutReplyMessage(provider: Provider, reply: Message): string {
  const raise =
    `raise it with --max-tokens or ${provider.name}.max_tokens, or ask for a shorter answer`;
  const text = textOf(reply);
  if (text === "" && reasoningOf(reply) !== "") {
    return `agent: the output-token limit (${
      limitOf(provider)
    }) cut the reply off while the model was still reasoning; no answer was written (${raise})`;
  }
  return `agent: the reply was cut off by the output-token limit (${
    limitOf(provider)
  }) after ${text.length} characters (${raise})`;
}

/** The turn's error when the model ended with reasoning and no answer. */
export function reasoningOnlyMessage(reply: Message): string {
  return `agent: the model ended its reply with reasoning only and no answer (${
    reasoningOf(reply).length
  } characters of reasoning, kept in the session); if the answer is in the reasoning, the ` +
    "server's reasoning parser may have swallowed it (llama-server: --reasoning-format none)";
}

/** Tool definitions as the provider receives them, sorted by name. */
export function toolSpecs(gate: GateOptions): ToolSpec[] {
  return gate.registry.definitions().map((d) => ({
    name: d.name,
    description: d.description,
    inputSchema: d.input_schema,
  }));
}

/**
 * Runs one turn on `messages` (the history, ending with the new user message), appending
 * what the turn adds to it.
 */
export async function runTurn(messages: Message[], options: TurnOptions): Promise<TurnResult> {
  const { provider, gate, signal } = options;
  const emit = options.onEvent ?? (() => {});
  const model = options.context?.wrap(provider, emit) ?? provider;
  const tools = toolSpecs(gate);
  const denials: Denial[] = [];
  let usage: Usage = NO_USAGE;
  let streamed = "";
  let iterations = 0;
  let stop: StopReason = "end_turn";
  const add = (message: Message): Promise<void> | undefined => {
    messages.push(message);
    return options.onMessage?.(message) ?? undefined;
  };
  const end = (subtype: TurnResult["subtype"], result: string): TurnResult => ({
    subtype,
    result,
    streamed,
    iterations,
    usage,
    denials,
  });

  /** The current reply's promise of being on disk (see `onMessage`). */
  let stored: Promise<void> | undefined;
  const runCall = async (call: ToolUseBlock): Promise<ToolResultBlock> => {
    emit({ type: "tool_use", id: call.id, name: call.name, input: call.input });
    const started = performance.now();
    const answer = (
      output: string,
      isError: boolean,
      denial?: Denial,
      ran?: number,
      changes?: { readonly paths: readonly string[]; readonly allowed: boolean },
    ): ToolResultBlock => {
      emit({
        type: "tool_result",
        toolUseId: call.id,
        name: call.name,
        output,
        isError,
        // The tool's own time when it ran: an approval's wait is not the tool's.
        durationMs: ran ?? Math.round(performance.now() - started),
        ...(denial === undefined ? {} : { denial }),
        ...(changes === undefined ? {} : { changes }),
      });
      return { type: "tool_result", toolUseId: call.id, content: output, isError };
    };
    if (call.inputError !== undefined) {
      // With a `max_tokens` stop an undecodable call is a cut one: say why, not just "bad JSON".
      if (stop === "max_tokens") return answer(cutCallMessage(provider, call), true);
      return answer(`${call.name}: parse input: ${call.inputError}`, true);
    }
    const result = await callTool(gate, call.name, call.input, signal, stored);
    if (result.decision !== undefined && result.decision.decision !== "allow") {
      const denial: Denial = {
        tool: call.name,
        input: call.input,
        reason: result.decision.reason ?? "denied by policy",
        rule: result.decision.rule ?? "default",
      };
      denials.push(denial);
      return answer(result.output, true, denial);
    }
    return answer(result.output, result.isError, undefined, result.durationMs, result.changes);
  };

  /** Consecutive read-only calls run together; anything else runs alone, in order. */
  const runCalls = async (calls: readonly ToolUseBlock[]): Promise<ToolResultBlock[]> => {
    const results: ToolResultBlock[] = [];
    let batch: ToolUseBlock[] = [];
    const flush = async () => {
      if (batch.length > 0) results.push(...await Promise.all(batch.map(runCall)));
      batch = [];
    };
    for (const call of calls) {
      if (gate.registry.get(call.name)?.readOnly === true && call.inputError === undefined) {
        batch.push(call);
        continue;
      }
      await flush();
      results.push(await runCall(call));
    }
    await flush();
    return results;
  };

  try {
    while (iterations < options.maxIterations) {
      signal.throwIfAborted();
      iterations++;
      let reply: Message | undefined;
      for await (
        const event of model.complete({ system: options.system, messages, tools }, signal)
      ) {
        if (event.type === "text") {
          streamed += event.text;
          emit(event);
        } else if (
          event.type === "tool_use_start" || event.type === "retry" || event.type === "thinking"
        ) {
          emit(event);
        } else if (event.type === "message") {
          reply = event.message;
          stop = event.stopReason;
          usage = addUsage(usage, event.usage);
          emit({ type: "step", iteration: iterations, usage: event.usage });
        }
      }
      if (reply === undefined) {
        throw new ProviderError(`${provider.name}: the stream ended without a message`);
      }
      stored = add(reply);
      const calls = reply.content.filter((b): b is ToolUseBlock => b.type === "tool_use");
      if (calls.length === 0) {
        if (stop === "max_tokens") return end("error_max_tokens", cutReplyMessage(provider, reply));
        if (textOf(reply) === "" && reasoningOf(reply) !== "") {
          return end("error", reasoningOnlyMessage(reply));
        }
        return end("success", textOf(reply));
      }
      const results = await runCalls(calls);
      add({ role: "user", content: results satisfies ContentBlock[] });
      if (signal.aborted) return end("cancelled", streamed);
    }
    return end("error_max_iterations", budgetExhausted(iterations));
  } catch (error) {
    if (signal.aborted) return end("cancelled", streamed);
    return end("error", error instanceof Error ? error.message : String(error));
  }
}
