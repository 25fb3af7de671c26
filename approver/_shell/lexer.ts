/**
 * The shell parser's reading of characters into tokens: backslash-newline continuations,
 * blanks and comments, operators and redirection operators, words with their quotes and
 * expansions (`$name`, `${...}`, `$((...))`, `$(...)`, backquotes), and here-document bodies.
 * The grammar (`parser.ts`) builds on it; `$(...)` and backquotes hand back to the grammar.
 *
 * @module
 */

import {
  type Budget,
  litText,
  MAX_COMMANDS,
  MAX_NESTING,
  MAX_STEPS,
  MAX_WORDS,
  type ParseOptions,
  type ParseResult,
  type RawCommand,
  type RawRedirect,
  ShellSyntaxError,
  type Word,
} from "./syntax.ts";

/** Characters that mean nothing special in an unquoted word. */
// deno-lint-ignore no-control-regex -- control characters are not plain: they get a note
const PLAIN_RUN = /[^ \t\n;&|()<>\\'"`$*?[\u0000-\u001f]+/y;
/** Unquoted `{a,b}` or `{a..b}`: bash (not dash) makes several words of it. */
// deno-lint-ignore no-control-regex -- U+0000 stands for the quoted parts of the word
const BRACES = /\{[^{}\u0000]*(,|\.\.)[^{}\u0000]*\}/;
/** The note on a word with braces bash expands. */
export const BRACE_NOTE = "bash expands {a,b} braces into several words";
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const SPECIAL_PARAM = new Set(["@", "*", "#", "?", "-", "$", "!"]);
const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);

/** `start`: offset in the source; `at`: how many commands were listed before it was read. */
export type Token =
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

/**
 * The reading side of a parse: characters, tokens, words, here-documents, and the budget a
 * parse shares with the parses nested in it. `Parser` supplies the grammar.
 */
export abstract class Lexer {
  /** The text being parsed. */
  protected readonly src: string;
  /** The commands listed so far, in the order the caller should list them. */
  protected readonly out: RawCommand[] = [];
  /** A `$'` was read: bash would read the line differently. */
  protected bashDiffers = false;
  /** The first here-document the text ended inside, if any. */
  protected unclosed: ShellSyntaxError | undefined;
  readonly #bash: boolean;
  readonly #budget: Budget;
  #pos = 0;
  #depth: number;
  #peeked: Token | undefined;
  #pending: PendingHeredoc[] = [];

  constructor(src: string, options: ParseOptions) {
    this.src = src;
    this.#bash = options.bash ?? false;
    this.#budget = options.budget ?? { steps: 0, commands: 0, words: 0 };
    this.#depth = options.depth ?? 0;
  }

  /** The grammar's compound list: what `$(...)` holds, read in place. */
  protected abstract compoundList(ends: ReadonlySet<string>, allowEmpty?: boolean): void;

  /** A parse of `text` nested in this one (a backquote's), with `options` passed on. */
  protected abstract parseNested(text: string, options: ParseOptions): ParseResult;

  // ---- characters ----

  protected fail(message: string, at = this.#pos): never {
    throw this.#error(message, at);
  }

