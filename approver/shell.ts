/**
 * Splits a shell command line into its simple commands, as `/bin/sh` (dash on Debian, bash in
 * sh mode elsewhere) will run them, with the parser in `_shell/`.
 *
 * Each simple command comes in the views the rules need:
 * - `written`: words unquoted and joined by single spaces, assignments kept, as the
 *   operator would type it. Allow and ask rules see only this view.
 * - `variants`: every way the same program could be named — assignments dropped, the
 *   command name's basename (`/bin/rm` → `rm`), the command inside wrappers such as `sudo`,
 *   `env`, `xargs` or `sh -c '...'`. Deny rules see all of them.
 * - `argv`, `assignments`, `redirects`, `defines`, `shadowed`: the exact data an effects
 *   analysis needs.
 *
 * Where the parser cannot see exactly what will run (a parse error, `eval`, `sh -c`, any word
 * built from expansions, here-documents with substitutions, output redirected to a file,
 * constructs dash and bash read differently, function and alias definitions), the command is
 * marked `opaque`: no allow or ask rule can pass it.
 *
 * Bounded: a line over `MAX_COMMAND_BYTES` is not parsed at all, and the parser stops (failing
 * closed) past fixed nesting and work limits, so no input costs more than a few milliseconds
 * per kilobyte.
 *
 * @module
 */

import { basename } from "node:path";
import {
  BRACE_NOTE,
  type Budget,
  parseShell,
  type RawCommand,
  type RawRedirect,
  type Word,
} from "./_shell/mod.ts";

/** A prefix assignment `NAME=value` of a simple command. */
export interface Assignment {
  /** The variable's name. */
  readonly name: string;
  /** Its value after quote removal; holds `DYNAMIC` where part of it is computed at run time. */
  readonly value: string;
}

/** A redirection of a simple command (or of a compound command, see `SimpleCommand`). */
export interface Redirect {
  /** The operator as written: `>`, `>>`, `<`, `<>`, `>|`, `>&`, `<&`, `<<`, `<<-`. */
  readonly op: string;
  /** The file descriptor written before the operator (`2>x` → 2); absent when none was. */
  readonly fd?: number;
  /**
   * The target after quote removal (a path, an fd number or `-` for `>&`/`<&`); for `<<` and
   * `<<-` the here-document's body. Holds `DYNAMIC` where part of it is computed at run time.
   */
  readonly target: string;
}

/** One simple command of a command line. */
export interface SimpleCommand {
  /** Unquoted words joined by spaces, assignment prefixes included. */
  readonly written: string;
  /** Every normalised spelling deny rules are tested against (includes `written`). */
  readonly variants: readonly string[];
  /** True when allow rules must not pass it; `why` says what could not be seen through. */
  readonly opaque: boolean;
  /** Why it is opaque. */
  readonly why?: string;
  /**
   * The words the shell passes to the program, `argv[0]` the program, after quote removal and
   * escapes. A word computed at run time ($VAR, $(...), backticks) contains `DYNAMIC`; a
   * word the parser cannot model exactly equals `DYNAMIC`. Empty for a statement that is only
   * redirections, and for a compound command reported for its own redirections.
   */
  readonly argv: readonly string[];
  /**
   * Per `argv` index: true when the word holds unquoted `*`, `?` or `[`, so the shell may
   * replace it with matching file names (argv then holds the pattern).
   */
  readonly globs: readonly boolean[];
  /** Prefix assignments (`FOO=1 cmd`), in order. */
  readonly assignments: readonly Assignment[];
  /** Redirections, in order. */
  readonly redirects: readonly Redirect[];
  /**
   * Set when this entry defines rather than runs: `"function"` for `name() body` (argv is
   * `[name]`; the body's commands follow as entries of their own), `"alias"` for the `alias`
   * builtin given `name=value` words. Always opaque.
   */
  readonly defines?: "function" | "alias";
  /** The names defined (function name, or each alias name). */
  readonly names?: readonly string[];
  /**
   * True when `argv[0]` names a function or alias defined anywhere in the same line: it
   * does not run the program of that name. Always opaque.
   */
  readonly shadowed?: boolean;
}

/** The result of splitting a command line. */
export interface SplitResult {
  /** The simple commands, in source order, nested ones included. */
  readonly commands: readonly SimpleCommand[];
  /**
   * Set when the line could not be parsed at all. `commands` then holds what a shell would
   * still run (the complete lines before the error, an unclosed here-document read to the
   * end), for deny rules; allow and ask rules never pass such a line.
   */
  readonly error?: string;
}

