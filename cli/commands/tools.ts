/**
 * `rousseau tools`: the registered tools, sorted by name.
 *
 * @module
 */

import { createWorkerHost } from "../../tools/hosting.ts";
import { loadConfig } from "../config/config.ts";
import { EXIT } from "../errors.ts";
import { createLogger, type LogFlags } from "../terminal/log.ts";
import { openMcpSources, toolSourceOf } from "../tool_sources.ts";
import { type GlobalFlags, toolContextFrom } from "../config/options.ts";
import { writeStdout } from "../terminal/output.ts";
import { visible } from "../../approver/visible.ts";

/** Runs the `tools` command and returns its exit code. */
export async function toolsCommand(
  flags: GlobalFlags & LogFlags & { readonly json?: boolean },
): Promise<number> {
  // The list comes from the worker, so custom modules appear exactly as they will run, and
  // from the configured MCP servers (`mcp__<server>__<tool>`).
  const config = await loadConfig(flags.config);
  const log = createLogger(flags, config.values.log ?? {});
  const context = await toolContextFrom(flags, config, false);
  await using host = await createWorkerHost({ ...context, modules: config.modules });
  await using sources = await openMcpSources(config, context.workspace, log);
  const definitions = toolSourceOf(host, sources, log).registry.definitions();
  if (flags.json) {
    await writeStdout(JSON.stringify(definitions, null, 2) + "\n");
    return EXIT.ok;
  }
  const width = Math.max(...definitions.map((d) => d.name.length));
  const lines = definitions.map((d) => {
    // One line each, shown as text: a description comes from a module or an MCP server.
    const summary = (d.description.split(/(?<=\.)\s/)[0] ?? d.description).replace(/\s+/g, " ");
    return `${d.name.padEnd(width)}  ${visible(summary)}`;
  });
  await writeStdout(lines.join("\n") + "\n");
  return EXIT.ok;
}
