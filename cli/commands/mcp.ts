/**
 * `rousseau mcp`: an MCP server on stdio offering the registered tools to any MCP client
 * (Claude Desktop, Claude Code, Cursor, VS Code, Zed), through the same gate the model's
 * calls pass: the approver (no operator is attached, so `ask` denies), the tool worker's
 * narrowed permissions, the bash sandbox, and the audit log.
 *
 * stdout carries MCP protocol messages only; the layers line and the log go to stderr.
 *
 * @module
 */

import meta from "../../deno.json" with { type: "json" };
import { callTool, type GateOptions } from "../../agent/tool_host.ts";
import type { CallToolRequest } from "@modelcontextprotocol/sdk/types.js";
import { createApprover } from "../../approver/mod.ts";
import { openAuditLog } from "../config/audit_log.ts";
import { openMcpSources, toolSourceOf } from "../tool_sources.ts";
import { createWorkerHost, resolveReal } from "../../tools/hosting.ts";
import { loadConfig } from "../config/config.ts";
import { EXIT } from "../errors.ts";
import {
  checkGrants,
  describeLayers,
  grantsFor,
  layersLine,
  mayRunCommands,
  observedBy,
} from "../layers/grants.ts";
import { createLogger, type LogFlags } from "../terminal/log.ts";
import { type GlobalFlags, type LimitFlags, toolContextFrom } from "../config/options.ts";
import { checkToolNames, type PolicyFlags, resolvePolicy } from "../config/policy.ts";

/** At most this many tool calls run at once; further requests wait in stdin. */
export const MCP_MAX_CALLS = 32;

/**
 * Turns of the event loop the server waits at the end of stdin for the answers of handlers
 * that returned (each is sent within a few microtasks; these turns are a bound, not a wait).
 */
const MCP_ANSWER_TURNS = 10;

/** Flags of `mcp`. */
export interface McpFlags extends GlobalFlags, LimitFlags, PolicyFlags, LogFlags {}

/**
 * What is wrong with a request's params, in words (the transport answers it as Invalid
 * params); undefined when the SDK may take it.
 */
export function checkCallParams(method: string, params: unknown): string | undefined {
  if (method !== "tools/call") return undefined;
  const p = params as Record<string, unknown> | undefined;
  if (p === undefined) return `tools/call needs params {"name": string, "arguments": object}`;
  if (typeof p.name !== "string") {
    return `tools/call needs params.name, the tool's name as a string`;
  }
  const args = p.arguments;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    const got = args === null ? "null" : Array.isArray(args) ? "an array" : typeof args;
    return `tools/call params.arguments must be an object, got ${got}`;
  }
  return undefined;
}

