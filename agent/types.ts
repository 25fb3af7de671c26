/**
 * What an agent turn reports as it goes and what it returns.
 *
 * @module
 */

import type { Usage } from "../providers/types.ts";

/** A call the approver refused. */
export interface Denial {
  readonly tool: string;
  readonly input: unknown;
  readonly reason: string;
  /** The deciding rule (`deny[0]`, `default`, `operator`, ...). */
  readonly rule: string;
}

/** Progress of a turn, in order. */
export type AgentEvent =
  | { readonly type: "text"; readonly text: string }
  /** A piece of the model's reasoning (thinking), as it streams. */
  | { readonly type: "thinking"; readonly text: string }
  /** The model started writing a tool call (its input is still streaming). */
  | { readonly type: "tool_use_start"; readonly id: string; readonly name: string }
  /** A complete call, about to be approved and run. */
  | {
    readonly type: "tool_use";
    readonly id: string;
    readonly name: string;
    readonly input: unknown;
  }
  | {
    readonly type: "tool_result";
    readonly toolUseId: string;
    readonly name: string;
    readonly output: string;
    readonly isError: boolean;
    readonly durationMs: number;
    /** Set when the approver refused the call. */
    readonly denial?: Denial;
    /** What a bash call under the overlay changed, and whether that was allowed. */
    readonly changes?: { readonly paths: readonly string[]; readonly allowed: boolean };
  }
  | {
    readonly type: "retry";
    readonly attempt: number;
    readonly delayMs: number;
    readonly reason: string;
  }
  /** One provider call finished (`iteration` counts from 1). */
  | { readonly type: "step"; readonly iteration: number; readonly usage: Usage }
  /** The conversation was compacted to fit the context window (agent/context.ts). */
  | ({ readonly type: "compaction" } & Compaction);

/** Why a compaction happened: near the window, a "too long" error, or `/compact`. */
export type CompactionReason = "threshold" | "overflow" | "manual";

/** What one compaction did. */
export interface Compaction {
  readonly reason: CompactionReason;
  /** Old tool results replaced by stubs. */
  readonly elided: number;
  /** Messages replaced by a summary (0: none). */
  readonly summarized: number;
  /** Estimated tokens of the request before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The window in force, when known. */
  readonly window: number | undefined;
}

/** How a turn ended. */
export type TurnEnd =
  | "success"
  | "error_max_iterations"
  /** The final reply was cut by the output-token limit (never reported as success). */
  | "error_max_tokens"
  | "error"
  | "cancelled";

/** The outcome of a turn. */
export interface TurnResult {
  readonly subtype: TurnEnd;
  /** The final assistant text; the error message on `error`/`error_max_iterations`. */
  readonly result: string;
  /** Everything the model wrote during the turn (what a cancelled turn had so far). */
  readonly streamed: string;
  /** Provider calls made. */
  readonly iterations: number;
  readonly usage: Usage;
  readonly denials: readonly Denial[];
}
