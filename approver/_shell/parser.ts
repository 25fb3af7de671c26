/**
 * The shell parser's grammar: lists, pipelines, `!`, subshells, groups,
 * if/while/until/for/case, function definitions and simple commands, listed in the order the
 * caller should see them. It reads tokens from `Lexer` (`lexer.ts`).
 *
 * @module
 */

import { Lexer } from "./lexer.ts";
import {
  litText,
  type ParseOptions,
  type ParseResult,
  type Part,
  type RawCommand,
  type RawRedirect,
  ShellSyntaxError,
  type Word,
} from "./syntax.ts";

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
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;
/** Words bash treats as syntax where dash runs a command of that name. */
const BASH_KEYWORDS: Readonly<Record<string, string>> = {
  "[[": "bash reads [[ ... ]] as a conditional expression",
  "function": "bash reads function as a function definition",
  "select": "bash reads select as a loop",
  "coproc": "bash reads coproc as a coprocess",
};

/** Parses `src`; never throws (errors come back in the result). */
export function parseShell(src: string, options: ParseOptions = {}): ParseResult {
  const parser = new Parser(src, options);
  return parser.run();
}

/** The grammar over `Lexer`'s tokens; one instance per parse. */
class Parser extends Lexer {
  run(): ParseResult {
    let complete = 0;
    try {
      for (;;) {
        this.linebreak();
        if (this.peek().type === "eof") break;
        this.#andOrList(new Set(), true);
        const next = this.peek();
        if (next.type === "newline") this.take();
        else if (next.type !== "eof") this.unexpected(next);
        complete = this.out.length;
      }
      this.readHeredocs(); // bodies of here-documents the last line opened, if any
      const result = {
        commands: this.out,
        complete: this.out.length,
        bashDiffers: this.bashDiffers,
      };
      // sh reads an unclosed here-document to the end and runs the line: all of it counts.
      return this.unclosed === undefined ? result : { ...result, error: this.unclosed };
    } catch (error) {
      if (!(error instanceof ShellSyntaxError)) throw error;
      return { commands: this.out, complete, error, bashDiffers: this.bashDiffers };
    }
  }

  protected override parseNested(text: string, options: ParseOptions): ParseResult {
    return new Parser(text, options).run();
  }

