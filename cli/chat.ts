/**
 * `rousseau chat`: the interactive session. Line editing and history come from
 * `node:readline` (which writes its own echo to the terminal); everything else goes through
 * `output.ts`. Replies stream as they arrive; each tool call is one line with a spinner while
 * it runs and a short result line after; approvals are asked inline. Ctrl+C cancels the
 * running turn (and denies a pending approval); Ctrl+D or /exit leaves.
 *
 * @module
 */

import { createInterface, type Interface } from "node:readline";
import process from "node:process";
import { join } from "node:path";
import type { AgentEvent } from "../agent/types.ts";
import { createPromptOperator } from "../approver/mod.ts";
import { type AgentFlags, openAgent } from "./agent_setup.ts";
import { EXIT } from "./errors.ts";
import { compactionLine, gaugeLine } from "./context_gauge.ts";
import { layersLine } from "./layers.ts";
import { writeSync } from "./output.ts";
import { undoInChat } from "./undo.ts";

const PASTE_GAP_MS = 25;
/** Share of the window from which the gauge is printed after each turn. */
const GAUGE_FROM = 0.5;
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function paint(color: boolean, code: string, text: string): string {
  return color ? `\x1b[${code}m${text}\x1b[0m` : text;
}

/** What a tool call is about, in a few words: `bash  npm test`. */
export function callSummary(name: string, input: unknown): string {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<
    string,
    unknown
  >;
  const pick = name === "bash"
    ? fields.command
    : name === "grep"
    ? [fields.pattern, fields.path].filter((v) => typeof v === "string").join("  ")
    : fields.path;
  const text = typeof pick === "string" && pick !== "" ? pick : JSON.stringify(input);
  const flat = text.replace(/\s+/g, " ");
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
}

/** The result line: `exit 0 · 12 lines`, or the first line of the error. */
export function resultSummary(name: string, output: string, isError: boolean): string {
  if (isError) {
    const first = output.split("\n", 1)[0]!;
    return first.length > 120 ? `${first.slice(0, 119)}…` : first;
  }
  const lines = output === "" ? 0 : output.replace(/\n$/, "").split("\n").length;
  const count = `${lines} line${lines === 1 ? "" : "s"}`;
  return name === "bash" ? `exit 0 · ${count}` : count;
}

const HELP = `Commands:
  /help       this list
  /tools      the tools the model can call
  /approver   the approval policy in force
  /session    this session's id (resume it with: rousseau chat --session ID)
  /context    how much of the model's context window the conversation takes
  /compact    summarise the conversation so far to free context (the session keeps it all)
  /undo       put back the files the last turn changed (/undo --force: over later edits)
  /exit       leave (Ctrl+D does the same)
Ctrl+C cancels the running turn; at an approval prompt it denies the call.
`;

async function loadHistory(path: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter(Boolean).reverse().slice(0, 500);
  } catch {
    return [];
  }
}

