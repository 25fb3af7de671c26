/**
 * `rousseau chat`: the interactive session. Line editing and history come from
 * `node:readline` (which writes its own echo to the terminal); everything else goes through
 * `cli/terminal/output.ts`. A spinner with the elapsed time shows while the model is asked (and says when
 * a request is retried); replies are rendered as terminal markdown per completed block; each
 * tool call is one line with a spinner while it runs and a short result line after;
 * approvals are asked inline; a quiet status line follows each turn. A pasted block (bracketed
 * paste) is one prompt; lines typed during a turn are queued and sent after it. Ctrl+C
 * cancels the running turn (and denies a pending approval, and drops the queue); Ctrl+D or
 * /exit leaves. With a piped stdin, chat reads it as one prompt and exits like `run`.
 *
 * @module
 */

import { createInterface, type Interface } from "node:readline";
import process from "node:process";
import { join } from "node:path";
import type { AgentEvent } from "../../agent/types.ts";
import { createPromptOperator, factsOf } from "../../approver/mod.ts";
import { visible, visibleExact, visibleValue } from "../../approver/visible.ts";
import { type AgentFlags, openAgent } from "../agent_setup.ts";
import { EXIT } from "../errors.ts";
import { compactionLine, gaugeLine } from "../terminal/context_gauge.ts";
import { layersLine } from "../layers/grants.ts";
import { writeSync } from "../terminal/output.ts";
import { addUsage, NO_USAGE, type Usage } from "../../providers/types.ts";
import { chatInput, PASTE_OFF, PASTE_ON } from "../terminal/chat_input.ts";
import { costLine, fitFields, statusLine } from "../terminal/chat_status.ts";
import { markdownRenderer, markdownStream } from "../terminal/markdown.ts";
import { costOf } from "../terminal/prices.ts";
import { pickSession } from "../terminal/session_picker.ts";
import { RUN_EXIT } from "./run.ts";
import { undoInChat } from "./undo.ts";
import type { UndoProgress } from "../../agent/undo/mod.ts";
import { createSlowScanNotice, scanLabel } from "../terminal/undo_progress.ts";

/**
 * Lines that arrive this close together without bracketed paste (a terminal that does not
 * offer it, or tmux `send-keys`) are taken as one pasted prompt.
 */
const PASTE_GAP_MS = 25;
const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function paint(color: boolean, code: string, text: string): string {
  return color ? `\x1b[${code}m${text}\x1b[0m` : text;
}

/**
 * `event` with what the model, the tools and the provider said made safe to show
 * (approver/visible.ts): chat takes every model- and tool-originated text for the terminal
 * from here (the approval prompt does the same in approver/prompt.ts). Escape sequences,
 * carriage returns, C1 and bidi controls are shown as text, never sent as they are.
 */
export function shownEvent(event: AgentEvent): AgentEvent {
  switch (event.type) {
    case "text":
    case "thinking":
      return { ...event, text: visible(event.text) };
    case "tool_use_start":
      return { ...event, name: visibleExact(event.name) };
    case "tool_use":
      return { ...event, name: visibleExact(event.name), input: visibleValue(event.input) };
    case "tool_result":
      return { ...event, name: visibleExact(event.name), output: visible(event.output) };
    case "retry":
      return { ...event, reason: visible(event.reason) };
    default:
      return event;
  }
}

/** What a tool call is about, in a few words: `bash  npm test`. */
export function callSummary(name: string, input: unknown): string {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<
    string,
    unknown
  >;
  // The fields the tool's facts name (bash: the command; grep: pattern and path), else path.
  const pick = (factsOf(name)?.summary ?? ["path"]).map((key) => fields[key])
    .filter((v) => typeof v === "string").join("  ");
  const text = pick !== "" ? pick : JSON.stringify(input);
  const flat = visible(text.replace(/\s+/g, " "));
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
}

