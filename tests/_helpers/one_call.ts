/**
 * `rousseau run` where the model makes exactly one tool call and then says "done": the
 * set-up of the tests that drive a hostile tool (custom module, MCP server) through the CLI.
 *
 * @module
 */

import { type CliRun, runCli } from "./cli.ts";
import { type RecordedRequest, startFakeAnthropic } from "./fake_providers.ts";

/** How {@linkcode runOneCall} runs. */
export interface OneCall {
  /** Passed as `--config`. */
  readonly config: string;
  /** Passed as `--workspace`. */
  readonly root: string;
  /** The tool the model calls; it is allowed with `--allow`. */
  readonly tool: string;
  /** The call's input (default `{}`). */
  readonly input?: unknown;
  /** More tools to allow, each after its own `--allow`. */
  readonly allow?: readonly string[];
  /** `run`'s own options, before the prompt. */
  readonly runArgs?: readonly string[];
  readonly prompt: string;
  /** The run's environment; the fake's base URL is added. */
  readonly env?: Record<string, string>;
}

/**
 * Runs `rousseau --config C --workspace R --allow TOOL [--allow ...] run [...] PROMPT` against
 * a fake Anthropic model (closed when the run ends); returns the run and what the model got.
 */
export async function runOneCall(
  call: OneCall,
): Promise<CliRun & { readonly requests: readonly RecordedRequest[] }> {
  await using server = startFakeAnthropic([
    { tools: [{ name: call.tool, input: call.input ?? {} }], stop: "tool_use" },
    { text: "done" },
  ]);
  const allow = [call.tool, ...call.allow ?? []].flatMap((name) => ["--allow", name]);
  const run = await runCli(
    [
      "--config",
      call.config,
      "--workspace",
      call.root,
      ...allow,
      "run",
      ...call.runArgs ?? [],
      call.prompt,
    ],
    { env: { ...call.env, ANTHROPIC_BASE_URL: server.url } },
  );
  return { ...run, requests: server.requests };
}
