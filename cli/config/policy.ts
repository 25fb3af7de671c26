/**
 * Which policy a command runs under: the configured approver, the command's default when
 * nothing is configured, and the `--approver`, `--allow`, `--deny` flags on top.
 *
 * @module
 */

import {
  compilePolicy,
  didYouMean,
  LISTS,
  type Matcher,
  type Policy,
  type PolicyConfig,
  PolicyError,
  type Rule,
} from "../../approver/mod.ts";
import { UsageError } from "../errors.ts";

/** Commands with their own default policy. */
export type PolicyCommand = "tool" | "run" | "mcp" | "chat";

/** Flags that change the policy. */
export interface PolicyFlags {
  /** `--approver MODE`. */
  readonly approver?: string;
  /** `--allow TOOL[:REGEX]`, repeatable. */
  readonly allow?: readonly string[];
  /** `--deny TOOL[:REGEX]`, repeatable. */
  readonly deny?: readonly string[];
}

const HOW_TO_ALLOW = "allow it with --allow TOOL or agent.approver in config";

/**
 * The policy each command uses when nothing is configured. It names tools on purpose: which
 * tools run unasked is a security decision made here, not something a tool declares about
 * itself, so a new built-in is denied by `run` and `mcp` (and in chat) until it is added.
 */
export function defaultPolicy(command: PolicyCommand): PolicyConfig {
  switch (command) {
    case "tool":
      return { mode: "allow_all" };
    case "chat":
      return {
        mode: "pattern",
        allow: [{ tool: "read" }, { tool: "grep" }],
        ask: [{ tool: "write" }, { tool: "edit" }, { tool: "bash" }],
        default: "deny",
      };
    case "run":
    case "mcp":
      return {
        mode: "pattern",
        allow: [{ tool: "read" }, { tool: "grep" }],
        default: "deny",
        reason: `not allowed by the default policy (${HOW_TO_ALLOW})`,
      };
  }
}

/** `TOOL[:REGEX]` as a rule (REGEX matches the canonical JSON). */
function flagRule(flag: string, value: string): { tool: string; match?: string } {
  const colon = value.indexOf(":");
  const tool = (colon === -1 ? value : value.slice(0, colon)).trim();
  if (tool === "") {
    throw new UsageError(`${flag}: want TOOL or TOOL:REGEX, got ${JSON.stringify(value)}`);
  }
  return colon === -1 ? { tool } : { tool, match: value.slice(colon + 1) };
}

/** `rule` narrowed: it no longer matches inputs that one of `except` matches. */
function narrowed(rule: Rule, except: readonly Matcher[]): Rule {
  const own = rule.match;
  const match: Matcher = {
    test: (input) => (own?.test(input) ?? true) && !except.some((m) => m.test(input)),
  };
  return { ...rule, match };
}

/**
 * Flags beat the file (flag > environment > file): the file's ask rules for a tool that
 * `--allow TOOL` names are lifted, and those for a tool that `--allow TOOL:REGEX` names no
 * longer ask about the calls REGEX matches. Deny rules stay (deny always wins, at every
 * level); an ask rule naming no tool stays too. Labels are kept, so `ask[1]` is still the
 * file's `ask[1]`.
 */
function liftAsks(policy: Policy, flagAllows: readonly Rule[]): Policy {
  if (flagAllows.length === 0) return policy;
  const whole = new Set(flagAllows.filter((r) => r.match === undefined).map((r) => r.tool));
  const regexes = new Map<string, Matcher[]>();
  for (const rule of flagAllows) {
    if (rule.tool === undefined || rule.match === undefined) continue;
    regexes.set(rule.tool, [...(regexes.get(rule.tool) ?? []), rule.match]);
  }
  const ask = policy.lists.ask.flatMap((rule) => {
    if (rule.tool === undefined) return [rule];
    if (whole.has(rule.tool)) return [];
    const except = regexes.get(rule.tool);
    return except === undefined ? [rule] : [narrowed(rule, except)];
  });
  return { ...policy, lists: { ...policy.lists, ask } };
}

