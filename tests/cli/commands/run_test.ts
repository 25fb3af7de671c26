/**
 * `rousseau run` end to end: the real CLI process against loopback servers speaking the
 * Anthropic and OpenAI wire formats, in real temp workspaces.
 */

import { join } from "node:path";
import { NO_OPERATOR_REASON } from "../../../approver/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { finished, runCli, spawnCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic, startFakeOpenAI, type Step } from "../../_helpers/fake_providers.ts";
import { survivors, waitForProcess } from "../../_helpers/processes.ts";
import { providerEnv, runWithModel } from "../../_helpers/run_json.ts";
import { toolResults } from "../../_helpers/tool_results.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const run = runWithModel;

for (const kind of ["anthropic", "openai"] as const) {
  Deno.test(`run (${kind}): grep → read → edit → bash test → done changes the workspace`, async () => {
    await using ws = await tmpWorkspace({ files: { "src/app.txt": "greeting = hello world\n" } });
    const file = ws.path("src", "app.txt");
    await using server = (kind === "anthropic" ? startFakeAnthropic : startFakeOpenAI)([
      {
        text: "Let me look.",
        tools: [{ name: "grep", input: { pattern: "world", path: ws.root } }],
      },
      { tools: [{ name: "read", input: { path: file } }] },
      {
        tools: [{
          name: "edit",
          input: { path: file, "old_string": "hello world", "new_string": "hello there" },
        }],
      },
      {
        tools: [{
          name: "bash",
          input: { command: "grep -q 'hello there' src/app.txt && echo PASS" },
        }],
      },
      { text: "Replaced the greeting; the check passes." },
    ]);
    const out = await run(kind, server, [
      "--workspace",
      ws.root,
      "--allow",
      "edit",
      "--allow",
      "bash",
      "run",
      "--output",
      "json",
      "change the greeting to hello there and check it",
    ]);
    assertEquals(out.code, 0, out.stderr);
    assertEquals(await Deno.readTextFile(file), "greeting = hello there\n");
    const result = out.json;
    assertEquals(Object.keys(result), [
      "type",
      "subtype",
      "is_error",
      "result",
      "session_id",
      "iterations",
      "usage",
      "duration_ms",
      "denials",
      "layers",
      "context",
    ]);
    assertEquals(result.type, "result");
    assertEquals(result.subtype, "success");
    assertEquals(result.is_error, false);
    assertEquals(result.result, "Replaced the greeting; the check passes.");
    assertEquals(result.iterations, 5);
    assertEquals(result.usage, { "input_tokens": 50, "output_tokens": 25 });
    assertEquals(result.denials, []);
    assertEquals(result.layers.confinement, [ws.root]);
    assertEquals(out.stdout.trim().split("\n").length, 1, "exactly one object on stdout");
    assertEquals(server.requests.length, 5);
    assertEquals(toolResults(server, 4).at(-1)!.text, "PASS\n");
    assertStringIncludes(toolResults(server, 1)[0]!.text, "src/app.txt:1:");
    // Tools are offered sorted, with their schemas.
    const tools = server.requests[0]!.body.tools;
    const names = tools.map((t: { name?: string; function?: { name: string } }) =>
      t.name ?? t.function!.name
    );
    assertEquals(names, ["bash", "edit", "grep", "read", "write"]);
  });
}

Deno.test("run: a failed edit is fed back and the retry succeeds", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n" } });
  const file = ws.path("a.txt");
  await using server = startFakeAnthropic([
    { tools: [{ name: "edit", input: { path: file, "old_string": "beta", "new_string": "x" } }] },
    { tools: [{ name: "edit", input: { path: file, "old_string": "alpha", "new_string": "x" } }] },
    { text: "fixed" },
  ]);
  const out = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "--allow",
    "edit",
    "run",
    "--output",
    "json",
    "edit it",
  ]);
  assertEquals(out.code, 0, out.stderr);
  const first = toolResults(server, 1)[0]!;
  assert(first.isError);
  assertStringIncludes(first.text, "edit:");
  assertEquals(toolResults(server, 2).at(-1)!.isError, false);
  assertEquals(await Deno.readTextFile(file), "x\n");
});

