/**
 * `rousseau run [PROMPT|-]`: one non-interactive turn for CI steps and scripts. Fails closed:
 * nobody is asked (no terminal: `ask` is a denial at once), denials make the exit code 4,
 * `--deadline` bounds the wall clock (exit 5), and the layers are stated before it starts
 * (unless `--quiet`, which leaves only errors on stderr).
 *
 * @module
 */

import type { AgentEvent, TurnResult } from "../../agent/types.ts";
import { createPromptOperator } from "../../approver/mod.ts";
import { addUsage } from "../../providers/types.ts";
import { parseDuration } from "../../tools/hosting.ts";
import { type AgentFlags, openAgent } from "../agent_setup.ts";
import type { UndoProgress } from "../../agent/undo/mod.ts";
import { createSlowScanNotice } from "../terminal/undo_progress.ts";
import { EXIT, UsageError } from "../errors.ts";
import { compactionLine } from "../terminal/context_gauge.ts";
import { layersLine } from "../layers/grants.ts";
import {
  createLineReader,
  useColor,
  writeStderr,
  writeStdout,
  writeSync,
} from "../terminal/output.ts";
import { jsonVisible, visible } from "../../approver/visible.ts";

/** Flags of `run`. */
export interface RunFlags extends AgentFlags {
  /** `--output text|json|stream-json`. */
  readonly output?: string;
  /** `--deadline DURATION`. */
  readonly deadline?: string;
  /** `--denials-ok`: denials do not change the exit code. */
  readonly denialsOk?: boolean;
  /** `-q` / `--quiet`: no layers header on stderr, and nothing else there but errors. */
  readonly quiet?: boolean;
}

/** Exit codes `run` adds to the common ones. */
export const RUN_EXIT = { budget: 3, denied: 4, deadline: 5 } as const;

const OUTPUTS = ["text", "json", "stream-json"] as const;

async function readPrompt(prompt: string | undefined): Promise<{ text: string; piped: boolean }> {
  if (prompt !== undefined && prompt !== "-") return { text: prompt, piped: false };
  if (Deno.stdin.isTerminal()) {
    throw new UsageError("run: no prompt: pass it as an argument, or pipe it on stdin with -");
  }
  try {
    return { text: await new Response(Deno.stdin.readable).text(), piped: true };
  } catch (error) {
    throw new UsageError(`run: cannot read the prompt from stdin: ${(error as Error).message}`);
  }
}

/** One JSON line; DEL, C1 and bidi characters escaped too (approver/visible.ts), same value. */
function line(value: unknown): void {
  writeSync("stdout", jsonVisible(JSON.stringify(value)) + "\n");
}

