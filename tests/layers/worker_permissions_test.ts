import { join } from "node:path";
import { runCli } from "../_helpers/cli.ts";
import { assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { fileURLToPath } from "node:url";
import { survivors } from "../_helpers/processes.ts";

const PROBE = fileURLToPath(new URL("../testdata/probe_tool.ts", import.meta.url));

Deno.test("the tool worker's permissions refuse a custom tool that has no checks of its own", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, `tools:\n  modules: [${JSON.stringify(PROBE)}]\n`);
  using listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const input = JSON.stringify({ outside: ws.outside, port: listener.addr.port });
  const run = await runCli(["--config", config, "--workspace", ws.root, "tool", "probe", input]);
  assertEquals(run.stderr, "");
  assertEquals(run.stdout.split("\n"), [
    "read outside: NotCapable",
    "write outside: NotCapable",
    "connect: NotCapable",
    "fetch: NotCapable",
    "env: NotCapable",
    "spawn ls: NotCapable",
    "sys: NotCapable",
    "ffi: NotCapable",
    "spawn sh: NotCapable",
  ]);
  assertEquals((await Array.fromAsync(Deno.readDir(ws.outside))).map((x) => x.name).sort(), [
    "config.yaml",
    "secret.txt",
  ]);
});

Deno.test("a custom module from config is listed by `tools` and runs like a built-in", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "one two\n" } });
  const example = fileURLToPath(new URL("../../examples/word_count_tool.ts", import.meta.url));
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, `tools:\n  modules: [${JSON.stringify(example)}]\n`);
  const list = await runCli(["--config", config, "tools", "--json"]);
  assertEquals(JSON.parse(list.stdout).map((d: { name: string }) => d.name), [
    "bash",
    "edit",
    "grep",
    "read",
    "word_count",
    "write",
  ]);
  const run = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "word_count",
    JSON.stringify({ path: ws.path("a.txt") }),
  ]);
  assertEquals(run, { code: 0, stdout: "1 lines, 2 words, 8 bytes", stderr: "" });
});

Deno.test("a broken custom module stops start-up with its path and the error", async () => {
  await using ws = await tmpWorkspace();
  const broken = join(ws.outside, "broken.ts");
  await Deno.writeTextFile(broken, "export default { name: 'x' };\n");
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, `tools:\n  modules: [./broken.ts, ./missing.ts]\n`);
  const run = await runCli(["--config", config, "--workspace", ws.root, "tools"]);
  assertEquals(run.code, 1);
  assertEquals(run.stdout, "");
  assertEquals(
    run.stderr.trim(),
    `rousseau: tools: module file://${broken} must export default a tool object (name, ` +
      "description, inputSchema, readOnly, parseInput, execute) or an array of them; see docs/add-a-tool.md",
  );
});

Deno.test("the tool layer's own refusal holds inside the worker for paths outside the roots", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  await Deno.symlink(join(ws.outside, "secret.txt"), ws.path("link"));
  for (
    const path of [
      join(ws.outside, "secret.txt"),
      ws.path("link"),
      ws.path("../outside/secret.txt"),
    ]
  ) {
    const run = await runCli(["--workspace", ws.root, "tool", "read", JSON.stringify({ path })]);
    assertEquals(run, { code: 1, stdout: "", stderr: `read: ${path} is outside the workspace\n` });
  }
});

Deno.test("without the sandbox, bash in the worker still kills what the command left running", async () => {
  await using ws = await tmpWorkspace();
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, "tools:\n  bash:\n    sandbox: none\n");
  const marker = `rousseau-bg-${crypto.randomUUID()}`;
  const command =
    `ln -s "$(command -v sleep)" ./${marker}; ./${marker} 1000 > /dev/null 2>&1 & echo started`;
  const run = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "bash",
    JSON.stringify({ command }),
  ]);
  assertEquals(run, { code: 0, stdout: "started\n", stderr: "" });
  assertEquals(await survivors(marker), 0);
});
