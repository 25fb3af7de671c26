/**
 * `rousseau policy check|test|replay`: a policy examined without running anything. The
 * policy is the one a command would run under (`--for`, default `run`): the configured
 * approver, or that command's default, with `--approver`, `--allow`, `--deny` on top.
 *
 * @module
 */

import {
  type ApproverOptions,
  canonicalJson,
  type Decision,
  evaluate,
  type Policy,
  type PolicyReport,
  testPolicy,
} from "../../approver/mod.ts";
import { openSessionStore } from "../../agent/session_store.ts";
import { createWorkerHost, resolveReal } from "../../tools/hosting.ts";
import { sessionsPath } from "../agent_setup.ts";
import { type Config, loadConfig } from "../config/config.ts";
import { EXIT, UsageError } from "../errors.ts";
import { type GlobalFlags, toolContextFrom, workspaceFrom } from "../config/options.ts";
import { writeStdout } from "../terminal/output.ts";
import { type PolicyCommand, type PolicyFlags, resolvePolicy } from "../config/policy.ts";

/** Flags of `policy`. */
export interface PolicyCommandFlags extends GlobalFlags, PolicyFlags {
  /** `--for COMMAND`: whose policy (default `run`). */
  readonly for?: string;
  /** `--json`. */
  readonly json?: boolean;
  /** `--strict`: `policy test` fails on warnings too. */
  readonly strict?: boolean;
}

const COMMANDS: readonly PolicyCommand[] = ["run", "chat", "mcp", "tool"];
/** `policy check` exit code for `ask`, as `run` uses 4 for denials nobody could answer. */
const EXIT_ASK = 4;

function commandOf(flags: PolicyCommandFlags): PolicyCommand {
  const name = flags.for ?? "run";
  if (!(COMMANDS as readonly string[]).includes(name)) {
    throw new UsageError(`--for: want one of ${COMMANDS.join(", ")}, got ${JSON.stringify(name)}`);
  }
  return name as PolicyCommand;
}

async function policyOf(flags: PolicyCommandFlags): Promise<{ config: Config; policy: Policy }> {
  const config = await loadConfig(flags.config);
  return { config, policy: resolvePolicy(commandOf(flags), config.approver, flags) };
}

/**
 * How the approver of a real run would resolve paths: the files a command writes are judged
 * against the workspace (confinement), the protected paths and the write rules.
 */
async function approverOptions(
  flags: PolicyCommandFlags,
  config: Config,
): Promise<ApproverOptions> {
  return {
    resolvePath: resolveReal,
    workspace: await workspaceFrom(flags, config),
    protectedPaths: config.protectedPaths,
  };
}

function describe(decision: Decision): string {
  const rule = decision.rule === undefined ? "" : ` (rule ${decision.rule})`;
  const reason = decision.reason === undefined ? "" : `: ${decision.reason}`;
  return `${decision.decision}${rule}${reason}`;
}

function exitFor(verdicts: readonly string[]): number {
  if (verdicts.includes("deny")) return EXIT.failure;
  if (verdicts.includes("ask")) return EXIT_ASK;
  return EXIT.ok;
}

/** `policy check TOOL JSON`: exit 0 allow, 1 deny, 4 ask. */
async function check(tool: string, json: string, flags: PolicyCommandFlags): Promise<number> {
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch (error) {
    throw new UsageError(
      `policy check: the input is not valid JSON (${(error as Error).message}); ` +
        `quote it for the shell, e.g. '{"command": "git status"}'`,
    );
  }
  const { config, policy } = await policyOf(flags);
  const decision = await evaluate(policy, {
    tool,
    input,
    canonical: canonicalJson(input),
  }, await approverOptions(flags, config));
  await writeStdout(
    flags.json
      ? JSON.stringify({
        decision: decision.decision,
        rule: decision.rule ?? null,
        reason: decision.reason ?? null,
      }) + "\n"
      : describe(decision) + "\n",
  );
  return exitFor([decision.decision]);
}

/** The registered tool names (from the worker, so custom modules count). */
async function registeredTools(flags: PolicyCommandFlags, config: Config): Promise<string[]> {
  await using host = await createWorkerHost({
    ...await toolContextFrom(flags, config, false),
    modules: config.modules,
  });
  return host.registry.names();
}

