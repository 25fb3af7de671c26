/**
 * `policy test`: a policy checked before it ships. Each rule's `examples` must match it and
 * its `not_examples` must not (failures); rules that can never decide anything are found
 * by reading the policy (warnings, each with the rule's position).
 *
 * @module
 */

import { canonicalJson } from "./canonical_json.ts";
import { type ApproverOptions, ruleMatches } from "./approver.ts";
import { toolsWhere } from "./tool_facts.ts";
import { type ListName, LISTS, type Policy, type Rule } from "./rules.ts";
import { didYouMean } from "./suggest.ts";

/** One finding, at a rule's position (`allow[2]`) or `policy` for the whole. */
export interface Finding {
  readonly rule: string;
  readonly message: string;
}

/** What `testPolicy` found. */
export interface PolicyReport {
  readonly rules: number;
  readonly examples: number;
  /** Examples that did not hold. */
  readonly failures: readonly Finding[];
  /** Rules that can never match or never decide; unknown tools. */
  readonly warnings: readonly Finding[];
}

/** Options of `testPolicy`. */
export interface TestOptions extends ApproverOptions {
  /** Names of the registered tools; a rule naming another tool is reported. */
  readonly registered: readonly string[];
  /** Names that may be registered later (MCP servers' tools: `mcp__server__`), by prefix. */
  readonly registeredPrefixes?: readonly string[];
}

/** A rule without conditions matches every call of its tool (or of every tool). */
function unconditional(rule: Rule): boolean {
  return rule.match === undefined && rule.command === undefined && rule.path === undefined;
}

function covers(wide: Rule, narrow: Rule): boolean {
  return wide.tool === undefined || wide.tool === narrow.tool;
}

function callOf(rule: Rule, example: unknown): { tool: string; input: unknown } | string {
  if (rule.tool !== undefined) return { tool: rule.tool, input: example };
  const record = example as Record<string, unknown> | null;
  if (
    typeof record === "object" && record !== null && typeof record.tool === "string" &&
    "input" in record
  ) {
    return { tool: record.tool.toLowerCase(), input: record.input };
  }
  return "this rule names no tool, so each example must be {tool: NAME, input: {...}}";
}

/** Reasons a rule's own fields make it unable to match anything. */
function neverMatches(rule: Rule): string[] {
  const out: string[] = [];
  const match = rule.source.match;
  // The canonical JSON of an input always starts with `{` and ends with `}`.
  if (typeof match === "string" && match.startsWith("^")) {
    const rest = match.slice(1);
    if (!/^(\\?\{|\(|\[|\.)/.test(rest)) {
      out.push(
        `match ${JSON.stringify(match)} is anchored with ^ on something other than {, ` +
          "but the input's canonical JSON always starts with {: it can never match",
      );
    }
  }
  if (typeof match === "string" && match.endsWith("$") && !match.endsWith("\\$")) {
    const rest = match.slice(0, -1);
    if (!/(\\?\}|\)|\]|\.[*+?]?|\*|\+|\?)$/.test(rest)) {
      out.push(
        `match ${JSON.stringify(match)} is anchored with $ on something other than }, ` +
          "but the input's canonical JSON always ends with }: it can never match",
      );
    }
  }
  // Which tools take `command` and `path` rules is what the tools declare (`ToolFacts`).
  const commandTools = toolsWhere((f) => f.command === true);
  const pathTools = toolsWhere((f) => f.path !== undefined);
  const runs = rule.tool !== undefined && commandTools.includes(rule.tool);
  if (rule.command !== undefined && rule.tool !== undefined && !runs) {
    out.push(
      `command only applies to ${
        commandTools.join(", ")
      }, but the rule is for ${rule.tool}: it can never match`,
    );
  }
  const writes = rule.effects?.has("write") === true;
  if (rule.effects !== undefined && (rule.command === undefined || !runs)) {
    out.push(
      "effects only apply to bash rules with a command (they say what the matched commands " +
        "may do beyond their plain effect): it grants nothing here",
    );
  }
  if (rule.path !== undefined && runs && !writes) {
    out.push(
      "path on a bash rule only applies with effects: [write] (the files its commands may " +
        "write): without it the rule can never match",
    );
  } else if (
    rule.path !== undefined && rule.tool !== undefined && !pathTools.includes(rule.tool) && !runs
  ) {
    out.push(
      `path only applies to ${pathTools.join(", ")}, but the rule is for ${rule.tool}: ` +
        "it can never match",
    );
  }
  return out;
}

/** Runs every rule's examples and lints the policy. */
export async function testPolicy(policy: Policy, options: TestOptions): Promise<PolicyReport> {
  const failures: Finding[] = [];
  const warnings: Finding[] = [];
  const registered = new Set(options.registered);
  const prefixes = options.registeredPrefixes ?? [];
  let rules = 0;
  let examples = 0;
  if (policy.mode !== "pattern") {
    const count = LISTS.reduce((n, list) => n + policy.lists[list].length, 0);
    if (count > 0) {
      warnings.push({
        rule: "policy",
        message: `mode is ${policy.mode}, so its ${count} rule${
          count === 1 ? "" : "s"
        } are never evaluated (use mode: pattern)`,
      });
    }
  }
  for (const list of LISTS) {
    for (const rule of policy.lists[list]) {
      rules++;
      for (const message of neverMatches(rule)) warnings.push({ rule: rule.label, message });
      if (
        rule.tool !== undefined && !registered.has(rule.tool) &&
        !prefixes.some((prefix) => rule.tool!.startsWith(prefix))
      ) {
        const near = didYouMean(rule.tool, registered);
        warnings.push({
          rule: rule.label,
          message: `tool ${JSON.stringify(rule.tool)} is not registered` +
            (near !== undefined
              ? ` (did you mean ${near}?)`
              : ` (registered: ${[...registered].sort().join(", ")})`),
        });
      }
      for (const found of shadows(policy, list, rule)) {
        warnings.push({ rule: rule.label, message: found });
      }
      for (const [field, want] of [["examples", true], ["not_examples", false]] as const) {
        const inputs = rule.source[field] ?? [];
        for (let i = 0; i < inputs.length; i++) {
          examples++;
          const call = callOf(rule, inputs[i]);
          const where = `${field === "examples" ? "example" : "not_example"} ${i + 1}`;
          if (typeof call === "string") {
            failures.push({ rule: rule.label, message: `${where}: ${call}` });
            continue;
          }
          const matched = await ruleMatches(rule, list, {
            tool: call.tool,
            input: call.input,
            canonical: canonicalJson(call.input),
          }, options);
          if (matched !== want) {
            failures.push({
              rule: rule.label,
              message: `${where} ${canonicalJson(call.input)} ${
                want ? "does not match" : "matches"
              } the rule`,
            });
          }
        }
      }
    }
  }
  return { rules, examples, failures, warnings };
}

/** Why `rule` in `list` can never decide: an earlier list takes every call it would match. */
function shadows(policy: Policy, list: ListName, rule: Rule): string[] {
  const out: string[] = [];
  const earlier = LISTS.slice(0, LISTS.indexOf(list));
  for (const before of earlier) {
    const wide = policy.lists[before].find((r) => unconditional(r) && covers(r, rule));
    if (wide === undefined) continue;
    const what = wide.tool === undefined ? "every call" : `every ${wide.tool} call`;
    out.push(
      `shadowed by ${wide.label}, which ${
        before === "deny" ? "denies" : "asks for"
      } ${what} first: this rule never decides`,
    );
    break;
  }
  return out;
}
