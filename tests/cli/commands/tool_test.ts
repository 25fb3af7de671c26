import { join } from "node:path";
import { runCli } from "../../_helpers/cli.ts";
import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

Deno.test("tool prints the output exactly on stdout and exits 0", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "no newline at end" } });
  const run = await runCli([
    "--workspace",
    ws.root,
    "tool",
    "read",
    JSON.stringify({ path: ws.path("a.txt") }),
  ]);
  assertEquals(run, { code: 0, stdout: "no newline at end", stderr: "" });
});

Deno.test("tool sends a tool error to stderr, nothing to stdout, and exits 1", async () => {
  await using ws = await tmpWorkspace();
  const run = await runCli(["tool", "read", '{"path":"/etc/hostname"}', "--workspace", ws.root]);
  assertEquals(run, {
    code: 1,
    stdout: "",
    stderr: "read: /etc/hostname is outside the workspace\n",
  });
});

Deno.test("tool --json prints exactly one object, for success and for a bash failure", async () => {
  await using ws = await tmpWorkspace();
  const ok = await runCli([
    "--workspace",
    ws.root,
    "tool",
    "bash",
    '{"command":"echo hi"}',
    "--json",
  ]);
  assertEquals(ok.code, 0);
  assertEquals(JSON.parse(ok.stdout), { output: "hi\n", is_error: false });
  const failed = await runCli([
    "--workspace",
    ws.root,
    "tool",
    "--json",
    "bash",
    '{"command":"echo out; echo err >&2; exit 3"}',
  ]);
  assertEquals(failed.code, 1);
  assertEquals(
    failed.stdout,
    JSON.stringify({ output: "out\nerr\nbash: exit status 3", is_error: true }) + "\n",
  );
});

Deno.test("tool reads the JSON input from stdin with - or when it is absent", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "from stdin" } });
  const input = JSON.stringify({ path: ws.path("a.txt") });
  for (const args of [["tool", "read", "-"], ["tool", "read"]]) {
    const run = await runCli(["--workspace", ws.root, ...args], { stdin: input });
    assertEquals(run, { code: 0, stdout: "from stdin", stderr: "" });
  }
});

Deno.test("tool treats input that is not JSON as the tool's parse error (exit 1)", async () => {
  await using ws = await tmpWorkspace();
  const run = await runCli(["--workspace", ws.root, "tool", "read", "{not json", "--json"]);
  assertEquals(run.code, 1);
  const result = JSON.parse(run.stdout);
  assertEquals(result.is_error, true);
  assertStringIncludes(result.output, "read: parse input: invalid JSON: ");
});

Deno.test("tool exits 2 on usage errors and prints nothing on stdout", async (t) => {
  await using ws = await tmpWorkspace();
  const cases: Array<[string, string[], string]> = [
    ["unknown tool", ["tool", "Read", "{}"], 'tool: unknown tool "Read"'],
    ["bad flag", ["tool", "read", "{}", "--bogus"], "unknown option '--bogus'"],
    ["missing name", ["tool"], "missing required argument 'name'"],
    [
      "bad timeout",
      ["tool", "bash", '{"command":"true"}', "--timeout", "soon"],
      "--timeout: invalid duration",
    ],
    [
      "bad max-matches",
      ["tool", "grep", "{}", "--max-matches", "0"],
      "--max-matches: want a whole number",
    ],
    [
      "missing workspace",
      ["--workspace", join(ws.root, "nope"), "tool", "read", "{}"],
      "no such directory",
    ],
  ];
  for (const [name, args, message] of cases) {
    await t.step(name, async () => {
      const run = await runCli(["--workspace", ws.root, ...args]);
      assertEquals(run.code, 2);
      assertEquals(run.stdout, "");
      assertStringIncludes(run.stderr, message);
    });
  }
});

Deno.test("tool defaults the workspace to the directory it was started from", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "here" } });
  const inside = await runCli(["tool", "read", JSON.stringify({ path: ws.path("a.txt") })], {
    cwd: ws.root,
  });
  assertEquals(inside, { code: 0, stdout: "here", stderr: "" });
  const bash = await runCli(["tool", "bash", '{"command":"pwd"}'], { cwd: ws.root });
  assertEquals(bash.stdout, `${ws.root}\n`);
});

Deno.test("tool --add-dir adds a root; bash still runs in the first", async () => {
  await using ws = await tmpWorkspace({ outside: { "b.txt": "extra root" } });
  const path = join(ws.outside, "b.txt");
  const refused = await runCli(["--workspace", ws.root, "tool", "read", JSON.stringify({ path })]);
  assertEquals(refused.code, 1);
  const allowed = await runCli([
    "--workspace",
    ws.root,
    "--add-dir",
    ws.outside,
    "tool",
    "read",
    JSON.stringify({ path }),
  ]);
  assertEquals(allowed, { code: 0, stdout: "extra root", stderr: "" });
});

Deno.test("tool --timeout, --max-matches and --max-file-bytes set the limits", async () => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "x\nx\nx\n", "big.txt": "x".repeat(100) },
  });
  const timeout = await runCli([
    "--workspace",
    ws.root,
    "tool",
    "bash",
    '{"command":"echo start; sleep 5"}',
    "--timeout",
    "300ms",
  ]);
  assertEquals(timeout, { code: 1, stdout: "", stderr: "start\nbash: timed out after 300ms\n" });
  const grep = JSON.stringify({ pattern: "x", path: ws.root });
  const capped = await runCli([
    "--workspace",
    ws.root,
    "tool",
    "grep",
    grep,
    "--max-matches",
    "2",
    "--max-file-bytes",
    "50",
  ]);
  assertEquals(capped, {
    code: 0,
    stdout: `${ws.path("a.txt")}:1: x\n${ws.path("a.txt")}:2: x\n(truncated at 2 matches)\n`,
    stderr: "",
  });
});

Deno.test("tool's bash does not see the provider keys of the calling process", async () => {
  await using ws = await tmpWorkspace();
  const run = await runCli(
    [
      "--workspace",
      ws.root,
      "tool",
      "bash",
      '{"command":"echo ${ANTHROPIC_API_KEY:-unset} ${KEEP_ME}"}',
    ],
    { env: { ANTHROPIC_API_KEY: "sk-secret", KEEP_ME: "kept" } },
  );
  assertEquals(run.stdout, "unset kept\n");
});