/** The result of splitting a command line. */
export interface SplitResult {
  /** The simple commands, in source order, nested ones after the command holding them. */
  readonly commands: readonly SimpleCommand[];
  /**
   * Set when the line could not be parsed at all. `commands` then holds what a shell would
   * still run (the complete lines before the error, an unclosed here-document read to the
   * end), for deny rules; allow and ask rules never pass such a line.
   */
  readonly error?: string;
}

/** Placeholder for a word whose value is only known when the shell runs. */
export const DYNAMIC = "\u0000";

/** The longest command line the approver parses, in UTF-8 bytes. */
export const MAX_COMMAND_BYTES = 65536;

/**
 * The denial reason for a line over `MAX_COMMAND_BYTES`, or undefined when it is short enough.
 */
export function commandTooLong(line: string): string | undefined {
  // Each UTF-16 unit is at most three UTF-8 bytes: short lines need no counting.
  if (line.length * 3 <= MAX_COMMAND_BYTES) return undefined;
  const bytes = new TextEncoder().encode(line).length;
  return bytes > MAX_COMMAND_BYTES
    ? `command too long to check (${bytes} bytes; the limit is ${MAX_COMMAND_BYTES})`
    : undefined;
}

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]);
// Programs that run their arguments as another command.
const WRAPPERS = new Set([
  "sudo",
  "doas",
  "env",
  "command",
  "builtin",
  "exec",
  "nohup",
  "nice",
  "ionice",
  "time",
  "timeout",
  "xargs",
  "stdbuf",
  "setsid",
  "chroot",
  "unbuffer",
  "watch",
  "strace",
  "ltrace",
  "flock",
  "su",
  "busybox",
  "pkexec",
  "runuser",
  "taskset",
  "chrt",
  "unshare",
  "fakeroot",
]);
const OUTPUT_OPS = new Set([">", ">>", "<>", ">|"]);
const HEREDOC_OPS = new Set(["<<", "<<-"]);
const COMPUTED = "a word is computed when the shell runs ($VAR, $(...) or backticks)";
const DIALECT = `$'...' and $"..." are read differently by sh and bash`;
/** Nested parses (eval, sh -c) deeper than this are not looked into. */
const MAX_DEPTH = 8;
/** Words after a wrapper that get a full variant; later ones get a window of the next ones. */
const FULL_VARIANTS = 64;
const VARIANT_WINDOW = 8;

/** The value the shell passes for `word`: see `SimpleCommand.argv`. */
function argValue(word: Word): string {
  if (word.notes.some((n) => n.startsWith("$'") || n.startsWith('$"'))) return DYNAMIC;
  let out = "";
  for (const part of word.parts) {
    if (part.kind === "lit") out += part.text;
    else if (part.quoted) out += DYNAMIC;
    else return DYNAMIC;
  }
  return out;
}

/** The word in the `written` view: its value, or `DYNAMIC` when any of it is computed. */
function shownValue(word: Word): string {
  const value = argValue(word);
  return value.includes(DYNAMIC) ? DYNAMIC : value;
}

function isComputed(word: Word): boolean {
  return word.parts.some((p) => p.kind === "dyn");
}

/** Reasons a word makes its command opaque, beyond being computed. */
function wordNotes(word: Word): string[] {
  return word.notes.map((n) => n.startsWith("$'") || n.startsWith('$"') ? DIALECT : n);
}

function redirectOf(raw: RawRedirect): Redirect {
  const target = argValue(raw.target);
  return raw.fd === undefined ? { op: raw.op, target } : { op: raw.op, fd: raw.fd, target };
}

function redirectReasons(raw: RawRedirect): string[] {
  const reasons = wordNotes(raw.target);
  if (HEREDOC_OPS.has(raw.op)) {
    if (isComputed(raw.target)) reasons.push("a here-document contains substitutions");
    return reasons;
  }
  const target = isComputed(raw.target) ? undefined : argValue(raw.target);
  if (OUTPUT_OPS.has(raw.op) && target !== "/dev/null") {
    reasons.push(`output is redirected to ${target ?? "a computed path"}`);
  }
  if ((raw.op === ">&" || raw.op === "<&") && !/^(\d+|-)$/.test(target ?? "")) {
    reasons.push(raw.op === ">&" ? "output is redirected to a file" : "input is a computed file");
  }
  return reasons;
}

