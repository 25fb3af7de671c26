/**
 * Running one call: decode the input, execute, and turn every failure into a result.
 * This is the boundary where a thrown error becomes text the model (or a script) reads.
 *
 * @module
 */

import { ToolError } from "./define.ts";
import { RelativePathError } from "./_input.ts";
import type { Registry } from "./registry.ts";
import type { CallScope, ToolContext, ToolResult } from "./types.ts";

/** Runs tool calls somewhere: in this isolate, or in a permission-scoped worker. */
export interface ToolHost {
  /**
   * Runs `name` with raw (already JSON-decoded) input; never throws for a tool failure.
   * `scope` reaches the tool's context; a host that routes calls must pass it on.
   */
  call(name: string, input: unknown, signal: AbortSignal, scope?: CallScope): Promise<ToolResult>;
}

/** The text of a failure of tool `name`, with the spec's wording for cancellation. */
export function failureText(name: string, error: unknown, signal: AbortSignal): string {
  if (error instanceof ToolError) return error.message;
  if (signal.aborted) return `${name}: cancelled`;
  const detail = error instanceof Error ? error.message : String(error);
  return detail.startsWith(`${name}: `) ? detail : `${name}: ${detail}`;
}

/**
 * The error text of tool `name` whose `execute` resolved to `value`, which is not a string:
 * a result must be the model-facing text.
 */
export function notText(name: string, value: unknown): string {
  const type = typeof value;
  const kind = value === null
    ? "null"
    : Array.isArray(value)
    ? "an array"
    : `${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`;
  return `${name}: the tool returned ${kind} instead of text; execute() must resolve to a string`;
}

/**
 * How long a cancelled call may take to notice before its result is given up on: a tool that
 * ignores its signal (or waits on something that never answers) still returns promptly.
 */
export const CANCEL_GRACE_MS = 5000;

/**
 * Rejects `CANCEL_GRACE_MS` after `signal` aborts; `stop` clears the timer (nothing is left
 * to keep the process alive).
 */
function givenUpAfterCancel(signal: AbortSignal): { promise: Promise<never>; stop(): void } {
  const { promise, reject } = Promise.withResolvers<never>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => {
    timer = setTimeout(() => reject(signal.reason ?? new Error("cancelled")), CANCEL_GRACE_MS);
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  promise.catch(() => {});
  return {
    promise,
    stop() {
      signal.removeEventListener("abort", onAbort);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/** Runs `name` from `registry` with `input`; every failure becomes `{ isError: true }`. */
export async function runTool(
  registry: Registry,
  name: string,
  input: unknown,
  context: ToolContext,
): Promise<ToolResult> {
  const tool = registry.get(name);
  if (tool === undefined) return { output: `unknown tool: ${name}`, isError: true };
  try {
    context.signal.throwIfAborted();
    const parsed = tool.parseInput(input);
    const deadline = givenUpAfterCancel(context.signal);
    let output: unknown;
    try {
      output = await Promise.race([tool.execute(parsed, context), deadline.promise]);
    } finally {
      deadline.stop();
    }
    if (typeof output !== "string") return { output: notText(name, output), isError: true };
    // A read-only call that finished as it was cancelled changed nothing: it reports the
    // cancellation, as it would have a moment later. A call that writes reports what it did.
    if (tool.readOnly === true) context.signal.throwIfAborted();
    return { output, isError: false };
  } catch (error: unknown) {
    if (error instanceof RelativePathError) {
      return { output: error.hinted(context.workspace.roots[0]), isError: true };
    }
    return { output: failureText(name, error, context.signal), isError: true };
  }
}

/** A host that runs tools in this isolate: for embedding and tests. */
export function createInProcessHost(
  registry: Registry,
  context: Omit<ToolContext, "signal">,
): ToolHost {
  return {
    call: (name, input, signal, scope) =>
      runTool(registry, name, input, {
        ...context,
        signal,
        ...(scope?.mayReturn === undefined ? {} : { mayReturn: scope.mayReturn }),
        ...(scope?.settleChanges === undefined ? {} : { settleChanges: scope.settleChanges }),
      }),
  };
}