Deno.test("run: a denied write exits 4 with one denial and never touches the file", async () => {
  await using ws = await tmpWorkspace({ files: { "keep.txt": "original\n" } });
  const file = ws.path("keep.txt");
  const steps: Step[] = [
    { tools: [{ name: "write", input: { path: file, content: "overwritten" } }] },
    { text: "I was not allowed to write." },
  ];
  await using server = startFakeAnthropic([...steps, ...steps]);
  const out = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "overwrite keep.txt",
  ]);
  assertEquals(out.code, 4, out.stderr);
  assertEquals(out.json.subtype, "success");
  assertEquals(out.json.denials.length, 1);
  assertEquals(out.json.denials[0].tool, "write");
  assertEquals(out.json.denials[0].rule, "default");
  assertEquals(out.json.denials[0].input, { path: file, content: "overwritten" });
  assertEquals(await Deno.readTextFile(file), "original\n");
  const fed = toolResults(server, 1)[0]!;
  assert(fed.isError);
  assertEquals(fed.text, `tool call blocked: ${out.json.denials[0].reason}`);
  // The derived grants give a read-only run no write and no run capability.
  assertEquals(out.json.layers.worker_permissions.write, []);
  assertEquals(out.json.layers.worker_permissions.run, []);

  const accepted = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--denials-ok",
    "overwrite keep.txt",
  ]);
  assertEquals(accepted.code, 0, accepted.stderr);
  assertEquals(accepted.stdout, "I was not allowed to write.\n");
});

Deno.test("run: an ask policy with no terminal denies at once", async () => {
  await using ws = await tmpWorkspace();
  const config = ws.path("..", "ask.yaml");
  await Deno.writeTextFile(
    config,
    "agent:\n  approver:\n    mode: pattern\n    ask: [{tool: bash}]\n    default: deny\n",
  );
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: "touch made" } }] },
    { text: "asked" },
  ]);
  const out = await run("anthropic", server, [
    "--config",
    config,
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "-",
  ], { stdin: "make a file" });
  assertEquals(out.code, 4, out.stderr);
  assertEquals(out.json.denials[0].reason, NO_OPERATOR_REASON);
  assertEquals(toolResults(server, 1)[0]!.text, `tool call blocked: ${NO_OPERATOR_REASON}`);
  assertEquals(await Deno.stat(ws.path("made")).then(() => true, () => false), false);
});

Deno.test("run: an unknown tool and malformed tool JSON come back as error results", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "x\n" } });
  for (const kind of ["anthropic", "openai"] as const) {
    await using server = (kind === "anthropic" ? startFakeAnthropic : startFakeOpenAI)([
      {
        tools: [
          { name: "teleport", input: { to: "mars" } },
          { name: "read", raw: '{"path": "' + ws.path("a.txt") },
        ],
      },
      { text: "adapted" },
    ]);
    const out = await run(kind, server, ["--workspace", ws.root, "run", "go"]);
    assertEquals(out.code, 0, out.stderr);
    assertEquals(out.stdout, "adapted\n");
    const results = toolResults(server, 1);
    assertEquals(results[0]!.text, "unknown tool: teleport");
    assertStringIncludes(results[1]!.text, "read: parse input: invalid JSON");
  }
});

Deno.test("run: 429, 529 and a stream cut before any text are retried", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    {
      status: 429,
      headers: { "retry-after": "0" },
      error: { type: "rate_limit_error", message: "slow down" },
    },
    {
      status: 529,
      headers: { "retry-after": "0" },
      error: { type: "overloaded_error", message: "Overloaded" },
    },
    { cut: true },
    { sseError: { type: "overloaded_error", message: "Overloaded" } },
    { text: "finally" },
  ]);
  const out = await run("anthropic", server, ["--workspace", ws.root, "run", "hi"], {
    env: {},
  });
  assertEquals(out.code, 0, out.stderr);
  assertEquals(out.stdout, "finally\n");
  assertEquals(server.requests.length, 5);
  assertStringIncludes(out.stderr, "retrying");
});

