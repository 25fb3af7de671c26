/**
 * Splits a shell command line into its simple commands with a real POSIX parser
 * (mvdan/sh, the parser behind shfmt, compiled to JavaScript as the npm package `mvdan-sh`).
 *
 * Each simple command comes in the views the rules need:
 * - `written`: words unquoted and joined by single spaces, assignments kept, as the
 *   operator would type it. Allow and ask rules see only this view.
 * - `variants`: every way the same program could be named — assignments dropped, the
 *   command name's basename (`/bin/rm` → `rm`), the command inside wrappers such as `sudo`,
 *   `env`, `xargs` or `sh -c '...'`. Deny rules see all of them.
 *
 * Where the parser cannot see what will run (a parse error, `eval`, `sh -c`, any word built
 * from expansions, here-documents with substitutions, output redirected to a file),
 * the command is marked `opaque`: no allow or ask rule can pass it.
 *
 * @module
 */

import { basename } from "node:path";

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

// deno-lint-ignore no-explicit-any
type Node = any;

interface Syntax {
  NewParser(...options: unknown[]): { Parse(src: string, name: string): Node };
  Variant(lang: unknown): unknown;
  LangPOSIX: unknown;
  Walk(node: Node, visit: (node: Node) => boolean): void;
  NodeType(node: Node): string;
}

let syntaxModule: Promise<Syntax> | undefined;

/** Loads the parser (1.5 MB of JavaScript) on first use only, keeping start-up fast. */
function loadSyntax(): Promise<Syntax> {
  syntaxModule ??= import("mvdan-sh").then((m) => (m.default ?? m).syntax as Syntax);
  return syntaxModule;
}

/** Placeholder for a word whose value is only known when the shell runs. */
export const DYNAMIC = "\u0000";

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
const OUTPUT_REDIRECTS = new Set([54, 55, 57, 60, 64, 65]); // > >> <> >| &> &>>
const REDIRECT_OPS: Readonly<Record<number, string>> = {
  54: ">",
  55: ">>",
  56: "<",
  57: "<>",
  58: "<&",
  59: ">&",
  60: ">|",
  61: "<<",
  62: "<<-",
  63: "<<<",
  64: "&>",
  65: "&>>",
};
const DUP_OUTPUT = 59; // >&
const HEREDOCS = new Set([61, 62]); // << <<-

/** The literal value of a word, or undefined when part of it is an expansion. */
function wordValue(syntax: Syntax, word: Node): string | undefined {
  const value = argValue(syntax, word);
  return value.includes(DYNAMIC) ? undefined : value;
}

/**
 * The value the shell passes for `word`: literal parts after quote removal, an expansion
 * inside double quotes as `DYNAMIC`; the whole word is `DYNAMIC` when an unquoted expansion
 * (which may split into several words or none) or `$'...'` is part of it.
 */
function argValue(syntax: Syntax, word: Node): string {
  if (dollarQuoted(syntax, word)) return DYNAMIC;
  let out = "";
  for (const part of word.Parts) {
    const type = syntax.NodeType(part);
    if (type === "Lit") out += unescapeUnquoted(part.Value);
    else if (type === "SglQuoted") out += part.Value;
    else if (type === "DblQuoted") {
      for (const inner of part.Parts) {
        out += syntax.NodeType(inner) === "Lit" ? unescapeDoubleQuoted(inner.Value) : DYNAMIC;
      }
    } else return DYNAMIC;
  }
  return out;
}

