/**
 * The approver's shapes. The approver knows tools by name and by the facts the built-ins
 * declare (`ToolFacts`, as data: it imports no tool); it has no idea who calls it.
 *
 * @module
 */

/** What an approver decides for one call. */
export type Verdict = "allow" | "deny" | "ask";

/** One tool call to decide on. */
export interface ApprovalRequest {
  /** Tool name as the caller gave it. */
  readonly tool: string;
  /** The parsed input. */
  readonly input: unknown;
  /** Canonical JSON of the input; computed from `input` when absent. */
  readonly canonical?: string;
  /** Session the call belongs to, for the audit trail. */
  readonly sessionId?: string;
  /**
   * Set when the call already ran in a preview (bash under the overlay, network off) and
   * the operator is asked whether what it did may land: its output and its change set.
   */
  readonly preview?: Preview;
}

/** What a call run in a preview printed and changed, not yet applied. */
export interface Preview {
  readonly output: string;
  readonly changes: readonly PreviewChange[];
}

/** One path of a preview's change set. */
export interface PreviewChange {
  readonly status: "A" | "M" | "D";
  /** Absolute real path in the workspace (its content now is the before side). */
  readonly path: string;
  readonly kind: "file" | "dir" | "symlink";
  /** Where the after side's content is, for files; absent for deletions. */
  readonly after?: string;
}

/** The decision, with what decided it. */
export interface Decision {
  /** allow, deny or ask. */
  readonly decision: Verdict;
  /** Why, for denials and asks (reaches the model as `tool call blocked: <reason>`). */
  readonly reason?: string;
  /** What decided: `deny[2]`, `allow[0]`, `default`, `mode`. */
  readonly rule?: string;
}

/** Anything that decides on tool calls: a policy, an external engine, a web hook. */
export interface Approver {
  /** Decides on one call. */
  approve(request: ApprovalRequest, signal?: AbortSignal): Promise<Decision>;
  /**
   * For a call this approver decided as `decision` (before an operator answered an ask) and
   * that reads files it does not name (grep over a directory): whether each file's content
   * may be returned, by its resolved path; undefined when every file may. Wrappers of an
   * approver must pass this on, or those files go unchecked.
   */
  scope?(
    request: ApprovalRequest,
    decision: Decision,
  ): ((realPath: string) => Promise<boolean>) | undefined;
  /**
   * For a bash call this approver decided as `verdict` (the operator's answer included) and
   * that ran under the overlay: the decision on what it actually changed. Each path is judged
   * as a `write` call would be, deny rules first. Absent: the gate asks `approve` about a
   * `write` call for each path.
   */
  judgeChanges?(
    request: ApprovalRequest,
    verdict: Decision,
    changes: readonly ChangedPath[],
  ): Promise<Decision>;
}

/** One path a command changed, as the approver sees it. */
export interface ChangedPath {
  /** Absolute real path. */
  readonly path: string;
  /** True when the command deleted it (a directory: with everything below it). */
  readonly deleted: boolean;
  /** True when it is (or was, when deleted) a directory. */
  readonly dir: boolean;
}

/** A rule as written in config (`agent.approver.deny[i]` etc.). */
export interface RuleConfig {
  /** Tool name, case-insensitive; absent means every tool. */
  readonly tool?: string;
  /** RE2 regex on the canonical JSON of the input. */
  readonly match?: string;
  /** RE2 regex on each simple command of a bash command line. */
  readonly command?: string;
  /** RE2 regex on the resolved absolute path (read, write, edit, grep). */
  readonly path?: string;
  /** Reason given when this rule denies or asks. */
  readonly reason?: string;
  /**
   * bash: effects beyond the plain one this rule grants (`write` inside `path`, `run`).
   * Absent: the plain effect only.
   */
  readonly effects?: readonly string[];
  /** Inputs this rule must match (checked by `policy test`). */
  readonly examples?: readonly unknown[];
  /** Inputs this rule must not match (checked by `policy test`). */
  readonly "not_examples"?: readonly unknown[];
}

/** The approver section of config, in the reference daemon's shape plus our fields. */
export interface PolicyConfig {
  /** allow_all | deny_all | pattern (trimmed, case-insensitive; `allow`/`deny` too). */
  readonly mode?: string;
  /** pattern mode: allow | deny | ask when no rule matched; empty means deny. */
  readonly default?: string;
  /** Reason for denials that have none of their own. */
  readonly reason?: string;
  /** Rules that deny. */
  readonly deny?: readonly RuleConfig[];
  /** Rules that ask. */
  readonly ask?: readonly RuleConfig[];
  /** Rules that allow. */
  readonly allow?: readonly RuleConfig[];
}

/**
 * What a built-in tool does, as the tool itself declares it (`facts` on its definition in
 * tools/, copied into `builtin_tools.json` by `deno task schemas`): the approver reads these
 * instead of knowing tools by name. The same shape as `ToolFacts` in tools/data_types.ts.
 */
export interface ToolFacts {
  /** What the tool does with its `path` input: `read` it, `write` that file, `walk` below it. */
  readonly path?: "read" | "write" | "walk";
  /** True when its `command` input is a shell command line it runs. */
  readonly command?: boolean;
  /** How a `write` tool's new content follows from its input (one field, or a replacement). */
  readonly content?:
    | { readonly field: string }
    | { readonly replace: { readonly old: string; readonly new: string } };
  /** Input fields a one-line summary of a call shows, joined by two spaces. */
  readonly summary?: readonly string[];
  /** An input to show when `rousseau tool NAME` gets none (JSON text). */
  readonly example?: string;
}
