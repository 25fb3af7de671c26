/**
 * Policies as data: the config shape compiled once at start-up into RE2 matchers. A policy
 * that cannot be read never runs: every mistake stops start-up with its position.
 *
 * @module
 */

import { RE2JS } from "re2js";
import type { PolicyConfig, RuleConfig, Verdict } from "./types.ts";

/** The three modes. */
export type Mode = "allow_all" | "deny_all" | "pattern";

/** The rule lists, in evaluation order. */
export const LISTS = ["deny", "ask", "allow"] as const;
/** One of the rule lists. */
export type ListName = typeof LISTS[number];

/** What a rule's `match` is tested with: an RE2 regex, or a narrowed one (cli/config/policy.ts). */
export interface Matcher {
  /** Whether the canonical JSON of a call matches. */
  test(input: string): boolean;
}

/** A rule with its regexes compiled. */
export interface Rule {
  /** Position for audit and lint: `deny[2]`. */
  readonly label: string;
  /** Lower-cased tool name, if the rule names one. */
  readonly tool?: string;
  /** On the canonical JSON. */
  readonly match?: Matcher;
  /** On each simple command (bash only). */
  readonly command?: RE2JS;
  /** On the resolved path. */
  readonly path?: RE2JS;
  /** The rule's own reason. */
  readonly reason?: string;
  /**
   * bash only: effects beyond the plain one that this rule grants the commands it matches
   * (`write`: writes inside the workspace whose path matches `path`; `run`: programs they
   * run and effects the checker cannot judge). Never the shell changes.
   */
  readonly effects?: ReadonlySet<RuleEffect>;
  /** The rule as written. */
  readonly source: RuleConfig;
}

/** What a rule's `effects` field may grant. */
export const RULE_EFFECTS = ["write", "run"] as const;
/** One of `RULE_EFFECTS`. */
export type RuleEffect = typeof RULE_EFFECTS[number];

/** A compiled policy. */
export interface Policy {
  /** The mode. */
  readonly mode: Mode;
  /** pattern mode: the verdict when nothing matched. */
  readonly default: Verdict;
  /** Reason for denials without one of their own. */
  readonly reason?: string;
  /** Rule lists by name. */
  readonly lists: Readonly<Record<ListName, readonly Rule[]>>;
}

/** A policy that cannot be used; the message names the position. */
export class PolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PolicyError";
  }
}

const MODES: Readonly<Record<string, Mode>> = {
  "allow_all": "allow_all",
  allow: "allow_all",
  "deny_all": "deny_all",
  deny: "deny_all",
  pattern: "pattern",
};

const RULE_FIELDS = new Set([
  "tool",
  "match",
  "command",
  "path",
  "reason",
  "effects",
  "examples",
  "not_examples",
]);

function compileRegex(where: string, value: unknown): RE2JS {
  if (typeof value !== "string") {
    throw new PolicyError(`approver: ${where}: want a string (an RE2 regex), got ${typeof value}`);
  }
  try {
    return RE2JS.compile(value);
  } catch (error) {
    throw new PolicyError(`approver: ${where}: ${(error as Error).message}`);
  }
}

function compileRule(list: ListName, index: number, raw: unknown): Rule {
  const label = `${list}[${index}]`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new PolicyError(
      `approver: ${label}: want a rule object like {tool: bash, command: "^git "}`,
    );
  }
  const source = raw as RuleConfig & Record<string, unknown>;
  for (const key of Object.keys(source)) {
    if (!RULE_FIELDS.has(key)) {
      throw new PolicyError(
        `approver: ${label}.${key}: unknown field (want tool, match, command, path, reason, effects, examples, not_examples)`,
      );
    }
  }
  const rule: { -readonly [K in keyof Rule]: Rule[K] } = { label, source };
  if (source.tool !== undefined) {
    if (typeof source.tool !== "string" || source.tool.trim() === "") {
      throw new PolicyError(`approver: ${label}.tool: want a tool name`);
    }
    rule.tool = source.tool.trim().toLowerCase();
  }
  if (source.match !== undefined) rule.match = compileRegex(`${label}.match`, source.match);
  if (source.command !== undefined) rule.command = compileRegex(`${label}.command`, source.command);
  if (source.path !== undefined) rule.path = compileRegex(`${label}.path`, source.path);
  if (source.reason !== undefined) {
    if (typeof source.reason !== "string") {
      throw new PolicyError(`approver: ${label}.reason: want a string`);
    }
    rule.reason = source.reason;
  }
  if (source.effects !== undefined) rule.effects = compileEffects(label, source.effects);
  for (const field of ["examples", "not_examples"] as const) {
    if (source[field] !== undefined && !Array.isArray(source[field])) {
      throw new PolicyError(`approver: ${label}.${field}: want a list of tool inputs`);
    }
  }
  return rule;
}

function compileEffects(label: string, raw: unknown): ReadonlySet<RuleEffect> {
  const want = `want a list of ${RULE_EFFECTS.join(", ")}, e.g. effects: [write] with a path`;
  if (!Array.isArray(raw)) throw new PolicyError(`approver: ${label}.effects: ${want}`);
  const out = new Set<RuleEffect>();
  for (const [i, item] of raw.entries()) {
    if (!(RULE_EFFECTS as readonly unknown[]).includes(item)) {
      throw new PolicyError(
        `approver: ${label}.effects[${i}]: unknown effect ${JSON.stringify(item)} (${want})`,
      );
    }
    out.add(item as RuleEffect);
  }
  return out;
}

/** Compiles `config`; throws `PolicyError` with the spec's texts. */
export function compilePolicy(config: PolicyConfig = {}): Policy {
  const modeText = (config.mode ?? "pattern").trim().toLowerCase();
  const mode = MODES[modeText];
  if (mode === undefined) {
    throw new PolicyError(
      `approver: unknown mode "${config.mode}" (want allow_all / deny_all / pattern)`,
    );
  }
  const defaultText = (config.default ?? "").trim().toLowerCase();
  if (!["", "allow", "deny", "ask"].includes(defaultText)) {
    throw new PolicyError(`approver: unknown default "${config.default}"`);
  }
  const lists = {} as Record<ListName, Rule[]>;
  for (const list of LISTS) {
    const raw = config[list] ?? [];
    if (!Array.isArray(raw)) throw new PolicyError(`approver: ${list}: want a list of rules`);
    lists[list] = raw.map((rule, i) => compileRule(list, i, rule));
  }
  const policy: { -readonly [K in keyof Policy]: Policy[K] } = {
    mode,
    default: (defaultText || "deny") as Verdict,
    lists,
  };
  if (config.reason !== undefined && config.reason !== "") policy.reason = config.reason;
  return policy;
}