/** An unescaped `*`, `?` or `[` in an unquoted literal. */
const GLOB = /(^|[^\\])(\\\\)*[*?[]/;

/** True when an unquoted part of `word` holds a pattern character. */
function hasGlob(syntax: Syntax, word: Node): boolean {
  return word.Parts.some((part: Node) => syntax.NodeType(part) === "Lit" && GLOB.test(part.Value));
}

/** A literal ending in an unescaped `$`: followed by a quote, it starts `$'...'` or `$"..."`. */
const ANSI_QUOTE_START = /(^|[^\\])(\\\\)*\$$/;

/**
 * True when `word` holds `$'...'` or `$"..."`: a POSIX parse reads them as `$` and a quote,
 * but bash, ksh and busybox sh (`/bin/sh` on many systems) end `$'\''` at the third quote.
 */
function dollarQuoted(syntax: Syntax, word: Node): boolean {
  return word.Parts.some((part: Node, i: number) => {
    const next = word.Parts[i + 1];
    return syntax.NodeType(part) === "Lit" && ANSI_QUOTE_START.test(part.Value) && next &&
      ["SglQuoted", "DblQuoted"].includes(syntax.NodeType(next));
  });
}

function unescapeUnquoted(raw: string): string {
  return raw.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1");
}

function unescapeDoubleQuoted(raw: string): string {
  return raw.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
}

/** The here-document body as the program reads it, or `DYNAMIC` where it is computed. */
function heredocBody(syntax: Syntax, redirect: Node): string {
  if (!redirect.Hdoc) return "";
  const quoted = redirect.Word?.Parts.some((p: Node) => syntax.NodeType(p) !== "Lit") ||
    redirect.Word?.Parts.some((p: Node) => /\\/.test(p.Value ?? ""));
  if (quoted) {
    return redirect.Hdoc.Parts.map((p: Node) => syntax.NodeType(p) === "Lit" ? p.Value : DYNAMIC)
      .join("");
  }
  return redirect.Hdoc.Parts.map((p: Node) =>
    syntax.NodeType(p) === "Lit" ? unescapeDoubleQuoted(p.Value) : DYNAMIC
  ).join("");
}

function redirectOf(syntax: Syntax, redirect: Node): Redirect {
  const op = REDIRECT_OPS[redirect.Op] ?? String(redirect.Op);
  const target = HEREDOCS.has(redirect.Op)
    ? heredocBody(syntax, redirect)
    : redirect.Word
    ? argValue(syntax, redirect.Word)
    : "";
  const fd = redirect.N ? Number(redirect.N.Value) : undefined;
  return fd === undefined ? { op, target } : { op, fd, target };
}

function commandOf(
  syntax: Syntax,
  call: Node,
  redirects: readonly Node[],
  parse: (src: string) => SplitResult,
): SimpleCommand[] {
  const reasons: string[] = [];
  const assigns: string[] = [];
  const assignments: Assignment[] = [];
  for (const assign of call.Assigns) {
    const value = assign.Value ? wordValue(syntax, assign.Value) : "";
    assigns.push(`${assign.Name.Value}=${value ?? DYNAMIC}`);
    assignments.push({
      name: assign.Name.Value,
      value: assign.Value ? argValue(syntax, assign.Value) : "",
    });
  }
  const words = call.Args.map((w: Node) => wordValue(syntax, w));
  const shown = words.map((w: string | undefined) => w ?? DYNAMIC) as string[];
  const argv: string[] = call.Args.map((w: Node) => argValue(syntax, w));
  const globs: boolean[] = call.Args.map((w: Node) => hasGlob(syntax, w));
  const redirs: Redirect[] = redirects.map((r) => redirectOf(syntax, r));
  const facts = { argv, globs, assignments, redirects: redirs };
  if (call.Args.some((w: Node) => dollarQuoted(syntax, w))) {
    reasons.push(`$'...' and $"..." are read differently by sh and bash`);
  } else if (words.includes(undefined) || assigns.some((a) => a.includes(DYNAMIC))) {
    reasons.push("a word is computed when the shell runs ($VAR, $(...) or backticks)");
  }
  for (const redirect of redirects) {
    const target = redirect.Word ? wordValue(syntax, redirect.Word) : "";
    if (OUTPUT_REDIRECTS.has(redirect.Op) && target !== "/dev/null") {
      reasons.push(`output is redirected to ${target ?? "a computed path"}`);
    }
    if (redirect.Op === DUP_OUTPUT && !/^(\d+|-)$/.test(target ?? "")) {
      reasons.push("output is redirected to a file");
    }
    if (
      HEREDOCS.has(redirect.Op) && redirect.Hdoc && wordValue(syntax, redirect.Hdoc) === undefined
    ) {
      reasons.push("a here-document contains substitutions");
    }
  }
  const written = [...assigns, ...shown].join(" ");
  const variants = new Set<string>([written, shown.join(" ")]);
  const extra: SimpleCommand[] = [];
  // Deny rules also see the program by its base name and, after a wrapper (`sudo`, `env`,
  // `timeout 5` ...), every later word as a possible program name.
  let wrapped = false;
  for (let i = 0; i < shown.length && (i === 0 || wrapped); i++) {
    const base = basename(shown[i]!);
    const rest = shown.slice(i + 1);
    variants.add([base, ...rest].join(" "));
    if (base === "eval") {
      reasons.push("eval runs a computed command");
      extra.push(...parse(rest.join(" ")).commands);
      break;
    }
    if (SHELLS.has(base) && rest.some((w) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w))) {
      reasons.push(`${base} -c runs a command string`);
      // Options may take values (`-o errexit`), so every non-option word may be the script.
      for (const word of rest.filter((w) => !w.startsWith("-"))) {
        extra.push(...parse(word).commands);
      }
      break;
    }
    if (base === "find" && rest.some((w) => /^-(exec|execdir|ok|okdir)$/.test(w))) {
      reasons.push("find -exec runs other commands");
      wrapped = true;
    }
    if (WRAPPERS.has(base)) wrapped = true;
  }
  const aliases = argv[0] === "alias" ? argv.slice(1).filter((w) => w.includes("=")) : [];
  if (aliases.length > 0) reasons.push("alias defines a command");
  const defines = aliases.length > 0
    ? { defines: "alias" as const, names: aliases.map((a) => a.slice(0, a.indexOf("="))) }
    : {};
  const command: SimpleCommand = reasons.length === 0
    ? { written, variants: [...variants], opaque: false, ...facts }
    : {
      written,
      variants: [...variants],
      opaque: true,
      why: reasons.join("; "),
      ...facts,
      ...defines,
    };
  return [command, ...extra];
}