Deno.test("run: retries run out with an error naming provider, status and request id", async () => {
  await using ws = await tmpWorkspace();
  const overloaded: Step = {
    status: 529,
    headers: { "retry-after": "0" },
    error: { type: "overloaded_error", message: "Overloaded" },
  };
  await using server = startFakeAnthropic([
    overloaded,
    overloaded,
    overloaded,
    overloaded,
    overloaded,
  ]);
  const out = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "hi",
  ]);
  assertEquals(out.code, 1, out.stderr);
  assertEquals(out.json.subtype, "error");
  assertEquals(out.json.is_error, true);
  assertEquals(
    out.json.result,
    "anthropic: overloaded_error: Overloaded; status 529; request id req_fake_5; gave up after 5 attempts",
  );

  await using openai = startFakeOpenAI([{
    status: 401,
    error: { type: "invalid_request_error", message: "bad key" },
  }]);
  const denied = await run("openai", openai, ["--workspace", ws.root, "run", "hi"]);
  assertEquals(denied.code, 1);
  assertStringIncludes(denied.stderr, "openai: ");
  assertStringIncludes(denied.stderr, "status 401");
  assertStringIncludes(denied.stderr, "request id req_fake_1");
  assertStringIncludes(denied.stderr, "OPENAI_API_KEY");
  assertEquals(openai.requests.length, 1, "a 401 is not retried");
});

Deno.test("run: a stream cut after text is an error, not a silent partial answer", async () => {
  await using ws = await tmpWorkspace();
  for (const kind of ["anthropic", "openai"] as const) {
    await using server = (kind === "anthropic" ? startFakeAnthropic : startFakeOpenAI)([
      { cut: true, text: "Here is the begin" },
    ]);
    const out = await run(kind, server, ["--workspace", ws.root, "run", "--output", "json", "hi"]);
    assertEquals(out.code, 1, out.stderr);
    assertStringIncludes(out.json.result, `${kind}: `);
    assertStringIncludes(out.json.result, "cut off part way");
  }
});

Deno.test("run: the iteration budget exits 3 with the exact message", async () => {
  await using ws = await tmpWorkspace();
  const again: Step = { tools: [{ name: "read", input: { path: ws.root } }] };
  await using server = startFakeAnthropic([again, again]);
  const out = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--max-iterations",
    "2",
    "--output",
    "json",
    "loop",
  ]);
  assertEquals(out.code, 3, out.stderr);
  assertEquals(out.json.subtype, "error_max_iterations");
  assertEquals(out.json.result, "agent: iteration budget exhausted (2 iterations)");
  assertEquals(out.json.iterations, 2);
});

Deno.test("run: stream-json prints init, text, tool_use, tool_result and the result", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hi\n" } });
  await using server = startFakeOpenAI([
    { text: "Reading.", tools: [{ name: "read", input: { path: ws.path("a.txt") } }] },
    { text: "It says hi." },
  ]);
  const out = await run("openai", server, [
    "--workspace",
    ws.root,
    "run",
    "--output",
    "stream-json",
    "what does a.txt say",
  ]);
  assertEquals(out.code, 0, out.stderr);
  const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const init = lines[0];
  assertEquals(init.type, "init");
  assertEquals(init.model, "local-model");
  assertEquals(init.workspace, ws.root);
  assertEquals(init.tools, ["bash", "edit", "grep", "read", "write"]);
  assertEquals(init.approver, "pattern");
  assertEquals(init.layers.confinement, [ws.root]);
  const types = lines.map((l) => l.type);
  assertEquals(types[0], "init");
  assertEquals(types.at(-1), "result");
  const use = lines.find((l) => l.type === "tool_use");
  assertEquals(use, {
    type: "tool_use",
    id: use.id,
    name: "read",
    input: { path: ws.path("a.txt") },
  });
  const result = lines.find((l) => l.type === "tool_result");
  assertEquals(result, {
    type: "tool_result",
    "tool_use_id": use.id,
    "is_error": false,
    output: "hi\n",
  });
  assertEquals(
    lines.filter((l) => l.type === "text").map((l) => l.text).join(""),
    "Reading.It says hi.",
  );
  assert(types.indexOf("tool_use") < types.indexOf("tool_result"));
  assertEquals(lines.at(-1).session_id, init.session_id);
});

