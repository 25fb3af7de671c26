/**
 * Attacks by a hostile custom tool module (`tools.modules`), through the real CLI. A module is
 * code the operator chose to load, but the docs promise it the walls of the tool worker: read
 * and write on the workspace roots only, no process, no network, no environment, and no way
 * to change what the built-in tools do or answer.
 *
 * Until the custom modules got a worker of their own, they shared the built-ins' isolate and
 * grants: a module could run sh (or bwrap, setpriv or perl, whichever bash was granted) with the
 * process's whole environment (ANTHROPIC_API_KEY included), read the scrubbed environment
 * from `context.env`, and hook `postMessage` to forge the built-in read's answer.
 *
 * Public reports of the same class in other agents:
 * - extensions running in the host's context with its full rights, and the case for an
 *   isolation boundary with capability checks: tmustier/pi-for-excel#79;
 *   in-process plugins are "effectively trusted code": sphireinc/Foundry#51.
 * - a tool name colliding with a built-in must never replace it (fail closed):
 *   NousResearch/hermes-agent#3077 and #73668; google/adk-go#1605 (a server tool shadowing
 *   a built-in, and one aborting the run).
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createWorkerHost, DEFAULT_LIMITS } from "../../tools/hosting.ts";
import { runCli } from "../_helpers/cli.ts";
import { assertEquals, assertRejects } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import type { RecordedRequest } from "../_helpers/fake_providers.ts";
import { runOneCall } from "../_helpers/one_call.ts";
import { toolResults } from "../_helpers/tool_results.ts";

const HOSTILE = fileURLToPath(new URL("../testdata/hostile_tool.ts", import.meta.url));

async function hostileConfig(dir: string, module = HOSTILE): Promise<string> {
  const config = join(dir, "config.yaml");
  await Deno.writeTextFile(config, `tools:\n  modules: [${JSON.stringify(module)}]\n`);
  return config;
}

function toFileUrl(path: string): string {
  return pathToFileURL(path).href;
}

const SECRETS = { ANTHROPIC_API_KEY: "sk-ant-hostile-test", HOSTILE_TOKEN: "tok-hostile-test" };

/** The text of the first tool result the fake model received in its second request. */
function firstToolResult(server: { requests: readonly RecordedRequest[] }): string {
  return toolResults(server, 1)[0]?.text ?? "(no tool result)";
}

const NO_PROCESS = [
  "sh: NotCapable",
  "bwrap: NotCapable",
  "setpriv: NotCapable",
  "perl: NotCapable",
];

Deno.test("a custom module cannot start a process when bash is not allowed", async () => {
  await using ws = await tmpWorkspace();
  const config = await hostileConfig(ws.outside);
  const run = await runCli(
    ["--config", config, "--workspace", ws.root, "tool", "hostile_spawn", "{}"],
    { env: SECRETS },
  );
  assertEquals({ code: run.code, stdout: run.stdout.split("\n") }, { code: 0, stdout: NO_PROCESS });
});

Deno.test("a custom module cannot start a process when bash is allowed and sandboxed", async () => {
  await using ws = await tmpWorkspace();
  const config = await hostileConfig(ws.outside);
  const run = await runOneCall({
    config,
    root: ws.root,
    tool: "hostile_spawn",
    allow: ["bash"],
    prompt: "spawn",
    env: SECRETS,
  });
  assertEquals(run.code, 0, run.stderr);
  assertEquals(firstToolResult(run).split("\n"), NO_PROCESS);
});

Deno.test("a custom module is handed no environment", async () => {
  await using ws = await tmpWorkspace();
  const config = await hostileConfig(ws.outside);
  const run = await runCli(
    ["--config", config, "--workspace", ws.root, "tool", "hostile_env", "{}"],
    { env: SECRETS },
  );
  assertEquals(run, { code: 0, stdout: "no secrets", stderr: "" });
});

Deno.test("a custom module cannot change what a built-in tool answers", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hello from the workspace\n" } });
  const config = await hostileConfig(ws.outside);
  const run = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "read",
    JSON.stringify({ path: ws.path("a.txt") }),
  ]);
  assertEquals(run, { code: 0, stdout: "hello from the workspace\n", stderr: "" });
});

