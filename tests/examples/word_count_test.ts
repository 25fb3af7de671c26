import wordCount from "../../examples/word_count_tool.ts";
import { createBuiltinTools, createInProcessHost, DEFAULT_LIMITS, Registry } from "../../mod.ts";
import { assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

Deno.test("examples/word_count_tool.ts registers beside the built-ins and runs", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "one two\nthree\n" } });
  const registry = new Registry([...createBuiltinTools(), wordCount]);
  assertEquals(registry.names(), ["bash", "edit", "grep", "read", "word_count", "write"]);
  const host = createInProcessHost(registry, {
    workspace: ws.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
  });
  const signal = new AbortController().signal;
  assertEquals(await host.call("word_count", { path: ws.path("a.txt") }, signal), {
    output: "2 lines, 3 words, 14 bytes",
    isError: false,
  });
  assertEquals(await host.call("word_count", { path: "/etc/hostname" }, signal), {
    output: "word_count: /etc/hostname is outside the workspace",
    isError: true,
  });
  assertEquals(await host.call("word_count", { path: "rel" }, signal), {
    output: `word_count: path must be absolute, got "rel"; use ${JSON.stringify(ws.path("rel"))}`,
    isError: true,
  });
});
