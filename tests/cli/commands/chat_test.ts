/**
 * `rousseau chat` end to end: the real CLI in a real pseudo-terminal (a private tmux server
 * per test), typed at with `send-keys` and read back with `capture-pane`, against the
 * loopback fake Anthropic server. Every wait polls the screen until the expected text shows
 * up (or a generous limit passes, and the failure shows the screen); nothing is timed.
 */

import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../_helpers/assert.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { survivors, waitForProcess } from "../../_helpers/processes.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import {
  after,
  choices,
  openChat,
  toolResults,
  userTexts,
  WAIT_LIMIT_MS,
} from "../../_helpers/tmux_chat.ts";

/**
 * The prompt before a bash call runs: with the overlay off (or the network on) a call the
 * policy asks about is asked before it runs; tests/cli/commands/chat_preview_test.ts has the preview.
 */
const ASK_FIRST = { env: { ROUSSEAU_TOOLS_BASH_OVERLAY: "off" } };

Deno.test("chat: an approved bash call shows the prompt, the tool line, the result and the reply", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { text: "Let me check.", tools: [{ name: "bash", input: { command: "echo hi" } }] },
    { text: "It printed hi." },
  ]);
  await using chat = await openChat(server, ws, [], ASK_FIRST);
  const header = await chat.waitForPrompt(1);
  assertMatch(header[0]!, /^rousseau anthropic\/\S+ · session [0-9a-f-]{36}$/);
  assertStringIncludes(header[1]!, `approver=pattern · confinement=${ws.root}`);
  // The layers line breaks between its fields at the terminal's width (120 here).
  const hint = header.indexOf("Type a task, /help for commands, Ctrl+D to leave.");
  assert(hint >= 2, header.join("\n"));
  assertStringIncludes(header.slice(1, hint).join(" "), "sandbox=");

  await chat.line("say hi");
  await chat.waitFor(choices("echo hi"));
  await chat.keys("y", "Enter");
  const lines = await chat.waitForPrompt(2);
  const turn = after(lines, "› say hi");
  assertEquals(turn.slice(0, 7), [
    "Let me check.",
    "",
    "bash needs approval",
    "$ echo hi",
    choices("echo hi"),
    "> y",
    "→ bash  echo hi",
  ]);
  assertMatch(turn[7]!, /^← exit 0 · 1 line · \d+\.\ds$/);
  assertEquals(turn.slice(8), ["It printed hi.", "›"]);

  assertEquals(server.requests.length, 2);
  assertEquals(userTexts(server, 0), ["say hi"]);
  assertEquals(toolResults(server, 1), [{ text: "hi\n", isError: false }]);
});

// Issue 17: a thinking model's reasoning was dropped. Shown dimmed, then the answer on a line
// of its own; stored in the session, and sent back with its signature (Anthropic).
Deno.test("chat: reasoning is shown dimmed before the answer", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { thinking: "They want a greeting.", signature: "sig_1", text: "Hello." },
    { text: "Bye." },
  ]);
  await using chat = await openChat(server, ws, [], { color: true });
  await chat.waitForPrompt(1);
  await chat.line("greet me");
  const lines = await chat.waitForPrompt(2);
  assertEquals(after(lines, "› greet me"), ["They want a greeting.", "Hello.", "›"]);
  assertStringIncludes(await chat.painted(), "\x1b[2mThey want a greeting.");
  await chat.line("bye");
  await chat.waitForPrompt(3);
  assertEquals(server.requests[1]!.body.messages[1].content[0], {
    type: "thinking",
    thinking: "They want a greeting.",
    signature: "sig_1",
  });
});

