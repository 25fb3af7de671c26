/**
 * The interactive `ask`: shows the call (the command for bash; the path and a coloured
 * unified diff for edit and write) and reads the operator's answer. Injected by `cli/`;
 * the agent never imports it.
 *
 * @module
 */

import { resolve } from "node:path";
import { type AskOperator, evaluate } from "./approver.ts";
import { compilePolicy } from "./rules.ts";
import { DYNAMIC, splitCommands } from "./shell.ts";
import { changeDiff, changeLines, outputTail } from "./preview.ts";
import type { ApprovalRequest, Decision, Preview, RuleConfig } from "./types.ts";
import { visible, visibleExact } from "./visible.ts";
import { factsOf, toolsWhere } from "./tool_facts.ts";

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
  /**
   * Resolves a path the way the tools will, so a file granted for the session is that file.
   * @default lexical resolution with `node:path`
   */
  readonly resolvePath?: (path: string) => Promise<string>;
  /** The workspace's first root: a preview's paths are shown relative to it. */
  readonly root?: () => string | undefined;
}

/** What "allow for this session" granted: shown by `/approver`. */
export interface SessionGrant {
  /** The tool. */
  readonly tool: string;
  /** What of it: `git status` (bash's program and subcommand), a file's path, or `*`. */
  readonly what: string;
  /** The allow rule it stands for, judged like any allow rule (effects included). */
  readonly rule: RuleConfig;
}

/** An operator that remembers its session's grants. */
export type PromptOperator = AskOperator & {
  /** The grants so far, in the order they were given. */
  grants(): readonly SessionGrant[];
};

/** Escapes `text` for an RE2 regex. */
function literal(text: string): string {
  return text.replace(/[^A-Za-z0-9_ ]/g, (c) => `\\${c}`);
}

function isComputed(word: string): boolean {
  return word.includes(DYNAMIC);
}

/** A program's subcommand: a plain word, not an option or a path. */
const SUBCOMMAND = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

/**
 * What "allow for this session" grants for `request`: for a tool that runs command lines
 * (bash) each simple command's program and subcommand (`git status`, `npm test`; the program
 * alone when the next word is an option); for a tool that writes the file its `path` names
 * (write, edit) that file, for every such tool; for other tools the tool (see `ToolFacts`).
 * Empty when nothing can be named (a program computed at run time, a function).
 */
export async function grantsFor(
  request: ApprovalRequest,
  resolvePath: (path: string) => Promise<string>,
): Promise<SessionGrant[]> {
  const tool = request.tool.toLowerCase();
  const input = (request.input ?? {}) as Record<string, unknown>;
  const facts = factsOf(tool);
  if (facts?.command === true) {
    if (typeof input.command !== "string") return [];
    const split = await splitCommands(input.command);
    if (split.error !== undefined) return [];
    const keys = new Map<string, string>();
    for (const command of split.commands) {
      const [program, next] = command.argv;
      if (command.defines || command.shadowed || command.assignments.length > 0) continue;
      if (program === undefined || /\s/.test(program) || command.argv.some(isComputed)) continue;
      if (next !== undefined && SUBCOMMAND.test(next)) {
        keys.set(`${program} ${next}`, `^${literal(`${program} ${next}`)}( |$)`);
      } else if (command.argv.slice(1).every((w) => w.startsWith("-"))) {
        keys.set(program, `^${literal(program)}( |$)`);
      } else {
        // Options before the subcommand (`git -C dir status`): only that command.
        keys.set(command.argv.join(" "), `^${literal(command.argv.join(" "))}$`);
      }
    }
    return [...keys].map(([key, regex]) => ({ tool, what: key, rule: { tool, command: regex } }));
  }
  if (facts?.path === "write" && typeof input.path === "string") {
    const path = await resolvePath(input.path);
    // A file granted for one tool that writes files is granted for all of them (write, edit).
    return toolsWhere((f) => f.path === "write").map((t) => ({
      tool: t,
      what: path,
      rule: { tool: t, path: `^${literal(path)}$` },
    }));
  }
  return [{ tool, what: "*", rule: { tool } }];
}