/** Runs the `mcp` command until the client closes stdin (0) or a signal arrives. */
export async function mcpCommand(flags: McpFlags, signal: AbortSignal): Promise<number> {
  const config = await loadConfig(flags.config);
  const log = createLogger(flags, config.values.log ?? {});
  const policy = resolvePolicy("mcp", config.approver, flags);
  const context = await toolContextFrom(flags, config, mayRunCommands(policy));
  const grants = grantsFor(policy, context.workspace, context.sandbox);
  checkGrants(policy, grants, context.sandbox);
  const layers = describeLayers(policy, context.workspace, grants, context.sandbox);
  log.always(layersLine(layers).replace(/^rousseau: /, ""), { layers });
  await using host = await createWorkerHost({
    ...context,
    modules: config.modules,
    permissions: grants,
    // A server makes many small calls: their files are proven with each result.
    proveLater: true,
  });
  checkToolNames(config.approver, flags, host.registry.names(), Object.keys(config.mcpServers));
  await using sources = await openMcpSources(config, context.workspace, log);
  const { registry, host: router } = toolSourceOf(host, sources, log);
  const secrets = Object.entries(Deno.env.toObject())
    .filter(([key]) => !(key in context.env)).map(([, value]) => value);
  // Kept open between lines: the server records two lines a call for as long as it runs.
  const audit = openAuditLog(config, secrets, { keepOpen: true });
  using _closeAudit = { [Symbol.dispose]: () => audit.close() };
  // No operator: nobody can answer `ask` here, so it denies.
  const gate: GateOptions = {
    registry,
    host: router,
    approver: createApprover(policy, {
      resolvePath: resolveReal,
      workspace: context.workspace,
      protectedPaths: config.protectedPaths,
      observed: context.sandbox?.overlay !== undefined,
    }),
    ...observedBy(context.sandbox),
    audit,
    source: "mcp",
  };

  const [
    { Server },
    { LineTransport, openStdoutNow },
    { CallToolRequestSchema, ListToolsRequestSchema },
  ] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("./mcp_stdio.ts"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  // The low-level Server: the tools are already described by JSON Schema, which McpServer
  // would want as zod shapes.
  const server = new Server(
    { name: "rousseau", version: meta.version },
    { capabilities: { tools: {} } },
  );
  const tools = registry.definitions().map((d) => ({
    name: d.name,
    description: d.description,
    inputSchema: d.input_schema,
  }));
  const inFlight = new Set<Promise<unknown>>();
  // Small answers are written at once when stdout is a pipe (see openStdoutNow).
  const stdoutNow = await openStdoutNow();
  using _closeStdoutNow = { [Symbol.dispose]: () => stdoutNow?.close() };
  // Our own transport: bounded lines, an answer for every bad one, and stdin read only while
  // fewer than MCP_MAX_CALLS calls run and stdout keeps up (see cli/commands/mcp_stdio.ts).
  const transport = new LineTransport(Deno.stdin, Deno.stdout, {
    running: () => inFlight.size,
    maxRunning: MCP_MAX_CALLS,
    calls: new Set(["tools/call"]),
    checkParams: checkCallParams,
    ...(stdoutNow === undefined ? {} : { writeNow: stdoutNow.write }),
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request: CallToolRequest, extra: {
    readonly signal: AbortSignal;
    readonly requestId: string | number;
  }) => {
    // extra.signal aborts on notifications/cancelled and when the connection closes.
    const call = callTool(
      gate,
      request.params.name,
      request.params.arguments ?? {},
      AbortSignal.any([signal, extra.signal]),
    );
    inFlight.add(call);
    // Counted in `running` now: the transport stops counting it as starting.
    transport.started(extra.requestId);
    try {
      const result = await call;
      return { content: [{ type: "text", text: result.output }], isError: result.isError };
    } finally {
      inFlight.delete(call);
      transport.wake();
    }
  });
  server.onerror = (error: Error) =>
    log.log("debug", `mcp: ${error.message}`, { event: "mcp.error" });

  const done = Promise.withResolvers<void>();
  server.onclose = () => done.resolve();
  const onAbort = () => done.resolve();
  signal.addEventListener("abort", onAbort, { once: true });
  // At the end of stdin the client is done sending: the calls it already sent finish and are
  // answered, then the server stops (a client that wants them stopped sends
  // notifications/cancelled, or SIGTERM).
  transport.ended.then(async () => {
    // Turns of the event loop spent waiting only for answers whose handler has returned.
    let answering = 0;
    do {
      // Requests read just before the end reach their handler a few ticks later, and the
      // SDK sends a handler's answer a few ticks after it returns (calls that finish
      // together, their audit lines written in one batch, return in the same tick).
      await new Promise((resolve) => setTimeout(resolve, 0));
      await Promise.allSettled([...inFlight]);
      answering = inFlight.size > 0 || transport.held > 0 ? 0 : answering + 1;
    } while (
      inFlight.size > 0 || transport.held > 0 ||
      // Bounded: a request the SDK never answers must not hold the server for ever.
      (transport.unanswered > 0 && answering < MCP_ANSWER_TURNS)
    );
    await transport.flushed();
  }).finally(() => done.resolve());
  try {
    if (!signal.aborted) {
      await server.connect(transport);
      log.log("debug", `mcp: serving ${tools.length} tools on stdio`, { event: "mcp.start" });
      await done.promise;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Closing aborts every handler's signal: running calls are cancelled, and awaited so
    // their processes are gone before the worker stops.
    await server.close().catch(() => {});
    await Promise.allSettled([...inFlight]);
  }
  return EXIT.ok;
}