/** The result line: `exit 0 · 12 lines`, or the first line of the error. */
export function resultSummary(name: string, output: string, isError: boolean): string {
  if (isError) {
    const first = visible(output.split("\n", 1)[0]!);
    return first.length > 120 ? `${first.slice(0, 119)}…` : first;
  }
  const lines = output === "" ? 0 : output.replace(/\n$/, "").split("\n").length;
  const count = `${lines} line${lines === 1 ? "" : "s"}`;
  return factsOf(name)?.command === true ? `exit 0 · ${count}` : count;
}

/** Chat's slash commands, in /help's order; each answers locally unless it says otherwise. */
const COMMANDS: readonly { readonly name: string; readonly help: string }[] = [
  { name: "/help", help: "this list" },
  { name: "/tools", help: "the tools the model can call" },
  { name: "/approver", help: "the approval policy in force" },
  { name: "/session", help: "this session's id (resume it with: rousseau chat --session ID)" },
  { name: "/context", help: "how much of the model's context window the conversation takes" },
  {
    name: "/compact",
    help: "summarise the conversation so far to free context (the session keeps it all)",
  },
  { name: "/cost", help: "tokens and cost of this chat so far (for models with a known price)" },
  { name: "/clear", help: "start a new, empty session with the same settings" },
  { name: "/model NAME", help: "send the next turns to model NAME (bare: show the model)" },
  {
    name: "/undo",
    help: "put back the files the last turn changed (/undo --force: over later edits)",
  },
  { name: "/exit", help: "leave (Ctrl+D does the same)" },
];

const HELP = "Commands:\n" +
  COMMANDS.map((c) => `  ${c.name.padEnd(12)}${c.help}\n`).join("") +
  "Ctrl+C cancels the running turn; at an approval prompt it denies the call.\n" +
  "Lines typed while a turn runs are sent after it; a pasted block is one prompt.\n";

/** Prompts kept in `chat_history` (the file is cut back to these once it holds twice as many). */
export const HISTORY_LINES = 500;

/** The newest prompts, newest first; a file grown past twice the kept lines is cut back. */
export async function loadHistory(path: string): Promise<string[]> {
  try {
    const lines = (await Deno.readTextFile(path)).split("\n").filter(Boolean);
    if (lines.length > 2 * HISTORY_LINES) {
      // Replaced in one step: another chat appending meanwhile loses at most that line.
      const temp = `${path}.${crypto.randomUUID()}.tmp`;
      await Deno.writeTextFile(temp, lines.slice(-HISTORY_LINES).join("\n") + "\n", {
        mode: 0o600,
      });
      await Deno.rename(temp, path).catch(() => Deno.remove(temp).catch(() => {}));
    }
    return lines.reverse().slice(0, HISTORY_LINES);
  } catch {
    return [];
  }
}

/** `retrying in 2s (429)`: the spinner's label while a request waits to be retried. */
export function retryLabel(delayMs: number, reason: string): string {
  const status = reason.match(/status (\d{3})/)?.[1];
  const why = status ?? reason.replace(/^[^:]*: /, "").split(";", 1)[0]!.slice(0, 40);
  return `retrying in ${Math.max(1, Math.round(delayMs / 1000))}s (${why})`;
}

/** The exit code of a piped chat's one turn, as `run` would give it. */
function exitOf(subtype: string, denials: number): number {
  if (subtype === "success") return denials > 0 ? RUN_EXIT.denied : EXIT.ok;
  if (subtype === "error_max_iterations") return RUN_EXIT.budget;
  return EXIT.failure;
}

