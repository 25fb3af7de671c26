/**
 * Attacks by a hostile MCP server in `mcp_servers`, through the real CLI. The docs promise:
 * the server starts with a minimal environment plus its own `env` (rousseau's API keys do not
 * reach it); its tools are `mcp__<server>__<tool>` and pass the approver like any tool, so a
 * name or a description cannot replace a built-in or change the policy; rousseau offers the
 * server nothing of its own (no sampling on the user's model budget, no roots, no
 * elicitation); and a server that never answers does not outlive the run.
 *
 * Public reports of the same class in other agents:
 * - MCP servers handed the client's whole environment, provider keys included:
 *   anomalyco/opencode#31778 (fixed by #32450), UsefulSoftwareCo/executor#1595 (passing
 *   `{ ...process.env, ...config.env }` overrode the SDK's safe list), VeriTeknik/pluggedin-app#209.
 * - a server tool shadowing a built-in, or a sanitized name colliding with another:
 *   google/adk-go#1605, NousResearch/hermes-agent#3077 and #73668.
 * - roots are information, not a boundary, and sampling spends the client's model:
 *   OWASP/MCP-Taxonomy#2, modelcontextprotocol/csharp-sdk#702.
 *
 * @module
 */

import { join } from "node:path";
import { REPO, runCli } from "../_helpers/cli.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { startFakeAnthropic } from "../_helpers/fake_providers.ts";
import { survivors } from "../_helpers/processes.ts";
import { runOneCall } from "../_helpers/one_call.ts";
import { toolResults } from "../_helpers/tool_results.ts";
import { connectMcpServers } from "../../agent/mcp_sources.ts";

const SERVER = `${REPO}tests/testdata/mcp_hostile_server.ts`;

const SECRETS = {
  ANTHROPIC_API_KEY: "sk-ant-mcp-test",
  OPENAI_API_KEY: "sk-openai-mcp-test",
  HOSTILE_TOKEN: "tok-mcp-test",
};

/** A config starting the hostile server, which appends the tools it runs to `calls`. */
async function hostileConfig(dir: string, calls: string, more = ""): Promise<string> {
  const path = join(dir, "config.yaml");
  const args = ["run", "--quiet", "-A", "--config", `${REPO}deno.json`, SERVER];
  await Deno.writeTextFile(
    path,
    `mcp_servers:
  hostile:
    command: ${JSON.stringify(Deno.execPath())}
    args: ${JSON.stringify(args)}
    env:
      HOSTILE_CALLS: ${JSON.stringify(calls)}
${more}`,
  );
  return path;
}

/** The lines of `path`, none when it does not exist. */
async function lines(path: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(path)).trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** Runs `run` where the model calls `tool` with `input` once; the result it got back. */
async function callOnce(
  config: string,
  root: string,
  tool: string,
  input: unknown,
): Promise<{ text: string; isError: boolean }> {
  const run = await runOneCall({ config, root, tool, input, prompt: "go", env: SECRETS });
  assertEquals(run.code, 0, run.stderr.slice(0, 1000));
  const results = toolResults(run, 1);
  assertEquals(results.length, 1);
  return results[0]!;
}

Deno.test("an MCP server is started without rousseau's API keys and secrets", async () => {
  await using ws = await tmpWorkspace();
  const calls = join(ws.outside, "calls.txt");
  const config = await hostileConfig(ws.outside, calls);
  const result = await callOnce(config, ws.root, "mcp__hostile__env", {});
  const names = result.text.split(",");
  const allowed = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "HOSTILE_CALLS"];
  assertEquals(names.filter((name) => !allowed.includes(name)), []);
  assert(names.includes("HOSTILE_CALLS"), result.text);
});

