/**
 * A parser for the POSIX shell language as dash (`/bin/sh` on Debian) reads it, written for
 * the approver: it finds every command a line runs, with each word's value after quote
 * removal, and says where it cannot be sure.
 *
 * What it models, as dash does (checked against dash 0.5.12, see tests/approver/shell_test.ts):
 * - backslash-newline is removed before anything else is read, everywhere but inside single
 *   quotes, comments and quoted here-documents: `"$\⏎(cmd)"` is a command substitution;
 * - words, quotes, escapes, `$name`, `${...}` (its inner word read for substitutions),
 *   `$((...))`, `$(...)` (parsed in place), backquotes (their text unescaped and parsed again),
 *   here-documents (bodies read at the next newline; unquoted ones for substitutions);
 * - lists, pipelines, `!`, subshells, groups, if/while/until/for/case, function definitions.
 *
 * Constructs bash reads differently when it is `/bin/sh` (`$'...'`, `$"..."`, `$[...]`,
 * `((`, `[[`, `function`, `${x@P}`, `${!x}`, brace expansion) are noted on the word or
 * command, so no allow rule passes them; `$'...'` also makes the caller parse the line a
 * second time the way bash would, so deny rules see both readings.
 *
 * Bounded: nesting deeper than `MAX_NESTING` and more than `MAX_STEPS` characters read in
 * all (backquotes are read again per level) stop the parse with a `ShellSyntaxError`.
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

const RESERVED = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "case",
  "esac",
  "while",
  "until",
  "for",
  "{",
  "}",
  "!",
  "in",
]);
/** Words that end a compound list. */
const LIST_END = new Set(["then", "else", "elif", "fi", "do", "done", "esac", "}"]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Characters that mean nothing special in an unquoted word. */
// deno-lint-ignore no-control-regex -- control characters are not plain: they get a note
const PLAIN_RUN = /[^ \t\n;&|()<>\\'"`$*?[\u0000-\u001f]+/y;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
/** Unquoted `{a,b}` or `{a..b}`: bash (not dash) makes several words of it. */
// deno-lint-ignore no-control-regex -- U+0000 stands for the quoted parts of the word
const BRACES = /\{[^{}\u0000]*(,|\.\.)[^{}\u0000]*\}/;
/** The note on a word with braces bash expands. */
export const BRACE_NOTE = "bash expands {a,b} braces into several words";
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const SPECIAL_PARAM = new Set(["@", "*", "#", "?", "-", "$", "!"]);
const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);
/** Words bash treats as syntax where dash runs a command of that name. */
const BASH_KEYWORDS: Readonly<Record<string, string>> = {
  "[[": "bash reads [[ ... ]] as a conditional expression",
  "function": "bash reads function as a function definition",
  "select": "bash reads select as a loop",
  "coproc": "bash reads coproc as a coprocess",
};

/** `start`: offset in the source; `at`: how many commands were listed before it was read. */
type Token =
  & { readonly start: number; readonly at: number }
  & (
    | { readonly type: "word"; readonly word: Word }
    | { readonly type: "op"; readonly op: string }
    | { readonly type: "redirect"; readonly op: string; readonly fd?: number }
    | { readonly type: "newline" }
    | { readonly type: "eof" }
  );

interface PendingHeredoc {
  readonly redirect: RawRedirect;
  readonly delimiter: string;
  readonly quoted: boolean;
  readonly stripTabs: boolean;
}

function litText(word: Word): string | undefined {
  let out = "";
  for (const part of word.parts) {
    if (part.kind !== "lit" || part.quoted) return undefined;
    out += part.text;
  }
  return out;
}

/** Parses `src`; never throws (errors come back in the result). */
export function parseShell(src: string, options: ParseOptions = {}): ParseResult {
  const parser = new Parser(src, options);
  return parser.run();
}

class Parser {
  readonly #src: string;
  readonly #bash: boolean;
  readonly #budget: Budget;
  #pos = 0;
  #depth: number;
  #peeked: Token | undefined;
  #pending: PendingHeredoc[] = [];
  readonly #out: RawCommand[] = [];
  #bashDiffers = false;
  #unclosed: ShellSyntaxError | undefined;

  constructor(src: string, options: ParseOptions) {
    this.#src = src;
    this.#bash = options.bash ?? false;
    this.#budget = options.budget ?? { steps: 0, commands: 0, words: 0 };
    this.#depth = options.depth ?? 0;
  }

  run(): ParseResult {
    let complete = 0;
    try {
      for (;;) {
        this.#linebreak();
        if (this.#peek().type === "eof") break;
        this.#andOrList(new Set(), true);
        const next = this.#peek();
        if (next.type === "newline") this.#take();
        else if (next.type !== "eof") this.#unexpected(next);
        complete = this.#out.length;
      }
      if (this.#pending.length > 0) this.#readHeredocs();
      const result = {
        commands: this.#out,
        complete: this.#out.length,
        bashDiffers: this.#bashDiffers,
      };
      // sh reads an unclosed here-document to the end and runs the line: all of it counts.
      return this.#unclosed === undefined ? result : { ...result, error: this.#unclosed };
    } catch (error) {
      if (!(error instanceof ShellSyntaxError)) throw error;
      return { commands: this.#out, complete, error, bashDiffers: this.#bashDiffers };
    }
  }

  // ---- characters ----

  #fail(message: string, at = this.#pos): never {
    throw this.#error(message, at);
  }

  #error(message: string, at: number): ShellSyntaxError {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < this.#src.length; i++) {
      if (this.#src[i] === "\n") {
        line++;
        lineStart = i + 1;
      }
    }
    return new ShellSyntaxError(message, line, at - lineStart + 1);
  }

  #count(): void {
    if (++this.#budget.commands > MAX_COMMANDS) {
      this.#fail(`too many commands to check (more than ${MAX_COMMANDS})`);
    }
  }

  #step(): void {
    if (++this.#budget.steps > MAX_STEPS) {
      this.#fail(`too complex to check (more than ${MAX_STEPS} steps)`);
    }
  }

  #enter(): void {
    if (++this.#depth > MAX_NESTING) this.#fail(`nested more than ${MAX_NESTING} levels deep`);
  }

  #leave(): void {
    this.#depth--;
  }

  /** Skips backslash-newline pairs, as dash does before reading anything but quoted text. */
  #skipContinuations(): void {
    while (this.#src[this.#pos] === "\\" && this.#src[this.#pos + 1] === "\n") this.#pos += 2;
  }

  /** The next character after continuations, or "" at the end. */
  #peekChar(): string {
    this.#skipContinuations();
    return this.#src[this.#pos] ?? "";
  }

  #nextChar(): string {
    this.#step();
    const c = this.#peekChar();
    if (c !== "") this.#pos++;
    return c;
  }

  /** The next character as it stands (the character after a backslash, quoted text). */
  #rawChar(): string {
    this.#step();
    const c = this.#src[this.#pos] ?? "";
    if (c !== "") this.#pos++;
    return c;
  }

  // ---- tokens ----

  #peek(): Token {
    this.#peeked ??= this.#readToken();
    return this.#peeked;
  }

  #take(): Token {
    const token = this.#peek();
    this.#peeked = undefined;
    if (token.type === "newline" && this.#pending.length > 0) this.#readHeredocs();
    return token;
  }

  #unexpected(token: Token): never {
    const what = token.type === "eof"
      ? "end of input"
      : token.type === "newline"
      ? "newline"
      : token.type === "word"
      ? `"${token.word.raw}"`
      : `"${token.op}"`;
    this.#fail(`${what} unexpected`, token.start);
  }

  #readToken(): Token {
    const at = this.#out.length;
    for (;;) {
      const c = this.#peekChar();
      if (c === " " || c === "\t") {
        this.#nextChar();
        continue;
      }
      if (c === "#") {
        // A comment runs to the newline; a backslash does not continue it.
        while (this.#pos < this.#src.length && this.#src[this.#pos] !== "\n") {
          this.#step();
          this.#pos++;
        }
        continue;
      }
      break;
    }
    const start = this.#pos;
    const c = this.#peekChar();
    if (c === "") return { type: "eof", start, at };
    if (c === "\n") {
      this.#nextChar();
      return { type: "newline", start, at };
    }
    if (c === "&" || c === "|" || c === ";") {
      this.#nextChar();
      if (this.#peekChar() === c) {
        this.#nextChar();
        return { type: "op", op: c + c, start, at };
      }
      return { type: "op", op: c, start, at };
    }
    if (c === "(" || c === ")") {
      this.#nextChar();
      return { type: "op", op: c, start, at };
    }
    if (c === "<" || c === ">") return this.#readRedirectOp(start, at, undefined);
    if (++this.#budget.words > MAX_WORDS) {
      this.#fail(`too many words to check (more than ${MAX_WORDS})`);
    }
    const word = this.#readWord();
    // All digits, then < or >: a file descriptor number.
    const digits = litText(word);
    if (
      digits !== undefined && /^[0-9]+$/.test(digits) &&
      (this.#peekChar() === "<" || this.#peekChar() === ">")
    ) {
      return this.#readRedirectOp(start, at, Number(digits));
    }
    return { type: "word", word, start, at };
  }

  #readRedirectOp(start: number, at: number, fd: number | undefined): Token {
    const first = this.#nextChar();
    const second = this.#peekChar();
    let op = first;
    if (first === "<") {
      if (second === "<") {
        this.#nextChar();
        op = "<<";
        if (this.#peekChar() === "-") {
          this.#nextChar();
          op = "<<-";
        }
      } else if (second === "&" || second === ">") {
        this.#nextChar();
        op += second;
      }
    } else if (second === ">" || second === "&" || second === "|") {
      this.#nextChar();
      op += second;
    }
    return fd === undefined
      ? { type: "redirect", op, start, at }
      : { type: "redirect", op, fd, start, at };
  }

  // ---- words ----

  #newWord(): Word {
    return { parts: [], raw: "", glob: false, notes: [] };
  }

  #finish(word: Word, start: number): Word {
    (word as { raw: string }).raw = this.#src.slice(start, this.#pos);
    return word;
  }

  #lit(word: Word, text: string, quoted: boolean): void {
    const last = word.parts[word.parts.length - 1];
    if (last?.kind === "lit" && last.quoted === quoted) {
      word.parts[word.parts.length - 1] = { kind: "lit", text: last.text + text, quoted };
    } else word.parts.push({ kind: "lit", text, quoted });
  }

  /** An unquoted word, up to a blank or an operator character. */
  #readWord(): Word {
    const start = this.#pos;
    const word = this.#newWord();
    for (;;) {
      const c = this.#peekChar();
      if (c === "" || META.has(c)) break;
      // A run of plain characters at once (no objects per character).
      PLAIN_RUN.lastIndex = this.#pos;
      const run = PLAIN_RUN.exec(this.#src);
      if (run !== null) {
        this.#budget.steps += run[0].length;
        this.#step();
        this.#pos += run[0].length;
        this.#lit(word, run[0], false);
        continue;
      }
      this.#wordChar(word, c, false);
    }
    const unquoted = word.parts.map((p) => p.kind === "lit" && !p.quoted ? p.text : "\u0000")
      .join("");
    if (BRACES.test(unquoted)) word.notes.push(BRACE_NOTE);
    return this.#finish(word, start);
  }

  /** One character (and what it starts) of unquoted text. */
  #wordChar(word: Word, c: string, inBraces: boolean): void {
    if (c === "\\") {
      this.#nextChar();
      const escaped = this.#rawChar();
      this.#lit(word, escaped === "" ? "\\" : escaped, true);
    } else if (c === "'") {
      this.#nextChar();
      this.#lit(word, this.#readSingle(), true);
    } else if (c === '"') {
      this.#nextChar();
      this.#readDouble(word);
    } else if (c === "`") {
      this.#nextChar();
      this.#readBackquote(word, false);
    } else if (c === "$") {
      this.#nextChar();
      this.#readDollar(word, false);
    } else {
      this.#nextChar();
      if (!inBraces && (c === "*" || c === "?" || c === "[")) word.glob = true;
      if (c !== "\n" && c !== "\t" && c < " ") {
        word.notes.push(
          `a word holds the control character U+${
            c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")
          }`,
        );
      }
      this.#lit(word, c, false);
    }
  }

  #readSingle(): string {
    const start = this.#pos;
    const end = this.#src.indexOf("'", start);
    if (end === -1) this.#fail("unterminated quoted string", start - 1);
    this.#budget.steps += end - start;
    this.#step();
    this.#pos = end + 1;
    return this.#src.slice(start, end);
  }

  /** bash's `$'...'`: the text with its escapes as bash reads them (only the end matters). */
  #readAnsi(): string {
    let out = "";
    for (;;) {
      const c = this.#rawChar();
      if (c === "") this.#fail("unterminated $'...' string");
      if (c === "'") return out;
      if (c === "\\") out += this.#rawChar();
      else out += c;
    }
  }

  /** After an opening `"`: the text up to the closing one. */
  #readDouble(word: Word): void {
    const start = this.#pos - 1;
    for (;;) {
      const c = this.#peekChar();
      if (c === "") this.#fail("unterminated quoted string", start);
      if (c === '"') {
        this.#nextChar();
        // An empty "" still makes a word.
        this.#lit(word, "", true);
        return;
      }
      this.#doubleChar(word, c, '"');
    }
  }

  /** One character of double-quoted (or here-document) text; `quote` is what `\` escapes too. */
  #doubleChar(word: Word, c: string, quote: string): void {
    if (c === "\\") {
      this.#nextChar();
      const escaped = this.#rawChar();
      if (escaped === "$" || escaped === "`" || escaped === "\\" || escaped === quote) {
        this.#lit(word, escaped, true);
      } else this.#lit(word, escaped === "" ? "\\" : `\\${escaped}`, true);
    } else if (c === "$") {
      this.#nextChar();
      this.#readDollar(word, true);
    } else if (c === "`") {
      this.#nextChar();
      this.#readBackquote(word, quote === '"');
    } else {
      this.#nextChar();
      this.#lit(word, c, true);
    }
  }

  /** After a `$`. */
  #readDollar(word: Word, quoted: boolean): void {
    const c = this.#peekChar();
    if (c === "(") {
      this.#nextChar();
      if (this.#peekChar() === "(") {
        this.#nextChar();
        this.#readArithmetic();
      } else this.#readCommandSubstitution();
      word.parts.push({ kind: "dyn", quoted });
    } else if (c === "{") {
      this.#nextChar();
      this.#readParameter(word, quoted);
      word.parts.push({ kind: "dyn", quoted });
    } else if (c !== "" && (NAME_START.test(c))) {
      while (NAME_CHAR.test(this.#peekChar())) this.#nextChar();
      word.parts.push({ kind: "dyn", quoted });
    } else if (/[0-9]/.test(c) || SPECIAL_PARAM.has(c)) {
      this.#nextChar();
      word.parts.push({ kind: "dyn", quoted });
    } else if (c === "'" && !quoted) {
      word.notes.push(`$'...' is read differently by sh and bash`);
      this.#bashDiffers = true;
      if (this.#bash) {
        this.#nextChar();
        this.#lit(word, this.#readAnsi(), true);
      } else this.#lit(word, "$", false);
    } else if (c === '"' && !quoted) {
      word.notes.push(`$"..." is read differently by sh and bash`);
      if (this.#bash) {
        this.#nextChar();
        this.#readDouble(word);
      } else this.#lit(word, "$", false);
    } else if (c === "[") {
      word.notes.push("bash reads $[ ] as arithmetic");
      this.#lit(word, "$", quoted);
    } else {
      this.#lit(word, "$", quoted);
    }
  }

  /** After `${`: the parameter, its operator and its word, to the closing `}`. */
  #readParameter(word: Word, quoted: boolean): void {
    this.#enter();
    let c = this.#peekChar();
    let known = true;
    if (c === "#") {
      this.#nextChar();
      c = this.#peekChar();
      if (c === "}") {
        this.#nextChar();
        this.#leave();
        return;
      }
    }
    if (NAME_START.test(c)) {
      while (NAME_CHAR.test(this.#peekChar())) this.#nextChar();
    } else if (/[0-9]/.test(c)) {
      while (/[0-9]/.test(this.#peekChar())) this.#nextChar();
    } else if (SPECIAL_PARAM.has(c)) {
      this.#nextChar();
    } else known = false;
    c = this.#peekChar();
    if (c === "}") {
      this.#nextChar();
      if (!known) word.notes.push("a ${...} expansion sh rejects and bash may not");
      this.#leave();
      return;
    }
    if (c === ":") {
      this.#nextChar();
      if (!"-=?+".includes(this.#peekChar()) || this.#peekChar() === "") known = false;
      else this.#nextChar();
    } else if (c !== "" && "-=?+".includes(c)) {
      this.#nextChar();
    } else if (c === "%" || c === "#") {
      this.#nextChar();
      if (this.#peekChar() === c) this.#nextChar();
    } else known = false;
    if (!known) word.notes.push("a ${...} expansion sh rejects and bash reads its own way");
    // The operator's word, read to the closing brace with the quoting of the context.
    const inner = this.#newWord();
    for (;;) {
      const d = this.#peekChar();
      if (d === "") this.#fail("missing } of ${...}");
      if (d === "}") {
        this.#nextChar();
        break;
      }
      if (quoted) {
        if (d === '"') {
          this.#nextChar();
          this.#readDouble(inner);
        } else this.#doubleChar(inner, d, "}");
      } else this.#wordChar(inner, d, true);
    }
    word.notes.push(...inner.notes);
    this.#leave();
  }

  /** After `$((`: to the matching `))`. Substitutions inside are read. */
  #readArithmetic(): void {
    this.#enter();
    const scratch = this.#newWord();
    let depth = 0;
    for (;;) {
      const c = this.#peekChar();
      if (c === "") this.#fail("missing '))'");
      if (c === "(") {
        depth++;
        this.#nextChar();
      } else if (c === ")") {
        this.#nextChar();
        if (depth > 0) depth--;
        else if (this.#peekChar() === ")") {
          this.#nextChar();
          break;
        } else this.#fail("missing '))'");
      } else if (c === '"') {
        this.#nextChar();
        this.#readDouble(scratch);
      } else this.#doubleChar(scratch, c, "");
    }
    this.#leave();
  }

  /** After `$(`: a command list parsed in place, to the `)`. */
  #readCommandSubstitution(): void {
    this.#enter();
    const saved = this.#peeked;
    if (saved !== undefined) this.#fail("internal: a token was read ahead of $(");
    this.#linebreak();
    if (!(this.#peekIsOp(")"))) this.#compoundList(new Set(), true);
    const close = this.#take();
    if (close.type !== "op" || close.op !== ")") this.#unexpected(close);
    this.#leave();
  }

  /** After an opening backquote: the text to the closing one, unescaped and parsed. */
  #readBackquote(word: Word, inDouble: boolean): void {
    this.#enter();
    let text = "";
    const start = this.#pos - 1;
    for (;;) {
      const c = this.#nextChar();
      if (c === "") this.#fail("EOF in backquote substitution", start);
      if (c === "`") break;
      if (c === "\\") {
        const escaped = this.#rawChar();
        if (escaped === "\n") continue;
        if (
          !(escaped === "\\" || escaped === "`" || escaped === "$" ||
            (inDouble && escaped === '"'))
        ) text += "\\";
        text += escaped;
        continue;
      }
      text += c;
    }
    const nested = new Parser(text, {
      bash: this.#bash,
      budget: this.#budget,
      depth: this.#depth,
    }).run();
    this.#bashDiffers ||= nested.bashDiffers;
    this.#out.push(...nested.commands);
    if (nested.error !== undefined) {
      this.#fail(`in backquotes: ${nested.error.message}`, start);
    }
    word.parts.push({ kind: "dyn", quoted: inDouble });
    this.#leave();
  }

  // ---- here-documents ----

  #readHeredocs(): void {
    const pending = this.#pending;
    this.#pending = [];
    for (const doc of pending) this.#readHeredoc(doc);
  }

  #readHeredoc(doc: PendingHeredoc): void {
    const body = this.#newWord();
    const start = this.#pos;
    for (;;) {
      // At a line start: tabs go for <<-, then the delimiter line ends the document.
      if (doc.stripTabs) {
        while (this.#src[this.#pos] === "\t") {
          this.#step();
          this.#pos++;
        }
      }
      const eol = this.#src.indexOf("\n", this.#pos);
      const lineEnd = eol === -1 ? this.#src.length : eol;
      if (this.#src.slice(this.#pos, lineEnd) === doc.delimiter) {
        this.#pos = eol === -1 ? lineEnd : eol + 1;
        break;
      }
      if (this.#pos >= this.#src.length) {
        this.#unclosed ??= this.#error(`unclosed here-document '${doc.delimiter}'`, this.#pos);
        break;
      }
      if (doc.quoted) {
        this.#budget.steps += lineEnd - this.#pos;
        this.#step();
        this.#lit(body, this.#src.slice(this.#pos, eol === -1 ? lineEnd : eol + 1), true);
        this.#pos = eol === -1 ? lineEnd : eol + 1;
        continue;
      }
      // Unquoted: continuations join lines, substitutions are read, to a real newline.
      for (;;) {
        const c = this.#peekChar();
        if (c === "") break;
        if (c === "\n") {
          this.#nextChar();
          this.#lit(body, "\n", true);
          break;
        }
        this.#doubleChar(body, c, "");
      }
    }
    (body as { raw: string }).raw = this.#src.slice(start, this.#pos);
    doc.redirect.target = body;
  }

  // ---- grammar ----

  #peekIsOp(op: string): boolean {
    const token = this.#peek();
    return token.type === "op" && token.op === op;
  }

  /** The reserved word the next token is, if it is one (unquoted, in command position). */
  #peekReserved(): string | undefined {
    const token = this.#peek();
    if (token.type !== "word") return undefined;
    const text = litText(token.word);
    return text !== undefined && RESERVED.has(text) ? text : undefined;
  }

  #linebreak(): void {
    while (this.#peek().type === "newline") this.#take();
  }

  #expectReserved(word: string): void {
    this.#linebreak();
    if (this.#peekReserved() !== word) this.#unexpected(this.#peek());
    this.#take();
  }

  /**
   * Lists separated by `;`, `&` and newlines, up to a word of `ends` or a `)`; `top` stops
   * at the first newline (the top level runs one line at a time).
   */
  #andOrList(ends: ReadonlySet<string>, top: boolean): void {
    for (;;) {
      this.#andOr();
      const token = this.#peek();
      if (token.type === "op" && (token.op === ";" || token.op === "&")) {
        this.#take();
        if (top) {
          const next = this.#peek();
          if (next.type === "newline" || next.type === "eof") return;
        } else this.#linebreak();
      } else if (token.type === "newline") {
        if (top) return;
        this.#linebreak();
      } else return;
      const next = this.#peek();
      if (next.type === "eof" || (next.type === "op" && (next.op === ")" || next.op === ";;"))) {
        return;
      }
      const reserved = this.#peekReserved();
      if (reserved !== undefined && (LIST_END.has(reserved) || ends.has(reserved))) return;
    }
  }

  #compoundList(ends: ReadonlySet<string>, allowEmpty = false): void {
    this.#linebreak();
    const reserved = this.#peekReserved();
    const next = this.#peek();
    const empty = next.type === "eof" || (next.type === "op" && next.op === ")") ||
      (reserved !== undefined && (LIST_END.has(reserved) || ends.has(reserved)));
    if (empty) {
      if (!allowEmpty) this.#unexpected(next);
    } else this.#andOrList(ends, false);
  }

  #andOr(): void {
    for (;;) {
      this.#pipeline();
      const token = this.#peek();
      if (token.type === "op" && (token.op === "&&" || token.op === "||")) {
        this.#take();
        this.#linebreak();
        continue;
      }
      return;
    }
  }

  #pipeline(): void {
    if (this.#peekReserved() === "!") this.#take();
    for (;;) {
      this.#command();
      if (this.#peekIsOp("|")) {
        this.#take();
        this.#linebreak();
        continue;
      }
      return;
    }
  }

  #command(): void {
    this.#enter();
    const token = this.#peek();
    const at = token.at;
    if (token.type === "op" && token.op === "(") {
      this.#take();
      if (this.#src[token.start + 1] === "(") {
        this.#note("bash reads (( ... )) as arithmetic");
      }
      this.#compoundList(new Set());
      const close = this.#take();
      if (close.type !== "op" || close.op !== ")") this.#unexpected(close);
      this.#compoundRedirects(at);
    } else {
      const reserved = this.#peekReserved();
      switch (reserved) {
        case "{":
          this.#take();
          this.#compoundList(new Set(["}"]));
          this.#expectReserved("}");
          this.#compoundRedirects(at);
          break;
        case "if":
          this.#ifClause(at);
          break;
        case "while":
        case "until":
          this.#take();
          this.#compoundList(new Set(["do"]));
          this.#doGroup();
          this.#compoundRedirects(at);
          break;
        case "for":
          this.#forClause(at);
          break;
        case "case":
          this.#caseClause(at);
          break;
        case undefined:
          this.#simpleCommand();
          break;
        default:
          this.#unexpected(token);
      }
    }
    this.#leave();
  }

  #doGroup(): void {
    this.#expectReserved("do");
    this.#compoundList(new Set(["done"]));
    this.#expectReserved("done");
  }

  #ifClause(at: number): void {
    this.#take();
    this.#compoundList(new Set(["then"]));
    this.#expectReserved("then");
    this.#compoundList(new Set(["elif", "else", "fi"]));
    for (;;) {
      const reserved = this.#peekReserved();
      if (reserved === "elif") {
        this.#take();
        this.#compoundList(new Set(["then"]));
        this.#expectReserved("then");
        this.#compoundList(new Set(["elif", "else", "fi"]));
      } else if (reserved === "else") {
        this.#take();
        this.#compoundList(new Set(["fi"]));
      } else break;
    }
    this.#expectReserved("fi");
    this.#compoundRedirects(at);
  }

  #forClause(at: number): void {
    this.#take();
    const name = this.#take();
    const text = name.type === "word" ? litText(name.word) : undefined;
    if (text === undefined || !NAME.test(text)) this.#fail("bad for loop variable", name.start);
    const words: Word[] = [];
    const entry: RawCommand = {
      kind: "for",
      assigns: [],
      args: words,
      redirects: [],
      name: text,
      notes: [],
    };
    this.#count();
    this.#out.push(entry);
    this.#linebreak();
    if (this.#peekReserved() === "in") {
      this.#take();
      for (;;) {
        const token = this.#peek();
        if (token.type !== "word") break;
        this.#take();
        words.push(token.word);
      }
      const sep = this.#peek();
      if (sep.type === "op" && sep.op === ";") this.#take();
      else if (sep.type !== "newline") this.#unexpected(sep);
    } else if (this.#peekIsOp(";")) this.#take();
    this.#doGroup();
    this.#compoundRedirects(at);
  }

  #caseClause(at: number): void {
    this.#take();
    const subject = this.#take();
    if (subject.type !== "word") this.#unexpected(subject);
    const entry: RawCommand = {
      kind: "note",
      assigns: [],
      args: [subject.word],
      redirects: [],
      notes: [],
    };
    // The subject's substitutions matter, not the case itself: listed only when unsure.
    this.#expectReserved("in");
    for (;;) {
      this.#linebreak();
      if (this.#peekReserved() === "esac") break;
      if (this.#peekIsOp("(")) this.#take();
      for (;;) {
        const pattern = this.#take();
        if (pattern.type !== "word") this.#unexpected(pattern);
        const next = this.#take();
        if (next.type === "op" && next.op === "|") continue;
        if (next.type === "op" && next.op === ")") break;
        this.#unexpected(next);
      }
      this.#compoundList(new Set(["esac"]), true);
      if (this.#peekIsOp(";;")) this.#take();
      else break;
    }
    this.#expectReserved("esac");
    if (subject.word.notes.length > 0) this.#insert(subject.at, entry);
    this.#compoundRedirects(at);
  }

  /** A note on its own: the line holds something allow rules must not pass. */
  #note(why: string): void {
    this.#count();
    this.#out.push({ kind: "note", assigns: [], args: [], redirects: [], notes: [why] });
  }

  /** Redirections after a compound command, listed as a command of their own. */
  #compoundRedirects(at: number): void {
    const redirects: RawRedirect[] = [];
    while (this.#peek().type === "redirect") redirects.push(this.#redirect());
    if (redirects.length > 0) {
      this.#insert(at, { kind: "redirects", assigns: [], args: [], redirects, notes: [] });
    }
  }

  #redirect(): RawRedirect {
    const token = this.#take();
    if (token.type !== "redirect") this.#unexpected(token);
    const target = this.#take();
    if (target.type !== "word") this.#unexpected(target);
    const redirect: RawRedirect = token.fd === undefined
      ? { op: token.op, target: target.word }
      : { op: token.op, fd: token.fd, target: target.word };
    if (token.op === "<<" || token.op === "<<-") {
      const raw = target.word.raw;
      this.#pending.push({
        redirect,
        delimiter: raw.replace(/\\(.)|["']/gs, "$1"),
        quoted: /["'\\]/.test(raw),
        stripTabs: token.op === "<<-",
      });
    }
    return redirect;
  }

  #simpleCommand(): void {
    const at = this.#peek().at;
    const command: RawCommand = { kind: "call", assigns: [], args: [], redirects: [], notes: [] };
    for (;;) {
      const token = this.#peek();
      if (token.type === "redirect") {
        command.redirects.push(this.#redirect());
        continue;
      }
      if (token.type !== "word") break;
      this.#take();
      const word = token.word;
      if (command.args.length === 0) {
        const first = word.parts[0];
        const assign = first?.kind === "lit" && !first.quoted ? ASSIGNMENT.exec(first.text) : null;
        if (assign !== null) {
          command.assigns.push({ name: assign[1]!, value: valueAfter(word, assign[0].length) });
          continue;
        }
        const text = litText(word);
        if (
          command.assigns.length === 0 && command.redirects.length === 0 && text !== undefined &&
          NAME.test(text) && this.#peekIsOp("(")
        ) {
          this.#functionDefinition(text, at);
          return;
        }
        const bashWord = text === undefined ? undefined : BASH_KEYWORDS[text];
        if (bashWord !== undefined) command.notes.push(bashWord);
      }
      command.args.push(word);
    }
    if (
      command.args.length === 0 && command.assigns.length === 0 && command.redirects.length === 0
    ) {
      this.#unexpected(this.#peek());
    }
    this.#insert(at, command);
  }

  /** Lists `command` before the commands nested in it (read while reading its words). */
  #insert(at: number, command: RawCommand): void {
    this.#count();
    if (at === this.#out.length) this.#out.push(command);
    else this.#out.splice(at, 0, command);
  }

  #functionDefinition(name: string, at: number): void {
    this.#take();
    const close = this.#take();
    if (close.type !== "op" || close.op !== ")") this.#unexpected(close);
    this.#insert(at, {
      kind: "function",
      assigns: [],
      args: [],
      redirects: [],
      name,
      notes: [],
    });
    this.#linebreak();
    this.#command();
  }
}

/** The value of an assignment word: its parts after the first `=`. */
function valueAfter(word: Word, offset: number): Word {
  const [first, ...rest] = word.parts;
  const parts: Part[] = [];
  if (first?.kind === "lit") {
    const text = first.text.slice(offset);
    if (text !== "") parts.push({ kind: "lit", text, quoted: first.quoted });
  }
  parts.push(...rest);
  return { parts, raw: word.raw.slice(word.raw.indexOf("=") + 1), glob: false, notes: word.notes };
}