function describeGrants(grants: readonly SessionGrant[]): string {
  if (grants.length === 0) return "";
  if (grants[0]!.rule.path !== undefined) return `changes to ${visibleExact(grants[0]!.what)}`;
  if (grants[0]!.what === "*") return visibleExact(grants[0]!.tool);
  return grants.map((g) => visibleExact(g.what)).join(", ");
}

const RED = "\x1b[31m";
const GREEN = "\x1b[32m";
const CYAN = "\x1b[36m";
const BOLD = "\x1b[1m";
const RESET = "\x1b[0m";

function paint(color: boolean, code: string, text: string): string {
  return color ? `${code}${text}${RESET}` : text;
}

/** A unified diff of file contents, made visible (`visible.ts`), then coloured. */
function colourDiff(patch: string, color: boolean): string {
  return visible(patch).split("\n").slice(2).map((line) => {
    if (line.startsWith("+++") || line.startsWith("---")) return paint(color, BOLD, line);
    if (line.startsWith("+")) return paint(color, GREEN, line);
    if (line.startsWith("-")) return paint(color, RED, line);
    if (line.startsWith("@@")) return paint(color, CYAN, line);
    return line;
  }).join("\n");
}

/**
 * `text` with each run of three or more blank lines shown as one line saying how many: a
 * command padded with a screenful of newlines would otherwise push its first lines (and the
 * heading) out of sight, leaving only a harmless-looking tail above the choices.
 */
function foldBlankLines(text: string): string {
  return text.replace(
    /(?:\n[ \t]*){4,}/g,
    (run) => `\n… ${run.split("\n").length - 2} blank lines …\n`,
  );
}

/**
 * What the call will do, as the operator should see it. Everything in it came from the model
 * (or the files it wrote): shown through `visible.ts`, so no escape sequence, carriage return
 * or bidi control can make the command or path read as another one.
 */
