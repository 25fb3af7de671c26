/**
 * The interactive `ask`: shows the call (the command for bash; the path and a coloured
 * unified diff for edit and write) and reads the operator's answer. Injected by `cli/`;
 * the agent never imports it.
 *
 * @module
 */

import type { AskOperator } from "./approver.ts";
import type { ApprovalRequest } from "./types.ts";

/** Terminal I/O the prompt uses; injected so tests can drive it. */
export interface PromptIo {
  /** Writes text for the operator. */
  write(text: string): Promise<void>;
  /** Reads one line; undefined on end of input or Ctrl+C. */
  readLine(): Promise<string | undefined>;
  /** Reads a file for the diff preview; undefined when it does not exist. */
  readFile(path: string): Promise<string | undefined>;
  /** Whether to colour the output. */
  readonly color: boolean;
}

const RED = "\x1b[31m";
const GREEN = "\x1b[32m";
const CYAN = "\x1b[36m";
const BOLD = "\x1b[1m";
const RESET = "\x1b[0m";

function paint(color: boolean, code: string, text: string): string {
  return color ? `${code}${text}${RESET}` : text;
}

function colourDiff(patch: string, color: boolean): string {
  return patch.split("\n").slice(2).map((line) => {
    if (line.startsWith("+++") || line.startsWith("---")) return paint(color, BOLD, line);
    if (line.startsWith("+")) return paint(color, GREEN, line);
    if (line.startsWith("-")) return paint(color, RED, line);
    if (line.startsWith("@@")) return paint(color, CYAN, line);
    return line;
  }).join("\n");
}

/** What the call will do, as the operator should see it. */
export async function describeCall(request: ApprovalRequest, io: PromptIo): Promise<string> {
  const input = (request.input ?? {}) as Record<string, unknown>;
  const text = (key: string) => typeof input[key] === "string" ? input[key] as string : undefined;
  const path = text("path");
  if (request.tool === "bash" && text("command") !== undefined) return `$ ${text("command")}`;
  if ((request.tool === "write" || request.tool === "edit") && path !== undefined) {
    const before = await io.readFile(path);
    let after: string | undefined;
    if (request.tool === "write") after = text("content");
    else if (before !== undefined && text("old_string") && text("new_string") !== undefined) {
      const at = before.indexOf(text("old_string")!);
      after = at === -1
        ? undefined
        : before.slice(0, at) + text("new_string") + before.slice(at + text("old_string")!.length);
    }
    if (after === undefined) {
      return `${path}\n(the change cannot be previewed: ${request.canonical ?? ""})`;
    }
    // The diff library loads only when a preview is shown.
    const { createTwoFilesPatch } = await import("diff");
    const patch = createTwoFilesPatch(
      path,
      path,
      before ?? "",
      after,
      before === undefined ? "new file" : "",
      "",
    );
    return `${path}${before === undefined ? " (new file)" : ""}\n${colourDiff(patch, io.color)}`;
  }
  return request.canonical ?? JSON.stringify(request.input);
}

/** An operator that asks on the terminal; `allow this tool` is remembered for the session. */
export function createPromptOperator(io: PromptIo): AskOperator {
  const allowedTools = new Set<string>();
  return async (request, decision) => {
    if (allowedTools.has(request.tool)) return true;
    const what = await describeCall(request, io);
    const heading = `${request.tool} needs approval`;
    // The default ask reason is the heading itself; say it once.
    const why = decision.reason && decision.reason !== heading ? ` (${decision.reason})` : "";
    await io.write(
      `\n${paint(io.color, BOLD, heading)}${why}\n${what}\n` +
        "[y] allow once  [a] allow " + request.tool + " for this session  [n] deny  " +
        "[r] deny and tell the model why\n> ",
    );
    for (;;) {
      const answer = await io.readLine();
      if (answer === undefined) return "the operator cancelled the approval prompt";
      const choice = answer.trim().toLowerCase();
      if (choice === "y" || choice === "yes") return true;
      if (choice === "a") {
        allowedTools.add(request.tool);
        return true;
      }
      if (choice === "n" || choice === "no" || choice === "") return "denied by the operator";
      if (choice === "r" || choice.startsWith("r ") || choice.startsWith("n ")) {
        let reason = choice.length > 1 ? answer.trim().slice(1).trim() : "";
        if (reason === "") {
          await io.write("reason: ");
          reason = (await io.readLine())?.trim() ?? "";
        }
        return reason === "" ? "denied by the operator" : `denied by the operator: ${reason}`;
      }
      await io.write("please answer y, a, n or r\n> ");
    }
  };
}