/** bash's brace expansion of one word, for deny rules (at most 64 results). */
function braceExpand(word: string): string[] {
  const match = /\{([^{}]*)\}/.exec(word);
  if (match === null) return [word];
  const inner = match[1]!;
  let alternatives: string[];
  const range = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])$/.exec(inner);
  if (range !== null) alternatives = [range[1]!, range[2]!];
  else if (inner.includes(",")) alternatives = inner.split(",");
  else return [word];
  const before = word.slice(0, match.index);
  const after = word.slice(match.index + match[0].length);
  return alternatives.flatMap((a) => braceExpand(before + a + after)).slice(0, 64);
}

interface Context {
  readonly depth: number;
  readonly budget: Budget;
}

/** Variants of `shown` for deny rules: base names, and words after wrappers as programs. */
function addVariants(
  shown: readonly string[],
  variants: Set<string>,
  reasons: string[],
  extra: SimpleCommand[],
  context: Context,
): void {
  let wrapped = false;
  for (let i = 0; i < shown.length && (i === 0 || wrapped); i++) {
    const base = basename(shown[i]!);
    const rest = i < FULL_VARIANTS
      ? shown.slice(i + 1)
      : shown.slice(i + 1, i + 1 + VARIANT_WINDOW);
    variants.add([base, ...rest].join(" "));
    if (base === "eval") {
      reasons.push("eval runs a computed command");
      extra.push(...nested(shown.slice(i + 1).join(" "), context).commands);
      break;
    }
    if (SHELLS.has(base) && rest.some((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w))) {
      reasons.push(`${base} -c runs a command string`);
      // Options may take values (`-o errexit`), so every non-option word may be the script.
      for (const word of shown.slice(i + 1).filter((w) => !w.startsWith("-"))) {
        extra.push(...nested(word, context).commands);
      }
      break;
    }
    if (base === "find" && rest.some((w) => /^-(exec|execdir|ok|okdir)$/.test(w))) {
      reasons.push("find -exec runs other commands");
      wrapped = true;
    }
    if (WRAPPERS.has(base)) wrapped = true;
  }
}

function entry(
  written: string,
  variants: readonly string[],
  reasons: readonly string[],
  facts: Pick<SimpleCommand, "argv" | "globs" | "assignments" | "redirects">,
  extra: Pick<SimpleCommand, "defines" | "names"> = {},
): SimpleCommand {
  const unique = [...new Set(reasons)];
  return unique.length === 0
    ? { written, variants, opaque: false, ...facts, ...extra }
    : { written, variants, opaque: true, why: unique.join("; "), ...facts, ...extra };
}

const NO_FACTS = { argv: [], globs: [], assignments: [], redirects: [] } as const;

function callOf(raw: RawCommand, context: Context): SimpleCommand[] {
  const reasons: string[] = [...raw.notes];
  const assignments: Assignment[] = raw.assigns.map((a) => ({
    name: a.name,
    value: argValue(a.value),
  }));
  const assigns = raw.assigns.map((a) => `${a.name}=${shownValue(a.value)}`);
  const shown = raw.args.map(shownValue);
  const argv = raw.args.map(argValue);
  const globs = raw.args.map((w) => w.glob);
  const notes = [...raw.args, ...raw.assigns.map((a) => a.value)].flatMap(wordNotes);
  if (notes.includes(DIALECT)) reasons.push(DIALECT);
  else if (
    raw.args.some(isComputed) || raw.assigns.some((a) => isComputed(a.value))
  ) reasons.push(COMPUTED);
  reasons.push(...notes.filter((n) => n !== DIALECT));
  for (const redirect of raw.redirects) reasons.push(...redirectReasons(redirect));
  const written = [...assigns, ...shown].join(" ");
  const variants = new Set<string>([written, shown.join(" ")]);
  const extra: SimpleCommand[] = [];
  addVariants(shown, variants, reasons, extra, context);
  if (raw.args.some((w) => w.notes.includes(BRACE_NOTE))) {
    const expanded = raw.args.flatMap((w) =>
      w.notes.includes(BRACE_NOTE) ? braceExpand(shownValue(w)) : [shownValue(w)]
    );
    variants.add(expanded.join(" "));
    addVariants(expanded, variants, [], [], context);
  }
  const aliases = argv[0] === "alias" ? argv.slice(1).filter((w) => w.includes("=")) : [];
  if (aliases.length > 0) reasons.push("alias defines a command");
  const defines = aliases.length > 0
    ? { defines: "alias" as const, names: aliases.map((a) => a.slice(0, a.indexOf("="))) }
    : {};
  const facts = { argv, globs, assignments, redirects: raw.redirects.map(redirectOf) };
  return [entry(written, [...variants], reasons, facts, defines), ...extra];
}

