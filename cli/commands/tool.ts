/**
 * `rousseau tool NAME [JSON|-]`: one tool call, through the same gate the model's calls use.
 *
 * @module
 */

import { createApprover, createPromptOperator, didYouMean, factsOf } from "../../approver/mod.ts";
import { callTool } from "../../agent/tool_host.ts";
import {
  createWorkerHost,
  resolveReal,
  type ToolContext,
  type ToolResult,
  type WorkerHost,
} from "../../tools/hosting.ts";
import { type Config, loadConfig } from "../config/config.ts";
import { takeEarlyWorker } from "../startup/early_worker.ts";
import { EXIT, UsageError } from "../errors.ts";
import { guarded } from "../guard.ts";
import type { ToolCall } from "../startup/tool_args.ts";
import { observedBy } from "../layers/grants.ts";
import { openAuditLog } from "../config/audit_log.ts";
import { type GlobalFlags, type LimitFlags, toolContextFrom } from "../config/options.ts";
import { createLineReader, useColor, writeStderr, writeStdout } from "../terminal/output.ts";
import { jsonVisible, visible } from "../../approver/visible.ts";
import { checkToolNames, type PolicyFlags, resolvePolicy } from "../config/policy.ts";

/** Flags of `tool`. */
export interface ToolFlags extends GlobalFlags, LimitFlags, PolicyFlags {
  /** `--json`: print `{"output", "is_error"}`. */
  readonly json?: boolean;
}

async function readStdin(): Promise<string> {
  if (Deno.stdin.isTerminal()) {
    throw new UsageError(
      "tool: no input: pass the JSON input as an argument, or pipe it on stdin with -",
    );
  }
  try {
    return await new Response(Deno.stdin.readable).text();
  } catch (error) {
    throw new UsageError(`tool: cannot read stdin: ${(error as Error).message}`, { cause: error });
  }
}

/** An input for `name` to show: the one its facts give, else a path and where to look. */
function example(name: string): string {
  const given = factsOf(name)?.example;
  return given !== undefined
    ? `'${given}'`
    : `'{"path": "/abs/file"}' (see rousseau tools --json for ${name}'s fields)`;
}

/** Decodes the input text; a syntax error becomes the tool's own parse error, as for the model. */
function decodeInput(name: string, text: string): { ok: true; value: unknown } | ToolResult {
  if (text.trim() === "") {
    return {
      output: `${name}: parse input: no input: want one JSON object, e.g. ${example(name)}`,
      isError: true,
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return {
      output: `${name}: parse input: invalid JSON: ${(error as Error).message}`,
      isError: true,
    };
  }
}

/**
 * Runs a `tool` call parsed by cli/startup/tool_args.ts (the start-up fast path, without commander)
 * inside the same boundary as every command, and returns the exit code.
 */
export function toolMain(call: ToolCall): Promise<number> {
  return guarded((signal) => toolCommand(call.name, call.json, call.flags as ToolFlags, signal));
}

/** Runs the `tool` command and returns its exit code. */
export async function toolCommand(
  name: string,
  json: string | undefined,
  flags: ToolFlags,
  signal: AbortSignal,
): Promise<number> {
  // The entry point may have started the worker already (see cli/startup/early_worker.ts); the host
  // takes that worker only if its grants are exactly the ones derived here.
  let started = takeEarlyWorker();
  try {
    const config = await loadConfig(flags.config);
    return await callWith(name, json, flags, signal, config, async (context) => {
      const taken = started;
      started = undefined;
      return await createWorkerHost({
        ...context,
        modules: config.modules,
        ...(taken === undefined ? {} : { started: taken }),
      });
    });
  } finally {
    // Not taken (an error before the host was created): stop it.
    started?.terminate();
  }
}

async function callWith(
  name: string,
  json: string | undefined,
  flags: ToolFlags,
  signal: AbortSignal,
  config: Config,
  startHost: (context: Omit<ToolContext, "signal">) => Promise<WorkerHost>,
): Promise<number> {
  const policy = resolvePolicy("tool", config.approver, flags);
  const context = await toolContextFrom(flags, config, factsOf(name)?.command === true);
  await using host = await startHost(context);
  const registry = host.registry;
  if (!registry.has(name)) {
    const near = didYouMean(name.toLowerCase(), registry.names());
    throw new UsageError(
      `tool: unknown tool ${JSON.stringify(name)}${
        near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`
      }; registered: ${registry.names().join(", ")}`,
    );
  }
  checkToolNames(config.approver, flags, registry.names(), Object.keys(config.mcpServers));
  const fromStdin = json === undefined || json === "-";
  const text = fromStdin ? await readStdin() : json;
  const decoded = decodeInput(name, text);
  // A person typed this call: when the policy asks and a terminal is attached, ask them.
  const interactive = !fromStdin && Deno.stdin.isTerminal() && Deno.stderr.isTerminal();
  const result = "ok" in decoded
    ? await callTool(
      {
        registry,
        host,
        approver: createApprover(policy, {
          resolvePath: resolveReal,
          workspace: context.workspace,
          protectedPaths: config.protectedPaths,
          observed: context.sandbox?.overlay !== undefined,
        }),
        ...observedBy(context.sandbox),
        audit: openAuditLog(
          config,
          Object.entries(Deno.env.toObject())
            .filter(([key]) => !(key in context.env)).map(([, value]) => value),
        ),
        source: "cli",
        ...(interactive
          ? {
            operator: createPromptOperator({
              write: (text) => writeStderr(text, false),
              readLine: createLineReader(signal),
              readFile: (path) => Deno.readTextFile(path).catch(() => undefined),
              color: useColor(),
            }),
          }
          : {}),
      },
      name,
      decoded.value,
      signal,
    )
    : decoded;
  if (flags.json) {
    await writeStdout(
      jsonVisible(JSON.stringify({ output: result.output, is_error: result.isError })) + "\n",
    );
  } else if (result.isError) {
    // An error quotes the input (a path, a pattern): shown, never obeyed by the terminal.
    await writeStderr(visible(result.output));
  } else {
    // Exactly the output for pipes and scripts; at a terminal, end on a line break so the
    // shell's prompt does not glue onto `edited … (1 replacement)`.
    const tail = Deno.stdout.isTerminal() && !result.output.endsWith("\n") ? "\n" : "";
    await writeStdout(result.output + tail);
  }
  return result.isError ? EXIT.failure : EXIT.ok;
}
