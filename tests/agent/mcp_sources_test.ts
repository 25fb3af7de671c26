/**
 * MCP servers as tool sources: a real echo server started over stdio by the official SDK
 * client, a command that does not exist, and a server that dies mid-session.
 */

import {
  connectMcpServers,
  joinMcpSources,
  type McpServerConfig,
  mcpToolName,
} from "../../agent/mcp_sources.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  DEFAULT_LIMITS,
  Registry,
} from "../../tools/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { REPO } from "../_helpers/cli.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const ECHO: McpServerConfig = {
  command: Deno.execPath(),
  args: [
    "run",
    "--quiet",
    "--config",
    `${REPO}deno.json`,
    `${REPO}tests/testdata/mcp_echo_server.ts`,
  ],
};

const signal = new AbortController().signal;

function collector() {
  const warnings: string[] = [];
  return { warnings, onWarning: (message: string) => void warnings.push(message) };
}

Deno.test("mcpToolName() lowercases and replaces characters outside [a-z0-9_]", async (t) => {
  for (
    const [server, tool, want] of [
      ["echo", "echo", "mcp__echo__echo"],
      ["echo", "Shout-Loud", "mcp__echo__shout_loud"],
      ["gh", "search.code v2", "mcp__gh__search_code_v2"],
    ] as const
  ) {
    await t.step(`${server} ${tool}`, () => assertEquals(mcpToolName(server, tool), want));
  }
});

Deno.test("connectMcpServers() offers a server's tools as mcp__<server>__<tool>", async () => {
  await using sources = await connectMcpServers({ echo: ECHO });
  assertEquals(sources.tools.map((tool) => tool.name), [
    "mcp__echo__echo",
    "mcp__echo__fail",
    "mcp__echo__shout_loud",
    "mcp__echo__exit",
  ]);
  const echo = sources.tools[0]!;
  assertEquals(echo.description, "Return the text unchanged.");
  assertEquals(echo.readOnly, true);
  assertEquals(echo.inputSchema.required, ["text"]);
  assertEquals(sources.unavailable("echo"), undefined);
});

Deno.test("connectMcpServers() host runs a call and maps isError", async () => {
  await using sources = await connectMcpServers({ echo: ECHO });
  assertEquals(await sources.call("mcp__echo__echo", { text: "hi there" }, signal), {
    output: "hi there",
    isError: false,
  });
  assertEquals(await sources.call("mcp__echo__shout_loud", { text: "hi" }, signal), {
    output: "HI",
    isError: false,
  });
  assertEquals(await sources.call("mcp__echo__fail", {}, signal), {
    output: "fail: this tool always fails",
    isError: true,
  });
  assertEquals(await sources.call("mcp__echo__echo", "not an object", signal), {
    output: "mcp__echo__echo: parse input: want a JSON object",
    isError: true,
  });
});

Deno.test("connectMcpServers() reports a server that cannot start; the others work", async () => {
  const { warnings, onWarning } = collector();
  await using sources = await connectMcpServers({
    broken: { command: "/nonexistent/mcp-server-for-tests" },
    echo: ECHO,
  }, { onWarning });
  assertEquals(sources.tools.every((tool) => tool.name.startsWith("mcp__echo__")), true);
  const reason = sources.unavailable("broken");
  assert(reason !== undefined);
  assertStringIncludes(reason, 'cannot start "/nonexistent/mcp-server-for-tests": ');
  assertEquals(warnings.length, 1);
  assertStringIncludes(warnings[0]!, 'mcp: server "broken" is unavailable: cannot start');
  assertEquals(await sources.call("mcp__broken__anything", {}, signal), {
    output: `mcp__broken__anything: MCP server "broken" is unavailable: ${reason}`,
    isError: true,
  });
  assertEquals((await sources.call("mcp__echo__echo", { text: "ok" }, signal)).output, "ok");
});

Deno.test("connectMcpServers() marks a server that dies mid-session unavailable", async () => {
  const { warnings, onWarning } = collector();
  await using sources = await connectMcpServers({ echo: ECHO }, { onWarning });
  const died = await sources.call("mcp__echo__exit", {}, signal);
  assertEquals(died, {
    output: 'mcp__echo__exit: MCP server "echo" is unavailable: the server exited',
    isError: true,
  });
  assertEquals(await sources.call("mcp__echo__echo", { text: "x" }, signal), {
    output: 'mcp__echo__echo: MCP server "echo" is unavailable: the server exited',
    isError: true,
  });
  assertEquals(sources.unavailable("echo"), "the server exited");
  assertEquals(warnings.length, 1);
  assertStringIncludes(warnings[0]!, 'mcp: server "echo" is unavailable: the server exited');
});

Deno.test("joinMcpSources() gives the gate one registry and one routing host", async () => {
  await using ws = await tmpWorkspace();
  const registry = new Registry(createBuiltinTools());
  const host = createInProcessHost(registry, {
    workspace: ws.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
  });
  await using sources = await connectMcpServers({ echo: ECHO });
  const joined = joinMcpSources({ registry, host }, sources);
  assertEquals(joined.registry.names(), [
    "bash",
    "edit",
    "grep",
    "mcp__echo__echo",
    "mcp__echo__exit",
    "mcp__echo__fail",
    "mcp__echo__shout_loud",
    "read",
    "write",
  ]);
  assertEquals(
    await joined.host.call("mcp__echo__echo", { text: "routed" }, signal),
    { output: "routed", isError: false },
  );
  const missing = ws.path("missing.txt");
  assertEquals(await joined.host.call("read", { path: missing }, signal), {
    output: `read: open ${missing}: no such file or directory`,
    isError: true,
  });
});
