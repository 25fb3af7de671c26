/**
 * The shapes every tool shares. Plain data and functions only, so a tool can be
 * loaded and run inside a Deno Worker unchanged.
 *
 * @module
 */

import type { Sandbox } from "./_sandbox.ts";
import type { LaterProofs } from "./_workspace.ts";
import type {
  ChangeSet,
  ChangeVerdict,
  JsonSchemaObject,
  Limits,
  ToolFacts,
  Workspace,
} from "./data_types.ts";

export type {
  ChangeSet,
  ChangeVerdict,
  JsonSchemaObject,
  Limits,
  ObservedChange,
  SkippedChange,
  ToolFacts,
  Workspace,
} from "./data_types.ts";

/** What a tool call gets besides its input. */
export interface ToolContext {
  /** Roots, already resolved with `Deno.realPath`. */
  readonly workspace: Workspace;
  /** Limits for this call. */
  readonly limits: Limits;
  /** Cancellation; a cancelled call fails with `<tool>: cancelled`. */
  readonly signal: AbortSignal;
  /** Environment for processes the tool starts, secrets already removed. */
  readonly env: Readonly<Record<string, string>>;
  /** When set, bash runs under this bubblewrap sandbox. */
  readonly sandbox?: Sandbox;
  /**
   * When set, whether the content of the file at the resolved path `realPath` may be part of
   * the output (an approver `path` rule, judged per file). A tool that returns content of
   * files its input does not name (grep over a directory) must ask before any of a file's
   * content goes into the output, and skip the file on false.
   */
  readonly mayReturn?: (realPath: string) => Promise<boolean>;
  /**
   * When set, judges what a command changed under the overlay before any of it is applied
   * (and keeps what undo needs), given the command's output; absent means apply. A tool
   * calls it exactly once per call that ended normally, also when nothing changed.
   */
  readonly settleChanges?: (set: ChangeSet, output: string) => Promise<ChangeVerdict>;
  /**
   * Set by the built-in tools' worker: opened files whose proof of confinement its host makes
   * after the call (see `LaterProofs` in `_workspace.ts`). Absent elsewhere.
   */
  readonly proofs?: LaterProofs;
}

/** What the gate adds to one call besides its input (see `ToolContext`). */
export interface CallScope {
  /** Whether the content of the file at `realPath` may be returned. */
  readonly mayReturn?: (realPath: string) => Promise<boolean>;
  /** Judges a command's change set (and, in a preview, its output) before it is applied. */
  readonly settleChanges?: (set: ChangeSet, output: string) => Promise<ChangeVerdict>;
  /**
   * True when `settleChanges` would apply an empty change set without a question (no preview
   * of the output): a tool running in another thread then does not ask for one (a round trip
   * between threads on every command that changes nothing).
   */
  readonly appliesEmpty?: boolean;
}

/** A tool the model can call: plain data plus two functions. */
export interface Tool<Input = unknown> {
  /** Name the model calls, `^[a-z][a-z0-9_]*$`. */
  readonly name: string;
  /** Model-facing description. */
  readonly description: string;
  /** JSON Schema of the input object, exactly what providers receive. */
  readonly inputSchema: JsonSchemaObject;
  /** True when the tool changes nothing; consecutive read-only calls may run concurrently. */
  readonly readOnly: boolean;
  /** What a built-in does that the other layers must know (see `ToolFacts`); absent: nothing. */
  readonly facts?: ToolFacts;
  /** Decodes raw input; throws `ToolError("<name>: parse input: ...")` on a bad shape. */
  parseInput(raw: unknown): Input;
  /** Runs the call and returns the model-facing text; throws `ToolError` on failure. */
  execute(input: Input, context: ToolContext): Promise<string>;
}

/** A tool of any input type, as the registry stores it. */
// deno-lint-ignore no-explicit-any
export type AnyTool = Tool<any>;

/** The wire form of a tool: what `tools --json` prints and providers receive. */
export interface ToolDefinition {
  /** Tool name. */
  readonly name: string;
  /** Model-facing description. */
  readonly description: string;
  /** JSON Schema of the input. */
  readonly "input_schema": JsonSchemaObject;
}

/** The outcome of one call, after every failure became text. */
export interface ToolResult {
  /** The tool's output, or the error text. */
  readonly output: string;
  /** True when the call failed or was refused. */
  readonly isError: boolean;
}