Deno.test("run: text mode states the layers on stderr and prints only the answer", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ text: "All good." }]);
  const out = await run("anthropic", server, ["--workspace", ws.root, "run", "-"], {
    stdin: "is it good?",
  });
  assertEquals(out.code, 0, out.stderr);
  assertEquals(out.stdout, "All good.\n");
  const header = out.stderr.split("\n")[0]!;
  assertStringIncludes(header, `rousseau: approver=pattern · confinement=${ws.root} · worker=`);
  assertStringIncludes(header, "run:none");
  assertEquals(server.requests[0]!.body.messages[0].content[0].text, "is it good?");
  // Prompt caching marks: system prompt, last tool, latest user turn.
  const body = server.requests[0]!.body;
  assertEquals(body.system[0].cache_control, { type: "ephemeral" });
  assertEquals(body.tools.at(-1).cache_control, { type: "ephemeral" });
  assertEquals(body.messages[0].content.at(-1).cache_control, { type: "ephemeral" });
  assertEquals(body.stream, true);
});

Deno.test("run: usage and configuration mistakes say what to fix", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([]);
  const badOutput = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--output",
    "yaml",
    "x",
  ]);
  assertEquals(badOutput.code, 2);
  assertStringIncludes(badOutput.stderr, '--output: unknown format "yaml"');
  const empty = await run("anthropic", server, ["--workspace", ws.root, "run", "-"], {
    stdin: "  \n",
  });
  assertEquals(empty.code, 2);
  assertStringIncludes(empty.stderr, "run: the prompt is empty");
  const noKey = await runCli(["--workspace", ws.root, "run", "hi"], {
    env: { ANTHROPIC_BASE_URL: server.url },
  });
  assertEquals(noKey.code, 1);
  assertStringIncludes(noKey.stderr, "anthropic: no API key: set ANTHROPIC_API_KEY");
  const deadline = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--deadline",
    "soon",
    "x",
  ]);
  assertEquals(deadline.code, 2);
  assertStringIncludes(deadline.stderr, "--deadline:");
  const noSession = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--session",
    "nope-nope",
    "x",
  ]);
  assertEquals(noSession.code, 2);
  assertStringIncludes(noSession.stderr, '--session: no session "nope-nope"');
  assertEquals(server.requests.length, 0);
});

Deno.test("run: --deadline stops a long bash call, exits 5 and leaves no child", async () => {
  await using ws = await tmpWorkspace();
  const marker = `deadline-${crypto.randomUUID()}`;
  await using server = startFakeAnthropic([
    {
      text: "Starting the long job.",
      tools: [{ name: "bash", input: { command: `sleep 60 # ${marker}` } }],
    },
  ]);
  const out = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "--allow",
    "bash",
    "run",
    "--deadline",
    "2s",
    "--output",
    "json",
    "run the job",
  ]);
  assertEquals(out.code, 5, out.stderr);
  assertEquals(out.json.subtype, "error_deadline");
  assertEquals(out.json.result, "Starting the long job.");
  assertEquals(await survivors(marker), 0);
});