/** The compiled policy for `command`; a bad policy is a usage error naming the position. */
export function resolvePolicy(
  command: PolicyCommand,
  configured: PolicyConfig | undefined,
  flags: PolicyFlags,
): Policy {
  const allow = (flags.allow ?? []).map((v) => flagRule("--allow", v));
  const deny = (flags.deny ?? []).map((v) => flagRule("--deny", v));
  const base: PolicyConfig = configured ?? defaultPolicy(command);
  let mode = flags.approver ?? base.mode;
  const modeName = (mode ?? "pattern").trim().toLowerCase();
  let defaultVerdict = base.default;
  let reason = base.reason;
  if ((allow.length > 0 || deny.length > 0) && (modeName === "allow_all" || modeName === "allow")) {
    // Rules given on the command line only mean something in pattern mode; allow-all (from
    // config or from --approver) becomes a pattern policy whose default is allow, so --deny
    // narrows it instead of being ignored.
    mode = "pattern";
    defaultVerdict = "allow";
  } else if (
    allow.length > 0 && flags.approver === undefined &&
    (modeName === "deny_all" || modeName === "deny")
  ) {
    // A file's deny-all loses to --allow (the flag beats the file): what the flags allow
    // runs, everything else is still denied with the file's reason.
    mode = "pattern";
    defaultVerdict = "deny";
    reason ??= "denied by policy";
  }
  const config: PolicyConfig = {
    ...base,
    ...(mode === undefined ? {} : { mode }),
    ...(defaultVerdict === undefined ? {} : { default: defaultVerdict }),
    ...(reason === undefined ? {} : { reason }),
    deny: [...(base.deny ?? []), ...deny],
    allow: [...(base.allow ?? []), ...allow],
  };
  let policy: Policy;
  try {
    policy = compilePolicy(config);
  } catch (error) {
    if (error instanceof PolicyError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  return liftAsks(policy, policy.lists.allow.slice((base.allow ?? []).length));
}

/**
 * Every tool the policy names, in flags and in config, must exist: a typo such as
 * `--allow bsh` would otherwise be accepted and silently grant nothing. `registered` are
 * the registry's names; MCP servers' tools count by their `mcp__<server>__` prefix (their
 * names are only known once a server answers). Flag mistakes are usage errors (exit 2),
 * config mistakes errors of the file (exit 1); each names the place and the closest tool.
 */
export function checkToolNames(
  configured: PolicyConfig | undefined,
  flags: PolicyFlags,
  registered: readonly string[],
  mcpServers: readonly string[] = [],
): void {
  const known = (name: string) =>
    registered.includes(name) || mcpServers.some((server) => name.startsWith(`mcp__${server}__`));
  const unknown = (name: string) => {
    const near = didYouMean(name, registered);
    return `unknown tool ${JSON.stringify(name)}${
      near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`
    }`;
  };
  const listing = `registered tools: ${registered.join(", ")}`;
  const fromFlags: string[] = [];
  for (const [flag, values] of [["--allow", flags.allow], ["--deny", flags.deny]] as const) {
    for (const value of values ?? []) {
      const tool = flagRule(flag, value).tool.toLowerCase();
      if (!known(tool)) fromFlags.push(`${flag} ${value}: ${unknown(tool)}`);
    }
  }
  if (fromFlags.length > 0) throw new UsageError([...fromFlags, listing].join("\n"));
  const fromConfig: string[] = [];
  for (const list of LISTS) {
    (configured?.[list] ?? []).forEach((rule, i) => {
      const tool = rule.tool?.trim().toLowerCase();
      if (tool !== undefined && !known(tool)) {
        fromConfig.push(`agent.approver.${list}[${i}].tool: ${unknown(tool)}`);
      }
    });
  }
  if (fromConfig.length > 0) throw new Error([...fromConfig, listing].join("\n"));
}
