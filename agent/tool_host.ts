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
  type ChangedPath,
  type Decision,
  settle,
} from "../approver/mod.ts";
import type {
  CallScope,
  ChangeSet,
  ChangeVerdict,
  Registry,
  ToolHost,
  ToolResult,
} from "../tools/hosting.ts";
import type { Keep, UndoRecorder } from "./undo/mod.ts";

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
  /**
   * Tools whose changes are observed before they land (bash under the overlay): what such a
   * call changed is judged here, path by path, and kept for undo before it is applied.
   */
  readonly observed?: ReadonlySet<string>;
  /**
   * Observed tools whose run can change nothing until their change set is applied (bash under
   * the overlay with the network off): a call of one waits for its reply to be on disk only
   * before its changes are applied, not before it runs.
   */
  readonly contained?: ReadonlySet<string>;
  /**
   * An observed call the policy asks about runs first, and the operator is asked with its
   * output and change set (chat, with the network off: the run can change nothing yet).
   */
  readonly preview?: boolean;
}

/** A call's result with the decision that let it run or stopped it. */
export interface GatedResult extends ToolResult {
  /** The settled decision (never `ask`); absent for an unknown tool. */
  readonly decision?: Decision;
  /** How long the tool ran, without the time an approval took; absent when it never ran. */
  readonly durationMs?: number;
  /** What an observed call changed (see {@linkcode ObservedChanges}); absent otherwise. */
  readonly changes?: ObservedChanges;
}

/**
 * The change set of an observed call (bash under the overlay) and the gate's verdict on it.
 * Allowed sets are applied by the tool; if applying fails (a conflict, a full disk) its
 * result is an error that says so.
 */
export interface ObservedChanges {
  /** `A`, `M` or `D`, a space, the absolute path; in path order. */
  readonly paths: readonly string[];
  readonly allowed: boolean;
}

/** The text a denial reaches the model with. */
export function blockedText(reason: string): string {
  return `tool call blocked: ${reason}`;
}

/**
 * Approves and runs one call; never throws for a tool or policy failure. `stored` is the
 * promise that the reply asking for the call is on disk (`SessionStore.append`): a call that
 * may change something waits for it before it runs (after its approval, audit line and
 * undo's record, which it overlaps), and is not run if it rejects.
 */
