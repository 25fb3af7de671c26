/**
 * Deciding one call: deny rules, then ask rules, then allow rules, then the default.
 * Deny always wins. The evaluation is a function of the policy and the call alone (plus
 * path resolution, which is injected), so a table test covers it.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { canonicalJson } from "./canonical_json.ts";
import { compilePolicy, type ListName, type Policy, type Rule } from "./rules.ts";
import { createPathScope, type PathScope } from "./path_scope.ts";
import { commandTooLong, DYNAMIC, splitCommands, type SplitResult } from "./shell.ts";
import { expand, type Expansion, type Item, type ResolvedWrite } from "./expand.ts";
import type { ApprovalRequest, Approver, ChangedPath, Decision, PolicyConfig } from "./types.ts";
import { factsOf } from "./tool_facts.ts";

/** The reason an `ask` becomes when nobody can answer it. */
export const NO_OPERATOR_REASON =
  "needs approval, and no operator is attached (allow it with --allow or agent.approver in config)";

/** Options of `createApprover`. */
export interface ApproverOptions {
  /**
   * Resolves a path the way the tools will (symlinks and `..`).
   * @default lexical resolution with `node:path`
   */
  readonly resolvePath?: (path: string) => Promise<string>;
  /**
   * The workspace: the write tool's confinement, against which the files a command writes
   * are judged; the first root is bash's working directory. When absent, relative paths are
   * taken from the process's working directory and no confinement is applied.
   */
  readonly workspace?: { readonly roots: readonly string[] };
  /** Paths no tool may write (the config, the state directory): writes there are denied. */
  readonly protectedPaths?: readonly string[];
  /**
   * True when bash runs under the overlay: the files a line writes inside the roots are
   * judged once it ran, by what it changed (`judgeChanges`), so they are not predicted here.
   * Writes outside the roots or into protected paths are still refused before it runs.
   */
  readonly observed?: boolean;
}

/** The facts rules are tested against, gathered once per call and only when needed. */
interface Facts {
  readonly tool: string;
  readonly canonical: string;
  /** True when the tool runs its `command` input as a shell command line (bash). */
  readonly runsCommands: boolean;
  /** The command line, if the tool runs one and it is given. */
  readonly commandLine?: string;
  path(): Promise<string | undefined>;
  commands(): Promise<SplitResult | undefined>;
  /** The command line's simple commands with their effects (bash only). */
  expansion(): Promise<Expansion | undefined>;
}

function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => value ??= make();
}

function gather(request: ApprovalRequest, options: ApproverOptions): Facts {
  const resolvePath = options.resolvePath ?? ((p) => Promise.resolve(resolve(p)));
  const tool = request.tool.toLowerCase();
  const input = request.input as Record<string, unknown> | null;
  const field = (name: string) =>
    typeof input === "object" && input !== null && typeof input[name] === "string"
      ? input[name] as string
      : undefined;
  const known = factsOf(tool);
  const runsCommands = known?.command === true;
  const command = runsCommands ? field("command") : undefined;
  const commands = lazy(async () =>
    command === undefined ? undefined : await splitCommands(command)
  );
  return {
    tool,
    canonical: request.canonical ?? canonicalJson(request.input),
    runsCommands,
    ...(command === undefined ? {} : { commandLine: command }),
    path: lazy(async () => {
      const path = field("path");
      if (known?.path === undefined || path === undefined) return undefined;
      return await resolvePath(path).catch(() => resolve(path));
    }),
    commands,
    expansion: lazy(async () => {
      const split = await commands();
      if (split === undefined || split.error !== undefined) return undefined;
      return await expand(split.commands, options);
    }),
  };
}

