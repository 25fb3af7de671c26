/**
 * Issue 19, chat's daily use: the spinner while the model is asked (and retried), bracketed
 * paste, text typed during a turn, markdown replies at the terminal's width, the status line
 * with /cost, /clear and /model, the --resume picker, and a piped stdin. Real CLI, real
 * pseudo-terminal (tests/_helpers/tmux_chat.ts), loopback fake Anthropic server.
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { after, openChat, STATUS, userTexts } from "../../_helpers/tmux_chat.ts";

Deno.test("chat: a spinner with the elapsed time shows while the model is silent, then goes", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ hang: true }]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.line("think hard");
  const shown = await chat.waitFor(" thinking  ");
  assertMatch(shown.find((l) => l.includes(" thinking  "))!, /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking {2}\d+\.\ds$/);
  await chat.keys("C-c");
  const turn = after(await chat.waitForPrompt(2), "› think hard");
  assertEquals(turn, ["(cancelled)", "›"]);
});

Deno.test("chat: a retried request says so in the spinner; a line typed meanwhile is sent next", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    {
      status: 429,
      headers: { "retry-after": "3" },
      error: { type: "rate_limit_error", message: "slow down" },
    },
    { text: "First answer." },
    { text: "Queued answer." },
  ]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.line("first question");
  const shown = await chat.waitFor("retrying in 3s (429)");
  assertMatch(
    shown.find((l) => l.includes("retrying"))!,
    /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] retrying in 3s \(429\) {2}\d+\.\ds$/,
  );
  // Typed while the turn runs: before, it was thrown away.
  await chat.line("and another thing");
  await chat.waitFor("(queued, sent after this turn: and another thing)");
  await chat.waitFor("Queued answer.");
  const lines = await chat.waitForPrompt(3);
  assertEquals(after(lines, "› and another thing"), ["Queued answer.", "›"]);
  assert(lines.includes("First answer."), lines.join("\n"));
  assertEquals(server.requests.length, 3);
  assertEquals(userTexts(server, 2), ["first question", "and another thing"]);
});

Deno.test("chat: Ctrl+C cancels the turn and drops what was queued meanwhile", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ hang: true }, { text: "Fresh start." }]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.line("think hard");
  await server.waitForRequest(1);
  await chat.line("never mind that");
  await chat.waitFor("(queued, sent after this turn: never mind that)");
  await chat.keys("C-c");
  await chat.waitFor("(dropped 1 queued prompt(s))");
  await chat.waitFor("(cancelled)");
  await chat.line("hello");
  assertEquals(after(await chat.waitForPrompt(3), "› hello"), ["Fresh start.", "›"]);
  assertEquals(server.requests.length, 2);
  assertEquals(userTexts(server, 1), ["think hard", "hello"]);
});

Deno.test("chat: a bracketed paste of several lines is one prompt; a one-line paste is editable", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ text: "Got three lines." }, { text: "Got it." }]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.paste("line one\nline two\nline three\n");
  const lines = await chat.waitForPrompt(2);
  assertEquals(after(lines, "› line one"), ["line two", "line three", "Got three lines.", "›"]);
  assertEquals(userTexts(server, 0), ["line one\nline two\nline three"]);

  await chat.paste("pasted words");
  await chat.line(" and typed ones");
  await chat.waitForPrompt(3);
  assertEquals(userTexts(server, 1).at(-1), "pasted words and typed ones");
  assertEquals(server.requests.length, 2);
});

const MARKDOWN =
  "# Plan\n\nSome **bold** words and `code` with [a link](https://example.org).\n\n" +
  "- first item\n- second item\n\n```ts\nconst x = 1;\n```\n\nDone.";

Deno.test("chat: replies are rendered as markdown; without colour there is no escape code", async (t) => {
  await t.step("colour", async () => {
    await using ws = await tmpWorkspace();
    await using server = startFakeAnthropic([{ text: MARKDOWN }]);
    await using chat = await openChat(server, ws, [], { color: true });
    await chat.waitForPrompt(1);
    await chat.line("plan it");
    const turn = after(await chat.waitForPrompt(2), "› plan it").filter((l) => !STATUS.test(l));
    assertEquals(turn, [
      "# Plan",
      "",
      "Some bold words and code with a link (https://example.org).",
      "",
      "- first item",
      "- second item",
      "",
      "  const x = 1;",
      "",
      "Done.",
      "›",
    ]);
    const painted = await chat.painted();
    // Heading, bold and the code are painted; the fences and stars are gone.
    const ESC = "\x1b";
    assertMatch(painted, new RegExp(`${ESC}\\[[\\d;]*m# Plan`));
    assertMatch(painted, new RegExp(`${ESC}\\[[\\d;]*mbold${ESC}\\[`));
    assert(!painted.includes("```"), painted);
  });
  await t.step("NO_COLOR", async () => {
    await using ws = await tmpWorkspace();
    await using server = startFakeAnthropic([{ text: MARKDOWN }]);
    await using chat = await openChat(server, ws);
    await chat.waitForPrompt(1);
    await chat.line("plan it");
    const turn = after(await chat.waitForPrompt(2), "› plan it");
    assertEquals(turn.slice(0, 3), [
      "# Plan",
      "",
      "Some bold words and code with a link (https://example.org).",
    ]);
    assert(!(await chat.painted()).includes("\x1b["), "an escape code without colour");
  });
});

/** The markdown models commonly write: lists with inline markup, nesting, a table, code. */
const MODEL_MARKDOWN = "Changes:\n\n" +
  "- item **two** with `code` and [a link](https://example.org)\n" +
  "  - nested **bold**\n" +
  "1. first `step`\n2. second\n\n" +
  "| file | change |\n|---|---|\n| `a.ts` | **renamed** |\n\n" +
  "```sh\nnpm test\n```\n\nDone.";