/** Runs the chat REPL and returns its exit code. */
export async function chatCommand(flags: AgentFlags, signal: AbortSignal): Promise<number> {
  const tty = Deno.stdout.isTerminal();
  const color = tty && !Deno.env.get("NO_COLOR");
  const piped = !Deno.stdin.isTerminal();
  const out = (text: string) => writeSync("stdout", text);
  let turn: AbortController | undefined;
  /** A line wanted by an approval prompt, if one is waiting. */
  let waiting: ((line: string | undefined) => void) | undefined;
  let spinner:
    | { stop(): void; pause(): void; resume(): void; label(text: string): void }
    | undefined;

  // A piped stdin is the prompt, read whole before anything else; approvals cannot be asked
  // (stdin is spent), so a call that needs one is denied, as in `run`.
  const pipedPrompt = piped ? await new Response(Deno.stdin.readable).text() : undefined;
  if (pipedPrompt !== undefined && pipedPrompt.trim() === "") {
    writeSync(
      "stderr",
      'rousseau: chat: stdin is not a terminal and holds no prompt (pipe one: echo "fix the test" | rousseau chat)\n',
    );
    return EXIT.usage;
  }

  const readLine = () =>
    new Promise<string | undefined>((resolve) => {
      waiting = resolve;
      rl?.resume();
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
    root: () => shown.root,
  });
  /** The workspace root, known once the agent is open (previews show paths below it). */
  const shown: { root?: string | undefined } = {};
  const slowScan = createSlowScanNotice();
  /**
   * Undo's scan of the workspace around a call (seconds in a large tree without the overlay):
   * said on the call's spinner line while it runs, and how to avoid it after the first slow one.
   */
  const onUndoProgress = (progress: UndoProgress) => {
    const call = [...running.values()].at(-1);
    if (progress.type === "scan") {
      if (call !== undefined) spinner?.label(`${call}  · ${scanLabel(progress)}`);
      return;
    }
    if (call !== undefined) spinner?.label(call);
    const note = slowScan(progress);
    if (note === undefined) return;
    spinner?.pause();
    out(paint(color, "2", note) + "\n");
    spinner?.resume();
  };
  await using agent = await openAgent("chat", flags, {
    onUndoProgress,
    ...(piped ? {} : { operator, preview: true }),
    ...(tty && !piped ? { pickSession } : {}),
  });
  shown.root = agent.layers.confinement[0];
  const historyPath = join(agent.config.stateDir, "chat_history");
  const history = await loadHistory(historyPath);

  const header = (note = "") =>
    `${
      paint(color, "1", "rousseau")
    } ${agent.provider.name}/${agent.provider.model} · session ${agent.sessionId}${note}\n`;
  out(
    header() +
      paint(
        color,
        "2",
        fitFields(
          layersLine(agent.layers).replace(/^rousseau: /, ""),
          tty ? process.stdout.columns ?? 80 : Infinity,
        ),
      ) + "\n" +
      // The files that steer the model this session (a file an earlier session's model wrote
      // included), named before the first turn.
      (agent.instructions.files.length === 0 ? "" : paint(
        color,
        "2",
        `instructions: ${agent.instructions.files.map((f) => visibleExact(f.path)).join(", ")}`,
      ) + "\n") +
      (piped ? "" : paint(color, "2", "Type a task, /help for commands, Ctrl+D to leave.") + "\n"),
  );

  const startSpinner = (label: string) => {
    const started = performance.now();
    let frame = 0;
    let timer: ReturnType<typeof setInterval> | undefined;
    const draw = () => {
      const secs = ((performance.now() - started) / 1000).toFixed(1);
      out(`\r\x1b[2K${paint(color, "36", SPINNER[frame++ % SPINNER.length]!)} ${label}  ${secs}s`);
    };
    const resume = () => {
      if (!tty || timer !== undefined) return;
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
    return {
      pause,
      resume,
      stop: pause,
      label(text: string) {
        label = text;
      },
    };
  };
  /** The spinner shown while the model is asked, until its first token arrives. */
  let waitingForModel = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  const modelSpinner = () => {
    if (!tty) return;
    spinner?.stop();
    spinner = startSpinner("thinking");
    waitingForModel = true;
  };
  const stopModelSpinner = () => {
    if (!waitingForModel) return;
    waitingForModel = false;
    if (retryTimer !== undefined) clearTimeout(retryTimer);
    retryTimer = undefined;
    spinner?.stop();
    spinner = undefined;
  };

  // Markdown on a terminal (plain layout without colour); as streamed when piped elsewhere.
  const render = markdownRenderer({ color, width: () => process.stdout.columns ?? 80 });
  const reply = markdownStream(render, out);

  let midLine = false;
  /** The last thing shown was reasoning (dimmed). */
  let thinking = false;
  /** Labels of the calls still running, by id; read-only calls run several at a time. */
  const running = new Map<string, string>();
  const endReply = () => {
    if (tty) reply.flush();
  };
  const onEvent = (event: AgentEvent) => {
    switch (event.type) {
      case "text":
        stopModelSpinner();
        if (thinking) {
          // The answer starts on its own line after the dimmed reasoning.
          thinking = false;
          if (midLine) out("\n");
          midLine = false;
        }
        if (tty) reply.push(event.text);
        else {
          out(event.text);
          midLine = !event.text.endsWith("\n");
        }
        break;
      case "thinking":
        stopModelSpinner();
        endReply();
        thinking = true;
        out(paint(color, "2", event.text));
        midLine = !event.text.endsWith("\n");
        break;
      case "tool_use": {
        stopModelSpinner();
        endReply();
        if (midLine) out("\n");
        midLine = false;
        thinking = false;
        const label = `→ ${event.name}  ${callSummary(event.name, event.input)}`;
        running.set(event.id, label);
        if (tty) {
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
        if (tty) out(`\r\x1b[2K${label}\n`);
        const secs = (event.durationMs / 1000).toFixed(1);
        const summary = `← ${resultSummary(event.name, event.output, event.isError)} · ${secs}s`;
        out((event.isError ? paint(color, "31", summary) : paint(color, "2", summary)) + "\n");
        const still = [...running.values()].at(-1);
        if (still !== undefined && tty) spinner = startSpinner(still);
        // The last result is in: the model is asked again.
        if (still === undefined) modelSpinner();
        break;
      }
      case "retry":
        if (tty && waitingForModel) {
          spinner?.label(retryLabel(event.delayMs, event.reason));
          if (retryTimer !== undefined) clearTimeout(retryTimer);
          retryTimer = setTimeout(() => {
            retryTimer = undefined;
            spinner?.label(`thinking (attempt ${event.attempt + 1})`);
          }, event.delayMs);
        } else {
          endReply();
          out(paint(color, "33", `\n(${event.reason}; retrying in ${event.delayMs} ms)\n`));
        }
        break;
      case "compaction":
        endReply();
        if (midLine) out("\n");
        midLine = false;
        if (waitingForModel) spinner?.pause();
        out(paint(color, "2", `(${compactionLine(event)})`) + "\n");
        if (waitingForModel) spinner?.resume();
        break;
    }
  };

  const gauge = () =>
    gaugeLine(agent.context.window, agent.context.used, agent.context.compactions);

  /** What this chat spent: every turn's usage, and its cost while every model had a price. */
  let spent: Usage = NO_USAGE;
  let cost: number | undefined = 0;
  const models = new Set<string>();
  /** Summary requests of compactions count too (the manager keeps their total). */
  let summarySeen: Usage = agent.context.summaryUsage;
  const account = (usage: Usage) => {
    const summary = agent.context.summaryUsage;
    const extra: Usage = {
      inputTokens: summary.inputTokens - summarySeen.inputTokens,
      outputTokens: summary.outputTokens - summarySeen.outputTokens,
      cacheReadTokens: summary.cacheReadTokens - summarySeen.cacheReadTokens,
      cacheWriteTokens: summary.cacheWriteTokens - summarySeen.cacheWriteTokens,
    };
    summarySeen = summary;
    const total = addUsage(usage, extra);
    const model = agent.provider.model;
    models.add(model);
    spent = addUsage(spent, total);
    const turnCost = costOf(model, total);
    cost = cost === undefined || turnCost === undefined ? undefined : cost + turnCost;
    return { total, turnCost };
  };

  const slash = (line: string): boolean | Promise<boolean> => {
    const [command, ...rest] = line.trim().split(/\s+/);
    const arg = rest.join(" ");
    switch (command) {
      case "/undo":
        return undoInChat(agent.config, agent.sessionId, line, out, color, agent.layers.confinement)
          .then(() => true);
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
        const grants = operator.grants().map((g) => `  ${g.tool}  ${visibleExact(g.what)}\n`);
        out(
          `mode ${p.mode}${p.mode === "pattern" ? `, default ${p.default}` : ""}\n` +
            (rules.length > 0 ? rules.join("\n") + "\n" : "") +
            `session grants:${grants.length === 0 ? " none" : ""}\n${grants.join("")}`,
        );
        return true;
      }
      case "/session":
        out(`session ${agent.sessionId} (${agent.messages.length} messages)\n`);
        return true;
      case "/context":
        out(gauge() + "\n");
        return true;
      case "/cost":
        out(costLine(spent, cost, models.size === 0 ? [agent.provider.model] : [...models]) + "\n");
        return true;
      case "/clear": {
        const before = agent.sessionId;
        agent.clear();
        summarySeen = agent.context.summaryUsage;
        out(
          paint(
            color,
            "2",
            `(new session ${agent.sessionId}; the last one is kept: rousseau chat --session ${before})`,
          ) + "\n",
        );
        return true;
      }
      case "/model":
        if (arg === "") {
          out(`model ${agent.provider.name}/${agent.provider.model}\n`);
          return true;
        }
        try {
          agent.useModel(arg);
          summarySeen = agent.context.summaryUsage;
          out(paint(color, "2", `(the next turns go to ${agent.provider.name}/${arg})`) + "\n");
        } catch (error) {
          out(paint(color, "31", visible(`/model: ${(error as Error).message}`)) + "\n");
        }
        return true;
      case "/exit":
      case "/quit":
        rl?.close();
        return true;
      default:
        if (command?.startsWith("/")) {
          out(`unknown command ${command} (try /help)\n`);
          return true;
        }
        return false;
    }
  };

  /** `/compact`: one summary request now; Ctrl+C cancels it. */
  const compactNow = async () => {
    turn = new AbortController();
    try {
      const done = await agent.compact(AbortSignal.any([signal, turn.signal]));
      account(NO_USAGE);
      out(
        paint(
          color,
          "2",
          done === undefined ? "(nothing to compact yet)" : `(${compactionLine(done)})`,
        ) +
          "\n",
      );
    } catch (error) {
      out(paint(color, "31", visible(`compact failed: ${(error as Error).message}`)) + "\n");
    } finally {
      turn = undefined;
    }
  };

  const runPrompt = async (text: string) => {
    turn = new AbortController();
    const turnSignal = AbortSignal.any([signal, turn.signal]);
    midLine = false;
    thinking = false;
    modelSpinner();
    const result = await agent.turn(text, turnSignal, (event) => onEvent(shownEvent(event)));
    stopModelSpinner();
    spinner?.stop();
    spinner = undefined;
    running.clear();
    endReply();
    if (midLine) out("\n");
    midLine = false;
    if (result.subtype === "cancelled") out(paint(color, "33", "(cancelled)") + "\n");
    else if (result.subtype !== "success") {
      out(paint(color, "31", visible(result.result)) + "\n");
    }
    const { total, turnCost } = account(result.usage);
    // The quiet line: what the turn read and wrote, the context, and the cost when known.
    if (tty) {
      out(paint(color, "2", statusLine(total, agent.context, turnCost)) + "\n");
    }
    turn = undefined;
    return result;
  };

  if (pipedPrompt !== undefined) {
    const text = pipedPrompt.replace(/\n+$/, "");
    out(`› ${text}\n`);
    const result = await runPrompt(text);
    if (signal.aborted) return EXIT.failure; // main turns this into 130 or 143
    return exitOf(result.subtype, result.denials.length);
  }

  const done = Promise.withResolvers<void>();
  let pending: string[] = [];
  /** Prompts typed or pasted while a turn ran, sent one after another when it ends. */
  let queued: string[] = [];
  let flushTimer: ReturnType<typeof setTimeout> | undefined;
  let busy = false;
  let closed = false;
  const prompt = paint(color, "36", "› ");

  const send = async (text: string) => {
    await Deno.writeTextFile(historyPath, text.replace(/\n/g, " ") + "\n", { append: true })
      .catch(() => {});
    if (text.trim() === "/compact") {
      busy = true;
      try {
        await compactNow();
      } finally {
        busy = false;
      }
    } else if (!(await slash(text))) {
      busy = true;
      try {
        await runPrompt(text);
      } finally {
        busy = false;
      }
    }
  };
  const submit = async (text: string) => {
    if (text.trim() !== "") await send(text);
    // What was typed meanwhile goes next, shown as if typed at the prompt.
    while (!closed && queued.length > 0) {
      const next = queued.shift()!;
      out(prompt + next + "\n");
      await send(next);
    }
    if (!closed) {
      rl!.resume();
      rl!.prompt();
    }
  };
  const flushPending = () => {
    flushTimer = undefined;
    const text = pending.join("\n");
    pending = [];
    void submit(text);
  };
  const enqueue = (text: string) => {
    if (text.trim() === "") return;
    queued.push(text);
    spinner?.pause();
    out(paint(color, "2", `(queued, sent after this turn: ${text.split("\n", 1)[0]})`) + "\n");
    spinner?.resume();
  };

  /** A bracketed paste: one line goes into the line being edited; a block is one prompt. */
  const onPaste = (text: string) => {
    if (waiting !== undefined) {
      input.type(text.split("\n", 1)[0]!);
      return;
    }
    const block = text.replace(/\n+$/, "");
    if (!block.includes("\n") && !text.endsWith("\n")) {
      input.type(block);
      return;
    }
    const typedSoFar = rl!.line;
    const whole = typedSoFar + block;
    if (busy) {
      enqueue(whole);
      return;
    }
    // Clear readline's line (Ctrl+U) and show the block under the prompt as sent.
    input.type("\x15");
    out(whole + "\n");
    rl!.pause();
    void submit(whole);
  };
  const input = chatInput(onPaste);

  const rl: Interface = createInterface({
    input: input.stream,
    output: process.stdout,
    terminal: true,
    history,
    historySize: 500,
    removeHistoryDuplicates: true,
    prompt,
  });
  if (tty) out(PASTE_ON);

  rl.on("line", (line: string) => {
    if (waiting !== undefined) {
      const resolve = waiting;
      waiting = undefined;
      resolve(line);
      return;
    }
    if (busy) {
      // Typed while a turn runs: kept, and sent when the turn ends.
      enqueue(line);
      return;
    }
    // Lines that arrive together without bracketed paste are one pasted prompt.
    pending.push(line);
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    flushTimer = setTimeout(flushPending, PASTE_GAP_MS);
  });
  rl.on("SIGINT", () => {
    if (waiting !== undefined) {
      const resolve = waiting;
      waiting = undefined;
      resolve(undefined);
    }
    if (turn !== undefined) {
      if (queued.length > 0) {
        spinner?.pause();
        out(paint(color, "2", `(dropped ${queued.length} queued prompt(s))`) + "\n");
        queued = [];
      }
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
  try {
    await done.promise;
    if (flushTimer !== undefined) clearTimeout(flushTimer);
    while (busy) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    if (tty) out(PASTE_OFF);
    input.close();
  }
  out("\n");
  return EXIT.ok;
}