/** The rule's tool, match and path fields all hold. */
async function baseMatches(rule: Rule, facts: Facts): Promise<boolean> {
  if (rule.tool !== undefined && rule.tool !== facts.tool) return false;
  if (rule.match !== undefined && !rule.match.test(facts.canonical)) return false;
  // On a rule granting writes, `path` is about the files its commands write.
  if (rule.path !== undefined && !(rule.effects?.has("write") && facts.runsCommands)) {
    const path = await facts.path();
    if (path === undefined || !rule.path.test(path)) return false;
  }
  return true;
}

/** Pieces of a line the parser rejected, for deny rules to look at anyway. */
function roughPieces(line: string): string[] {
  return line.split(/[;&|\n()`]|\$\(/).map((p) => p.trim().replace(/\s+/g, " ")).filter(Boolean);
}

async function denyMatches(rule: Rule, facts: Facts): Promise<boolean> {
  if (!await baseMatches(rule, facts)) return false;
  if (rule.command === undefined) return true;
  const split = await facts.commands();
  if (split === undefined) return false;
  const re = rule.command;
  if (split.commands.some((c) => c.variants.some((v) => re.test(v)))) return true;
  // The programs a command runs through its options (`find -exec`, `git -c core.pager=`).
  const expansion = await facts.expansion();
  if (expansion?.items.some((item) => item.variants.some((v) => re.test(v)))) return true;
  // Deny rules still see what they can of a line that does not parse.
  return split.error !== undefined &&
    roughPieces(facts.commandLine ?? "").some((piece) => re.test(piece));
}

/** Why a list did not pass a call, when an effect is the cause (for the reason text). */
interface ListMiss {
  readonly miss: string;
}

/** A list's verdict on a call: the rules that passed it, or why an effect kept it out. */
type ListOutcome =
  | { readonly label: string; readonly decision?: Decision }
  | ListMiss
  | undefined;

/**
 * Whether `rules` pass the call. Rules without `command` match on their own; `command`
 * rules together must match every simple command, including the programs those commands
 * run; the files they write are judged as the write tool would be (`judgeWrite`).
 */
async function listMatches(
  rules: readonly Rule[],
  facts: Facts,
  judgeWrite?: (write: ResolvedWrite) => Promise<Decision>,
): Promise<ListOutcome> {
  const commandRules: Rule[] = [];
  for (const rule of rules) {
    if (!await baseMatches(rule, facts)) continue;
    if (rule.command === undefined) return { label: rule.label };
    if (facts.runsCommands) commandRules.push(rule);
  }
  if (commandRules.length === 0) return undefined;
  const expansion = await facts.expansion();
  if (expansion === undefined || expansion.items.length === 0) return undefined;
  const matched = new Map<Item, Rule>();
  const used = new Set<string>();
  for (const item of expansion.items) {
    // A program run through an effect of a command whose rule grants `run` is that rule's.
    const granted = item.parent === undefined ? undefined : matched.get(item.parent);
    if (granted?.effects?.has("run")) {
      matched.set(item, granted);
      continue;
    }
    if (item.blocked !== undefined) return item.effect ? { miss: item.blocked } : undefined;
    const rule = commandRules.find((r) => r.command!.test(item.written));
    if (rule === undefined) {
      return item.via === undefined
        ? undefined
        : { miss: `${item.via} runs ${shown(item.written)}, and no rule allows it` };
    }
    matched.set(item, rule);
    used.add(rule.label);
  }
  for (const blocker of expansion.blockers) {
    const rule = matched.get(blocker.item);
    if (blocker.kind === "unknown" && rule?.effects?.has("run")) continue;
    return { miss: blocker.text };
  }
  let worst: Decision | undefined;
  for (const write of expansion.writes) {
    const rule = matched.get(write.item);
    const decision = await decideWrite(write, rule, judgeWrite);
    if (decision.decision === "deny") {
      return { label: [...used].join("+"), decision };
    }
    if (decision.rule !== undefined && decision.decision === "allow") used.add(decision.rule);
    if (decision.decision === "ask") worst = decision;
  }
  return worst === undefined
    ? { label: [...used].join("+") }
    : { label: [...used].join("+"), decision: worst };
}

/** A write judged: the rule's own opt-in, confinement, then the policy's write rules. */
async function decideWrite(
  write: ResolvedWrite,
  rule: Rule | undefined,
  judgeWrite?: (write: ResolvedWrite) => Promise<Decision>,
): Promise<Decision> {
  const what = `${write.via} writes ${write.path}`;
  if (write.problem !== undefined) {
    return { decision: "deny", reason: `${what}, ${write.problem}`, rule: "effect" };
  }
  const paths = write.tree ? [write.path, `${write.path.replace(/\/+$/, "")}/`] : [write.path];
  if (rule?.effects?.has("write") && paths.every((p) => rule.path?.test(p) ?? true)) {
    return { decision: "allow", rule: rule.label };
  }
  if (judgeWrite === undefined) {
    return {
      decision: "deny",
      reason: `${what}, and this rule does not grant writing there`,
      rule: "effect",
    };
  }
  const decision = await judgeWrite(write);
  if (decision.decision === "allow") return decision;
  const rulePart = decision.rule ?? "default";
  if (decision.decision === "ask") {
    return { decision: "ask", reason: `${what}, which needs approval`, rule: rulePart };
  }
  return {
    decision: "deny",
    reason: rulePart === "default"
      ? `${what}, and no rule allows writing there`
      : `${what}: ${decision.reason ?? "denied"}`,
    rule: rulePart,
  };
}

function shown(written: string): string {
  const text = written.replaceAll(DYNAMIC, "<computed>");
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

function denial(reason: string, rule: string): Decision {
  return { decision: "deny", reason, rule };
}

/** Decides `request` under `policy`. */
export async function evaluate(
  policy: Policy,
  request: ApprovalRequest,
  options: ApproverOptions = {},
): Promise<Decision> {
  return await decide(policy, request, options, 0);
}

/** How deep writes judged as calls of their own may nest (they do not, but bound it). */
const MAX_JUDGE_DEPTH = 2;

async function decide(
  policy: Policy,
  request: ApprovalRequest,
  options: ApproverOptions,
  depth: number,
): Promise<Decision> {
  if (policy.mode === "allow_all") return { decision: "allow", rule: "mode" };
  if (policy.mode === "deny_all") return denial(policy.reason ?? "denied by policy", "mode");
  const facts = gather(request, options);
  const fallback = policy.reason ?? "denied by pattern policy";
  // Checks are bounded: a line too long to check is denied, whatever the rules say.
  const tooLong = facts.commandLine === undefined ? undefined : commandTooLong(facts.commandLine);
  if (tooLong !== undefined) return denial(tooLong, "limit");
  for (const rule of policy.lists.deny) {
    if (await denyMatches(rule, facts)) return denial(rule.reason ?? fallback, rule.label);
  }
  // A write a command makes is judged as the write tool would be for that path; under the
  // overlay, one inside the roots is judged after the line ran, by what it really wrote.
  // Naming "write" here is policy, not knowledge of the tool: the rule language says rules
  // for `write` govern every file written (docs/approval-policies.md).
  const judgeWrite = (write: ResolvedWrite): Promise<Decision> =>
    options.observed === true && insideRoots(write.path, options)
      ? Promise.resolve({ decision: "allow" })
      : depth >= MAX_JUDGE_DEPTH
      ? Promise.resolve(denial(fallback, "default"))
      : decide(policy, { tool: "write", input: { path: write.path } }, options, depth + 1);
  let miss: string | undefined;
  const verdicts: Array<[ListName, "ask" | "allow"]> = [["ask", "ask"], ["allow", "allow"]];
  for (const [list, verdict] of verdicts) {
    const outcome = await listMatches(policy.lists[list], facts, judgeWrite);
    if (outcome === undefined) continue;
    if ("miss" in outcome) {
      miss ??= outcome.miss;
      continue;
    }
    const label = outcome.label;
    if (outcome.decision?.decision === "deny") return outcome.decision;
    const rule = policy.lists[list].find((r) => label.startsWith(r.label));
    if (verdict === "ask") {
      return {
        decision: "ask",
        reason: rule?.reason ?? `${request.tool} needs approval`,
        rule: label,
      };
    }
    if (outcome.decision?.decision === "ask") {
      return { decision: "ask", reason: outcome.decision.reason ?? "needs approval", rule: label };
    }
    return { decision: "allow", rule: label };
  }
  if (policy.default === "allow") return { decision: "allow", rule: "default" };
  if (policy.default === "ask") {
    return { decision: "ask", reason: miss ?? `${request.tool} needs approval`, rule: "default" };
  }
  return denial(miss ?? fallback, "default");
}

function insideRoots(path: string, options: ApproverOptions): boolean {
  return (options.workspace?.roots ?? []).some((root) =>
    path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`)
  );
}

