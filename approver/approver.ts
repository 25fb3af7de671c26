/**
 * Deciding one call: deny rules, then ask rules, then allow rules, then the default.
 * Deny always wins. The evaluation is a function of the policy and the call alone (plus
 * path resolution, which is injected), so a table test covers it.
 *
 * @module
 */

import { resolve } from "node:path";
import type { RE2JS } from "re2js";
import { canonicalJson } from "./canonical_json.ts";
import { compilePolicy, type ListName, type Policy, type Rule } from "./rules.ts";
import { pathScope } from "./path_scope.ts";
import { commandTooLong, splitCommands, type SplitResult } from "./shell.ts";
import type { ApprovalRequest, Approver, Decision, PolicyConfig } from "./types.ts";

/** The reason an `ask` becomes when nobody can answer it. */
export const NO_OPERATOR_REASON =
  "needs approval, and no operator is attached (allow it with --allow or agent.approver in config)";

/** Tools whose `path` input `path` rules test. */
export const PATH_TOOLS: ReadonlySet<string> = new Set(["read", "write", "edit", "grep"]);

/** Options of `createApprover`. */
export interface ApproverOptions {
  /**
   * Resolves a path the way the tools will (symlinks and `..`).
   * @default lexical resolution with `node:path`
   */
  readonly resolvePath?: (path: string) => Promise<string>;
}

/** The facts rules are tested against, gathered once per call and only when needed. */
interface Facts {
  readonly tool: string;
  readonly canonical: string;
  /** bash's command line, if this is a bash call. */
  readonly commandLine?: string;
  path(): Promise<string | undefined>;
  commands(): Promise<SplitResult | undefined>;
}

function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => value ??= make();
}

function gather(request: ApprovalRequest, resolvePath: (path: string) => Promise<string>): Facts {
  const tool = request.tool.toLowerCase();
  const input = request.input as Record<string, unknown> | null;
  const field = (name: string) =>
    typeof input === "object" && input !== null && typeof input[name] === "string"
      ? input[name] as string
      : undefined;
  const command = tool === "bash" ? field("command") : undefined;
  return {
    tool,
    canonical: request.canonical ?? canonicalJson(request.input),
    ...(command === undefined ? {} : { commandLine: command }),
    path: lazy(async () => {
      const path = field("path");
      if (!PATH_TOOLS.has(tool) || path === undefined) return undefined;
      return await resolvePath(path).catch(() => resolve(path));
    }),
    commands: lazy(async () => command === undefined ? undefined : await splitCommands(command)),
  };
}

/** The rule's tool, match and path fields all hold. */
async function baseMatches(rule: Rule, facts: Facts): Promise<boolean> {
  if (rule.tool !== undefined && rule.tool !== facts.tool) return false;
  if (rule.match !== undefined && !rule.match.test(facts.canonical)) return false;
  if (rule.path !== undefined) {
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
  // Deny rules still see what they can of a line that does not parse.
  return split.error !== undefined &&
    roughPieces(facts.commandLine ?? "").some((piece) => re.test(piece));
}

/**
 * The first rule of `rules` that passes the call, or undefined. Rules without `command`
 * match on their own; `command` rules together must match every simple command.
 */
async function listMatches(rules: readonly Rule[], facts: Facts): Promise<string | undefined> {
  const commandRules: Array<{ label: string; re: RE2JS }> = [];
  for (const rule of rules) {
    if (!await baseMatches(rule, facts)) continue;
    if (rule.command === undefined) return rule.label;
    if (facts.tool === "bash") commandRules.push({ label: rule.label, re: rule.command });
  }
  if (commandRules.length === 0) return undefined;
  const split = await facts.commands();
  if (split === undefined || split.error !== undefined || split.commands.length === 0) {
    return undefined;
  }
  const used = new Set<string>();
  for (const command of split.commands) {
    if (command.opaque) return undefined;
    const rule = commandRules.find((r) => r.re.test(command.written));
    if (rule === undefined) return undefined;
    used.add(rule.label);
  }
  return [...used].join("+");
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
  if (policy.mode === "allow_all") return { decision: "allow", rule: "mode" };
  if (policy.mode === "deny_all") return denial(policy.reason ?? "denied by policy", "mode");
  const facts = gather(request, options.resolvePath ?? ((p) => Promise.resolve(resolve(p))));
  const fallback = policy.reason ?? "denied by pattern policy";
  // Checks are bounded: a line too long to check is denied, whatever the rules say.
  const tooLong = facts.commandLine === undefined ? undefined : commandTooLong(facts.commandLine);
  if (tooLong !== undefined) return denial(tooLong, "limit");
  for (const rule of policy.lists.deny) {
    if (await denyMatches(rule, facts)) return denial(rule.reason ?? fallback, rule.label);
  }
  const verdicts: Array<[ListName, "ask" | "allow"]> = [["ask", "ask"], ["allow", "allow"]];
  for (const [list, verdict] of verdicts) {
    const label = await listMatches(policy.lists[list], facts);
    if (label === undefined) continue;
    const rule = policy.lists[list].find((r) => label.startsWith(r.label));
    return verdict === "ask"
      ? { decision: "ask", reason: rule?.reason ?? `${request.tool} needs approval`, rule: label }
      : { decision: "allow", rule: label };
  }
  if (policy.default === "allow") return { decision: "allow", rule: "default" };
  if (policy.default === "ask") {
    return { decision: "ask", reason: `${request.tool} needs approval`, rule: "default" };
  }
  return denial(fallback, "default");
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
  const facts = gather(request, options.resolvePath ?? ((p) => Promise.resolve(resolve(p))));
  return list === "deny"
    ? await denyMatches(rule, facts)
    : await listMatches([rule], facts) !== undefined;
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
