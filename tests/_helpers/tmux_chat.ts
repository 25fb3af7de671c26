/**
 * A real chat in a real pseudo-terminal (a private tmux server per chat), typed at with
 * `send-keys`, pasted into with `paste-buffer` and read back with `capture-pane`, against a
 * loopback fake provider. Every wait polls the screen until the expected text shows up (or a
 * generous limit passes, and the failure shows the screen); nothing is timed.
 *
 * @module
 */

import { join } from "node:path";
import { CLI_ARGS } from "./cli.ts";
import type { FakeServer } from "./fake_providers.ts";
import type { TmpWorkspace } from "./tmp_workspace.ts";
import { until } from "./until.ts";

/** How long any one wait may take before the test fails, showing the screen. */
export const WAIT_LIMIT_MS = 60_000;
const POLL_MS = 100;
/** The approval prompt's choices line (approver/prompt.ts) for a call `a` would grant. */
export function choices(grant: string): string {
  return `[y] allow once  [a] allow ${grant} for this session  [n] deny  ` +
    "[r] deny and tell the model why";
}

const decoder = new TextDecoder();

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A chat running in its own tmux server. */
export interface Chat extends AsyncDisposable {
  /** Sends tmux keys: names such as `Enter`, `C-c`, `C-d`, or plain characters. */
  keys(...keys: string[]): Promise<void>;
  /** Types `text` literally (newlines included) in one write. */
  type(text: string): Promise<void>;
  /** Types a line and presses Enter. */
  line(text: string): Promise<void>;
  /** Pastes `text` as a terminal does (bracketed when the program asked for it). */
  paste(text: string): Promise<void>;
  /** Resizes the terminal. */
  resize(columns: number, rows: number): Promise<void>;
  /** The whole screen and scrollback, wrapped lines joined, trailing blank lines dropped. */
  screen(): Promise<string[]>;
  /** The same with the terminal's colour escapes kept. */
  painted(): Promise<string>;
  /** Waits until `text` appears on `count` lines (default 1); returns the screen. */
  waitFor(text: string, count?: number): Promise<string[]>;
  /** Waits until the REPL is idle at its `›` prompt for the `count`-th time. */
  waitForPrompt(count: number): Promise<string[]>;
  /** Waits for the process to end; returns its exit status. */
  waitForExit(): Promise<number>;
}

/** Builds the tmux environment: ours without NO_COLOR, INIT_CWD and any outer tmux. */
function baseEnv(): Record<string, string> {
  const {
    INIT_CWD: _cwd,
    NO_COLOR: _color,
    TMUX: _tmux,
    TMUX_PANE: _pane,
    ...rest
  } = Deno.env.toObject();
  return rest;
}

/**
 * Starts `rousseau --workspace ROOT ...args chat ...chatArgs` in `ws.root`, in a fresh
 * pseudo-terminal of 120×40, with its own config and state directories (or those under
 * `options.home`).
 */