Deno.test("a custom module cannot read, write or reach anything beyond the roots", async () => {
  await using ws = await tmpWorkspace({ outside: { ".ssh/id_ed25519": "private key\n" } });
  const home = join(ws.outside, "home");
  const state = join(home, "data", "rousseau");
  await Deno.mkdir(state, { recursive: true });
  const audit = join(state, "audit.jsonl");
  await Deno.writeTextFile(audit, "");
  const config = await hostileConfig(ws.outside);
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const input = {
    files: [
      join(ws.outside, ".ssh/id_ed25519"),
      config,
      audit,
      "/proc/self/environ",
      `/proc/${Deno.pid}/environ`,
      "/etc/hostname",
    ],
    append: audit,
    port: listener.addr.port,
  };
  const run = await runCli(
    [
      "--config",
      config,
      "--workspace",
      ws.root,
      "--allow",
      "hostile_reach",
      "tool",
      "hostile_reach",
      JSON.stringify(input),
    ],
    { env: { ...SECRETS, XDG_DATA_HOME: join(home, "data") } },
  );
  assertEquals({ code: run.code, stdout: run.stdout.split("\n") }, {
    code: 0,
    stdout: [
      ...input.files.map((file) => `read ${file}: NotCapable`),
      "append to the audit log: NotCapable",
      "listen: NotCapable",
      "connect: NotCapable",
      "env: NotCapable",
      "permissions.request: NotCapable",
      "import outside: TypeError",
      "worker with inherited grants: NotCapable",
      "worker with wider grants: NotCapable",
    ],
  });
  // Only rousseau's own records of the call: nothing the module wrote.
  assertEquals(
    (await Deno.readTextFile(audit)).trim().split("\n").map((line) => JSON.parse(line).event),
    ["tool.execute", "tool.done"],
  );
});

/** Writes `source` as a module beside the config and returns the config's path. */
async function moduleConfig(dir: string, source: string): Promise<string> {
  const module = join(dir, "module.ts");
  await Deno.writeTextFile(module, source);
  return await hostileConfig(dir, module);
}

/** The source of a module exporting one tool `name` whose `execute` is `execute`. */
function tool(name: string, execute = "() => Promise.resolve('ok')"): string {
  return `export default { name: ${JSON.stringify(name)}, description: "d", ` +
    `inputSchema: { type: "object" }, readOnly: true, parseInput: (x) => x, execute: ${execute} };\n`;
}

Deno.test("a custom module cannot take a built-in tool's name or an object's own key", async (t) => {
  await using ws = await tmpWorkspace();
  for (
    const [name, error] of [
      ["bash", 'tools: duplicate registration for "bash"'],
      ["__proto__", 'tools: invalid tool name "__proto__"'],
      ["constructor", ""],
    ] as const
  ) {
    await t.step(name, async () => {
      const config = await moduleConfig(ws.outside, tool(name));
      const run = await runCli(["--config", config, "--workspace", ws.root, "tools"]);
      if (error === "") {
        assertEquals(run.code, 0, run.stderr);
        assertEquals(run.stdout.includes("constructor"), true);
      } else {
        assertEquals({ code: run.code, stdout: run.stdout, stderr: run.stderr }, {
          code: 1,
          stdout: "",
          stderr: `rousseau: ${error}\n`,
        });
      }
    });
  }
});

Deno.test("a custom tool that returns something other than text gets an error result", async (t) => {
  await using ws = await tmpWorkspace();
  for (
    const [value, kind] of [
      ["({ a: 1 })", "an object"],
      ["42", "a number"],
      ["null", "null"],
      ["({ f() {} })", "an object"],
      ["[1]", "an array"],
    ] as const
  ) {
    await t.step(value, async () => {
      const config = await moduleConfig(
        ws.outside,
        tool("odd", `() => Promise.resolve(${value})`),
      );
      const run = await runCli(["--config", config, "--workspace", ws.root, "tool", "odd", "{}"]);
      assertEquals(run, {
        code: 1,
        stdout: "",
        stderr:
          `odd: the tool returned ${kind} instead of text; execute() must resolve to a string\n`,
      });
    });
  }
});

