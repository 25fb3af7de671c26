/**
 * Output floods through the real CLI (`run --output json`, the model asking bash for them):
 * `yes`, random bytes (invalid UTF-8, terminal escapes), one endless line, millions of tiny
 * lines. The promises: rousseau's peak memory (VmHWM) stays bounded, each result is cut to
 * the bash cap with the spec's marker, stdout stays one valid JSON object, nothing the command
 * started outlives the call, and no escape byte from a result reaches the terminal.
 */

import { assert, assertEquals } from "../_helpers/assert.ts";
import { finished, spawnCli } from "../_helpers/cli.ts";
import { startFakeAnthropic } from "../_helpers/fake_providers.ts";
import { survivors } from "../_helpers/processes.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { DEFAULT_BASH_MAX_OUTPUT_BYTES } from "../../tools/limits.ts";

const MARKER = `flood-${crypto.randomUUID().slice(0, 8)}`;

const FLOODS = [
  `yes ${MARKER}`,
  `cat /dev/urandom # ${MARKER}`,
  `head -c 300000000 /dev/zero | tr '\\0' a # ${MARKER}`,
  `seq 1 3000000 # ${MARKER}`,
  // The command itself carries a C1 CSI and a bidi override: its progress line shows them.
  `printf '\\033]0;pwned\\007\\033[2J\\033[31mred' ; head -c 1000000 /dev/urandom # \u009b2J\u202e ${MARKER}`,
];

function peak(pid: number): number {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    return Number(/^VmHWM:\s*(\d+) kB/m.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

Deno.test("bash floods keep rousseau's memory bounded, results cut, stdout one JSON object", async () => {
  await using ws = await tmpWorkspace();
  const tools = FLOODS.map((command, i) => ({
    id: `toolu_${i}`,
    name: "bash",
    input: { command },
  }));
  // One call a turn: each flood runs on its own.
  await using server = startFakeAnthropic([
    ...tools.map((tool) => ({ tools: [tool] })),
    { text: "flooded" },
  ]);
  const child = spawnCli(
    ["--workspace", ws.root, "--allow", "bash", "--timeout", "3s", "run", "--output", "json", "go"],
    { env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" } },
  );
  let hwm = 0;
  const sampler = setInterval(() => hwm = Math.max(hwm, peak(child.pid)), 100);
  let out;
  try {
    out = await finished(child);
  } finally {
    clearInterval(sampler);
  }
  assertEquals(out.code, 0, out.stderr);
  const result = JSON.parse(out.stdout);
  assertEquals(result.result, "flooded");
  assertEquals(out.stdout.trim().split("\n").length, 1);
  // Measured here: about 150 MB; 10 GB of output must not show in it.
  assert(hwm > 0 && hwm < 400_000, `VmHWM ${hwm} kB`);
  for (let i = 0; i < FLOODS.length; i++) {
    const fed = server.requests[i + 1]!.body.messages.at(-1).content[0];
    assertEquals(fed.tool_use_id, `toolu_${i}`);
    const text = String(fed.content);
    assert(/\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n/.test(text), `call ${i}: no cut marker`);
    assert(
      new TextEncoder().encode(text).length <= DEFAULT_BASH_MAX_OUTPUT_BYTES * 3 + 200,
      `call ${i}: ${text.length} chars`,
    );
  }
  // The escape bytes the floods printed reached the model (as text), never stderr.
  assert(!out.stderr.includes("\x1b]0;pwned"), "an escape sequence reached the terminal");
  assert(!/[\u009b\u202e]/.test(out.stderr), "a C1 or bidi control reached the terminal");
  assertEquals(await survivors(MARKER), 0);
});
