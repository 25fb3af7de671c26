/**
 * Tools from other MCP servers: each configured stdio server is started, its tools are
 * listed and offered as `mcp__<server>__<tool>`, and calls to them are routed to it, so the
 * gate sees one registry and one host and the approver applies to these tools like to any.
 *
 * Trade-off, stated plainly: these servers are processes the operator configured, started
 * from the main isolate with the operator's rights. They are outside the tool worker's Deno
 * permissions and outside the bash sandbox; only the approver stands between the model and
 * them. Configure only servers you trust.
 *
 * A server that fails to start, or dies later, never stops the process: it is reported
 * through `onWarning` and its tools answer with an error result saying it is unavailable.
 *
 * @module
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  type AnyTool,
  defineTool,
  type JsonSchemaObject,
  Registry,
  type ToolHost,
  type ToolResult,
} from "../tools/hosting.ts";

/** How to start one MCP server on stdio. */
export interface McpServerConfig {
  /** Executable to run. */
  readonly command: string;
  /** Its arguments. @default [] */
  readonly args?: readonly string[] | undefined;
  /** Variables added to the SDK's minimal default environment (HOME, PATH, ...). */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/** Options of `connectMcpServers`. */
export interface McpSourcesOptions {
  /** Receives one line per server that fails to start or dies. @default ignore */
  readonly onWarning?: (message: string, fields: Record<string, unknown>) => void;
  /** Working directory of the servers. @default the current directory */
  readonly cwd?: string;
  /** Name and version the client reports to the servers. @default rousseau 0.0.0 */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Longest wait for a server to start and list its tools, in milliseconds. @default 30_000 */
  readonly startTimeoutMs?: number;
  /** Longest wait for one call, in milliseconds. @default 600_000 */
  readonly timeoutMs?: number;
}

/** The tools of the configured servers and a host that runs them. */
export interface McpSources extends ToolHost, AsyncDisposable {
  /** Tool objects to register beside the worker's (`execute` is never used; the host runs them). */
  readonly tools: readonly AnyTool[];
  /** True when `name` is one of the configured servers' tool names (`mcp__<server>__...`). */
  handles(name: string): boolean;
  /** Why `server` is unavailable, or undefined while it is connected. */
  unavailable(server: string): string | undefined;
  /** Closes every client and stops its server process. */
  close(): Promise<void>;
}

/** Prefix of every MCP tool name. */
export const MCP_PREFIX = "mcp__";

/** Longest tool name providers accept. */
const MAX_NAME_LENGTH = 64;

/** The registry name of `tool` of `server`: lowercase, `[a-z0-9_]` only. */
export function mcpToolName(server: string, tool: string): string {
  const clean = tool.toLowerCase().replace(/[^a-z0-9_]/g, "_");
  return `${MCP_PREFIX}${server}__${clean}`.slice(0, MAX_NAME_LENGTH);
}

/** The text of an MCP tool result: text blocks joined, other blocks described. */
function resultText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const parts = content.map((block: Record<string, unknown>) => {
    switch (block.type) {
      case "text":
        return String(block.text ?? "");
      case "resource": {
        const resource = block.resource as Record<string, unknown> | undefined;
        return typeof resource?.text === "string"
          ? resource.text
          : `[resource ${String(resource?.uri ?? "")}]`;
      }
      case "resource_link":
        return `[resource ${String(block.uri ?? "")}]`;
      default:
        return `[${String(block.type)} content${
          typeof block.mimeType === "string" ? ` (${block.mimeType})` : ""
        } omitted]`;
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) {
    return JSON.stringify(result.structuredContent);
  }
  if (parts.length === 0 && "toolResult" in result) return JSON.stringify(result.toolResult);
  return parts.join("\n");
}

interface Connection {
  readonly server: string;
  client?: Client;
  transport?: StdioClientTransport;
  /** Why it cannot be used; undefined while connected. */
  down?: string;
  /** Last lines the server wrote on stderr, for the warning when it dies. */
  stderr: string[];
  /** The first error the transport reported (a message over the SDK's 10 MiB cap, bad JSON). */
  failed?: string;
}

interface Route {
  readonly connection: Connection;
  /** The tool's own name on its server. */
  readonly tool: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Starts every server in `servers` (name → command) and lists its tools. Never throws for a
 * server that cannot start: it is reported and left unavailable.
 */
export async function connectMcpServers(
  servers: Readonly<Record<string, McpServerConfig>>,
  options: McpSourcesOptions = {},
): Promise<McpSources> {
  const {
    onWarning = () => {},
    cwd,
    clientInfo = { name: "rousseau", version: "0.0.0" },
    startTimeoutMs = 30_000,
    timeoutMs = 600_000,
  } = options;
  const entries = Object.entries(servers);
  const connections = new Map<string, Connection>();
  const routes = new Map<string, Route>();
  const tools: AnyTool[] = [];
  let closing = false;
  if (entries.length > 0) {
    // Loaded only when a server is configured (start-up cost of every other command).
    const [{ Client }, { StdioClientTransport }] = await Promise.all([
      import("@modelcontextprotocol/sdk/client/index.js"),
      import("@modelcontextprotocol/sdk/client/stdio.js"),
    ]);
    const markDown = (connection: Connection, reason: string) => {
      if (connection.down !== undefined || closing) return;
      connection.down = reason;
      // One line: a server's stderr must not make lines of its own on rousseau's stderr.
      const tail = connection.stderr.map((line) => line.trim()).join(" | ");
      onWarning(
        `mcp: server ${JSON.stringify(connection.server)} is unavailable: ${reason}` +
          (tail === "" ? "" : ` (stderr: ${tail})`),
        { server: connection.server, reason },
      );
    };
    const start = async ([server, config]: [string, McpServerConfig]) => {
      const connection: Connection = { server, stderr: [] };
      connections.set(server, connection);
      try {
        const transport = new StdioClientTransport({
          command: config.command,
          args: [...config.args ?? []],
          // The SDK adds its minimal default environment (HOME, LOGNAME, PATH, SHELL, TERM,
          // USER): API keys and tokens of this process do not reach the server.
          ...(config.env === undefined ? {} : { env: { ...config.env } }),
          ...(cwd === undefined ? {} : { cwd }),
          // Piped, so a server's chatter does not land in a terminal session or an MCP stream.
          stderr: "pipe",
        });
        connection.transport = transport;
        transport.stderr?.on("data", (chunk: Uint8Array | string) => {
          const text = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
          connection.stderr.push(...text.split("\n").filter((line) => line.trim() !== ""));
          connection.stderr.splice(0, Math.max(0, connection.stderr.length - 5));
        });
        const client = new Client({ ...clientInfo }, { capabilities: {} });
        connection.client = client;
        await client.connect(transport, { timeout: startTimeoutMs });
        // A broken line (a message over the SDK's 10 MiB cap) makes the transport close the
        // server: the reason says so, not that the server exited on its own.
        client.onclose = () =>
          markDown(
            connection,
            connection.failed === undefined
              ? "the server exited"
              : `the connection was closed: ${connection.failed}`,
          );
        client.onerror = (error: Error) => {
          connection.failed ??= message(error);
        };
        const listed: { name: string; description?: string; inputSchema: unknown }[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
            timeout: startTimeoutMs,
          });
          listed.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        return { connection, listed };
      } catch (error) {
        markDown(connection, `cannot start ${JSON.stringify(config.command)}: ${message(error)}`);
        await connection.transport?.close().catch(() => {});
        return { connection, listed: [] };
      }
    };
    // In configuration order, so a name clash is resolved the same way on every run.
    for (const { connection, listed } of await Promise.all(entries.map(start))) {
      for (const tool of listed) {
        const name = mcpToolName(connection.server, tool.name);
        if (routes.has(name)) {
          onWarning(
            `mcp: server ${JSON.stringify(connection.server)}: tool ${
              JSON.stringify(tool.name)
            } is skipped: its name ${JSON.stringify(name)} is already taken`,
            { server: connection.server, tool: tool.name },
          );
          continue;
        }
        routes.set(name, { connection, tool: tool.name });
        const schema = (tool.inputSchema ?? {}) as Record<string, unknown>;
        const annotations = (tool as { annotations?: { readOnlyHint?: boolean } }).annotations;
        tools.push(defineTool({
          name,
          description: tool.description ??
            `Tool ${JSON.stringify(tool.name)} of the MCP server ${
              JSON.stringify(connection.server)
            }.`,
          inputSchema: {
            ...schema,
            type: "object",
            properties: schema.properties ?? {},
          } as JsonSchemaObject,
          readOnly: annotations?.readOnlyHint === true,
          parseInput: (raw: unknown) => raw,
          execute: () => Promise.reject(new Error(`${name}: runs on its MCP server`)),
        }));
      }
    }
  }

  const call = async (name: string, input: unknown, signal: AbortSignal): Promise<ToolResult> => {
    const server = name.slice(MCP_PREFIX.length).split("__")[0] ?? "";
    const connection = routes.get(name)?.connection ?? connections.get(server);
    if (connection === undefined || !name.startsWith(MCP_PREFIX)) {
      return { output: `unknown tool: ${name}`, isError: true };
    }
    const unavailable = () => ({
      output: `${name}: MCP server ${JSON.stringify(connection.server)} is unavailable: ${
        connection.down ?? "it was closed"
      }`,
      isError: true,
    });
    const route = routes.get(name);
    if (connection.down !== undefined || connection.client === undefined || closing) {
      return unavailable();
    }
    if (route === undefined) return { output: `unknown tool: ${name}`, isError: true };
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return { output: `${name}: parse input: want a JSON object`, isError: true };
    }
    if (signal.aborted) return { output: `${name}: cancelled`, isError: true };
    try {
      const result = await connection.client.callTool(
        { name: route.tool, arguments: input as Record<string, unknown> },
        undefined,
        { signal, timeout: timeoutMs },
      );
      return { output: resultText(result), isError: result.isError === true };
    } catch (error) {
      if (signal.aborted) return { output: `${name}: cancelled`, isError: true };
      if (connection.down !== undefined || closing) return unavailable();
      return { output: `${name}: ${message(error)}`, isError: true };
    }
  };

  const close = async () => {
    if (closing) return;
    closing = true;
    await Promise.all(
      [...connections.values()].map((c) =>
        (c.client?.close() ?? c.transport?.close() ?? Promise.resolve()).catch(() => {})
      ),
    );
  };

  return {
    tools,
    call,
    handles: (name) =>
      routes.has(name) ||
      (name.startsWith(MCP_PREFIX) &&
        connections.has(name.slice(MCP_PREFIX.length).split("__")[0] ?? "")),
    unavailable: (server) => connections.get(server)?.down,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A registry and a host as the gate takes them. */
export interface ToolSource {
  readonly registry: Registry;
  readonly host: ToolHost;
}

/**
 * One registry and one host over the worker's tools and the MCP tools: `mcp__*` calls go to
 * their server, everything else to `base`. An MCP tool whose name the worker already offers
 * is skipped (reported through `onWarning`).
 */
export function joinMcpSources(
  base: ToolSource,
  mcp: McpSources,
  onWarning: (message: string, fields: Record<string, unknown>) => void = () => {},
): ToolSource {
  const own = base.registry.names().map((name) => base.registry.get(name)!);
  const extra = mcp.tools.filter((tool) => {
    if (!base.registry.has(tool.name)) return true;
    onWarning(`mcp: tool ${JSON.stringify(tool.name)} is skipped: a built-in tool has that name`, {
      tool: tool.name,
    });
    return false;
  });
  return {
    registry: new Registry([...own, ...extra]),
    host: {
      call: (name, input, signal, scope) =>
        mcp.handles(name) && !base.registry.has(name)
          ? mcp.call(name, input, signal)
          : base.host.call(name, input, signal, scope),
    },
  };
}