export async function openChat(
  server: FakeServer,
  ws: TmpWorkspace,
  args: readonly string[] = [],
  options: {
    color?: boolean;
    home?: string;
    chatArgs?: readonly string[];
    env?: Record<string, string>;
  } = {},
): Promise<Chat> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-chat-" }));
  const root = ws.root;
  const home = options.home ?? join(base, "home");
  const socket = join(base, "tmux.sock");
  const conf = join(base, "tmux.conf");
  // remain-on-exit keeps the pane after the chat ends, so its exit status can be read.
  await Deno.writeTextFile(
    conf,
    "set -g remain-on-exit on\nset -g status off\nset -g history-limit 10000\n" +
      "set -g default-terminal xterm-256color\n",
  );
  const env: Record<string, string> = {
    ...baseEnv(),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "test-key",
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    TERM: "xterm-256color",
    ...(options.color ? {} : { NO_COLOR: "1" }),
    ...options.env,
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
    return {
      ok: out.success,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  };
  const must = async (...tmuxArgs: string[]) => {
    const out = await tmux(...tmuxArgs);
    if (!out.ok) throw new Error(`tmux ${tmuxArgs.join(" ")}: ${out.stderr}`);
    return out.stdout;
  };

  const command = [
    Deno.execPath(),
    ...CLI_ARGS,
    "--workspace",
    root,
    ...args,
    "chat",
    ...options.chatArgs ?? [],
  ];
  // Several arguments: tmux runs the command directly, no shell quoting involved.
  let pid: number;
  try {
    await must("new-session", "-d", "-x", "120", "-y", "40", "-c", root, ...command);
    pid = Number((await must("display-message", "-p", "#{pane_pid}")).trim());
  } catch (error) {
    await tmux("kill-server");
    await Deno.remove(base, { recursive: true });
    throw error;
  }

  const screen = async () => {
    const text = await must("capture-pane", "-p", "-J", "-S", "-");
    const lines = text.split("\n").map((l) => l.trimEnd());
    while (lines.length > 0 && lines.at(-1) === "") lines.pop();
    return lines;
  };
  const dead = async () => {
    const out = await tmux("display-message", "-p", "#{pane_dead}:#{pane_dead_status}");
    const [flag, status] = out.stdout.trim().split(":");
    return flag === "1" ? Number(status) : undefined;
  };
  const untilShown = async (what: string, ready: (lines: string[]) => boolean) => {
    let lines: string[] = [];
    await until(what, async () => {
      lines = await screen();
      if (ready(lines)) return true;
      const status = await dead();
      if (status === undefined) return false;
      throw new Error(
        `chat: the chat exited with ${status} while waiting for ${what}; the screen:\n${
          lines.join("\n")
        }`,
      );
    }, {
      limitMs: WAIT_LIMIT_MS,
      everyMs: POLL_MS,
      state: () => `the screen:\n${lines.join("\n")}`,
    });
    return lines;
  };

  const chat: Chat = {
    async keys(...keys) {
      await must("send-keys", ...keys);
    },
    async type(text) {
      await must("send-keys", "-l", text);
    },
    async line(text) {
      // One send-keys: the text and its Enter reach the terminal in one write.
      await must("send-keys", "-l", `${text}\r`);
    },
    async paste(text) {
      // -p: bracketed paste if the program turned it on; each \n goes as \r, as a terminal sends.
      await must("set-buffer", "-b", "paste", "--", text);
      await must("paste-buffer", "-p", "-b", "paste", "-d");
    },
    async resize(columns, rows) {
      await must("resize-window", "-x", String(columns), "-y", String(rows));
    },
    screen,
    painted() {
      return must("capture-pane", "-p", "-e", "-J", "-S", "-");
    },
    waitFor(text, count = 1) {
      return untilShown(
        `${JSON.stringify(text)} (${count}×)`,
        (lines) => lines.filter((l) => l.includes(text)).length >= count,
      );
    },
    waitForPrompt(count) {
      return untilShown(
        `prompt #${count}`,
        (lines) => lines.filter((l) => l.startsWith("›")).length >= count && lines.at(-1) === "›",
      );
    },
    async waitForExit() {
      // An object, not a `let`: an assignment in the closure does not narrow it.
      const exited: { status: number | undefined } = { status: undefined };
      await until("the chat to exit", async () => (exited.status = await dead()) !== undefined, {
        limitMs: WAIT_LIMIT_MS,
        everyMs: POLL_MS,
        state: async () => `the screen:\n${(await screen()).join("\n")}`,
      });
      return exited.status ?? -1;
    },
    async [Symbol.asyncDispose]() {
      await tmux("kill-server");
      // The chat gets SIGHUP; let it go before its state directory is removed.
      for (let i = 0; i < 100; i++) {
        const alive = await Deno.stat(`/proc/${pid}`).then(() => true, () => false);
        if (!alive) break;
        await sleep(POLL_MS);
      }
      await Deno.remove(base, { recursive: true });
    },
  };
  return chat;
}

/** The quiet status line after each turn (cli/terminal/chat_status.ts). */
export const STATUS = /^· [\d.]+k? in · [\d.]+k? out · context /;

/**
 * The lines after the last one that includes `marker`, without the status lines after each
 * turn (tests of the status line look at the whole screen).
 */
export function after(lines: string[], marker: string): string[] {
  const at = lines.findLastIndex((l) => l.includes(marker));
  return at === -1 ? [] : lines.slice(at + 1).filter((l) => !STATUS.test(l));
}

/** The tool results the fake received in request `i`. */
export { toolResults } from "./tool_results.ts";

/** The text of the user messages in request `i`. */
export function userTexts(server: FakeServer, i: number): string[] {
  const out: string[] = [];
  for (const message of server.requests[i]!.body.messages) {
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (const block of message.content) if (block.type === "text") out.push(block.text);
  }
  return out;
}