export async function callTool(
  options: GateOptions,
  name: string,
  input: unknown,
  signal: AbortSignal,
  stored?: Promise<void>,
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
  /** The `ask` a preview answers: the call runs first, the operator sees what it did. */
  let previewed: Decision | undefined;
  try {
    const verdict = await options.approver.approve(request, signal);
    if (
      verdict.decision === "ask" && options.preview === true &&
      options.observed?.has(name) === true && options.operator !== undefined
    ) {
      previewed = verdict;
      decision = { decision: "allow", rule: `${verdict.rule ?? "default"}:preview` };
    } else decision = await settle(verdict, request, options.operator);
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
  let changed: ObservedChanges | undefined;
  let settled = false;
  const readOnly = options.registry.get(name)?.readOnly === true;
  // Contained only when observed: its changes are then judged below, where the wait is.
  const contained = options.observed?.has(name) === true && options.contained?.has(name) === true;
  const run = async (keep?: Keep): Promise<ToolResult> => {
    if (stored !== undefined && !readOnly && !contained) {
      try {
        await stored;
      } catch (error) {
        return {
          output: `${name}: not run: ${error instanceof Error ? error.message : String(error)}`,
          isError: true,
        };
      }
    }
    const scope: CallScope = {
      ...(mayReturn === undefined ? {} : { mayReturn }),
      ...(options.observed?.has(name) === true
        ? {
          // Without a preview an empty set is applied as it is, below: no need to ask.
          ...(previewed === undefined ? { appliesEmpty: true } : {}),
          settleChanges: async (set: ChangeSet, output: string) => {
            settled = true;
            if (previewed === undefined && set.changes.length === 0) return { apply: true };
            if (contained && stored !== undefined) {
              // Its changes land only now: its reply must be on disk first.
              try {
                await stored;
              } catch (error) {
                return {
                  apply: false,
                  reason: error instanceof Error ? error.message : String(error),
                };
              }
            }
            const verdict = previewed === undefined
              ? await judgeObserved(options, request, decision, set, signal)
              : await judgePreview(options, request, previewed, set, output, signal);
            if (set.changes.length > 0) {
              changed = {
                paths: set.changes.map((c) => `${c.status} ${c.path}`),
                allowed: verdict.apply,
              };
            }
            if (verdict.apply) await keep?.(keptPaths(set));
            return verdict;
          },
        }
        : {}),
    };
    return await options.host.call(
      name,
      input,
      signal,
      Object.keys(scope).length ? scope : undefined,
    );
  };
  let result = options.undo === undefined
    ? await run()
    : options.observed?.has(name) === true
    ? await options.undo.aroundObserved(name, run)
    : await options.undo.around(name, input, readOnly, () => run());
  if (previewed !== undefined && !settled) {
    // A preview that ended before the operator could be asked (a timeout, a cancellation, a
    // set-up failure): nothing of it was applied, and its output was never approved.
    const last = result.output.trimEnd().split("\n").at(-1) ?? "";
    result = {
      output: `${name}: the call needed approval and ended before it could be asked; its ` +
        `output is withheld${last.startsWith(`${name}: `) ? ` (${last})` : ""}`,
      isError: true,
    };
  }
  const duration = Math.round(performance.now() - started);
  const extra = changed === undefined
    ? {}
    : { changes: changed.paths, "changes_allowed": changed.allowed };
  await record(
    result.isError ? "tool.error" : "tool.done",
    result.isError
      ? { reason: result.output, duration_ms: duration, ...extra }
      : { duration_ms: duration, ...extra },
  );
  return {
    ...result,
    decision,
    durationMs: duration,
    ...(changed === undefined ? {} : { changes: changed }),
  };
}

/** The paths undo keeps before a change set lands: a deleted or replaced directory whole. */
function keptPaths(set: ChangeSet) {
  return set.changes.map((c) => ({
    path: c.path,
    tree: (c.status === "D" && c.kind === "dir") || c.replaces === "dir",
  }));
}

type Request = { tool: string; input: unknown; canonical: string; sessionId?: string };

/**
 * What the approver says of `set`, made by a call it decided as `decision`: judged as writes
 * (or, for an approver without `judgeChanges`, as one `write` call per path).
 */
async function judgeSet(
  options: GateOptions,
  request: Request,
  decision: Decision,
  set: ChangeSet,
  signal: AbortSignal,
): Promise<Decision> {
  const paths: ChangedPath[] = set.changes.map((c) => ({
    path: c.path,
    deleted: c.status === "D",
    dir: c.kind === "dir",
  }));
  if (options.approver.judgeChanges !== undefined) {
    return await options.approver.judgeChanges(request, decision, paths);
  }
  let judged: Decision = { decision: "allow", rule: decision.rule ?? "default" };
  for (const { path } of paths) {
    const input = { path };
    // Judged as a `write` call: the rule language's word for writing a file (policy, not
    // knowledge of a tool; see `judgeChanges` in approver/approver.ts).
    const write = { tool: "write", input, canonical: canonicalJson(input) };
    const one = await options.approver.approve(write, signal);
    if (one.decision === "deny") {
      return { ...one, reason: `it wrote ${path}: ${one.reason ?? "denied"}` };
    }
    if (one.decision === "ask") judged = one;
  }
  return judged;
}

function failed(error: unknown): ChangeVerdict & { apply: false } {
  return {
    apply: false,
    reason: `judging them failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/**
 * The operator's word on a call that ran in a preview (the policy asked about it): a change
 * the policy refuses refuses it at once; otherwise the operator sees the output and the
 * change set. A refusal withholds the output from the model too. Never throws.
 */
async function judgePreview(
  options: GateOptions,
  request: Request,
  asked: Decision,
  set: ChangeSet,
  output: string,
  signal: AbortSignal,
): Promise<ChangeVerdict> {
  try {
    const judged = set.changes.length === 0
      ? asked
      : await judgeSet(options, request, asked, set, signal);
    if (judged.decision === "deny") {
      return { apply: false, reason: judged.reason ?? "denied by policy", withhold: true };
    }
    const preview = {
      output,
      changes: set.changes.map((c) => ({
        status: c.status,
        path: c.path,
        kind: c.kind,
        ...(c.upper === undefined || c.kind !== "file" ? {} : { after: c.upper }),
      })),
    };
    const answer = await options.operator!({ ...request, preview }, asked);
    return answer === true ? { apply: true } : { apply: false, reason: answer, withhold: true };
  } catch (error) {
    return { ...failed(error), withhold: true };
  }
}

/**
 * The verdict on what an observed call changed (see {@linkcode judgeSet}), an `ask` put to
 * the operator with the list of changes. Never throws: a failure refuses the set.
 */
async function judgeObserved(
  options: GateOptions,
  request: Request,
  decision: Decision,
  set: ChangeSet,
  signal: AbortSignal,
): Promise<ChangeVerdict> {
  try {
    let judged = await judgeSet(options, request, decision, set, signal);
    if (judged.decision === "ask" && options.operator === undefined) {
      return {
        apply: false,
        reason: `${judged.reason}, and no operator is attached (allow writing there with a ` +
          `write rule in agent.approver)`,
      };
    }
    if (judged.decision === "ask") {
      const list = set.changes.map((c) => `${c.status} ${c.path}`).join(", ");
      judged = await settle(
        { ...judged, reason: `its changes need approval: ${list}` },
        request,
        options.operator,
      );
    }
    return judged.decision === "allow"
      ? { apply: true }
      : { apply: false, reason: judged.reason ?? "denied by policy" };
  } catch (error) {
    return failed(error);
  }
}