export async function describeCall(request: ApprovalRequest, io: PromptIo): Promise<string> {
  const input = (request.input ?? {}) as Record<string, unknown>;
  const text = (key: string) => typeof input[key] === "string" ? input[key] as string : undefined;
  const path = text("path");
  const facts = factsOf(request.tool);
  if (facts?.command === true && text("command") !== undefined) {
    return `$ ${foldBlankLines(visibleExact(text("command")!))}`;
  }
  if (facts?.path === "write" && path !== undefined) {
    const before = await io.readFile(path);
    const content = facts.content;
    let after: string | undefined;
    if (content !== undefined && "field" in content) after = text(content.field);
    else if (content !== undefined) {
      const [old, now] = [text(content.replace.old), text(content.replace.new)];
      if (before !== undefined && old && now !== undefined) {
        const at = before.indexOf(old);
        after = at === -1 ? undefined : before.slice(0, at) + now + before.slice(at + old.length);
      }
    }
    if (after === undefined) {
      return `${visibleExact(path)}\n(the change cannot be previewed: ${
        visibleExact(request.canonical ?? "")
      })`;
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
    return `${visibleExact(path)}${before === undefined ? " (new file)" : ""}\n${
      colourDiff(patch, io.color)
    }`;
  }
  return visibleExact(request.canonical ?? JSON.stringify(request.input));
}

/** The heading's reason in brackets, unless it only repeats the heading. */
function because(decision: Decision, heading: string): string {
  return decision.reason && decision.reason !== heading ? ` (${visible(decision.reason)})` : "";
}

/**
 * An operator that asks on the terminal. `a` grants what the operator saw for the rest of the
 * session (see `grantsFor`); later calls those grants allow, judged as allow rules are, are
 * not asked again.
 */
export function createPromptOperator(io: PromptIo): PromptOperator {
  const granted: SessionGrant[] = [];
  const resolvePath = io.resolvePath ?? ((path: string) => Promise.resolve(resolve(path)));
  const isGranted = async (request: ApprovalRequest) => {
    if (granted.length === 0) return false;
    const policy = compilePolicy({ mode: "pattern", allow: granted.map((g) => g.rule) });
    return (await evaluate(policy, request, { resolvePath })).decision === "allow";
  };
  const operator = async (request: ApprovalRequest, decision: Decision) => {
    if (await isGranted(request)) return true;
    if (request.preview !== undefined) return await askPreview(request, request.preview, decision);
    const what = await describeCall(request, io);
    const heading = `${visibleExact(request.tool)} needs approval`;
    // The default ask reason is the heading itself; say it once.
    const why = because(decision, `${request.tool} needs approval`);
    const grants = await grantsFor(request, resolvePath);
    const session = grants.length === 0
      ? ""
      : `[a] allow ${describeGrants(grants)} for this session  `;
    await io.write(
      `\n${paint(io.color, BOLD, heading)}${why}\n${what}\n` +
        `[y] allow once  ${session}[n] deny  [r] deny and tell the model why\n> `,
    );
    for (;;) {
      const answer = await io.readLine();
      if (answer === undefined) return "the operator cancelled the approval prompt";
      const choice = answer.trim().toLowerCase();
      if (choice === "y" || choice === "yes") return true;
      if (choice === "a" && grants.length > 0) {
        granted.push(
          ...grants.filter((g) => !granted.some((h) => h.tool === g.tool && h.what === g.what)),
        );
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
      await io.write(`please answer y, ${grants.length > 0 ? "a, " : ""}n or r\n> `);
    }
  };
  /**
   * A call that already ran in a preview: its output and changes, `d` for the diff; `y`
   * applies, `n` and `r` discard (the model is told, and does not see the output).
   */
  const askPreview = async (request: ApprovalRequest, preview: Preview, decision: Decision) => {
    const root = io.root?.();
    const heading = `${visibleExact(request.tool)} needs approval`;
    const why = because(decision, `${request.tool} needs approval`);
    const grants = await grantsFor(request, resolvePath);
    const session = grants.length === 0
      ? ""
      : `[a] apply, and allow ${describeGrants(grants)} for this session  `;
    const choices =
      `[y] apply  ${session}[d] diff  [n] discard  [r] discard and tell the model why\n> `;
    await io.write(
      `\n${paint(io.color, BOLD, heading)}${why}\n${await describeCall(request, io)}\n` +
        `it ran in a preview; nothing has reached the workspace yet. Output:\n` +
        `${visible(outputTail(preview.output))}\nChanges:\n${
          visibleExact(await changeLines(preview, root))
        }\n` +
        choices,
    );
    for (;;) {
      const answer = await io.readLine();
      if (answer === undefined) return "the operator cancelled the approval prompt";
      const choice = answer.trim().toLowerCase();
      if (choice === "y" || choice === "yes") return true;
      if (choice === "d") {
        await io.write(
          `${colourDiff(`\n\n${await changeDiff(preview, root)}`, io.color)}\n${choices}`,
        );
        continue;
      }
      if (choice === "a" && grants.length > 0) {
        granted.push(
          ...grants.filter((g) => !granted.some((h) => h.tool === g.tool && h.what === g.what)),
        );
        return true;
      }
      if (choice === "n" || choice === "no" || choice === "") return "discarded by the operator";
      if (choice === "r" || choice.startsWith("r ") || choice.startsWith("n ")) {
        let reason = choice.length > 1 ? answer.trim().slice(1).trim() : "";
        if (reason === "") {
          await io.write("reason: ");
          reason = (await io.readLine())?.trim() ?? "";
        }
        return reason === "" ? "discarded by the operator" : `discarded by the operator: ${reason}`;
      }
      await io.write(`please answer y, ${grants.length > 0 ? "a, " : ""}d, n or r\n> `);
    }
  };
  return Object.assign(operator, { grants: () => [...granted] });
}
