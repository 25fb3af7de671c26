/**
 * Issue 27 item 2: in a large workspace without the overlay, undo's scan around the first
 * bash call took 11 s while the chat spinner stayed frozen at `0.0s` (the scan held the event
 * loop). The scan must leave the spinner ticking, say on the status line what it is doing,
 * and after the first slow scan say once how to turn it off or avoid it. A real chat in a
 * real pseudo-terminal (tests/_helpers/tmux_chat.ts) over a generated tree of 20,000 files,
 * against the loopback fake Anthropic server; the assertions are about text, not time.
 *
 * The status text is drawn by the spinner's interval timer: seeing it while the scan runs
 * is itself the proof that the event loop was not blocked.
 */

import { join } from "node:path";
import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { openChat } from "../../_helpers/tmux_chat.ts";

const FILES = 20_000;

/** `FILES` small files, 200 a directory. */
async function bigTree(root: string): Promise<void> {
  for (let d = 0; d < FILES / 200; d++) {
    const dir = join(root, `d${d}`);
    await Deno.mkdir(dir);
    await Promise.all(
      Array.from(
        { length: 200 },
        (_, f) => Deno.writeTextFile(join(dir, `f${f}.txt`), `file ${d}/${f}\n`),
      ),
    );
  }
}

Deno.test("chat: undo's scan of a large tree keeps the spinner going, says what it does, and once how to avoid it", async () => {
  await using ws = await tmpWorkspace();
  await bigTree(ws.root);
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: "echo one > one.txt" } }] },
    { text: "First done." },
    { tools: [{ name: "bash", input: { command: "echo two > two.txt" } }] },
    { text: "Second done." },
  ]);
  // Without the overlay undo scans the tree around each bash call.
  await using chat = await openChat(server, ws, ["--allow", "bash"], {
    env: { ROUSSEAU_TOOLS_BASH_OVERLAY: "off" },
  });
  await chat.waitForPrompt(1);
  await chat.line("make one");
  const scanning = await chat.waitFor(
    `snapshotting ${FILES.toLocaleString("en-US")} files for undo…`,
  );
  const line = scanning.find((l) => l.includes("snapshotting"))!;
  assertStringIncludes(line, "→ bash  echo one > one.txt  · snapshotting 20,000 files for undo…");
  const note = "undo: snapshotting 20,000 files took ";
  await chat.waitFor(note);
  const screen = await chat.waitForPrompt(2);
  const said = screen.filter((l) => l.startsWith(note));
  assertEquals(said.length, 1, screen.join("\n"));
  assertStringIncludes(
    said[0]!,
    "without the overlay the workspace is scanned around every bash call. Turn undo off with " +
      "state.undo.max_bytes: 0 (ROUSSEAU_STATE_UNDO_MAX_BYTES=0), or let bash run over the " +
      "overlay (tools.bash.overlay: auto, with bubblewrap) so only what a command changes is kept",
  );
  // The status label went back to the call once the scan ended; the call's result follows.
  assertEquals(screen.includes("→ bash  echo one > one.txt"), true, screen.join("\n"));
  // A second turn scans again, but the note is said only once.
  await chat.line("make two");
  const later = await chat.waitForPrompt(3);
  assertEquals(later.filter((l) => l.startsWith(note)).length, 1, later.join("\n"));
  assertEquals(await Deno.readTextFile(ws.path("two.txt")), "two\n");
});

Deno.test("run: the first slow undo scan says once on stderr how to avoid it; -q keeps stderr for errors", async () => {
  await using ws = await tmpWorkspace();
  await bigTree(ws.root);
  const steps = [
    {
      tools: [
        { name: "bash", input: { command: "echo one > one.txt" } },
        { name: "bash", input: { command: "echo two > two.txt" } },
      ],
    },
    { text: "Done." },
  ];
  const note = "rousseau: undo: snapshotting 20,000 files took ";
  for (const quiet of [false, true]) {
    // A state directory of its own each time: each run's first scan reads the tree whole.
    const data = await Deno.makeTempDir({ prefix: "rousseau-slow-scan-" });
    await using _data = { [Symbol.asyncDispose]: () => Deno.remove(data, { recursive: true }) };
    await using server = startFakeAnthropic(steps);
    const out = await runCli(
      ["--workspace", ws.root, "--allow", "bash", "run", ...(quiet ? ["-q"] : []), "go"],
      {
        env: {
          ANTHROPIC_BASE_URL: server.url,
          ANTHROPIC_API_KEY: "test-key",
          ROUSSEAU_TOOLS_BASH_OVERLAY: "off",
          XDG_DATA_HOME: data,
        },
      },
    );
    assertEquals(out.code, 0, out.stderr);
    const said = out.stderr.split("\n").filter((l) => l.startsWith(note));
    // Two bash calls, four scans; only the first slow one is told of.
    assertEquals(said.length, quiet ? 0 : 1, out.stderr);
    if (!quiet) assertStringIncludes(said[0]!, "Turn undo off with state.undo.max_bytes: 0");
    if (quiet) assertEquals(out.stderr, "");
  }
});