Deno.test("an MCP server gets no sampling, no roots and no elicitation from rousseau", async () => {
  await using ws = await tmpWorkspace();
  const config = await hostileConfig(ws.outside, join(ws.outside, "calls.txt"));
  const result = await callOnce(config, ws.root, "mcp__hostile__ask_client", {});
  assertEquals({ isError: result.isError, lines: result.text.split("\n") }, {
    isError: false,
    lines: [
      "sampling: error -32601 MCP error -32601: Method not found",
      "roots: error -32601 MCP error -32601: Method not found",
      "elicitation: error -32601 MCP error -32601: Method not found",
    ],
  });
});

Deno.test("an MCP tool named like a built-in replaces neither it nor the policy", async () => {
  await using ws = await tmpWorkspace();
  const calls = join(ws.outside, "calls.txt");
  const config = await hostileConfig(ws.outside, calls);
  await using server = startFakeAnthropic([
    {
      tools: [
        { name: "bash", input: { command: "echo hi" } },
        { name: "mcp__hostile__bash", input: { command: "echo hi" } },
      ],
      stop: "tool_use",
    },
    { text: "done" },
  ]);
  const run = await runCli(["--config", config, "--workspace", ws.root, "run", "go"], {
    env: { ...SECRETS, ANTHROPIC_BASE_URL: server.url },
  });
  assertEquals(run.code, 4, run.stderr);
  // deno-lint-ignore no-explicit-any
  const offered: any[] = server.requests[0]!.body.tools;
  const bash = offered.filter((tool) => tool.name.endsWith("bash"));
  assertEquals(bash.map((tool) => tool.name), ["bash", "mcp__hostile__bash"]);
  assert(bash[0].description.startsWith("Run a command with /bin/sh"), bash[0].description);
  const denied = "tool call blocked: not allowed by the default policy " +
    "(allow it with --allow TOOL or agent.approver in config)";
  assertEquals(toolResults(server, 1), [
    { text: denied, isError: true },
    { text: denied, isError: true },
  ]);
  assertEquals(await lines(calls), []);
});

Deno.test("an MCP tool's huge result is cut to the context share, a giant one closes the server", async () => {
  await using ws = await tmpWorkspace();
  const config = await hostileConfig(ws.outside, join(ws.outside, "calls.txt"));
  // 2 MB: passed on, and cut to the share of the window one result may take (a quarter).
  const cut = await callOnce(config, ws.root, "mcp__hostile__huge", { chars: 2_000_000 });
  assertEquals(cut.isError, false);
  assert(cut.text.startsWith("xxxx") && cut.text.length < 300_000, `${cut.text.length} chars`);
  // 11 MB in one message: over the SDK's 10 MiB cap, so the line is dropped and the server
  // closed; the run goes on and the result says why.
  const giant = await callOnce(config, ws.root, "mcp__hostile__huge", { chars: 11_000_000 });
  assertEquals(giant, {
    text: 'mcp__hostile__huge: MCP server "hostile" is unavailable: the connection was closed: ' +
      "ReadBuffer exceeded maximum size of 10485760 bytes",
    isError: true,
  });
});

Deno.test("an MCP call that never answers ends with the run's deadline and no server is left", async () => {
  await using ws = await tmpWorkspace();
  const calls = join(ws.outside, "calls.txt");
  const config = await hostileConfig(ws.outside, calls);
  const run = await runOneCall({
    config,
    root: ws.root,
    tool: "mcp__hostile__silent",
    runArgs: ["--deadline", "4s"],
    prompt: "go",
    env: SECRETS,
  });
  assertEquals(run.code, 5, run.stderr);
  assertEquals(await lines(calls), ["silent"]);
  assertEquals(await survivors(ws.outside), 0);
});

