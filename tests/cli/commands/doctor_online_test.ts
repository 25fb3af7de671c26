/**
 * `doctor --online` sends one real request that offers a tool, so a server that lists its
 * model but refuses tools (llama-server without `--jinja`, issue 17) fails the check.
 */

import { assertEquals, assertMatch, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { llamaCppNoJinja, startFakeOpenAI } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

function doctor(url: string, root: string) {
  return runCli(
    ["--provider", "openai", "--model", "local-model", "--workspace", root, "doctor", "--online"],
    { env: { OPENAI_BASE_URL: url, OPENAI_API_KEY: "" } },
  );
}

Deno.test("doctor --online: a server that refuses tools fails the tool call check", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeOpenAI([llamaCppNoJinja(), llamaCppNoJinja()]);
  const out = await doctor(server.url, ws.root);
  assertEquals(out.code, 1, out.stdout);
  assertMatch(out.stdout, new RegExp(`ok +online +${server.url}/models: HTTP 200`));
  assertMatch(
    out.stdout,
    /FAIL +tool call +openai: server_error: tools param requires --jinja flag \(this llama-server does not accept tools: restart it with --jinja/,
  );
  assertEquals(server.requests.length, 1, "doctor does not retry");
});

Deno.test("doctor --online: a tool-capable server passes with one tiny request", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeOpenAI([{ text: "ok", usage: { input: 42, output: 1 } }]);
  const out = await doctor(server.url, ws.root);
  assertEquals(out.code, 0, out.stdout);
  assertMatch(
    out.stdout,
    /ok +tool call +openai\/local-model answered a request that offers tools \(42 tokens in, 1 out, stop end_turn\)/,
  );
  assertEquals(server.requests.length, 1);
  const body = server.requests[0]!.body;
  assertEquals(body.tools.map((t: { function: { name: string } }) => t.function.name), ["ping"]);
  assertEquals(body.max_tokens, 16);
  assertStringIncludes(JSON.stringify(body.messages), "Reply: ok");
});
