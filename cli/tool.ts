/**
 * `rousseau tool NAME [JSON|-]`: one tool call, through the same host the model's calls use.
 *
 * @module
 */

import {
  createBuiltinTools,
  createInProcessHost,
  Registry,
  type ToolResult,
} from "../tools/mod.ts";
import { EXIT, UsageError } from "./errors.ts";
import { type GlobalFlags, type LimitFlags, toolContextFrom } from "./options.ts";
import { writeStderr, writeStdout } from "./output.ts";

/** Flags of `tool`. */
export interface ToolFlags extends GlobalFlags, LimitFlags {
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

/** Decodes the input text; a syntax error becomes the tool's own parse error, as for the model. */
function decodeInput(name: string, text: string): { ok: true; value: unknown } | ToolResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return {
      output: `${name}: parse input: invalid JSON: ${(error as Error).message}`,
      isError: true,
    };
  }
}

/** Runs the `tool` command and returns its exit code. */
export async function toolCommand(
  name: string,
  json: string | undefined,
  flags: ToolFlags,
  signal: AbortSignal,
): Promise<number> {
  const registry = new Registry(createBuiltinTools());
  if (!registry.has(name)) {
    throw new UsageError(
      `tool: unknown tool ${JSON.stringify(name)} (registered: ${registry.names().join(", ")})`,
    );
  }
  const context = await toolContextFrom(flags);
  const text = json === undefined || json === "-" ? await readStdin() : json;
  const decoded = decodeInput(name, text);
  const result = "ok" in decoded
    ? await createInProcessHost(registry, context).call(name, decoded.value, signal)
    : decoded;
  if (flags.json) {
    await writeStdout(JSON.stringify({ output: result.output, is_error: result.isError }) + "\n");
  } else if (result.isError) {
    await writeStderr(result.output);
  } else {
    await writeStdout(result.output);
  }
  return result.isError ? EXIT.failure : EXIT.ok;
}
