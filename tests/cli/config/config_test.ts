import { join } from "node:path";
import { didYouMean, loadConfig } from "../../../cli/config/config.ts";
import { UsageError } from "../../../cli/errors.ts";
import { runCli } from "../../_helpers/cli.ts";
import { assertEquals, assertRejects, assertStringIncludes } from "../../_helpers/assert.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { startFakeOpenAI } from "../../_helpers/fake_providers.ts";

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
    ["agent:\n  max_iterations: many\n", 'agent.max_iterations: want a number, got "many"'],
    ["agent:\n  max_iterations: 0\n", "agent.max_iterations: want a number > 0, got 0"],
    [
      "tools:\n  bash:\n    sandbox: docker\n",
      'tools.bash.sandbox: want one of "auto", "bwrap", "none", got "docker"',
    ],
    [
      "anthropic:\n  base_url: not a url\n",
      'anthropic.base_url: want a URL such as http://127.0.0.1:11434/v1, got "not a url"',
    ],
    [
      "tools:\n  bash:\n    network: yes please\n",
      'tools.bash.network: want true or false, got "yes please"',
    ],
    ["workspace:\n  roots: /srv\n", 'workspace.roots: want a list, got "/srv"'],
    [
      "log:\n  level: loud\n",
      'log.level: want one of "debug", "info", "warn", "error", got "loud"',
    ],
    [
      "tools:\n  grep:\n    max_file_bytes: -1\n",
      "tools.grep.max_file_bytes: want a number >= 0, got -1",
    ],
    ["mcp_servers:\n  s:\n    args: [a]\n", "mcp_servers.s.command: want a string, got nothing"],
    ["- a\n- b\n", '(top level): want a map of keys, got ["a","b"]'],
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
  assertEquals(
    error.message,
    'environment: ROUSSEAU_AGENT_MAX_ITERATIONS: want a number, got "lots"',
  );
});

Deno.test("loadConfig(): an empty section (children commented out) means not set", async () => {
  await withConfig("tools:\n  bash:\n    # timeout: 5s\nlog:\n", async (path) => {
    const config = await loadConfig(path, {});
    assertEquals(config.limits.bashTimeoutMs, 60_000);
  });
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

Deno.test("run: the model comes from the flag, else the environment, else the file", async () => {
  await using ws = await tmpWorkspace();
  const path = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(path, "provider: openai\nopenai:\n  model: from-file\n");
  await using server = startFakeOpenAI([{ text: "1" }, { text: "2" }, { text: "3" }]);
  const env = { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" };
  const base = ["--config", path, "--workspace", ws.root];
  let out = await runCli([...base, "run", "hi"], { env });
  assertEquals(out.code, 0, out.stderr);
  out = await runCli([...base, "run", "hi"], {
    env: { ...env, ROUSSEAU_OPENAI_MODEL: "from-env" },
  });
  assertEquals(out.code, 0, out.stderr);
  out = await runCli([...base, "--model", "from-flag", "run", "hi"], {
    env: { ...env, ROUSSEAU_OPENAI_MODEL: "from-env" },
  });
  assertEquals(out.code, 0, out.stderr);
  assertEquals(server.requests.map((r) => r.body.model), ["from-file", "from-env", "from-flag"]);
});

Deno.test("loadConfig() reads the wires' own variables when they are all the configuration set", async () => {
  // No file and no ROUSSEAU_* variable: the wires' variables alone must still be read.
  const config = await loadConfig(undefined, {
    ANTHROPIC_API_KEY: "sk-ant-from-env",
    OPENAI_BASE_URL: "http://127.0.0.1:11434/v1",
    SOMEONE_ELSES_API_KEY: "not ours",
  });
  const values = config.values as Record<string, unknown>;
  assertEquals(values.anthropic, { api_key: "sk-ant-from-env" });
  assertEquals(values.openai, { base_url: "http://127.0.0.1:11434/v1" });
  const none = await loadConfig(undefined, { SOMEONE_ELSES_API_KEY: "not ours" });
  assertEquals(none.values, {});
});
