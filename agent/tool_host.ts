/**
 * The one gate every tool call passes, whoever makes it (the model, `rousseau tool`, an MCP
 * client): approve, then execute, then record. Every failure becomes an error result here:
 * an unknown tool, a denial, a tool error.
 *
 * @module
 */

import {
  type Approver,
  type AskOperator,
  type AuditEventName,
  type AuditSink,
  canonicalJson,
  type Decision,
  settle,
} from "../approver/mod.ts";
import type { Registry, ToolHost, ToolResult } from "../tools/hosting.ts";
import type { UndoRecorder } from "./undo_recorder.ts";

/** What the gate needs. */
export interface GateOptions {
  /** Names the callable tools (the host runs them). */
  readonly registry: Registry;
  /** Runs approved calls. */
  readonly host: ToolHost;
  /** Decides on calls. */
  readonly approver: Approver;
  /** Answers `ask`; absent means nobody is attached and `ask` denies. */
  readonly operator?: AskOperator;
  /** Receives audit events. */
  readonly audit?: AuditSink;
  /** Who calls: `cli`, `model`, `mcp`. */
  readonly source: string;
  /** Session id for the audit trail. */
  readonly sessionId?: string;
  /** Keeps what approved calls change, so `undo` can put it back. */
  readonly undo?: UndoRecorder;
}

/** A call's result with the decision that let it run or stopped it. */
export interface GatedResult extends ToolResult {
  /** The settled decision (never `ask`); absent for an unknown tool. */
  readonly decision?: Decision;
  /** How long the tool ran, without the time an approval took; absent when it never ran. */
  readonly durationMs?: number;
}

/** The text a denial reaches the model with. */
export function blockedText(reason: string): string {
  return `tool call blocked: ${reason}`;
}

/** Approves and runs one call; never throws for a tool or policy failure. */
export async function callTool(
  options: GateOptions,
  name: string,
  input: unknown,
  signal: AbortSignal,
): Promise<GatedResult> {
  const canonical = canonicalJson(input);
  const record = async (event: AuditEventName, extra: Record<string, unknown> = {}) => {
    await options.audit?.record({
      event,
      tool: name,
      input: canonical,
      source: options.source,
      ...(options.sessionId === undefined ? {} : { session_id: options.sessionId }),
      ...extra,
    });
  };
  if (!options.registry.has(name)) {
    const output = `unknown tool: ${name}`;
    await record("tool.error", { reason: output });
    return { output, isError: true };
  }
  const request = {
    tool: name,
    input,
    canonical,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  };
  let decision: Decision;
  let mayReturn: ((realPath: string) => Promise<boolean>) | undefined;
  try {
    const verdict = await options.approver.approve(request, signal);
    decision = await settle(verdict, request, options.operator);
    // Files the call reads without naming them (grep over a directory) are judged one by one.
    if (decision.decision === "allow") mayReturn = options.approver.scope?.(request, verdict);
  } catch (error) {
    // An approver that fails never lets a call through.
    decision = {
      decision: "deny",
      reason: `the approver failed: ${error instanceof Error ? error.message : String(error)}`,
      rule: "error",
    };
  }
  if (decision.decision !== "allow") {
    const reason = decision.reason ?? "denied by policy";
    await record("tool.denied", { reason, ...(decision.rule ? { rule: decision.rule } : {}) });
    return { output: blockedText(reason), isError: true, decision };
  }
  await record("tool.execute", decision.rule ? { rule: decision.rule } : {});
  const started = performance.now();
  const run = () =>
    options.host.call(name, input, signal, mayReturn === undefined ? undefined : { mayReturn });
  const readOnly = options.registry.get(name)?.readOnly === true;
  const result = options.undo ? await options.undo.around(name, input, readOnly, run) : await run();
  const duration = Math.round(performance.now() - started);
  await record(
    result.isError ? "tool.error" : "tool.done",
    result.isError ? { reason: result.output, duration_ms: duration } : { duration_ms: duration },
  );
  return { ...result, decision, durationMs: duration };
}
