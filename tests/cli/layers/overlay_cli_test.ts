/**
 * Promise (issue 24), from outside: the hole the effects table could never close — a bash
 * rule that lets `make` run, and a write rule for `src/` only — is closed by observing what
 * the recipe wrote. Through `rousseau tool bash` (the worker with its real grants, the
 * policy from a config file), and `run` against the loopback model, whose audit log lists
 * the change set.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli, TEST_HOME } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const RECIPE = "mkdir -p .github/workflows src && echo x > .github/workflows/x.yml && " +
  "echo y > src/y.txt";

/** The names in `dir`. */
function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name);
}

async function setup() {
  const ws = await tmpWorkspace({ files: { "Makefile": `all:\n\t${RECIPE}\n` } });
  const config = join(dirname(ws.root), "policy.yaml");
  await Deno.writeTextFile(
    config,
    [
      "agent:",
      "  approver:",
      "    mode: pattern",
      "    default: deny",
      "    allow:",
      "      - tool: bash",
      '        command: "^make( |$)"',
      "      - tool: write",
      `        path: "^${ws.root}/src/"`,
      "",
    ].join("\n"),
  );
  return { ws, config };
}

Deno.test("overlay from outside: a make recipe writing outside the write rule lands nothing, the path is named", async () => {
  const { ws, config } = await setup();
  await using _ws = ws;
  const run = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "bash",
    '{"command":"make"}',
  ]);
  assertEquals(run, {
    code: 1,
    stdout: "",
    stderr: `${RECIPE}\nbash: the command's changes were not applied: it wrote ` +
      ".github/workflows/x.yml, and no rule allows writing there\n",
  });
  assertEquals(names(ws.root), ["Makefile"]);

  // The recipe within the rule lands.
  await Deno.writeTextFile(ws.path("Makefile"), "all:\n\tmkdir -p src && echo y > src/y.txt\n");
  const ok = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "bash",
    '{"command":"make"}',
  ]);
  assertEquals(ok.code, 0, ok.stderr);
  assertEquals(await Deno.readTextFile(ws.path("src/y.txt")), "y\n");
});

Deno.test("overlay from outside: run reports the refusal to the model and the audit log lists the change set", async () => {
  const { ws, config } = await setup();
  await using _ws = ws;
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: "make" } }] },
    { text: "done" },
  ]);
  const run = await runCli(
    ["--config", config, "--workspace", ws.root, "run", "--output", "json", "build it"],
    { env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" } },
  );
  assertEquals(run.code, 0, run.stderr);
  const sent = JSON.stringify(server.requests.at(-1));
  assertStringIncludes(
    sent,
    "bash: the command's changes were not applied: it wrote .github/workflows/x.yml, and no " +
      "rule allows writing there",
  );
  assertEquals(names(ws.root), ["Makefile"]);
  const audit = (await Deno.readTextFile(join(TEST_HOME, "data", "rousseau", "audit.jsonl")))
    .trimEnd().split("\n").map((line) => JSON.parse(line));
  const last = audit.findLast((e) => e.event === "tool.error" && e.tool === "bash");
  const paths = [
    `A ${ws.root}/.github`,
    `A ${ws.root}/.github/workflows`,
    `A ${ws.root}/.github/workflows/x.yml`,
    `A ${ws.root}/src`,
    `A ${ws.root}/src/y.txt`,
  ];
  assertEquals(last.changes, paths);
  assertEquals(last.changes_allowed, false);

  // stream-json carries the same change set on the call's tool_result line.
  await using again = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: "make" } }] },
    { text: "done" },
  ]);
  const streamed = await runCli(
    ["--config", config, "--workspace", ws.root, "run", "--output", "stream-json", "build it"],
    { env: { ANTHROPIC_BASE_URL: again.url, ANTHROPIC_API_KEY: "test-key" } },
  );
  const lines = streamed.stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
  const result = lines.find((l) => l.type === "tool_result");
  assertEquals(result.changes, { paths, allowed: false });
  assertEquals(result.is_error, true);
});