/** Runs the chat REPL and returns its exit code. */
export async function chatCommand(flags: AgentFlags, signal: AbortSignal): Promise<number> {
  const color = Deno.stdout.isTerminal() && !Deno.env.get("NO_COLOR");
  const out = (text: string) => writeSync("stdout", text);
  let turn: AbortController | undefined;
  /** A line wanted by an approval prompt, if one is waiting. */
  let waiting: ((line: string | undefined) => void) | undefined;
  let spinner: { stop(): void; pause(): void; resume(): void } | undefined;

  const readLine = () =>
    new Promise<string | undefined>((resolve) => {
      waiting = resolve;
      rl.resume();
    });
  const operator = createPromptOperator({
    write: (text) => {
      spinner?.pause();
      out(text);
      return Promise.resolve();
    },
    readLine: async () => {
      const line = await readLine();
      spinner?.resume();
      return line;
    },
    readFile: (path) => Deno.readTextFile(path).catch(() => undefined),
    color,
  });
  await using agent = await openAgent("chat", flags, { operator });
  const { sessionId, provider, layers } = agent;
  const historyPath = join(agent.config.stateDir, "chat_history");
  const history = await loadHistory(historyPath);

  out(
    `${paint(color, "1", "rousseau")} ${provider.name}/${provider.model} · session ${sessionId}\n` +
      paint(color, "2", layersLine(layers).replace(/^rousseau: /, "")) + "\n" +
      paint(color, "2", "Type a task, /help for commands, Ctrl+D to leave.") + "\n",
  );

  const rl: Interface = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: Deno.stdin.isTerminal(),
    history,
    historySize: 500,
    removeHistoryDuplicates: true,
    prompt: paint(color, "36", "› "),
  });

  const startSpinner = (label: string) => {
    const started = performance.now();
    let frame = 0;
    let timer: ReturnType<typeof setInterval> | undefined;
    const draw = () => {
      const secs = ((performance.now() - started) / 1000).toFixed(1);
      out(`\r\x1b[2K${paint(color, "36", SPINNER[frame++ % SPINNER.length]!)} ${label}  ${secs}s`);
    };
    const resume = () => {
      if (!Deno.stdout.isTerminal() || timer !== undefined) return;
      draw();
      timer = setInterval(draw, 100);
    };
    const pause = () => {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      out("\r\x1b[2K");
    };
    resume();
    return { pause, resume, stop: pause };
  };

  let midLine = false;
  /** The last thing shown was reasoning (dimmed). */
  let thinking = false;
  /** Labels of the calls still running, by id; read-only calls run several at a time. */
  const running = new Map<string, string>();
  const onEvent = (event: AgentEvent) => {
    switch (event.type) {
      case "text":
        if (thinking) {
          // The answer starts on its own line after the dimmed reasoning.
          thinking = false;
          if (midLine) out("\n");
        }
        out(event.text);
        midLine = !event.text.endsWith("\n");
        break;
      case "thinking":
        thinking = true;
        out(paint(color, "2", event.text));
        midLine = !event.text.endsWith("\n");
        break;
      case "tool_use": {
        if (midLine) out("\n");
        midLine = false;
        thinking = false;
        const label = `→ ${event.name}  ${callSummary(event.name, event.input)}`;
        running.set(event.id, label);
        if (Deno.stdout.isTerminal()) {
          // One spinner at a time: a second one would keep redrawing after its call ended.
          spinner?.stop();
          spinner = startSpinner(label);
        } else out(label + "\n");
        break;
      }
      case "tool_result": {
        spinner?.stop();
        spinner = undefined;
        const label = running.get(event.toolUseId) ?? `→ ${event.name}`;
        running.delete(event.toolUseId);
        if (Deno.stdout.isTerminal()) out(`\r\x1b[2K${label}\n`);
        const secs = (event.durationMs / 1000).toFixed(1);
        const summary = `← ${resultSummary(event.name, event.output, event.isError)} · ${secs}s`;
        out((event.isError ? paint(color, "31", summary) : paint(color, "2", summary)) + "\n");
        const still = [...running.values()].at(-1);
        if (still !== undefined && Deno.stdout.isTerminal()) spinner = startSpinner(still);
        break;
      }
      case "retry":
        out(paint(color, "33", `\n(${event.reason}; retrying in ${event.delayMs} ms)\n`));
        break;
      case "compaction":
        if (midLine) out("\n");
        midLine = false;
        out(paint(color, "2", `(${compactionLine(event)})`) + "\n");
        break;
    }
  };

  const slash = (line: string): boolean | Promise<boolean> => {
    const [command] = line.trim().split(/\s+/, 1);
    switch (command) {
      case "/undo":
        return undoInChat(agent.config, sessionId, line, out, color).then(() => true);
      case "/help":
        out(HELP);
        return true;
      case "/tools":
        out(
          agent.gate.registry.definitions().map((d) =>
            `${d.name.padEnd(10)} ${d.description.split("\n", 1)[0]}\n`
          ).join(""),
        );
        return true;
      case "/approver": {
        const p = agent.policy;
        const rules = (["deny", "ask", "allow"] as const).flatMap((list) =>
          p.lists[list].map((rule) => `  ${rule.label}  ${JSON.stringify(rule.source)}`)
        );
        const grants = operator.grants().map((g) => `  ${g.tool}  ${g.what}\n`);
        out(
          `mode ${p.mode}${p.mode === "pattern" ? `, default ${p.default}` : ""}\n` +
            (rules.length > 0 ? rules.join("\n") + "\n" : "") +
            `session grants:${grants.length === 0 ? " none" : ""}\n${grants.join("")}`,
        );
        return true;
      }
      case "/session":
        out(`session ${sessionId} (${agent.messages.length} messages)\n`);
        return true;
      case "/context":
        out(gauge() + "\n");
        return true;
      case "/exit":
      case "/quit":
        rl.close();
        return true;
      default:
        if (command?.startsWith("/")) {
          out(`unknown command ${command} (try /help)\n`);
          return true;
        }
        return false;
    }
  };

  const gauge = () =>
    gaugeLine(agent.context.window, agent.context.used, agent.context.compactions);

  /** `/compact`: one summary request now; Ctrl+C cancels it. */
  const compactNow = async () => {
    turn = new AbortController();
    try {
      const done = await agent.compact(AbortSignal.any([signal, turn.signal]));
      out(
        paint(
          color,
          "2",
          done === undefined ? "(nothing to compact yet)" : `(${compactionLine(done)})`,
        ) +
          "\n",
      );
    } catch (error) {
      out(paint(color, "31", `compact failed: ${(error as Error).message}`) + "\n");
    } finally {
      turn = undefined;
    }
  };

  const runPrompt = async (text: string) => {
    turn = new AbortController();
    const turnSignal = AbortSignal.any([signal, turn.signal]);
    midLine = false;
    const result = await agent.turn(text, turnSignal, onEvent);
    spinner?.stop();
    spinner = undefined;
    running.clear();
    if (midLine) out("\n");
    if (result.subtype === "cancelled") out(paint(color, "33", "(cancelled)") + "\n");
    else if (result.subtype !== "success") out(paint(color, "31", result.result) + "\n");
    // The gauge shows itself once the context matters: half the window or more.
    const window = agent.context.window;
    if (window !== undefined && agent.context.used >= window * GAUGE_FROM) {
      out(paint(color, "2", `(${gauge()})`) + "\n");
    }
    turn = undefined;
  };

  const done = Promise.withResolvers<void>();
  let pending: string[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let busy = false;
  const submit = async () => {
    flushTimer = undefined;
    const text = pending.join("\n");
    pending = [];
    if (text.trim() === "") {
      rl.prompt();
      return;
    }
    await Deno.writeTextFile(historyPath, text.replace(/\n/g, " ") + "\n", { append: true })
      .catch(() => {});
    if (text.trim() === "/compact") {
      busy = true;
      if (!Deno.stdin.isTerminal()) rl.pause();
      try {
        await compactNow();
      } finally {
        busy = false;
      }
    } else if (!(await slash(text))) {
      busy = true;
      // A paused terminal reads no keys, so Ctrl+C could not cancel the turn; lines typed
      // meanwhile are dropped by the "line" handler instead.
      if (!Deno.stdin.isTerminal()) rl.pause();
      try {
        await runPrompt(text);
      } finally {
        busy = false;
      }
    }
    if (!closed) {
      rl.resume();
      rl.prompt();
    }
  };
  let closed = false;
  rl.on("line", (line: string) => {
    if (waiting !== undefined) {
      const resolve = waiting;
      waiting = undefined;
      resolve(line);
      return;
    }
    if (busy) return; // typed while a turn runs: ignored, like a terminal that is busy
    // Lines that arrive together are one pasted prompt.
    pending.push(line);
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = setTimeout(() => void submit(), PASTE_GAP_MS);
  });
  rl.on("SIGINT", () => {
    if (waiting !== undefined) {
      const resolve = waiting;
      waiting = undefined;
      resolve(undefined);
    }
    if (turn !== undefined) {
      turn.abort(new Error("cancelled by Ctrl+C"));
      return;
    }
    pending = [];
    out("\n" + paint(color, "2", "(Ctrl+D or /exit leaves)") + "\n");
    rl.prompt();
  });
  rl.on("close", () => {
    closed = true;
    turn?.abort(new Error("the chat was closed"));
    waiting?.(undefined);
    done.resolve();
  });
  signal.addEventListener("abort", () => rl.close(), { once: true });
  rl.prompt();
  await done.promise;
  if (flushTimer !== undefined) clearTimeout(flushTimer);
  while (busy) await new Promise((resolve) => setTimeout(resolve, 20));
  out("\n");
  return EXIT.ok;
}
