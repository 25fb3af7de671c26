/**
 * Chat's `/undo` end to end: the real CLI in a real pseudo-terminal (a private tmux server,
 * as tests/cli/chat_test.ts drives it), typed at with `send-keys`, read back with
 * `capture-pane`, against the loopback fake Anthropic server. The turn changes real files
 * through write and bash; `/undo` must put them back, refuse over a person's later edit
 * (nothing written), and `/undo --force` restore anyway. Every wait polls the screen.
 *
 * opencode's `/undo` in its TUI is the model for the command (sst/opencode
 * packages/opencode/src/session/revert.ts); unlike Claude Code's checkpoints
 * (https://docs.anthropic.com/en/docs/claude-code/checkpointing: "Bash command changes not
 * tracked"), what bash did comes back too.
 */

import { join } from "node:path";
import { assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { CLI_ARGS } from "../_helpers/cli.ts";
import { type FakeServer, startFakeAnthropic } from "../_helpers/fake_providers.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { snapshotTree } from "../_helpers/tree_snapshot.ts";

const WAIT_LIMIT_MS = 60_000;
const POLL_MS = 100;
const decoder = new TextDecoder();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Chat extends AsyncDisposable {
  line(text: string): Promise<void>;
  screen(): Promise<string[]>;
  /** Waits until the REPL is idle at its `›` prompt for the `count`-th time. */
  waitForPrompt(count: number): Promise<string[]>;
}

/** `rousseau --workspace ROOT ...args chat` in its own tmux server and state directory. */
async function openChat(server: FakeServer, ws: TmpWorkspace, args: string[]): Promise<Chat> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-chat-undo-" }));
  const socket = join(base, "tmux.sock");
  const conf = join(base, "tmux.conf");
  await Deno.writeTextFile(
    conf,
    "set -g remain-on-exit on\nset -g status off\nset -g history-limit 10000\n",
  );
  const {
    INIT_CWD: _cwd,
    TMUX: _tmux,
    TMUX_PANE: _pane,
    ...rest
  } = Deno.env.toObject();
  const env: Record<string, string> = {
    ...rest,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "test-key",
    XDG_DATA_HOME: join(base, "home", "data"),
    XDG_CONFIG_HOME: join(base, "home", "config"),
    TERM: "xterm-256color",
    NO_COLOR: "1",
  };
  const tmux = async (...tmuxArgs: string[]) => {
    const out = await new Deno.Command("tmux", {
      args: ["-S", socket, "-f", conf, ...tmuxArgs],
      clearEnv: true,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`tmux ${tmuxArgs.join(" ")}: ${decoder.decode(out.stderr)}`);
    }
    return decoder.decode(out.stdout);
  };
  const command = [Deno.execPath(), ...CLI_ARGS, "--workspace", ws.root, ...args, "chat"];
  await tmux("new-session", "-d", "-x", "160", "-y", "50", "-c", ws.root, ...command);
  const pid = Number((await tmux("display-message", "-p", "#{pane_pid}")).trim());
  const screen = async () => {
    const lines = (await tmux("capture-pane", "-p", "-J", "-S", "-")).split("\n")
      .map((l) => l.trimEnd());
    while (lines.length > 0 && lines.at(-1) === "") lines.pop();
    return lines;
  };
  return {
    async line(text) {
      await tmux("send-keys", "-l", `${text}\r`);
    },
    screen,
    async waitForPrompt(count) {
      const deadline = performance.now() + WAIT_LIMIT_MS;
      for (;;) {
        const lines = await screen();
        if (lines.filter((l) => l.startsWith("›")).length >= count && lines.at(-1) === "›") {
          return lines;
        }
        if (performance.now() > deadline) {
          throw new Error(`gave up waiting for prompt #${count}; the screen:\n${lines.join("\n")}`);
        }
        await sleep(POLL_MS);
      }
    },
    async [Symbol.asyncDispose]() {
      await tmux("kill-server").catch(() => {});
      for (let i = 0; i < 100; i++) {
        if (!await Deno.stat(`/proc/${pid}`).then(() => true, () => false)) break;
        await sleep(POLL_MS);
      }
      await Deno.remove(base, { recursive: true });
    },
  };
}

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
