/**
 * Promise (issue 24, "see before it lands"): in chat, with bash under the overlay and the
 * network off, a bash call the policy asks about runs first — it cannot change anything yet
 * — and the operator is asked with its output and its change set (`M a.txt +1 −1`,
 * `A out.txt`, `D build/`); `d` shows the unified diff, `y` applies, `n` discards and the
 * model is told, without the output. Driven in a real terminal (tmux).
 *
 * No other agent shows a shell command's file changes before they land: Claude Code's
 * checkpoints skip bash (https://docs.anthropic.com/en/docs/claude-code/checkpointing);
 * Codex and gemini-cli ask before the command runs, on its text alone.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { after, openChat, toolResults } from "../../_helpers/tmux_chat.ts";

const CHOICES = "[y] apply  [a] apply, and allow";

Deno.test("chat preview: the change set and the diff before anything lands; y applies, n discards and withholds the output", async () => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "a cat sat\n", "build/out.o": "obj\n" },
  });
  const first = "sed -i s/cat/dog/ a.txt && echo made > out.txt && rm -rf build && echo ok";
  const second = "echo secret-output && touch x";
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: first } }] },
    { text: "Applied." },
    { tools: [{ name: "bash", input: { command: second } }] },
    { text: "Discarded." },
  ]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);

  await chat.line("change it");
  const asked = await chat.waitFor(CHOICES);
  const prompt = after(asked, "› change it");
  assertEquals(prompt.slice(0, 10), [
    "",
    "bash needs approval",
    `$ ${first}`,
    "it ran in a preview; nothing has reached the workspace yet. Output:",
    "  ok",
    "Changes:",
    "  M a.txt +1 −1",
    "  D build/",
    "  A out.txt +1 −0",
    prompt[9]!,
  ]);
  assert(prompt[9]!.startsWith(CHOICES), prompt[9]);
  // It ran, and nothing of it is in the workspace while the operator looks.
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "a cat sat\n");
  assertEquals(await Deno.readTextFile(ws.path("build/out.o")), "obj\n");
  assertEquals(await Deno.stat(ws.path("out.txt")).then(() => true, () => false), false);

  await chat.line("d");
  const diff = await chat.waitFor(CHOICES, 2);
  const shown = after(diff, "> d");
  assertEquals(shown.slice(0, 6), [
    "--- a/a.txt",
    "+++ b/a.txt",
    "@@ -1,1 +1,1 @@",
    "-a cat sat",
    "+a dog sat",
    "--- /dev/null",
  ]);
  await chat.line("y");
  await chat.waitForPrompt(2);
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "a dog sat\n");
  assertEquals(await Deno.readTextFile(ws.path("out.txt")), "made\n");
  assertEquals(await Deno.stat(join(ws.root, "build")).then(() => true, () => false), false);
  assertEquals(toolResults(server, 1), [{ text: "ok\n", isError: false }]);

  await chat.line("again");
  await chat.waitFor(CHOICES, 3);
  await chat.line("n");
  await chat.waitForPrompt(3);
  assertEquals(await Deno.stat(ws.path("x")).then(() => true, () => false), false);
  const result = toolResults(server, 3).at(-1);
  assertEquals(result, {
    text: "bash: discarded by the operator; nothing it changed was applied, and its output is " +
      "withheld",
    isError: true,
  });
  // What the refused command printed never reaches the model (its command line does).
  assert(!toolResults(server, 3).some((r) => r.text.includes("secret-output")));
});
