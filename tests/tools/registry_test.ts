import {
  createBuiltinTools,
  createReadTool,
  DEFAULT_LIMITS,
  defineTool,
  Registry,
  runTool,
  type Tool,
  ToolError,
} from "../../mod.ts";
import { assert, assertEquals, assertThrows } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

function fakeTool(name: string, readOnly = true): Tool<unknown> {
  return defineTool({
    name,
    description: `the ${name} tool`,
    inputSchema: { type: "object", properties: {} },
    readOnly,
    parseInput: (raw) => raw,
    execute: () => Promise.resolve(name),
  });
}

Deno.test("Registry.register() throws on a duplicate name and keeps the first", () => {
  const first = fakeTool("alpha");
  const registry = new Registry([first]);
  const error = assertThrows(() => registry.register(fakeTool("alpha")));
  assertEquals(error.message, 'tools: duplicate registration for "alpha"');
  assert(registry.get("alpha") === first);
});

Deno.test("Registry.register() rejects names outside ^[a-z][a-z0-9_]*$", async (t) => {
  for (const name of ["", "Read", "1tool", "_x", "a-b", "a b", "ä", "tool.x"]) {
    await t.step(JSON.stringify(name), () => {
      const registry = new Registry();
      const error = assertThrows(() => registry.register(fakeTool(name)));
      assertEquals(error.message, `tools: invalid tool name ${JSON.stringify(name)}`);
      assertEquals(registry.names(), []);
    });
  }
  for (const name of ["a", "z9", "mcp__srv__x", "word_count"]) {
    await t.step(`accepts ${name}`, () => {
      assertEquals(new Registry([fakeTool(name)]).names(), [name]);
    });
  }
});

Deno.test("Registry.get() is exact and case-sensitive", () => {
  const registry = new Registry(createBuiltinTools());
  assert(registry.get("read") !== undefined);
  assertEquals(registry.get("Read"), undefined);
  assertEquals(registry.get("read "), undefined);
  assertEquals(registry.has("READ"), false);
});

Deno.test("Registry.names() and definitions() are sorted whatever the order of registration", () => {
  const registry = new Registry([fakeTool("zeta"), fakeTool("alpha"), fakeTool("mid")]);
  assertEquals(registry.names(), ["alpha", "mid", "zeta"]);
  assertEquals(registry.definitions().map((d) => d.name), ["alpha", "mid", "zeta"]);
  assertEquals(registry.definitions()[0], {
    name: "alpha",
    description: "the alpha tool",
    input_schema: { type: "object", properties: {} },
  });
});

Deno.test("Registry: one failed registration does not affect the others", () => {
  const registry = new Registry([fakeTool("a")]);
  assertThrows(() => registry.register(fakeTool("Bad")));
  registry.register(fakeTool("b"));
  assertEquals(registry.names(), ["a", "b"]);
});

Deno.test("createBuiltinTools() marks read and grep read-only, the others not", () => {
  const flags = Object.fromEntries(createBuiltinTools().map((t) => [t.name, t.readOnly]));
  assertEquals(flags, { read: true, write: false, edit: false, grep: true, bash: false });
});

Deno.test("runTool() turns an unknown name and every throw into an error result", async () => {
  await using ws = await tmpWorkspace();
  const throwing = defineTool({
    ...fakeTool("boom"),
    execute: () => Promise.reject(new Error("kaput")),
  });
  const failing = defineTool({
    ...fakeTool("fails"),
    execute: () => Promise.reject(new ToolError("fails", "fails: said so")),
  });
  const registry = new Registry([throwing, failing, createReadTool()]);
  const context = {
    workspace: ws.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
    signal: new AbortController().signal,
  };
  assertEquals(await runTool(registry, "nope", {}, context), {
    output: "unknown tool: nope",
    isError: true,
  });
  assertEquals(await runTool(registry, "boom", {}, context), {
    output: "boom: kaput",
    isError: true,
  });
  assertEquals(await runTool(registry, "fails", {}, context), {
    output: "fails: said so",
    isError: true,
  });
  const aborted = AbortSignal.abort();
  assertEquals(
    await runTool(registry, "read", { path: ws.path("x") }, { ...context, signal: aborted }),
    {
      output: "read: cancelled",
      isError: true,
    },
  );
});
