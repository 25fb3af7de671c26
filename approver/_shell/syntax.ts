/**
 * What the shell parser reads and returns: its limits, the shapes of words, redirections and
 * commands, the syntax error, and the options and result of a parse.
 *
 * @module
 */

/** Nesting levels (subshells, substitutions, compound commands...) before giving up. */
export const MAX_NESTING = 100;
/** Characters read, all levels and nested parses together, before giving up. */
export const MAX_STEPS = 1_000_000;
/** Commands listed, all nested parses together, before giving up. */
export const MAX_COMMANDS = 2048;
/** Words read, all nested parses together, before giving up. */
export const MAX_WORDS = 8192;

/** A piece of a word. */
export type Part =
  | {
    readonly kind: "lit";
    /** The text after quote removal. */
    readonly text: string;
    /** From quotes or an escape: no field splitting, no pattern matching. */
    readonly quoted: boolean;
  }
  | {
    readonly kind: "dyn";
    /** Inside double quotes (one field) or not (split into any number of fields). */
    readonly quoted: boolean;
  };

/** A word as the parser read it. */
export interface Word {
  readonly parts: Part[];
  /** The source text of the word. */
  readonly raw: string;
  /** Unquoted `*`, `?` or `[`. */
  glob: boolean;
  /** What makes the word unsure (the dialects disagree, an unmodelled construct). */
  readonly notes: string[];
}

/** A redirection. */
export interface RawRedirect {
  readonly op: string;
  readonly fd?: number;
  /** The target word; for here-documents the body, filled in when the body is read. */
  target: Word;
}

/** A command-like thing the line runs or does, in the order the caller should list it. */
export interface RawCommand {
  readonly kind: "call" | "redirects" | "function" | "for" | "note";
  readonly assigns: Array<{ readonly name: string; readonly value: Word }>;
  readonly args: Word[];
  readonly redirects: RawRedirect[];
  /** kind function: its name; kind for: the loop variable. */
  readonly name?: string;
  /** Why the command cannot be passed by allow rules, beyond its words' notes. */
  readonly notes: string[];
}

/** A line the parser rejects; `line` and `col` are 1-based. */
export class ShellSyntaxError extends Error {
  constructor(message: string, readonly line: number, readonly col: number) {
    super(`${line}:${col}: ${message}`);
    this.name = "ShellSyntaxError";
  }
}

/** Shared by a parse and the parses nested in it (backquotes, eval, sh -c). */
export interface Budget {
  steps: number;
  commands: number;
  words: number;
}

/** Options of one parse. */
export interface ParseOptions {
  /** Read `$'...'` as bash does (ANSI-C quoting) instead of as dash does (`$` and a quote). */
  readonly bash?: boolean;
  /** Work already done by enclosing parses. */
  readonly budget?: Budget;
  /** Nesting of enclosing parses. */
  readonly depth?: number;
}

/** What a parse found. */
export interface ParseResult {
  /** Every command, nested ones after the command they are part of. */
  readonly commands: RawCommand[];
  /** Commands of the top-level lines that parsed completely: what runs despite an error. */
  readonly complete: number;
  /** The syntax error, if any; `commands` then stops where the parse stopped. */
  readonly error?: ShellSyntaxError;
  /** The line has `$'`: bash would read it differently. */
  readonly bashDiffers: boolean;
}

/** The text of a word made only of unquoted literal parts; undefined otherwise. */
export function litText(word: Word): string | undefined {
  let out = "";
  for (const part of word.parts) {
    if (part.kind !== "lit" || part.quoted) return undefined;
    out += part.text;
  }
  return out;
}
