/**
 * What `run` leaves on stderr (issue 27, "Noise" and "Retries against a dead local server"):
 * rousseau's own lines only, never an SDK's; `-q`/`--quiet` drops the layers header and
 * everything else but errors; a server that is not running on this machine fails at once.
 */

import { assert, assertEquals } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { startFakeOpenAI } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const OPENAI = ["--provider", "openai", "--model", "local-model"];

Deno.test("run: a malformed stream gives rousseau's error only, no SDK line on stderr", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("data: {not json\n\n", { headers: { "content-type": "text/event-stream" } }),
  );
  try {
    await using ws = await tmpWorkspace();
    const out = await runCli(
      [...OPENAI, "--base-url", `http://127.0.0.1:${server.addr.port}/v1`, "run", "hi"],
      { cwd: ws.root, env: { OPENAI_API_KEY: "k" } },
    );
    assertEquals(out.code, 1);
    assertEquals(out.stdout, "");
    const lines = out.stderr.trimEnd().split("\n");
    assert(lines[0]!.startsWith("rousseau: approver="), out.stderr);
    assertEquals(
      lines.slice(1),
      ["rousseau: openai: unreadable reply: Error reading response: malformed server-sent event JSON."],
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("run -q / --quiet: no layers header, the answer on stdout, nothing on stderr", async (t) => {
  for (const flag of ["-q", "--quiet"]) {
    await t.step(flag, async () => {
      await using server = startFakeOpenAI([{ text: "hello" }]);
      await using ws = await tmpWorkspace();
      const out = await runCli([...OPENAI, "run", flag, "hi"], {
        cwd: ws.root,
        env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" },
      });
      assertEquals(out, { code: 0, stdout: "hello\n", stderr: "" });
    });
  }
  await t.step("-q before the command, with -p", async () => {
    await using server = startFakeOpenAI([{ text: "hello" }]);
    await using ws = await tmpWorkspace();
    const out = await runCli([...OPENAI, "-q", "-p", "hi"], {
      cwd: ws.root,
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" },
    });
    assertEquals(out, { code: 0, stdout: "hello\n", stderr: "" });
  });
  await t.step("-q -c in a workspace with no earlier session: not even the note", async () => {
    await using server = startFakeOpenAI([{ text: "hello" }]);
    await using ws = await tmpWorkspace();
    const out = await runCli([...OPENAI, "run", "-q", "-c", "hi"], {
      cwd: ws.root,
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "k" },
    });
    assertEquals(out, { code: 0, stdout: "hello\n", stderr: "" });
  });
});

Deno.test("run: nothing listening on a loopback port fails at once with the hint, no retries", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${listener.addr.port}/v1`;
  listener.close();
  await using ws = await tmpWorkspace();
  const refused = `rousseau: openai: cannot reach ${url}: connection refused — is the server ` +
    "running? (ollama serve / llama-server --jinja / vllm serve)\n";
  const quiet = await runCli([...OPENAI, "--base-url", url, "run", "-q", "hi"], { cwd: ws.root });
  assertEquals(quiet, { code: 1, stdout: "", stderr: refused });
  // Without -q a retry would print its "retrying in" warning: only the header comes first.
  const out = await runCli([...OPENAI, "--base-url", url, "run", "hi"], { cwd: ws.root });
  assertEquals(out.code, 1);
  const lines = out.stderr.split(/(?<=\n)/);
  assertEquals(lines.length, 2, out.stderr);
  assert(lines[0]!.startsWith("rousseau: approver="), out.stderr);
  assertEquals(lines[1], refused);
});
