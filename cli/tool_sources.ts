/**
 * The tools a command offers besides the worker's own: the MCP servers configured under
 * `mcp_servers`, started and joined with the worker's registry (used by chat, run, mcp and
 * tools).
 *
 * @module
 */

import meta from "../deno.json" with { type: "json" };
import {
  connectMcpServers,
  joinMcpSources,
  type McpSources,
  type ToolSource,
} from "../agent/mcp_sources.ts";
import type { WorkerHost, Workspace } from "../tools/hosting.ts";
import type { Config } from "./config/config.ts";
import type { Logger } from "./terminal/log.ts";

/**
 * Starts the MCP servers configured under `mcp_servers` (none: nothing is started). A
 * server that cannot start is a warning on the log, never a failure.
 */
export function openMcpSources(
  config: Config,
  workspace: Workspace,
  log: Logger,
): Promise<McpSources> {
  return connectMcpServers(config.mcpServers, {
    cwd: workspace.roots[0]!,
    clientInfo: { name: "rousseau", version: meta.version },
    onWarning: (message, fields) => log.log("warn", message, fields),
  });
}

/** The worker's tools joined with the MCP servers' tools, as the gate takes them. */
export function toolSourceOf(host: WorkerHost, sources: McpSources, log: Logger): ToolSource {
  return joinMcpSources(
    { registry: host.registry, host },
    sources,
    (message, fields) => log.log("warn", message, fields),
  );
}