Deno.test("run: SIGINT mid-tool kills the bash child, saves the session and exits 130", async () => {
  await using ws = await tmpWorkspace();
  const marker = `sigint-${crypto.randomUUID()}`;
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: `sleep 60 # ${marker}` } }] },
  ]);
  const child = spawnCli([
    "--workspace",
    ws.root,
    "--allow",
    "bash",
    "run",
    "--output",
    "json",
    "go",
  ], {
    env: providerEnv("anthropic", server.url),
  });
  await waitForProcess(marker);
  child.kill("SIGINT");
  const out = await finished(child);
  assertEquals(out.code, 130, out.stderr);
  assertEquals(await survivors(marker), 0);
  const result = JSON.parse(out.stdout);
  assertEquals(result.subtype, "error");
  const shown = await runCli(["session", "show", result.session_id, "--json"]);
  assertEquals(shown.code, 0, shown.stderr);
  const messages = JSON.parse(shown.stdout).messages;
  assertEquals(messages.map((m: { role: string }) => m.role), ["user", "assistant", "user"]);
  assertStringIncludes(messages[2].content[0].content, "cancelled");
});

Deno.test("run: a killed process is resumed with the unfinished call answered", async () => {
  await using ws = await tmpWorkspace();
  const marker = `killed-${crypto.randomUUID()}`;
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: `sleep 60 # ${marker}` } }] },
    { text: "Picked up where we left off." },
  ]);
  const child = spawnCli(
    ["--workspace", ws.root, "--allow", "bash", "run", "--output", "stream-json", "go"],
    { env: providerEnv("anthropic", server.url) },
  );
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const first = (await reader.read()).value ?? "";
  const init = JSON.parse(first.split("\n")[0]!);
  await waitForProcess(marker);
  child.kill("SIGKILL");
  await child.status;
  await reader.cancel();
  await child.stderr.cancel();
  // Without a sandbox nothing reaps a SIGKILLed parent's children; clean up by hand.
  await new Deno.Command("pkill", { args: ["-f", marker] }).output();
  const out = await run("anthropic", server, [
    "--workspace",
    ws.root,
    "run",
    "--session",
    init.session_id,
    "--output",
    "json",
    "continue",
  ]);
  assertEquals(out.code, 0, out.stderr);
  assertEquals(out.json.session_id, init.session_id);
  assertEquals(out.json.result, "Picked up where we left off.");
  const repaired = toolResults(server, 1);
  assertEquals(repaired, [{
    text:
      "interrupted: no result was recorded, and the call may have run in part; check its effects before repeating it",
    isError: true,
  }]);
  const list = await runCli(["session", "list", "--json"]);
  assert(JSON.parse(list.stdout).some((s: { id: string }) => s.id === init.session_id));
});

Deno.test("session: list, show and delete", async () => {
  await using ws = await tmpWorkspace();
  const state = join(ws.outside, "state");
  const config = join(ws.outside, "c.yaml");
  await Deno.writeTextFile(config, `state:\n  dir: ${state}\n`);
  await using server = startFakeAnthropic([{ text: "one" }]);
  const made = await run("anthropic", server, [
    "--config",
    config,
    "--workspace",
    ws.root,
    "run",
    "--output",
    "json",
    "first   prompt",
  ]);
  assertEquals(made.code, 0, made.stderr);
  const id: string = made.json.session_id;
  const list = await runCli(["--config", config, "session", "list"]);
  assertEquals(list.code, 0);
  assertStringIncludes(list.stdout, id);
  assertStringIncludes(list.stdout, "first prompt");
  const show = await runCli(["--config", config, "session", "show", id.slice(0, 8)]);
  assertStringIncludes(show.stdout, "user: first   prompt\nassistant: one\n");
  const del = await runCli(["--config", config, "session", "delete", id]);
  assertEquals(del.stdout, `deleted ${id}\n`);
  const gone = await runCli(["--config", config, "session", "show", id]);
  assertEquals(gone.code, 1);
  assertStringIncludes(gone.stderr, "no session");
  const bad = await runCli(["--config", config, "session", "purge"]);
  assertEquals(bad.code, 2);
});
