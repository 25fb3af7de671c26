import { join } from "node:path";
import { didYouMean, loadConfig } from "../../cli/config.ts";
import { UsageError } from "../../cli/errors.ts";
import { runCli } from "../_helpers/cli.ts";
import { assertEquals, assertRejects, assertStringIncludes } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

async function withConfig(yaml: string, fn: (path: string) => Promise<void>): Promise<void> {
  await using ws = await tmpWorkspace();
  const path = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(path, yaml);
  await fn(path);
}

Deno.test("loadConfig() reads limits from the file and keeps defaults for the rest", async () => {
  await withConfig(
    "tools:\n  bash:\n    timeout: 90s\n  grep:\n    max_matches: 7\n",
    async (path) => {
      const config = await loadConfig(path, {});
      assertEquals(config.limits.bashTimeoutMs, 90_000);
      assertEquals(config.limits.grepMaxMatches, 7);
      assertEquals(config.limits.readMaxBytes, 262_144);
      assertEquals(config.file, path);
    },
  );
});

Deno.test("loadConfig(): environment beats file", async () => {
  await withConfig(
    "tools:\n  grep:\n    max_matches: 7\nagent:\n  max_iterations: 5\n",
    async (path) => {
      const config = await loadConfig(path, {
        ROUSSEAU_TOOLS_GREP_MAX_MATCHES: "9",
        ROUSSEAU_TOOLS_BASH_ENV_REMOVE: "A,B",
      });
      assertEquals(config.limits.grepMaxMatches, 9);
      assertEquals(config.values.agent?.max_iterations, 5);
      assertEquals(config.envRemove, ["A", "B"]);
    },
  );
});

Deno.test("loadConfig() names the key path and what was expected", async (t) => {
  const cases: Array<[string, string]> = [
    [
      "tools:\n  bash:\n    timout: 5s\n",
      'tools.bash.timout: unknown key (did you mean "timeout"?)',
    ],
    ["agent:\n  max_iterations: many\n", "agent.max_iterations: "],
    ["tools:\n  bash:\n    sandbox: docker\n", "tools.bash.sandbox: "],
    ["tools:\n  bash:\n    timeout: soon\n", 'tools.bash.timeout: invalid duration "soon"'],
    ["provdier: openai\n", 'provdier: unknown key (did you mean "provider"?)'],
    ["zzz: 1\n", "zzz: unknown key (known keys here: provider, anthropic"],
  ];
  for (const [yaml, message] of cases) {
    await t.step(message, async () => {
      await withConfig(yaml, async (path) => {
        const error = await assertRejects(() => loadConfig(path, {}), UsageError);
        assertStringIncludes(error.message, `${path}: ${message}`);
      });
    });
  }
});

Deno.test("loadConfig() names the variable for a bad environment value", async () => {
  const error = await assertRejects(
    () => loadConfig(undefined, { ROUSSEAU_AGENT_MAX_ITERATIONS: "lots" }),
    UsageError,
  );
  assertStringIncludes(error.message, "environment: ROUSSEAU_AGENT_MAX_ITERATIONS: ");
});

Deno.test("loadConfig() reports a missing --config file and bad YAML", async () => {
  const missing = await assertRejects(() => loadConfig("/nonexistent/c.yaml", {}), UsageError);
  assertStringIncludes(missing.message, "config: cannot read /nonexistent/c.yaml");
  await withConfig("a: [1\n", async (path) => {
    const bad = await assertRejects(() => loadConfig(path, {}), UsageError);
    assertStringIncludes(bad.message, `config: ${path}: not valid YAML`);
  });
});

Deno.test("loadConfig() finds the default file under XDG_CONFIG_HOME", async () => {
  await using ws = await tmpWorkspace({
    outside: { "rousseau/config.yaml": "tools:\n  read:\n    max_bytes: 10\n" },
  });
  const config = await loadConfig(undefined, { XDG_CONFIG_HOME: ws.outside, HOME: "/nowhere" });
  assertEquals(config.limits.readMaxBytes, 10);
  assertEquals(config.stateDir, "/nowhere/.local/share/rousseau");
});

Deno.test("didYouMean() suggests only close keys", () => {
  assertEquals(didYouMean("timout", ["timeout", "sandbox"]), "timeout");
  assertEquals(didYouMean("xyz", ["timeout", "sandbox"]), undefined);
});

Deno.test("tool: a flag beats the config file, which beats the default", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "x\nx\nx\n" } });
  const path = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(path, "tools:\n  grep:\n    max_matches: 2\n");
  const input = JSON.stringify({ pattern: "x", path: ws.path("a.txt") });
  const fromFile = await runCli(["--config", path, "--workspace", ws.root, "tool", "grep", input]);
  assertStringIncludes(fromFile.stdout, "(truncated at 2 matches)");
  const fromEnv = await runCli(["--config", path, "--workspace", ws.root, "tool", "grep", input], {
    env: { ROUSSEAU_TOOLS_GREP_MAX_MATCHES: "1" },
  });
  assertStringIncludes(fromEnv.stdout, "(truncated at 1 matches)");
  const fromFlag = await runCli(
    ["--config", path, "--workspace", ws.root, "tool", "grep", input, "--max-matches", "3"],
    { env: { ROUSSEAU_TOOLS_GREP_MAX_MATCHES: "1" } },
  );
  assertEquals(fromFlag.stdout.includes("truncated"), false);
});