Deno.test("chat: lists keep their bullet and render bold, code and links; tables and code too (tmux -e)", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ text: MODEL_MARKDOWN }]);
  await using chat = await openChat(server, ws, [], { color: true });
  await chat.waitForPrompt(1);
  await chat.line("show me");
  const turn = after(await chat.waitForPrompt(2), "› show me").filter((l) => !STATUS.test(l));
  assertEquals(turn, [
    "Changes:",
    "",
    "- item two with code and a link (https://example.org)",
    "  - nested bold",
    "",
    "1. first step",
    "2. second",
    "",
    "┌──────┬─────────┐",
    "│ file │ change  │",
    "├──────┼─────────┤",
    "│ a.ts │ renamed │",
    "└──────┴─────────┘",
    "",
    "  npm test",
    "",
    "Done.",
    "›",
  ]);
  const painted = await chat.painted();
  const ESC = "\x1b";
  // Inside list items, bold and code are painted as in a paragraph; no markup is left.
  assertMatch(painted, new RegExp(`- item ${ESC}\\[1mtwo${ESC}\\[[\\d;]*m`));
  assertMatch(painted, new RegExp(` with ${ESC}\\[33mcode${ESC}\\[`));
  assertMatch(painted, new RegExp(`  - nested ${ESC}\\[1mbold`));
  assert(!painted.includes("**") && !painted.includes("`"), painted);
});

Deno.test("chat: the header wraps between its fields at 120 columns, never inside a word", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([]);
  await using chat = await openChat(server, ws);
  const screen = await chat.waitForPrompt(1);
  const start = screen.findIndex((l) => l.startsWith("approver="));
  const end = screen.findIndex((l) => l.startsWith("Type a task"));
  assert(start !== -1 && end > start, screen.join("\n"));
  const header = screen.slice(start, end);
  // capture-pane -J joins what the terminal wrapped: a line over 120 would show as one.
  for (const line of header) assert(line.length <= 120, `over 120 columns: ${line}`);
  const fields = header.join(" · ").split(/\s+·\s+/).map((f) => f.trim());
  assertEquals(fields.map((f) => f.split("=")[0]), [
    "approver",
    "confinement",
    "worker",
    "sandbox",
    "net",
  ]);
});