  #error(message: string, at: number): ShellSyntaxError {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < this.src.length; i++) {
      if (this.src[i] === "\n") {
        line++;
        lineStart = i + 1;
      }
    }
    return new ShellSyntaxError(message, line, at - lineStart + 1);
  }

  protected count(): void {
    if (++this.#budget.commands > MAX_COMMANDS) {
      this.fail(`too many commands to check (more than ${MAX_COMMANDS})`);
    }
  }

  #step(): void {
    if (++this.#budget.steps > MAX_STEPS) {
      this.fail(`too complex to check (more than ${MAX_STEPS} steps)`);
    }
  }

  protected enter(): void {
    if (++this.#depth > MAX_NESTING) this.fail(`nested more than ${MAX_NESTING} levels deep`);
  }

  protected leave(): void {
    this.#depth--;
  }

  /** Skips backslash-newline pairs, as dash does before reading anything but quoted text. */
  #skipContinuations(): void {
    while (this.src[this.#pos] === "\\" && this.src[this.#pos + 1] === "\n") this.#pos += 2;
  }

  /** The next character after continuations, or "" at the end. */
  #peekChar(): string {
    this.#skipContinuations();
    return this.src[this.#pos] ?? "";
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
    const c = this.src[this.#pos] ?? "";
    if (c !== "") this.#pos++;
    return c;
  }

  // ---- tokens ----

  protected peek(): Token {
    this.#peeked ??= this.#readToken();
    return this.#peeked;
  }

  protected take(): Token {
    const token = this.peek();
    this.#peeked = undefined;
    if (token.type === "newline" && this.#pending.length > 0) this.readHeredocs();
    return token;
  }

  protected unexpected(token: Token): never {
    const what = token.type === "eof"
      ? "end of input"
      : token.type === "newline"
      ? "newline"
      : token.type === "word"
      ? `"${token.word.raw}"`
      : `"${token.op}"`;
    this.fail(`${what} unexpected`, token.start);
  }

  #readToken(): Token {
    const at = this.out.length;
    for (;;) {
      const c = this.#peekChar();
      if (c === " " || c === "\t") {
        this.#nextChar();
        continue;
      }
      if (c === "#") {
        // A comment runs to the newline; a backslash does not continue it.
        while (this.#pos < this.src.length && this.src[this.#pos] !== "\n") {
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
      this.fail(`too many words to check (more than ${MAX_WORDS})`);
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
    (word as { raw: string }).raw = this.src.slice(start, this.#pos);
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
      const run = PLAIN_RUN.exec(this.src);
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
    const end = this.src.indexOf("'", start);
    if (end === -1) this.fail("unterminated quoted string", start - 1);
    this.#budget.steps += end - start;
    this.#step();
    this.#pos = end + 1;
    return this.src.slice(start, end);
  }

  /** bash's `$'...'`: the text with its escapes as bash reads them (only the end matters). */
  #readAnsi(): string {
    let out = "";
    for (;;) {
      const c = this.#rawChar();
      if (c === "") this.fail("unterminated $'...' string");
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
      if (c === "") this.fail("unterminated quoted string", start);
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
      this.bashDiffers = true;
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
    this.enter();
    let c = this.#peekChar();
    let known = true;
    if (c === "#") {
      this.#nextChar();
      c = this.#peekChar();
      if (c === "}") {
        this.#nextChar();
        this.leave();
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
      this.leave();
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
      if (d === "") this.fail("missing } of ${...}");
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
    this.leave();
  }

  /** After `$((`: to the matching `))`. Substitutions inside are read. */
  #readArithmetic(): void {
    this.enter();
    const scratch = this.#newWord();
    let depth = 0;
    for (;;) {
      const c = this.#peekChar();
      if (c === "") this.fail("missing '))'");
      if (c === "(") {
        depth++;
        this.#nextChar();
      } else if (c === ")") {
        this.#nextChar();
        if (depth > 0) depth--;
        else if (this.#peekChar() === ")") {
          this.#nextChar();
          break;
        } else this.fail("missing '))'");
      } else if (c === '"') {
        this.#nextChar();
        this.#readDouble(scratch);
      } else this.#doubleChar(scratch, c, "");
    }
    this.leave();
  }

  /** After `$(`: a command list parsed in place, to the `)`. */
  #readCommandSubstitution(): void {
    this.enter();
    const saved = this.#peeked;
    if (saved !== undefined) this.fail("internal: a token was read ahead of $(");
    this.linebreak();
    if (!(this.peekIsOp(")"))) this.compoundList(new Set(), true);
    const close = this.take();
    if (close.type !== "op" || close.op !== ")") this.unexpected(close);
    this.leave();
  }

  /** After an opening backquote: the text to the closing one, unescaped and parsed. */
  #readBackquote(word: Word, inDouble: boolean): void {
    this.enter();
    let text = "";
    const start = this.#pos - 1;
    for (;;) {
      const c = this.#nextChar();
      if (c === "") this.fail("EOF in backquote substitution", start);
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
    const nested = this.parseNested(text, {
      bash: this.#bash,
      budget: this.#budget,
      depth: this.#depth,
    });
    this.bashDiffers ||= nested.bashDiffers;
    this.out.push(...nested.commands);
    if (nested.error !== undefined) {
      this.fail(`in backquotes: ${nested.error.message}`, start);
    }
    word.parts.push({ kind: "dyn", quoted: inDouble });
    this.leave();
  }

  // ---- here-documents ----

  protected readHeredocs(): void {
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
        while (this.src[this.#pos] === "\t") {
          this.#step();
          this.#pos++;
        }
      }
      const eol = this.src.indexOf("\n", this.#pos);
      const lineEnd = eol === -1 ? this.src.length : eol;
      if (this.src.slice(this.#pos, lineEnd) === doc.delimiter) {
        this.#pos = eol === -1 ? lineEnd : eol + 1;
        break;
      }
      if (this.#pos >= this.src.length) {
        this.unclosed ??= this.#error(`unclosed here-document '${doc.delimiter}'`, this.#pos);
        break;
      }
      if (doc.quoted) {
        this.#budget.steps += lineEnd - this.#pos;
        this.#step();
        this.#lit(body, this.src.slice(this.#pos, eol === -1 ? lineEnd : eol + 1), true);
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
    (body as { raw: string }).raw = this.src.slice(start, this.#pos);
    doc.redirect.target = body;
  }

  /** Queues the body of the here-document `redirect` opens (`op`: `<<` or `<<-`). */
  protected queueHeredoc(redirect: RawRedirect, op: string): void {
    const raw = redirect.target.raw;
    this.#pending.push({
      redirect,
      delimiter: raw.replace(/\\(.)|["']/gs, "$1"),
      quoted: /["'\\]/.test(raw),
      stripTabs: op === "<<-",
    });
  }

  protected peekIsOp(op: string): boolean {
    const token = this.peek();
    return token.type === "op" && token.op === op;
  }

  protected linebreak(): void {
    while (this.peek().type === "newline") this.take();
  }
}