/** The simple commands of one parsed item. */
function commandsOf(raw: RawCommand, context: Context): SimpleCommand[] {
  switch (raw.kind) {
    case "call":
      return callOf(raw, context);
    case "redirects": {
      const reasons = raw.redirects.flatMap(redirectReasons);
      if (reasons.length === 0) return [];
      return [entry("", [""], reasons, { ...NO_FACTS, redirects: raw.redirects.map(redirectOf) })];
    }
    case "function": {
      const name = raw.name!;
      return [entry(`${name}()`, [`${name}()`], [`defines a function ${name}`], {
        ...NO_FACTS,
        argv: [name],
        globs: [false],
      }, { defines: "function", names: [name] })];
    }
    case "for": {
      // The loop variable is assigned: a name programs read (PATH, IFS, LD_PRELOAD...) is a
      // change of the shell. Lower-case names are the shell's own by convention.
      const name = raw.name!;
      if (/^[a-z0-9_]+$/.test(name)) return [];
      return [entry(`for ${name}`, [`for ${name}`], [`a for loop assigns ${name}`], {
        ...NO_FACTS,
        assignments: [{ name, value: DYNAMIC }],
      })];
    }
    case "note": {
      const reasons = [...raw.notes, ...raw.args.flatMap(wordNotes)];
      return reasons.length === 0 ? [] : [entry("", [""], reasons, NO_FACTS)];
    }
  }
}

/** A nested command string (eval, sh -c): parsed unless too deep. */
function nested(line: string, context: Context): SplitResult {
  return splitWith(line, { depth: context.depth + 1, budget: context.budget });
}

function splitWith(line: string, context: Context): SplitResult {
  if (context.depth > MAX_DEPTH) return { commands: [], error: "commands nested too deeply" };
  const tooLong = commandTooLong(line);
  if (tooLong !== undefined) return { commands: [], error: tooLong };
  let error: string | undefined;
  let source = line;
  if (line.includes("\u0000")) {
    // A NUL cannot reach sh through argv; deny rules still see the line without them.
    error = "the command holds a NUL byte";
    source = line.replaceAll("\u0000", "");
  }
  const parsed = parseShell(source, { budget: context.budget, depth: context.depth });
  const raws = parsed.error === undefined
    ? parsed.commands
    : parsed.commands.slice(0, parsed.complete);
  const commands = raws.flatMap((raw) => commandsOf(raw, context));
  if (parsed.bashDiffers) {
    // bash (sh on many systems) ends $'...' elsewhere: what it would run counts too.
    const bash = parseShell(source, { bash: true, budget: context.budget, depth: context.depth });
    const seen = new Set(commands.map((c) => c.written));
    for (
      const command of bash.commands.slice(0, bash.error ? bash.complete : undefined).flatMap((
        raw,
      ) => commandsOf(raw, context))
    ) {
      if (seen.has(command.written)) continue;
      const why = "bash reads this line differently";
      commands.push({
        ...command,
        opaque: true,
        why: command.why ? `${command.why}; ${why}` : why,
      });
    }
  }
  error ??= parsed.error?.message;
  return error === undefined ? { commands } : { commands, error };
}

/** Splits `line`; never throws. */
export function splitCommands(line: string): Promise<SplitResult> {
  try {
    return Promise.resolve(
      markShadowed(splitWith(line, { depth: 0, budget: { steps: 0, commands: 0, words: 0 } })),
    );
  } catch (error) {
    // The parser throws only on a bug; fail closed with what it says.
    return Promise.resolve({ commands: [], error: `cannot check the command: ${String(error)}` });
  }
}

/**
 * Marks each command whose program is a function or alias the same line defines: the shell
 * runs the definition, not the program of that name (`ls() { rm -rf x; }; ls`).
 */
function markShadowed(result: SplitResult): SplitResult {
  const names = new Set(result.commands.flatMap((c) => c.defines ? c.names ?? [] : []));
  if (names.size === 0) return result;
  const commands = result.commands.map((c): SimpleCommand => {
    const name = c.argv[0];
    if (c.defines || name === undefined || !names.has(name)) return c;
    const why = `${name} is a function or alias defined in this line`;
    return { ...c, opaque: true, why: c.why ? `${c.why}; ${why}` : why, shadowed: true };
  });
  return result.error === undefined ? { commands } : { commands, error: result.error };
}