  /** The reserved word the next token is, if it is one (unquoted, in command position). */
  #peekReserved(): string | undefined {
    const token = this.peek();
    if (token.type !== "word") return undefined;
    const text = litText(token.word);
    return text !== undefined && RESERVED.has(text) ? text : undefined;
  }

  #expectReserved(word: string): void {
    this.linebreak();
    if (this.#peekReserved() !== word) this.unexpected(this.peek());
    this.take();
  }

  /**
   * Lists separated by `;`, `&` and newlines, up to a word of `ends` or a `)`; `top` stops
   * at the first newline (the top level runs one line at a time).
   */
  #andOrList(ends: ReadonlySet<string>, top: boolean): void {
    for (;;) {
      this.#andOr();
      const token = this.peek();
      if (token.type === "op" && (token.op === ";" || token.op === "&")) {
        this.take();
        if (top) {
          const next = this.peek();
          if (next.type === "newline" || next.type === "eof") return;
        } else this.linebreak();
      } else if (token.type === "newline") {
        if (top) return;
        this.linebreak();
      } else return;
      const next = this.peek();
      if (next.type === "eof" || (next.type === "op" && (next.op === ")" || next.op === ";;"))) {
        return;
      }
      const reserved = this.#peekReserved();
      if (reserved !== undefined && (LIST_END.has(reserved) || ends.has(reserved))) return;
    }
  }

  protected override compoundList(ends: ReadonlySet<string>, allowEmpty = false): void {
    this.linebreak();
    const reserved = this.#peekReserved();
    const next = this.peek();
    const empty = next.type === "eof" || (next.type === "op" && next.op === ")") ||
      (reserved !== undefined && (LIST_END.has(reserved) || ends.has(reserved)));
    if (empty) {
      if (!allowEmpty) this.unexpected(next);
    } else this.#andOrList(ends, false);
  }

  #andOr(): void {
    for (;;) {
      this.#pipeline();
      const token = this.peek();
      if (token.type === "op" && (token.op === "&&" || token.op === "||")) {
        this.take();
        this.linebreak();
        continue;
      }
      return;
    }
  }

  #pipeline(): void {
    if (this.#peekReserved() === "!") this.take();
    for (;;) {
      this.#command();
      if (this.peekIsOp("|")) {
        this.take();
        this.linebreak();
        continue;
      }
      return;
    }
  }

  #command(): void {
    this.enter();
    const token = this.peek();
    const at = token.at;
    if (token.type === "op" && token.op === "(") {
      this.take();
      if (this.src[token.start + 1] === "(") {
        this.#note("bash reads (( ... )) as arithmetic");
      }
      this.compoundList(new Set());
      const close = this.take();
      if (close.type !== "op" || close.op !== ")") this.unexpected(close);
      this.#compoundRedirects(at);
    } else {
      const reserved = this.#peekReserved();
      switch (reserved) {
        case "{":
          this.take();
          this.compoundList(new Set(["}"]));
          this.#expectReserved("}");
          this.#compoundRedirects(at);
          break;
        case "if":
          this.#ifClause(at);
          break;
        case "while":
        case "until":
          this.take();
          this.compoundList(new Set(["do"]));
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
          this.unexpected(token);
      }
    }
    this.leave();
  }

  #doGroup(): void {
    this.#expectReserved("do");
    this.compoundList(new Set(["done"]));
    this.#expectReserved("done");
  }

  #ifClause(at: number): void {
    this.take();
    this.compoundList(new Set(["then"]));
    this.#expectReserved("then");
    this.compoundList(new Set(["elif", "else", "fi"]));
    for (;;) {
      const reserved = this.#peekReserved();
      if (reserved === "elif") {
        this.take();
        this.compoundList(new Set(["then"]));
        this.#expectReserved("then");
        this.compoundList(new Set(["elif", "else", "fi"]));
      } else if (reserved === "else") {
        this.take();
        this.compoundList(new Set(["fi"]));
      } else break;
    }
    this.#expectReserved("fi");
    this.#compoundRedirects(at);
  }

  #forClause(at: number): void {
    this.take();
    const name = this.take();
    const text = name.type === "word" ? litText(name.word) : undefined;
    if (text === undefined || !NAME.test(text)) this.fail("bad for loop variable", name.start);
    const words: Word[] = [];
    const entry: RawCommand = {
      kind: "for",
      assigns: [],
      args: words,
      redirects: [],
      name: text,
      notes: [],
    };
    this.count();
    this.out.push(entry);
    this.linebreak();
    if (this.#peekReserved() === "in") {
      this.take();
      for (;;) {
        const token = this.peek();
        if (token.type !== "word") break;
        this.take();
        words.push(token.word);
      }
      const sep = this.peek();
      if (sep.type === "op" && sep.op === ";") this.take();
      else if (sep.type !== "newline") this.unexpected(sep);
    } else if (this.peekIsOp(";")) this.take();
    this.#doGroup();
    this.#compoundRedirects(at);
  }

  #caseClause(at: number): void {
    this.take();
    const subject = this.take();
    if (subject.type !== "word") this.unexpected(subject);
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
      this.linebreak();
      if (this.#peekReserved() === "esac") break;
      if (this.peekIsOp("(")) this.take();
      for (;;) {
        const pattern = this.take();
        if (pattern.type !== "word") this.unexpected(pattern);
        const next = this.take();
        if (next.type === "op" && next.op === "|") continue;
        if (next.type === "op" && next.op === ")") break;
        this.unexpected(next);
      }
      this.compoundList(new Set(["esac"]), true);
      if (this.peekIsOp(";;")) this.take();
      else break;
    }
    this.#expectReserved("esac");
    if (subject.word.notes.length > 0) this.#insert(subject.at, entry);
    this.#compoundRedirects(at);
  }

  /** A note on its own: the line holds something allow rules must not pass. */
  #note(why: string): void {
    this.count();
    this.out.push({ kind: "note", assigns: [], args: [], redirects: [], notes: [why] });
  }

  /** Redirections after a compound command, listed as a command of their own. */
  #compoundRedirects(at: number): void {
    const redirects: RawRedirect[] = [];
    while (this.peek().type === "redirect") redirects.push(this.#redirect());
    if (redirects.length > 0) {
      this.#insert(at, { kind: "redirects", assigns: [], args: [], redirects, notes: [] });
    }
  }

  #redirect(): RawRedirect {
    const token = this.take();
    if (token.type !== "redirect") this.unexpected(token);
    const target = this.take();
    if (target.type !== "word") this.unexpected(target);
    const redirect: RawRedirect = token.fd === undefined
      ? { op: token.op, target: target.word }
      : { op: token.op, fd: token.fd, target: target.word };
    if (token.op === "<<" || token.op === "<<-") this.queueHeredoc(redirect, token.op);
    return redirect;
  }

  #simpleCommand(): void {
    const at = this.peek().at;
    const command: RawCommand = { kind: "call", assigns: [], args: [], redirects: [], notes: [] };
    for (;;) {
      const token = this.peek();
      if (token.type === "redirect") {
        command.redirects.push(this.#redirect());
        continue;
      }
      if (token.type !== "word") break;
      this.take();
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
          NAME.test(text) && this.peekIsOp("(")
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
      this.unexpected(this.peek());
    }
    this.#insert(at, command);
  }

  /** Lists `command` before the commands nested in it (read while reading its words). */
  #insert(at: number, command: RawCommand): void {
    this.count();
    if (at === this.out.length) this.out.push(command);
    else this.out.splice(at, 0, command);
  }

  #functionDefinition(name: string, at: number): void {
    this.take();
    const close = this.take();
    if (close.type !== "op" || close.op !== ")") this.unexpected(close);
    this.#insert(at, {
      kind: "function",
      assigns: [],
      args: [],
      redirects: [],
      name,
      notes: [],
    });
    this.linebreak();
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