const MAX_PREFIXES = 64;

/**
 * What a shell runs of a line that does not parse: sh and bash read a here-document to the
 * end of input when its delimiter is missing, and run each complete line before the one
 * with the syntax error.
 */
function runsAnyway(syntax: Syntax, line: string, depth: number, error: string): SimpleCommand[] {
  const heredoc = /unclosed here-document '(.*)'$/.exec(error);
  if (heredoc !== null) return [...splitWith(syntax, `${line}\n${heredoc[1]}`, depth + 1).commands];
  const lines = line.split("\n");
  const errorLine = Number(/^(\d+):/.exec(error)?.[1] ?? lines.length);
  const last = Math.min(errorLine, lines.length) - 1;
  for (let end = last; end > 0 && end > last - MAX_PREFIXES; end--) {
    const prefix = splitWith(syntax, lines.slice(0, end).join("\n"), depth + 1, false);
    if (prefix.error === undefined) return [...prefix.commands];
  }
  return [];
}

/** Splits `line`; never throws. */
export async function splitCommands(line: string): Promise<SplitResult> {
  const syntax = await loadSyntax();
  return markShadowed(splitWith(syntax, line, 0));
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

/** The entry for a function definition; its body's commands are walked separately. */
function definition(name: string): SimpleCommand {
  return {
    written: `${name}()`,
    variants: [`${name}()`],
    opaque: true,
    why: `defines a function ${name}`,
    argv: [name],
    globs: [false],
    assignments: [],
    redirects: [],
    defines: "function",
    names: [name],
  };
}

const MAX_DEPTH = 8;

function splitWith(syntax: Syntax, line: string, depth: number, salvage = true): SplitResult {
  if (depth > MAX_DEPTH) return { commands: [], error: "commands nested too deeply" };
  let file: Node;
  try {
    file = syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(line, "");
  } catch (error: unknown) {
    const e = error as { Error?: () => string };
    const message = typeof e?.Error === "function" ? e.Error() : String(error);
    return { commands: salvage ? runsAnyway(syntax, line, depth, message) : [], error: message };
  }
  const commands: SimpleCommand[] = [];
  const parse = (src: string) => splitWith(syntax, src, depth + 1);
  let unsupported: string | undefined;
  syntax.Walk(file, (node: Node) => {
    if (!node) return true;
    const type = syntax.NodeType(node);
    if (type === "Stmt" && node.Cmd && syntax.NodeType(node.Cmd) === "CallExpr") {
      commands.push(...commandOf(syntax, node.Cmd, node.Redirs, parse));
    } else if (type === "Stmt" && node.Cmd === null && node.Redirs.length > 0) {
      commands.push(...commandOf(syntax, { Assigns: [], Args: [] }, node.Redirs, parse));
    } else if (type === "Stmt" && node.Cmd && syntax.NodeType(node.Cmd) !== "CallExpr") {
      // Compound commands (subshells, if, for, functions...) are walked into; their own
      // redirections still count.
      const [own] = commandOf(syntax, { Assigns: [], Args: [] }, node.Redirs, parse);
      if (own?.opaque) commands.push(own);
    } else if (type === "FuncDecl") {
      commands.push(definition(node.Name.Value));
    } else if (type === "ProcSubst" || type === "CoprocClause") {
      unsupported = type;
    }
    return true;
  });
  const result: SimpleCommand[] = commands;
  if (unsupported !== undefined) {
    result.push({
      written: "",
      variants: [],
      opaque: true,
      why: `${unsupported} is not supported`,
      argv: [],
      globs: [],
      assignments: [],
      redirects: [],
    });
  }
  return { commands: result };
}