Deno.test("chat: a denial with a reason reaches the model as an error result", async (t) => {
  await using ws = await tmpWorkspace();
  const notes = ws.path("notes.txt");
  await using server = startFakeAnthropic([
    { tools: [{ name: "write", input: { path: notes, content: "hello\n" } }] },
    { text: "Understood, no notes." },
    { tools: [{ name: "bash", input: { command: "rm -rf build" } }] },
    { text: "Leaving build alone." },
  ]);
  await using chat = await openChat(server, ws, [], ASK_FIRST);
  await chat.waitForPrompt(1);

  await t.step("n and the reason on the answer line", async () => {
    await chat.line("write some notes");
    const shown = await chat.waitFor("[r] deny and tell the model why");
    const preview = after(shown, "write needs approval");
    assertEquals(preview[0], `${notes} (new file)`);
    assert(preview.includes("+hello"), preview.join("\n"));
    await chat.line("n not in this repo");
    const turn = after(await chat.waitForPrompt(2), "> n not in this repo");
    assertEquals(turn[0], `→ write  ${notes}`);
    assertMatch(
      turn[1]!,
      /^← tool call blocked: denied by the operator: not in this repo · \d+\.\ds$/,
    );
    assertEquals(turn.slice(2), ["Understood, no notes.", "›"]);
    assertEquals(toolResults(server, 1), [{
      text: "tool call blocked: denied by the operator: not in this repo",
      isError: true,
    }]);
    assertEquals(await Deno.stat(notes).then(() => true, () => false), false);
  });

  await t.step("r, then the reason at its own prompt", async () => {
    await chat.line("clean the build");
    await chat.waitFor(choices("rm -rf build"));
    await chat.line("r");
    await chat.waitFor("reason:");
    await chat.line("Keep The Cache");
    const turn = after(await chat.waitForPrompt(3), "reason: Keep The Cache");
    assertEquals(turn[0], "→ bash  rm -rf build");
    assertEquals(turn.slice(2), ["Leaving build alone.", "›"]);
    assertEquals(toolResults(server, 3).at(-1), {
      text: "tool call blocked: denied by the operator: Keep The Cache",
      isError: true,
    });
  });
});

Deno.test("chat: a grants the program and subcommand for the session; /approver lists it", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: "echo one" } }] },
    { text: "first done" },
    { tools: [{ name: "bash", input: { command: "echo one more" } }] },
    { text: "second done" },
    { tools: [{ name: "bash", input: { command: "echo two" } }] },
    { text: "third done" },
  ]);
  await using chat = await openChat(server, ws, [], ASK_FIRST);
  await chat.waitForPrompt(1);
  await chat.line("first");
  await chat.waitFor(choices("echo one"));
  await chat.line("a");
  await chat.waitForPrompt(2);
  // Granted: `echo one` and more words, judged as an allow rule `^echo one( |$)`.
  await chat.line("second");
  let lines = await chat.waitForPrompt(3);
  assertEquals(lines.filter((l) => l.includes("needs approval")).length, 1, lines.join("\n"));
  assertEquals(after(lines, "› second")[0], "→ bash  echo one more");
  assertEquals(toolResults(server, 3).at(-1), { text: "one more\n", isError: false });
  // Not granted: another command of the same tool is asked again.
  await chat.line("third");
  await chat.waitFor(choices("echo two"));
  await chat.line("n");
  lines = await chat.waitForPrompt(4);
  assertEquals(lines.filter((l) => l.includes("needs approval")).length, 2, lines.join("\n"));
  await chat.line("/approver");
  const shown = after(await chat.waitForPrompt(5), "› /approver");
  const at = shown.indexOf("session grants:");
  assert(at !== -1, shown.join("\n"));
  assertEquals(shown.slice(at), ["session grants:", "  bash  echo one", "›"]);
});

