/**
 * Chat's `/undo` end to end: the real CLI in a real pseudo-terminal (a private tmux server,
 * as tests/cli/commands/chat_test.ts drives it), typed at with `send-keys`, read back with
 * `capture-pane`, against the loopback fake Anthropic server. The turn changes real files
 * through write and bash; `/undo` must put them back, refuse over a person's later edit
 * (nothing written), and `/undo --force` restore anyway. Every wait polls the screen.
 *
 * opencode's `/undo` in its TUI is the model for the command (sst/opencode
 * packages/opencode/src/session/revert.ts); unlike Claude Code's checkpoints
 * (https://docs.anthropic.com/en/docs/claude-code/checkpointing: "Bash command changes not
 * tracked"), what bash did comes back too.
 */

import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { openChat } from "../../_helpers/tmux_chat.ts";
import { snapshotTree } from "../../_helpers/tree_snapshot.ts";

/** The lines after the last one that includes `marker`. */
function after(lines: string[], marker: string): string[] {
  const at = lines.findLastIndex((l) => l.includes(marker));
  return at === -1 ? [] : lines.slice(at + 1);
}

/** Every path under `root`: kind, mode and content. */
function tree(root: string): Promise<Record<string, string>> {
  return snapshotTree(root, { content: "json" });
}

Deno.test("chat: /undo puts back what the last turn did through write and bash", async () => {
  await using ws = await tmpWorkspace({
    files: { "over.txt": "old\n", "secret.txt": "private\n", "notes.txt": "mine\n" },
  });
  await Deno.chmod(ws.path("secret.txt"), 0o600);
  const original = await tree(ws.root);
  await using server = startFakeAnthropic([
    { tools: [{ name: "write", input: { path: ws.path("over.txt"), content: "new\n" } }] },
    {
      tools: [{
        name: "bash",
        input: { command: "rm secret.txt && mkdir -p out && echo made > out/made.txt" },
      }],
    },
    { text: "Done one." },
    { tools: [{ name: "write", input: { path: ws.path("notes.txt"), content: "agent\n" } }] },
    { text: "Done two." },
  ]);
  await using chat = await openChat(server, ws, [
    "--allow",
    "write",
    "--allow",
    "bash",
  ]);
  const header = await chat.waitForPrompt(1);
  const session = header[0]!.match(/session (\S+)$/)![1]!;

  await chat.line("/undo");
  assertEquals(after(await chat.waitForPrompt(2), "› /undo"), [
    `nothing to undo in session ${session}`,
    "›",
  ]);

  await chat.line("change things");
  await chat.waitForPrompt(3);
  assertEquals(await Deno.readTextFile(ws.path("out/made.txt")), "made\n");
  await chat.line("/undo");
  assertEquals(after(await chat.waitForPrompt(4), "› /undo"), [
    `undid turn 1 of session ${session}: 2 paths restored, 2 paths removed`,
    `restored ${ws.path("over.txt")}`,
    `restored ${ws.path("secret.txt")}`,
    `removed ${ws.path("out")}`,
    `removed ${ws.path("out/made.txt")}`,
    "›",
  ]);
  assertEquals(await tree(ws.root), original);

  // Turn 2 writes notes.txt; a person edits it afterwards: /undo refuses and writes nothing.
  await chat.line("second");
  await chat.waitForPrompt(5);
  await Deno.writeTextFile(ws.path("notes.txt"), "the person's\n");
  await chat.line("/undo");
  assertEquals(after(await chat.waitForPrompt(6), "› /undo"), [
    "undo: nothing was written: 1 path changed after turn 2 (pass --force to restore anyway):",
    `  ${ws.path("notes.txt")}`,
    "›",
  ]);
  assertEquals(await Deno.readTextFile(ws.path("notes.txt")), "the person's\n");

  await chat.line("/undo --force");
  const forced = after(await chat.waitForPrompt(7), "› /undo --force");
  assertStringIncludes(forced[0]!, `undid turn 2 of session ${session}: 1 path restored`);
  assertEquals(await tree(ws.root), original);

  await chat.line("/undo --bogus");
  assertEquals(after(await chat.waitForPrompt(8), "› /undo --bogus"), [
    '/undo: unknown argument "--bogus" (want /undo or /undo --force)',
    "›",
  ]);
  assertEquals(server.requests.length, 5, "/undo never reaches the model");
});