function isProtectedPath(path: string, options: ApproverOptions): boolean {
  return (options.protectedPaths ?? []).some((p) =>
    path === p || path.startsWith(p.endsWith("/") ? p : `${p}/`) ||
    // a deleted directory that holds one
    p.startsWith(path.endsWith("/") ? path : `${path}/`)
  );
}

/** A path as the model knows it: relative to the first root when inside it. */
function shownPath(path: string, options: ApproverOptions): string {
  const root = options.workspace?.roots[0];
  if (root === undefined) return path;
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/**
 * The decision on what a bash call decided as `verdict` changed (see
 * `Approver.judgeChanges`). Per path: a protected path is refused; deny rules for `write`
 * come first; a line let run by a rule that names no command (or by the mode or an `allow`
 * default) may change anything else in the roots, as a sandboxed line always could; a path a
 * rule with `effects: [write]` that let the line run grants is allowed (a line's changes
 * cannot be told apart by command: any such rule of the line counts); anything else is
 * judged as a `write` call for that path. One refused path refuses the whole set; else one
 * that needs approval makes it `ask`.
 */
export async function judgeChanges(
  policy: Policy,
  verdict: Decision,
  changes: readonly ChangedPath[],
  options: ApproverOptions = {},
): Promise<Decision> {
  if (policy.mode === "allow_all") return { decision: "allow", rule: "mode" };
  if (policy.mode === "deny_all") return denial(policy.reason ?? "denied by policy", "mode");
  const labels = (verdict.rule ?? "").replace(/:operator$/, "").split("+");
  const rules = [...policy.lists.allow, ...policy.lists.ask].filter((r) =>
    labels.includes(r.label)
  );
  const wholesale = verdict.rule === "mode" ||
    (labels[0] === "default" && policy.default === "allow") ||
    rules.some((r) => r.command === undefined);
  const refused: string[] = [];
  const asked: string[] = [];
  let rule: string | undefined;
  // A directory made to hold a file that is judged is judged with that file, as the write
  // tool makes the parents of the file it writes.
  const holders = new Set<string>();
  for (const change of changes) {
    if (change.dir || change.deleted) continue;
    for (let at = dirname(change.path); at !== dirname(at); at = dirname(at)) holders.add(at);
  }
  for (const change of changes) {
    const what = `it ${change.deleted ? "deleted" : "wrote"} ${shownPath(change.path, options)}`;
    if (isProtectedPath(change.path, options)) {
      refused.push(`${what}, which is rousseau's own configuration or state`);
      rule ??= "protected";
      continue;
    }
    // A directory is judged as a write of everything in it: `dir/`, which a rule for the
    // directory's contents (`^/ws/src/`) matches.
    const path = change.dir ? `${change.path}/` : change.path;
    // Judged as a `write` call: the rule language's word for writing a file (see `decide`).
    const request = { tool: "write", input: { path } };
    const facts = gather(request, options);
    const denied = await findAsync(policy.lists.deny, (r) => denyMatches(r, facts));
    if (denied !== undefined) {
      refused.push(
        `${what}: ${denied.reason ?? policy.reason ?? "denied by pattern policy"} ` +
          `(rule ${denied.label})`,
      );
      rule ??= denied.label;
      continue;
    }
    if (wholesale || (change.dir && !change.deleted && holders.has(change.path))) continue;
    if (rules.some((r) => r.effects?.has("write") && (r.path?.test(path) ?? true))) continue;
    const decision = await decide(policy, request, options, 1);
    if (decision.decision === "allow") continue;
    const label = decision.rule ?? "default";
    if (decision.decision === "ask") {
      asked.push(`${what}, which needs approval`);
      continue;
    }
    refused.push(
      label === "default"
        ? `${what}, and no rule allows writing there`
        : `${what}: ${decision.reason ?? "denied"} (rule ${label})`,
    );
    rule ??= label;
  }
  if (refused.length > 0) return denial(refused.join("; "), rule ?? "default");
  if (asked.length > 0) return { decision: "ask", reason: asked.join("; "), rule: "default" };
  return { decision: "allow", rule: verdict.rule ?? "default" };
}

async function findAsync<T>(
  items: readonly T[],
  test: (item: T) => Promise<boolean>,
): Promise<T | undefined> {
  for (const item of items) if (await test(item)) return item;
  return undefined;
}

/**
 * Whether `rule`, standing in `list`, matches `request` on its own: the test a rule's
 * `examples` and `not_examples` are held to.
 */
export async function ruleMatches(
  rule: Rule,
  list: ListName,
  request: ApprovalRequest,
  options: ApproverOptions = {},
): Promise<boolean> {
  const facts = gather(request, options);
  if (list === "deny") return await denyMatches(rule, facts);
  const outcome = await listMatches([rule], facts);
  return outcome !== undefined && "label" in outcome && outcome.decision === undefined;
}

const scopeByEvaluate = createPathScope(evaluate);

/**
 * What a call that reads many files (grep over a directory) may return: the check each file
 * passes, judged by `evaluate` on its resolved path, or undefined when no rule can tell the
 * files of the call apart (see `path_scope.ts`).
 */
export function pathScope(
  policy: Policy,
  request: ApprovalRequest,
  verdict: Decision,
): PathScope | undefined {
  return scopeByEvaluate(policy, request, verdict);
}

/** An approver for a policy given in config form (compiled now; throws `PolicyError`). */
export function createApprover(
  config: PolicyConfig | Policy,
  options: ApproverOptions = {},
): Approver & { readonly policy: Policy } {
  const policy = "lists" in config ? config as Policy : compilePolicy(config as PolicyConfig);
  return {
    policy,
    approve: (request) => evaluate(policy, request, options),
    scope: (request, decision) => pathScope(policy, request, decision),
    judgeChanges: (_request, verdict, changes) => judgeChanges(policy, verdict, changes, options),
  };
}

/** Wraps a function (an external policy engine, a web hook) as an approver. */
export function createFunctionApprover(
  decide: (request: ApprovalRequest, signal?: AbortSignal) => Promise<Decision> | Decision,
): Approver {
  return { approve: async (request, signal) => await decide(request, signal) };
}

/** Asks whoever is attached; returns true to allow, or a reason string to deny. */
export type AskOperator = (request: ApprovalRequest, decision: Decision) => Promise<true | string>;

/** Turns `ask` into allow or deny: through `operator` when one is attached, else a denial. */
export async function settle(
  decision: Decision,
  request: ApprovalRequest,
  operator?: AskOperator,
): Promise<Decision> {
  if (decision.decision !== "ask") return decision;
  if (operator === undefined) return denial(NO_OPERATOR_REASON, decision.rule ?? "default");
  const answer = await operator(request, decision);
  if (answer === true) return { decision: "allow", rule: `${decision.rule ?? "default"}:operator` };
  return denial(answer, `${decision.rule ?? "default"}:operator`);
}