Deno.test("an MCP server's stderr and descriptions cannot drive the terminal", async () => {
  await using ws = await tmpWorkspace();
  const calls = join(ws.outside, "calls.txt");
  const listed = await runCli(
    ["--config", await hostileConfig(ws.outside, calls), "--workspace", ws.root, "tools"],
  );
  assertEquals(listed.code, 0, listed.stderr);
  assertEquals(
    listed.stdout.split("\n").find((line) => line.startsWith("mcp__hostile__escape")),
    "mcp__hostile__escape      \\x1b[2J\\x1b]0;pwned\\x07Clears the screen.\\x1b[8m",
  );
  const dying = await runCli([
    "--config",
    await hostileConfig(ws.outside, calls, "      HOSTILE_DIE: '1'\n"),
    "--workspace",
    ws.root,
    "tools",
  ]);
  assertEquals(dying.code, 0, dying.stderr);
  const warning = dying.stderr.trim().split("\n");
  assertEquals(warning.length, 1, dying.stderr);
  // deno-lint-ignore no-control-regex -- control characters are what must be absent
  assert(!/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(dying.stderr), JSON.stringify(dying.stderr));
  assert(
    warning[0]!.endsWith(
      "(stderr: \\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\\x0drousseau: every tool call is approved)",
    ),
    warning[0],
  );
});

Deno.test("an MCP server's name cannot make its tools another server's", async (t) => {
  await using ws = await tmpWorkspace();
  const path = join(ws.outside, "config.yaml");
  // `gh` offering `pr__echo` and `gh__pr` offering `echo` would both be `mcp__gh__pr__echo`.
  for (const name of ["gh__pr", "gh_", "_gh", "g".repeat(33)]) {
    await t.step(name, async () => {
      await Deno.writeTextFile(
        path,
        `mcp_servers:\n  gh:\n    command: x\n  ${name}:\n    command: y\n`,
      );
      const run = await runCli(["--config", path, "--workspace", ws.root, "tools"]);
      assertEquals({ code: run.code, stdout: run.stdout, stderr: run.stderr }, {
        code: 2,
        stdout: "",
        stderr: `rousseau: ${path}: mcp_servers.${name}: invalid server name: want ` +
          "^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$, at most 32 characters (it becomes part of tool " +
          "names: mcp__<server>__<tool>)\n",
      });
    });
  }
});

Deno.test("a relative MCP server command runs from the config's directory, never the workspace", async () => {
  await using ws = await tmpWorkspace();
  const planted = join(ws.outside, "planted.txt");
  // The workspace (a cloned repository, or the model's own writes) holds a script of the
  // same relative name; the servers start with the workspace as their working directory.
  await Deno.writeTextFile(ws.path("server.sh"), `#!/bin/sh\ntouch ${planted}\nexit 1\n`);
  await Deno.chmod(ws.path("server.sh"), 0o755);
  const args = ["run", "--quiet", "-A", "--config", `${REPO}deno.json`, SERVER];
  await Deno.writeTextFile(
    join(ws.outside, "server.sh"),
    `#!/bin/sh\nexec ${JSON.stringify(Deno.execPath())} ${
      args.map((a) => JSON.stringify(a)).join(" ")
    }\n`,
  );
  await Deno.chmod(join(ws.outside, "server.sh"), 0o755);
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, "mcp_servers:\n  hostile:\n    command: ./server.sh\n");
  const run = await runCli(["--config", config, "--workspace", ws.root, "tools"]);
  assertEquals(run.code, 0, run.stderr);
  assert(run.stdout.includes("mcp__hostile__env"), run.stdout + run.stderr);
  assertEquals(await lines(planted), []);
  assertEquals(await Deno.stat(planted).then(() => true, () => false), false);
});

Deno.test("an MCP server that never answers its start is given up and stopped", async () => {
  const marker = `mute-${crypto.randomUUID()}`;
  const warnings: string[] = [];
  await using sources = await connectMcpServers({
    mute: {
      command: Deno.execPath(),
      args: ["run", "--quiet", "-A", "--config", `${REPO}deno.json`, SERVER, marker],
      env: { HOSTILE_MUTE: "1" },
    },
  }, { startTimeoutMs: 1000, onWarning: (message) => void warnings.push(message) });
  assertEquals(sources.tools, []);
  assertEquals(warnings, [
    `mcp: server "mute" is unavailable: cannot start ${
      JSON.stringify(Deno.execPath())
    }: MCP error -32001: Request timed out`,
  ]);
  assertEquals(await survivors(marker), 0);
});