Deno.test("chat: after a resize, long replies wrap at the new width between words", async () => {
  await using ws = await tmpWorkspace();
  const words = Array.from({ length: 40 }, (_, i) => `word${i}${"x".repeat(i % 7)}`);
  await using server = startFakeAnthropic([{ text: words.join(" ") }]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.resize(50, 40);
  await chat.line("talk");
  const turn = after(await chat.waitForPrompt(2), "› talk").slice(0, -1);
  assert(turn.length > 3, turn.join("\n"));
  // capture-pane -J joins lines the terminal wrapped: a line over 50 would be one.
  for (const line of turn) assert(line.length <= 50, `over 50 columns: ${line}`);
  assertEquals(turn.join(" ").split(/\s+/).filter(Boolean), words);
});

Deno.test("chat: the status line, /cost, /model and /clear", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([
    { text: "One.", usage: { input: 1200, output: 35 } },
    { text: "Two.", usage: { input: 2000, output: 10 } },
    { text: "Three.", usage: { input: 100, output: 5 } },
  ]);
  await using chat = await openChat(server, ws);
  await chat.waitForPrompt(1);
  await chat.line("first");
  let lines = await chat.waitForPrompt(2);
  // claude-sonnet-4-5: $3 in, $15 out per million: 1200 × 3 + 35 × 15 = 4125 µ$.
  assertMatch(
    lines.at(-2)!,
    /^· 1\.2k in · 35 out · context [\d.]+k? \/ 200k \(\d+%\) · \$0\.0041$/,
  );
  await chat.line("/cost");
  assertEquals(after(await chat.waitForPrompt(3), "› /cost"), [
    "this chat: 1.2k tokens in, 35 out · $0.0041 at list prices",
    "›",
  ]);
  await chat.line("/model my-local-model");
  assertEquals(after(await chat.waitForPrompt(4), "› /model my-local-model"), [
    "(the next turns go to anthropic/my-local-model)",
    "›",
  ]);
  await chat.line("second");
  lines = await chat.waitForPrompt(5);
  assertEquals(server.requests[1]!.body.model, "my-local-model");
  // No price for that model: no cost shown.
  assertMatch(lines.at(-2)!, /^· 2k in · 10 out · context [\d.]+k?( \/ \S+ \(\d+%\))?$/);
  await chat.line("/cost");
  assertEquals(
    after(await chat.waitForPrompt(6), "› /cost")[0],
    "this chat: 3.2k tokens in, 45 out · no price known for claude-sonnet-4-5, my-local-model (see cli/terminal/prices.ts)",
  );
  const old = (await chat.screen())[0]!.match(/session (\S+)$/)![1]!;
  await chat.line("/clear");
  const cleared = after(await chat.waitForPrompt(7), "› /clear")[0]!;
  const fresh = cleared.match(
    /^\(new session (\S+); the last one is kept: rousseau chat --session (\S+)\)$/,
  );
  assert(fresh !== null && fresh[1] !== old && fresh[2] === old, cleared);
  await chat.line("/session");
  assertEquals(
    after(await chat.waitForPrompt(8), "› /session")[0],
    `session ${fresh[1]} (0 messages)`,
  );
  await chat.line("third");
  await chat.waitForPrompt(9);
  assertEquals(userTexts(server, 2), ["third"]);
  assertEquals(server.requests[2]!.body.model, "my-local-model");
});

Deno.test("chat: a piped stdin is one prompt, one turn, and the exit status of run", async () => {
  await using ws = await tmpWorkspace();
  await using server = startFakeAnthropic([{ text: "Hi there." }]);
  const home = await Deno.makeTempDir({ prefix: "rousseau-chat-pipe-" });
  try {
    const env = {
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: "test-key",
      XDG_DATA_HOME: join(home, "data"),
      XDG_CONFIG_HOME: join(home, "config"),
    };
    const out = await runCli(["--workspace", ws.root, "chat"], { stdin: "say hi\n", env });
    assertEquals(out.code, 0, out.stderr);
    assertStringIncludes(out.stdout, "› say hi\nHi there.\n");
    assert(!out.stdout.includes("\x1b["), out.stdout);
    assertEquals(userTexts(server, 0), ["say hi"]);
    const empty = await runCli(["--workspace", ws.root, "chat"], { stdin: "", env });
    assertEquals(empty.code, 2);
    assertStringIncludes(empty.stderr, "stdin is not a terminal and holds no prompt");
    assertEquals(server.requests.length, 1);

    // The session it made is offered by --resume in a terminal, with its age, turns and prompt.
    await using chat = await openChat(server, ws, [], { home, chatArgs: ["--resume"] });
    const list = await chat.waitFor("Resume which (1-1, Enter for a new session)?");
    assertStringIncludes(
      list.join("\n"),
      "Sessions in this workspace:\n  1  now     1 turn  say hi",
    );
    await chat.line("1");
    const header = await chat.waitForPrompt(1);
    const resumed = header.find((l) => l.startsWith("rousseau "))!;
    await chat.line("/session");
    assertEquals(
      after(await chat.waitForPrompt(2), "› /session")[0],
      `session ${resumed.match(/session (\S+)$/)![1]} (2 messages)`,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