/** Runs the `run` command and returns its exit code. */
export async function runCommand(
  prompt: string | undefined,
  flags: RunFlags,
  signal: AbortSignal,
): Promise<number> {
  const output = flags.output ?? "text";
  if (!(OUTPUTS as readonly string[]).includes(output)) {
    throw new UsageError(
      `--output: unknown format ${JSON.stringify(output)} (want text, json or stream-json)`,
    );
  }
  let deadlineMs: number | undefined;
  if (flags.deadline !== undefined) {
    try {
      deadlineMs = parseDuration(flags.deadline);
    } catch (error) {
      throw new UsageError(`--deadline: ${(error as Error).message}`);
    }
    if (deadlineMs <= 0) throw new UsageError("--deadline: want a duration above zero");
  }
  const { text, piped } = await readPrompt(prompt);
  if (text.trim() === "") throw new UsageError("run: the prompt is empty");
  const started = performance.now();
  // A person at a terminal who typed the prompt as an argument can answer `ask`; nobody else.
  const interactive = !piped && Deno.stdin.isTerminal() && Deno.stderr.isTerminal();
  // Quiet: the log keeps its errors only (retries, tool lines and the SDKs' debug go).
  const agentFlags: RunFlags = flags.quiet ? { ...flags, logLevel: "error" } : flags;
  const slowScan = createSlowScanNotice();
  await using agent = await openAgent("run", agentFlags, {
    // The first slow undo scan says once how to turn it off (not with --quiet).
    ...(flags.quiet ? {} : {
      onUndoProgress: (progress: UndoProgress) => {
        const note = slowScan(progress);
        if (note !== undefined) writeSync("stderr", `rousseau: ${note}\n`);
      },
    }),
    ...(interactive
      ? {
        operator: createPromptOperator({
          write: (t) => writeStderr(t, false),
          readLine: createLineReader(signal),
          readFile: (path) => Deno.readTextFile(path).catch(() => undefined),
          color: useColor(),
        }),
      }
      : {}),
  });
  const { sessionId, provider, layers, log } = agent;
  if (output !== "stream-json") {
    if (!flags.quiet) log.always(layersLine(layers).replace(/^rousseau: /, ""), { layers });
  } else {
    line({
      type: "init",
      "session_id": sessionId,
      model: provider.model,
      workspace: layers.confinement[0],
      tools: agent.gate.registry.names(),
      approver: layers.approver,
      layers,
      instructions: agent.instructions.files.map((file) => file.path),
    });
  }

  const deadline = deadlineMs === undefined ? undefined : AbortSignal.timeout(deadlineMs);
  const turnSignal = deadline === undefined ? signal : AbortSignal.any([signal, deadline]);
  const onEvent = (event: AgentEvent) => {
    switch (event.type) {
      case "text":
        if (output === "stream-json") line({ type: "text", text: event.text });
        break;
      case "thinking":
        // The model's reasoning, kept apart from the answer (never part of `result`).
        if (output === "stream-json") line({ type: "thinking", text: event.text });
        break;
      case "tool_use":
        if (output === "stream-json") {
          line({ type: "tool_use", id: event.id, name: event.name, input: event.input });
        }
        log.log("info", `→ ${event.name} ${visible(JSON.stringify(event.input))}`, {
          event: "tool_use",
          tool: event.name,
        });
        break;
      case "tool_result":
        if (output === "stream-json") {
          line({
            type: "tool_result",
            "tool_use_id": event.toolUseId,
            "is_error": event.isError,
            output: event.output,
            // bash under the overlay: the change set it made, and whether it was allowed.
            ...(event.changes === undefined ? {} : { changes: event.changes }),
          });
        }
        if (event.isError) {
          log.log("info", `← ${event.name} error: ${event.output.split("\n")[0]}`, {
            event: "tool_result",
            tool: event.name,
            "is_error": true,
          });
        }
        break;
      case "compaction":
        if (output === "stream-json") {
          line({
            type: "compaction",
            reason: event.reason,
            elided: event.elided,
            summarized: event.summarized,
            "tokens_before": event.tokensBefore,
            "tokens_after": event.tokensAfter,
            window: event.window ?? null,
          });
        }
        log.log("info", compactionLine(event), { event: "compaction", reason: event.reason });
        break;
      case "retry":
        log.log(
          "warn",
          `${event.reason}; retrying in ${event.delayMs} ms (retry ${event.attempt})`,
        );
        break;
    }
  };

  const turn: TurnResult = await agent.turn(text, turnSignal, onEvent);

  // Summary requests made while compacting count too.
  const usage = addUsage(turn.usage, agent.context.summaryUsage);
  let subtype: string = turn.subtype;
  let result = turn.result;
  let code: number = EXIT.ok;
  if (turn.subtype === "cancelled") {
    if (deadline?.aborted && !signal.aborted) {
      subtype = "error_deadline";
      result = turn.streamed;
      code = RUN_EXIT.deadline;
    } else {
      subtype = "error";
      result = signal.reason instanceof Error ? signal.reason.message : "interrupted";
      code = EXIT.failure; // main turns this into 130 or 143
    }
  } else if (turn.subtype === "error_max_iterations") code = RUN_EXIT.budget;
  else if (turn.subtype === "error" || turn.subtype === "error_max_tokens") code = EXIT.failure;
  else if (turn.denials.length > 0 && !flags.denialsOk) code = RUN_EXIT.denied;

  const object = {
    type: "result",
    subtype,
    "is_error": subtype !== "success",
    result,
    "session_id": sessionId,
    iterations: turn.iterations,
    usage: { "input_tokens": usage.inputTokens, "output_tokens": usage.outputTokens },
    "duration_ms": Math.round(performance.now() - started),
    denials: turn.denials,
    layers,
    context: {
      window: agent.context.window ?? null,
      used: agent.context.used,
      compactions: agent.context.compactions,
    },
  };
  if (output === "text") {
    // The model's text, exact when piped (it is the promised output); on a terminal its
    // controls are shown as text (approver/visible.ts), never obeyed.
    const shown = Deno.stdout.isTerminal() ? visible : (t: string) => t;
    if (subtype === "success") {
      await writeStdout(shown(result.endsWith("\n") || result === "" ? result : result + "\n"));
    } else if (subtype === "error_deadline") {
      if (result !== "") await writeStdout(shown(result.endsWith("\n") ? result : result + "\n"));
      await writeStderr(
        `rousseau: run: deadline of ${flags.deadline} reached; session ${sessionId} saved`,
      );
    } else {
      await writeStderr(`rousseau: ${visible(result)}`);
    }
    if (code === RUN_EXIT.denied) {
      await writeStderr(
        visible(
          `rousseau: ${turn.denials.length} tool call(s) denied: ` +
            turn.denials.map((d) => `${d.tool} (${d.rule}: ${d.reason})`).join("; ") +
            " (pass --denials-ok to accept)",
        ),
      );
    }
  } else {
    line(object);
  }
  return code;
}
