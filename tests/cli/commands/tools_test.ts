import { HELP } from "../../../cli/startup/help_text.ts";
import { renderHelp } from "../../../scripts/gen_help.ts";
import { runCli } from "../../_helpers/cli.ts";
import { assertEquals, assertMatch, assertStringIncludes } from "../../_helpers/assert.ts";

Deno.test("tools --json prints [{name, description, input_schema}] sorted by name", async () => {
  const run = await runCli(["tools", "--json"]);
  assertEquals(run.code, 0);
  const definitions = JSON.parse(run.stdout);
  assertEquals(definitions.map((d: { name: string }) => d.name), [
    "bash",
    "edit",
    "grep",
    "read",
    "write",
  ]);
  const committed = JSON.parse(
    await Deno.readTextFile(new URL("../../../docs/tool-schemas.json", import.meta.url)),
  );
  assertEquals(definitions, committed);
  for (const d of definitions) {
    assertEquals(Object.keys(d), ["name", "description", "input_schema"]);
  }
});

Deno.test("tools lists one line a tool in text mode", async () => {
  const run = await runCli(["tools"]);
  assertEquals(run.code, 0);
  const lines = run.stdout.trimEnd().split("\n");
  assertEquals(lines.map((l) => l.split(" ")[0]), ["bash", "edit", "grep", "read", "write"]);
  assertStringIncludes(lines[3]!, "Read a UTF-8 text file");
});

Deno.test("--help and --version print on stdout and exit 0", async () => {
  const help = await runCli(["--help"]);
  assertEquals(help.code, 0);
  assertStringIncludes(help.stdout, "Usage: rousseau");
  const toolHelp = await runCli(["tool", "--help"]);
  assertStringIncludes(toolHelp.stdout, "Examples:");
  const version = await runCli(["--version"]);
  assertEquals(version, { code: 0, stdout: "0.1.0\n", stderr: "" });
});

Deno.test("version, --version and -v alone (answered before the CLI loads) print what the full CLI prints", async () => {
  const report = `rousseau 0.1.0\ndeno ${Deno.version.deno}\ntarget ${Deno.build.target}\n`;
  // A global flag in front sends the same words through the argument parser.
  for (
    const [words, stdout] of [[["version"], report], [["--version"], "0.1.0\n"], [
      ["-v"],
      "0.1.0\n",
    ]] as const
  ) {
    const fast = await runCli([...words]);
    const full = await runCli(["--log-level", "error", ...words]);
    assertEquals(fast, { code: 0, stdout, stderr: "" }, words.join(" "));
    assertEquals(full, fast, `--log-level error ${words.join(" ")}`);
  }
});

Deno.test("--help and -h alone to a pipe (answered before the CLI loads) print what commander prints", async () => {
  // The generated text is commander's rendering of the command table today...
  assertEquals(HELP, await renderHelp(), "cli/startup/help_text.ts is stale: run `deno task docs`");
  // ...and the entry point prints it exactly where the full CLI would print its own.
  const full = await runCli(["--log-level", "error", "--help"]);
  assertEquals(full.code, 0);
  assertEquals(full.stdout, HELP);
  for (const words of [["--help"], ["-h"]]) {
    assertEquals(await runCli(words), full, words.join(" "));
  }
});

Deno.test("--help: every command has a description and examples, on stdout, exit 0", async () => {
  const commands = [
    "tool",
    "tools",
    "run",
    "chat",
    "mcp",
    "session",
    "policy",
    "audit",
    "init",
    "doctor",
    "version",
  ];
  const top = await runCli(["--help"]);
  assertEquals(top.code, 0);
  for (const command of commands) {
    assertMatch(top.stdout, new RegExp(`\\n  ${command}\\b`), `${command} missing from --help`);
    const out = await runCli([command, "--help"]);
    assertEquals(out.code, 0, `${command} --help: ${out.stderr}`);
    assertMatch(out.stdout, /\nExamples?:\n {2}rousseau /, `${command} --help has no example`);
  }
});