Deno.test("chat: Ctrl+C stops a running bash call, kills it and returns to the prompt", async () => {
  await using ws = await tmpWorkspace();
  // A unique duration makes the sleep itself findable by its command line.
  const marker = `sleep 3600.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  await using server = startFakeAnthropic([
    { text: "Starting the long job.", tools: [{ name: "bash", input: { command: marker } }] },
    { text: "Still here." },
  ]);
  // `--allow bash` does not get past chat's default ask rule (ask rules come before allow
  // rules), so this chat lets every call run.
  await using chat = await openChat(server, ws, ["--approver", "allow_all"]);
  await chat.waitForPrompt(1);
  await chat.line("run the long job");
  await chat.waitFor(`→ bash  ${marker}`);
  await waitForProcess(marker, WAIT_LIMIT_MS);
  await chat.keys("C-c");
  const turn = after(await chat.waitForPrompt(2), "› run the long job");
  assertEquals(turn[0], "Starting the long job.");
  assertEquals(turn[1], `→ bash  ${marker}`);
  assertMatch(turn[2]!, /^← bash: cancelled · \d+\.\ds$/);
  assertEquals(turn.slice(3), ["(cancelled)", "›"]);
  assertEquals(await survivors(marker), 0);
  assertEquals(server.requests.length, 1, "a cancelled turn asks the model nothing more");

  await chat.line("are you there?");
  assertEquals(after(await chat.waitForPrompt(3), "› are you there?"), ["Still here.", "›"]);
  assertEquals(userTexts(server, 1).at(-1), "are you there?");
  assertEquals(toolResults(server, 1), [{ text: "bash: cancelled", isError: true }]);
});

Deno.test("chat: Ctrl+C while the model is silent cancels the turn", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ hang: true }, { text: "Back again." }]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.line("think hard");
  await server.waitForRequest(1);
  await chat.keys("C-c");
  assertEquals(after(await chat.waitForPrompt(2), "› think hard"), ["(cancelled)", "›"]);
  await chat.line("again");
  assertEquals(after(await chat.waitForPrompt(3), "› again"), ["Back again.", "›"]);
  assertEquals(userTexts(server, 1), ["think hard", "again"]);
});

Deno.test("chat: Ctrl+C at the approval prompt denies the call and cancels the turn", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { tools: [{ name: "bash", input: { command: "touch made" } }] },
    { text: "Not touched." },
  ]);
  await using chat = await openChat(server, ws, [], ASK_FIRST);
  await chat.waitForPrompt(1);
  await chat.line("make a file");
  await chat.waitFor(choices("touch made"));
  await chat.keys("C-c");
  const turn = after(await chat.waitForPrompt(2), choices("touch made"));
  assertEquals(turn[0], "→ bash  touch made");
  assertMatch(
    turn[1]!,
    /^← tool call blocked: the operator cancelled the approval prompt · \d+\.\ds$/,
  );
  assertEquals(turn.slice(2), ["(cancelled)", "›"]);
  assertEquals(server.requests.length, 1);
  assertEquals(await Deno.stat(ws.path("made")).then(() => true, () => false), false);

  await chat.line("ok");
  await chat.waitForPrompt(3);
  assertEquals(toolResults(server, 1), [{
    text: "tool call blocked: the operator cancelled the approval prompt",
    isError: true,
  }]);
});

Deno.test("chat: /help, /tools, /session and unknown commands answer locally; /exit leaves with 0", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([]);
  await using chat = await openChat(server, ws);
  const header = await chat.waitForPrompt(1);
  const session = header[0]!.match(/session (\S+)$/)![1]!;

  await chat.line("/help");
  const help = after(await chat.waitForPrompt(2), "› /help");
  assertEquals(help[0], "Commands:");
  for (const command of ["/help", "/tools", "/approver", "/session", "/exit"]) {
    assert(
      help.some((l) => l.trimStart().startsWith(command)),
      `${command} in:\n${help.join("\n")}`,
    );
  }

  await chat.line("/tools");
  const tools = after(await chat.waitForPrompt(3), "› /tools");
  assertEquals(tools.map((l) => l.split(/\s+/, 1)[0]), [
    "bash",
    "edit",
    "grep",
    "read",
    "write",
    "›",
  ]);

  await chat.line("/session");
  assertEquals(after(await chat.waitForPrompt(4), "› /session"), [
    `session ${session} (0 messages)`,
    "›",
  ]);

  await chat.line("/nope");
  assertEquals(after(await chat.waitForPrompt(5), "› /nope"), [
    "unknown command /nope (try /help)",
    "›",
  ]);

  await chat.keys("C-c");
  await chat.waitFor("(Ctrl+D or /exit leaves)");
  await chat.waitForPrompt(6);

  await chat.line("/exit");
  assertEquals(await chat.waitForExit(), 0);
  assertEquals(server.requests.length, 0, "slash commands never reach the model");
});

Deno.test("chat: Ctrl+D on an empty line leaves with 0", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.keys("C-d");
  assertEquals(await chat.waitForExit(), 0);
  assertEquals(server.requests.length, 0);
});

Deno.test("chat: a multi-line paste is one prompt", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ text: "Got both lines." }]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.type("first line of the task\nsecond line of the task\n");
  const lines = await chat.waitForPrompt(2);
  assertEquals(after(lines, "› first line of the task"), [
    "second line of the task",
    "Got both lines.",
    "›",
  ]);
  assertEquals(server.requests.length, 1);
  assertEquals(userTexts(server, 0), ["first line of the task\nsecond line of the task"]);
});

Deno.test("chat: read-only calls that run together each get their line, and the prompt stays", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n" } });
  await using server = startFakeAnthropic([
    {
      text: "Looking.",
      tools: [
        { name: "read", input: { path: ws.path("a.txt") } },
        { name: "grep", input: { pattern: "alpha", path: ws.root } },
      ],
    },
    { text: "Found alpha." },
  ]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.line("find alpha");
  const turn = after(await chat.waitForPrompt(2), "› find alpha");
  assertEquals(turn[0], "Looking.");
  assert(turn.includes(`→ read  ${ws.path("a.txt")}`), turn.join("\n"));
  assert(turn.includes(`→ grep  alpha ${ws.root}`), turn.join("\n"));
  assertEquals(turn.filter((l) => l.startsWith("← ")).length, 2, turn.join("\n"));
  assertEquals(turn.slice(-2), ["Found alpha.", "›"]);
  // A spinner left running would keep redrawing over the prompt line.
  await chat.line("/session");
  const next = after(await chat.waitForPrompt(3), "› /session");
  assertEquals(next.length, 2, next.join("\n"));
  assertEquals(toolResults(server, 1).map((r) => r.isError), [false, false]);
});

Deno.test("chat: --session resumes a stored conversation", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { text: "Noted: the word is kiwi." },
    { text: "The word was kiwi." },
  ]);
  const home = await Deno.makeTempDir({ prefix: "rousseau-chat-home-" });
  try {
    let session: string;
    {
      await using first = await openChat(server, ws, [], { home });
      session = (await first.waitForPrompt(1))[0]!.match(/session (\S+)$/)![1]!;
      await first.line("remember the word kiwi");
      await first.waitForPrompt(2);
      await first.line("/exit");
      assertEquals(await first.waitForExit(), 0);
    }
    await using chat = await openChat(server, ws, [], { home, chatArgs: ["--session", session] });
    const header = await chat.waitForPrompt(1);
    assertMatch(header[0]!, new RegExp(`session ${session}$`));
    await chat.line("/session");
    assertEquals(after(await chat.waitForPrompt(2), "› /session"), [
      `session ${session} (2 messages)`,
      "›",
    ]);
    await chat.line("what was the word?");
    await chat.waitForPrompt(3);
    assertEquals(userTexts(server, 1), ["remember the word kiwi", "what was the word?"]);
    assertEquals(server.requests[1]!.body.messages[1].content[0].text, "Noted: the word is kiwi.");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("chat: without NO_COLOR the approval heading and the diff are coloured", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { tools: [{ name: "write", input: { path: ws.path("c.txt"), content: "green\n" } }] },
    { text: "ok" },
  ]);
  await using chat = await openChat(server, ws, [], { color: true });
  await chat.waitForPrompt(1);
  await chat.line("write c");
  await chat.waitFor("[r] deny and tell the model why");
  const painted = await chat.painted();
  assertStringIncludes(painted, "\x1b[1mwrite needs approval");
  assertStringIncludes(painted, "\x1b[32m+green");
  await chat.line("n");
  await chat.waitForPrompt(2);
  assertEquals(toolResults(server, 1), [{
    text: "tool call blocked: denied by the operator",
    isError: true,
  }]);
});

Deno.test("chat: /context shows the gauge and /compact summarises with one request", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { text: "First answer." },
    { text: "SUMMARY: the user said hello." },
    { text: "Second answer." },
  ]);
  await using chat = await openChat(server, ws, [], {
    chatArgs: ["--context-window", "100000"],
  });
  await chat.waitForPrompt(1);
  await chat.line("/context");
  assertEquals(after(await chat.waitForPrompt(2), "› /context"), [
    "context 0 / 100k tokens (0%)",
    "›",
  ]);
  await chat.line("hello");
  assertEquals(after(await chat.waitForPrompt(3), "› hello"), ["First answer.", "›"]);
  await chat.line("/compact");
  const compacted = after(await chat.waitForPrompt(4), "› /compact");
  assertMatch(
    compacted[0]!,
    /^\(context compacted \(\/compact\): 2 message\(s\) summarised; [\d.]+k? → [\d.]+k? tokens of 100k\)$/,
  );
  // The summary request offers no tools; the next turn's request starts with the summary.
  assertEquals(server.requests[1]!.body.tools, undefined);
  await chat.line("and now?");
  assertEquals(after(await chat.waitForPrompt(5), "› and now?"), ["Second answer.", "›"]);
  const texts = userTexts(server, 2);
  assertEquals(texts.length, 2);
  assertStringIncludes(texts[0]!, "[context compacted: the 2 earliest message(s)");
  assertStringIncludes(texts[0]!, "SUMMARY: the user said hello.");
  assertEquals(texts[1], "and now?");
  await chat.line("/context");
  assertMatch(
    after(await chat.waitForPrompt(6), "› /context")[0]!,
    /^context [\d.]+k? \/ 100k tokens \(\d%\) · compacted 1×$/,
  );
});
