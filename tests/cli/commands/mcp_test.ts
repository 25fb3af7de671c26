/**
 * `rousseau mcp` end to end: the real CLI process driven by the official SDK's `Client` over
 * `StdioClientTransport` (which fails on anything but protocol on stdout), in real temp
 * workspaces; and MCP servers as tool sources for `run` and `tools`.
 */

import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { REPO, runCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { survivors, waitForProcess } from "../../_helpers/processes.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { type Served, serveMcp } from "../../_helpers/mcp_client.ts";

/** A listed tool (the SDK's inferred types do not survive its zod compatibility layer here). */
interface Listed {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: unknown;
}

async function listTools(served: Served): Promise<Listed[]> {
  return (await served.client.listTools()).tools as Listed[];
}

interface Called {
  readonly text: string;
  readonly isError: boolean;
}

async function call(
  served: Served,
  name: string,
  args?: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Called> {
  const result = await served.client.callTool(
    args === undefined ? { name } : { name, arguments: args },
    undefined,
    signal === undefined ? {} : { signal },
  );
  const content = result.content as { type: string; text: string }[];
  assertEquals(content.length, 1);
  assertEquals(content[0]!.type, "text");
  return { text: content[0]!.text, isError: result.isError === true };
}

/** `rousseau tool NAME JSON --json` in `ws`: the reference output for a call. */
async function toolOutput(ws: string, name: string, input: unknown, args: string[] = []) {
  const run = await runCli([
    "--workspace",
    ws,
    ...args,
    "tool",
    name,
    JSON.stringify(input),
    "--json",
  ]);
  const parsed = JSON.parse(run.stdout);
  return { text: parsed.output as string, isError: parsed.is_error as boolean };
}

Deno.test("mcp lists the five tools with the schemas `tools --json` prints", async () => {
  await using ws = await tmpWorkspace();
  await using served = await serveMcp(ws.root);
  const listed = { tools: await listTools(served) };
  const reference = JSON.parse((await runCli(["tools", "--json"])).stdout) as {
    name: string;
    description: string;
    "input_schema": unknown;
  }[];
  assertEquals(listed.tools.map((t) => t.name), ["bash", "edit", "grep", "read", "write"]);
  assertEquals(
    listed.tools.map((t) => ({ name: t.name, description: t.description, schema: t.inputSchema })),
    reference.map((d) => ({ name: d.name, description: d.description, schema: d.input_schema })),
  );
  assertEquals(await served.close(), 0);
  assertStringIncludes(served.stderr(), `rousseau: approver=pattern · confinement=${ws.root} · `);
});

Deno.test("mcp runs each tool under allow_all, with the outputs `tool` gives", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\nbeta\n" } });
  await using served = await serveMcp(ws.root, ["--approver", "allow_all"]);
  const a = ws.path("a.txt");
  for (
    const [name, input] of [
      ["read", { path: a }],
      ["grep", { pattern: "bet", path: ws.root }],
      ["bash", { command: "printf 'hi\\n'; cat a.txt" }],
    ] as const
  ) {
    const got = await call(served, name, input);
    assertEquals(got, await toolOutput(ws.root, name, input), name);
    assertEquals(got.isError, false, name);
  }
  const written = await call(served, "write", { path: ws.path("b.txt"), content: "new\n" });
  assertEquals(written.isError, false, written.text);
  assertEquals(await Deno.readTextFile(ws.path("b.txt")), "new\n");
  const edited = await call(served, "edit", {
    path: a,
    "old_string": "beta",
    "new_string": "gamma",
  });
  assertEquals(edited.isError, false, edited.text);
  assertEquals(await Deno.readTextFile(a), "alpha\ngamma\n");
  assertEquals(await served.close(), 0);
});

Deno.test("mcp returns a tool error as an isError result with the tool's text", async () => {
  await using ws = await tmpWorkspace();
  await using served = await serveMcp(ws.root);
  const input = { path: ws.path("missing.txt") };
  const got = await call(served, "read", input);
  assertEquals(got, { text: `read: open ${input.path}: no such file or directory`, isError: true });
  assertEquals(got, await toolOutput(ws.root, "read", input));
  const bad = await call(served, "read");
  assertEquals(bad.isError, true);
  assertStringIncludes(bad.text, "read: ");
  assertEquals(await served.close(), 0);
});

Deno.test("mcp denies write under the default policy and unknown tools, as results", async () => {
  await using ws = await tmpWorkspace();
  await using served = await serveMcp(ws.root);
  const denied = await call(served, "write", { path: ws.path("x.txt"), content: "x" });
  assertEquals(denied.isError, true);
  assert(denied.text.startsWith("tool call blocked: "), denied.text);
  assertEquals(await Deno.stat(ws.path("x.txt")).then(() => true, () => false), false);
  assertEquals(await call(served, "nope", {}), { text: "unknown tool: nope", isError: true });
  assertEquals(await served.close(), 0);
});

Deno.test("mcp cancels a running bash call on notifications/cancelled", async () => {
  await using ws = await tmpWorkspace();
  await using served = await serveMcp(ws.root, ["--allow", "bash"]);
  const marker = `mcp-cancel-${crypto.randomUUID()}`;
  const controller = new AbortController();
  const running = call(served, "bash", { command: `sleep 60 # ${marker}` }, controller.signal)
    .then(() => "finished", () => "rejected");
  await waitForProcess(marker);
  controller.abort();
  assertEquals(await running, "rejected");
  assertEquals(await survivors(marker), 0);
  // The server is still serving.
  assertEquals((await call(served, "bash", { command: "echo still here" })).text, "still here\n");
  assertEquals(await served.close(), 0);
});

Deno.test("mcp answers 1,000 read calls, 8 in flight, then exits 0 on close", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++) files[`f${i}.txt`] = `file ${i}\n`.repeat(i + 1);
  await using ws = await tmpWorkspace({ files });
  await using served = await serveMcp(ws.root);
  let next = 0;
  let wrong = 0;
  const worker = async () => {
    while (next < 1000) {
      const i = next++ % 10;
      const got = await call(served, "read", { path: ws.path(`f${i}.txt`) });
      if (got.isError || got.text !== files[`f${i}.txt`]) wrong++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  assertEquals(next, 1000);
  assertEquals(wrong, 0);
  assertEquals(await served.close(), 0);
});

// MCP servers as tool sources.

const ECHO_ARGS = [
  "run",
  "--quiet",
  "--config",
  `${REPO}deno.json`,
  `${REPO}tests/testdata/mcp_echo_server.ts`,
];

async function echoConfig(dir: string, approver = ""): Promise<string> {
  const path = join(dir, "config.yaml");
  await Deno.writeTextFile(
    path,
    `mcp_servers:
  echo:
    command: ${JSON.stringify(Deno.execPath())}
    args: ${JSON.stringify(ECHO_ARGS)}
${approver}`,
  );
  return path;
}

Deno.test("run calls an MCP server's tool allowed by the policy", async () => {
  await using ws = await tmpWorkspace();
  const config = await echoConfig(
    ws.outside,
    `agent:
  approver:
    mode: pattern
    allow: [{ tool: mcp__echo__echo }]
    default: deny
`,
  );
  await using server = startFakeAnthropic([
    { tools: [{ name: "mcp__echo__echo", input: { text: "hello from mcp" } }] },
    { text: "Echoed." },
  ]);
  const out = await runCli(
    ["--config", config, "--workspace", ws.root, "run", "--output", "json", "echo it"],
    { env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" } },
  );
  assertEquals(out.code, 0, out.stderr);
  const offered = server.requests[0]!.body.tools.map((t: { name: string }) => t.name);
  assert(offered.includes("mcp__echo__echo"), JSON.stringify(offered));
  const results = server.requests[1]!.body.messages.flatMap((m: { content: unknown }) =>
    Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_result") : []
  );
  assertEquals(results.length, 1);
  assertEquals(String(results[0].content), "hello from mcp");
  assertEquals(results[0].is_error === true, false);
  assertEquals(JSON.parse(out.stdout).result, "Echoed.");
});

Deno.test("tools lists an MCP server's tools sorted with the built-ins", async () => {
  await using ws = await tmpWorkspace();
  const config = await echoConfig(ws.outside);
  const out = await runCli(["--config", config, "--workspace", ws.root, "tools", "--json"]);
  assertEquals(out.code, 0, out.stderr);
  const definitions = JSON.parse(out.stdout) as { name: string; "input_schema": unknown }[];
  assertEquals(definitions.map((d) => d.name), [
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
  assertEquals(definitions[3]!.input_schema, {
    type: "object",
    properties: { text: { type: "string", description: "Text to send back." } },
    required: ["text"],
  });
});

Deno.test("mcp serves an MCP server's tools too, through the approver", async () => {
  await using ws = await tmpWorkspace();
  const config = await echoConfig(ws.outside);
  await using served = await serveMcp(ws.root, ["--config", config, "--allow", "mcp__echo__echo"]);
  const names = (await listTools(served)).map((t) => t.name);
  assert(names.includes("mcp__echo__shout_loud"), JSON.stringify(names));
  assertEquals(await call(served, "mcp__echo__echo", { text: "relayed" }), {
    text: "relayed",
    isError: false,
  });
  const denied = await call(served, "mcp__echo__shout_loud", { text: "no" });
  assert(denied.text.startsWith("tool call blocked: "), denied.text);
  assertEquals(await served.close(), 0);
});

Deno.test("a config with a bad MCP server name stops start-up naming the key", async () => {
  await using ws = await tmpWorkspace();
  const path = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(path, "mcp_servers:\n  Bad-Name:\n    command: x\n");
  const out = await runCli(["--config", path, "--workspace", ws.root, "tools"]);
  assertEquals(out.code, 2);
  assertStringIncludes(
    out.stderr,
    `${path}: mcp_servers.Bad-Name: invalid server name: want ^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$, ` +
      "at most 32 characters (it becomes part of tool names: mcp__<server>__<tool>)",
  );
  await Deno.writeTextFile(path, "mcp_servers:\n  ok:\n    command: x\n    argz: []\n");
  const typo = await runCli(["--config", path, "--workspace", ws.root, "tools"]);
  assertEquals(typo.code, 2);
  assertStringIncludes(typo.stderr, 'mcp_servers.ok.argz: unknown key (did you mean "args"?)');
});