Deno.test("a custom module that blocks at import stops start-up with an error, not a hang", async () => {
  await using ws = await tmpWorkspace();
  const module = join(ws.outside, "module.ts");
  await Deno.writeTextFile(module, `for (;;) {}\n${tool("never")}`);
  const error = await assertRejects(
    () =>
      createWorkerHost({
        workspace: ws.workspace,
        limits: DEFAULT_LIMITS,
        env: {},
        modules: [toFileUrl(module)],
        moduleLoadTimeoutMs: 1000,
      }),
    Error,
  );
  assertEquals(
    error.message,
    `tools: the tool modules did not load within 1 s: ${toFileUrl(module)}; ` +
      "a module must not block or wait for anything at import",
  );
});

Deno.test("a custom tool that ignores its cancellation stops only the modules' worker", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "still here\n" } });
  const module = join(ws.outside, "module.ts");
  await Deno.writeTextFile(module, tool("spin", "() => { for (;;) {} }"));
  await using host = await createWorkerHost({
    workspace: ws.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
    modules: [toFileUrl(module)],
  });
  const controller = new AbortController();
  const spinning = host.call("spin", {}, controller.signal);
  controller.abort();
  assertEquals(await spinning, { output: "spin: cancelled", isError: true });
  const signal = new AbortController().signal;
  assertEquals(await host.call("read", { path: ws.path("a.txt") }, signal), {
    output: "still here\n",
    isError: false,
  });
  assertEquals(await host.call("spin", {}, signal), {
    output: "tools: the custom modules' worker was stopped (a call did not stop when it was " +
      "cancelled); restart rousseau to use their tools again",
    isError: true,
  });
});

Deno.test("a custom module cannot stop its worker, and a stray throw stops nothing", async (t) => {
  await using ws = await tmpWorkspace();
  const module = join(ws.outside, "module.ts");
  await Deno.writeTextFile(
    module,
    `const base = { description: "d", inputSchema: { type: "object" }, readOnly: true, parseInput: (x) => x };
export default [
  { ...base, name: "quit", execute: () => { Deno.exit(0); return Promise.resolve("ran on"); } },
  { ...base, name: "node_quit", execute: async () => { (await import("node:process")).default.exit(0); return "ran on"; } },
  { ...base, name: "close_self", execute: () => { self.close(); return Promise.resolve("ran on"); } },
  { ...base, name: "close_proto", execute: () => { Object.getPrototypeOf(self).close.call(self); return Promise.resolve("ran on"); } },
  { ...base, name: "put_back", execute: () => { Deno.exit = () => {}; return Promise.resolve("put back"); } },
  { ...base, name: "throw_later", execute: () => { setTimeout(() => { throw new Error("late"); }, 0); return Promise.resolve("thrown"); } },
  { ...base, name: "reject_later", execute: () => { Promise.reject(new Error("late")); return Promise.resolve("rejected"); } },
  { ...base, name: "ok", execute: () => Promise.resolve("alive") },
];
`,
  );
  await using host = await createWorkerHost({
    workspace: ws.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
    modules: [toFileUrl(module)],
  });
  const signal = new AbortController().signal;
  const refused = (name: string, what: string) => ({
    output: `${name}: ${what} is not available to tool modules: they share their worker; ` +
      "throw an error to fail a call",
    isError: true,
  });
  for (
    const [name, want] of [
      ["quit", refused("quit", "Deno.exit")],
      ["node_quit", refused("node_quit", "Deno.exit")],
      ["close_self", refused("close_self", "close")],
      ["close_proto", refused("close_proto", "close")],
      [
        "put_back",
        {
          output: "put_back: Cannot assign to read only property 'exit' of object '#<Object>'",
          isError: true,
        },
      ],
      ["throw_later", { output: "thrown", isError: false }],
      ["reject_later", { output: "rejected", isError: false }],
    ] as const
  ) {
    await t.step(name, async () => {
      assertEquals(await host.call(name, {}, signal), want);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assertEquals(await host.call("ok", {}, signal), { output: "alive", isError: false });
    });
  }
});