function renderReport(report: PolicyReport, strict: boolean): string {
  const lines = [
    ...report.failures.map((f) => `FAIL  ${f.rule}  ${f.message}`),
    ...report.warnings.map((w) => `${strict ? "FAIL" : "warn"}  ${w.rule}  ${w.message}`),
  ];
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  lines.push(
    `policy test: ${plural(report.rules, "rule")}, ${plural(report.examples, "example")}: ` +
      `${report.failures.length} failed, ${plural(report.warnings.length, "warning")}`,
  );
  return lines.join("\n") + "\n";
}

/** `policy test`: exit 1 when an example fails (or, with `--strict`, on any warning). */
async function test(flags: PolicyCommandFlags): Promise<number> {
  const { config, policy } = await policyOf(flags);
  const report = await testPolicy(policy, {
    registered: await registeredTools(flags, config),
    // MCP servers' tools are known only once connected; a configured server vouches for its prefix.
    registeredPrefixes: Object.keys(config.mcpServers).map((name) => `mcp__${name}__`),
    ...await approverOptions(flags, config),
  });
  await writeStdout(
    flags.json ? JSON.stringify(report) + "\n" : renderReport(report, flags.strict === true),
  );
  const failed = report.failures.length > 0 ||
    (flags.strict === true && report.warnings.length > 0);
  return failed ? EXIT.failure : EXIT.ok;
}

/** `policy replay SESSION`: every stored call through the current policy; nothing runs. */
async function replay(id: string, flags: PolicyCommandFlags): Promise<number> {
  const { config, policy } = await policyOf(flags);
  const options = await approverOptions(flags, config);
  const store = openSessionStore(sessionsPath(config));
  try {
    const found = store.find(id);
    if (found === undefined) {
      throw new UsageError(
        `policy replay: no session ${JSON.stringify(id)} (see rousseau session list)`,
      );
    }
    const rows: { n: number; tool: string; input: unknown; decision: Decision }[] = [];
    for (const message of store.load(found.id, false)) {
      if (message.role !== "assistant") continue;
      for (const block of message.content) {
        if (block.type !== "tool_use") continue;
        const decision = await evaluate(policy, {
          tool: block.name,
          input: block.input,
          canonical: canonicalJson(block.input),
          sessionId: found.id,
        }, options);
        rows.push({ n: rows.length + 1, tool: block.name, input: block.input, decision });
      }
    }
    const count = (verdict: string) => rows.filter((r) => r.decision.decision === verdict).length;
    if (flags.json) {
      await writeStdout(
        JSON.stringify({
          "session_id": found.id,
          calls: rows.map((r) => ({
            n: r.n,
            tool: r.tool,
            input: r.input,
            decision: r.decision.decision,
            rule: r.decision.rule ?? null,
            reason: r.decision.reason ?? null,
          })),
        }) + "\n",
      );
    } else {
      const lines = rows.map((r) => {
        const input = canonicalJson(r.input);
        const shown = input.length > 120 ? `${input.slice(0, 119)}…` : input;
        return `#${r.n}  ${describe(r.decision)}  ${r.tool} ${shown}`;
      });
      lines.push(
        `policy replay: ${rows.length} call${rows.length === 1 ? "" : "s"} in session ` +
          `${found.id}: ${count("allow")} allowed, ${count("deny")} denied, ${count("ask")} ask`,
      );
      await writeStdout(lines.join("\n") + "\n");
    }
    return exitFor(rows.map((r) => r.decision.decision));
  } finally {
    store.close();
  }
}

/** Runs `policy ACTION ...` and returns the exit code. */
export function policyCommand(
  action: string,
  args: readonly string[],
  flags: PolicyCommandFlags,
): Promise<number> {
  const want = (count: number, usage: string) => {
    if (args.length !== count) throw new UsageError(`policy ${action}: usage: ${usage}`);
  };
  switch (action) {
    case "check":
      want(2, "rousseau policy check TOOL JSON");
      return check(args[0]!, args[1]!, flags);
    case "test":
      want(0, "rousseau policy test");
      return test(flags);
    case "replay":
      want(1, "rousseau policy replay SESSION");
      return replay(args[0]!, flags);
    default:
      throw new UsageError(
        `policy: unknown action ${JSON.stringify(action)} (want check, test or replay)`,
      );
  }
}
