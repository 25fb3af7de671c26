/**
 * awk: its options, and a tokenizer for its programs (`system()`, `| getline`, `print |` run
 * commands; `print >` writes); a command or file that is not a lone string literal is `unknown`.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { fileWrite, write } from "./_words.ts";
import type { Effect, Invocation } from "./types.ts";

/** `awk [-f FILE | PROGRAM] ...`: options that load code or write, then the program's effects. */
export function awkEffects(command: Invocation, name: string): Effect[] {
  const argv = command.argv;
  const programs: string[] = [];
  const out: Effect[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      return [{
        kind: "unknown",
        what: `a word computed at run time could be an option of ${name}`,
      }];
    }
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    const long = word.startsWith("--") ? word.slice(2).split("=")[0]! : "";
    const longValue = word.includes("=") ? word.slice(word.indexOf("=") + 1) : undefined;
    const short = word[1]!;
    const attached = word.slice(2);
    if (long !== "") {
      if ("source".startsWith(long) && long.length > 1) {
        const text = longValue ?? argv[++i];
        if (text === undefined) return [{ kind: "unknown", what: `${name} --source without text` }];
        programs.push(text);
      } else if (["file", "include", "load", "exec", "debug"].some((o) => o.startsWith(long))) {
        return [{ kind: "unknown", what: `${name} --${long} runs code from a file` }];
      } else if (["pretty-print", "profile", "dump-variables"].some((o) => o.startsWith(long))) {
        const file = longValue ?? (long.startsWith("d") ? "awkvars.out" : "awkprof.out");
        out.push(write(file, false, `${name} --${long}`, command));
      } else if (["field-separator", "assign"].some((o) => o.startsWith(long)) && !longValue) i++;
      continue;
    }
    if (short === "F" || short === "v") {
      if (attached === "") i++;
      continue;
    }
    if (short === "e") {
      const text = attached !== "" ? attached : argv[++i];
      if (text === undefined) return [{ kind: "unknown", what: `${name} -e without text` }];
      programs.push(text);
      continue;
    }
    if ("fEilD".includes(short)) {
      return [{ kind: "unknown", what: `${name} -${short} runs code from a file` }];
    }
    if ("opd".includes(short)) {
      const file = attached !== "" ? attached : short === "d" ? "awkvars.out" : "awkprof.out";
      out.push(write(file, false, `${name} -${short}`, command));
    }
  }
  if (programs.length === 0) {
    const program = argv[i];
    if (program === undefined) return [{ kind: "unknown", what: `${name} without a program` }];
    programs.push(program);
  }
  const text = programs.join("\n");
  if (text.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a program computed at run time` }];
  }
  out.push(...awkProgramEffects(text, name, command));
  return out;
}

interface AwkToken {
  readonly type: "string" | "regex" | "name" | "number" | "op" | "newline";
  readonly text: string;
}

/** Tokens after which `/` divides rather than starting a regex. */
function operandEnds(token: AwkToken | undefined): boolean {
  if (token === undefined) return false;
  if (["string", "regex", "number"].includes(token.type)) return true;
  if (token.type === "name") {
    return !["print", "printf", "return", "in", "case", "getline", "do", "else"].includes(
      token.text,
    );
  }
  return token.text === ")" || token.text === "]" || token.text === "$" ||
    token.text === "++" || token.text === "--";
}

function tokenizeAwk(text: string): AwkToken[] | string {
  const tokens: AwkToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\" && text[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "\n" || c === ";") {
      tokens.push({ type: "newline", text: c });
      i++;
      continue;
    }
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "@") return "a gawk @ directive or indirect call";
    if (c === '"') {
      let value = "";
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < text.length) {
          const e = text[i + 1]!;
          value += e === "n"
            ? "\n"
            : e === "t"
            ? "\t"
            : e === "\\" || e === '"' || e === "/"
            ? e
            : `\\${e}`;
          i += 2;
          continue;
        }
        if (text[i] === "\n") return "an unterminated string";
        value += text[i];
        i++;
      }
      if (i >= text.length) return "an unterminated string";
      i++;
      tokens.push({ type: "string", text: value });
      continue;
    }
    if (c === "/" && !operandEnds(tokens.at(-1))) {
      let j = i + 1;
      let bracket = false;
      for (; j < text.length; j++) {
        const d = text[j]!;
        if (d === "\\") {
          j++;
          continue;
        }
        if (d === "\n") return "an unterminated regular expression";
        if (d === "[") bracket = true;
        else if (d === "]") bracket = false;
        else if (d === "/" && !bracket) break;
      }
      if (j >= text.length) return "an unterminated regular expression";
      const body = text.slice(i + 1, j);
      // A misread division would hide code: code-like text inside a regex is not accepted.
      if (/["{};]|system|getline/.test(body)) return "a regular expression that looks like code";
      tokens.push({ type: "regex", text: body });
      i = j + 1;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0];
    if (name !== undefined) {
      tokens.push({ type: "name", text: name });
      i += name.length;
      continue;
    }
    const number = /^[0-9.][0-9.eExX]*/.exec(text.slice(i))?.[0];
    if (number !== undefined) {
      tokens.push({ type: "number", text: number });
      i += number.length;
      continue;
    }
    const op = /^(\|\||\|&|&&|>>|>=|<=|==|!=|!~|\+\+|--|\+=|-=|\*=|\/=|%=|\^=|\*\*=?|.)/s
      .exec(text.slice(i))![0];
    tokens.push({ type: "op", text: op });
    i += op.length;
  }
  return tokens;
}

/**
 * The effects of an awk program: `system()`, `cmd | getline`, `print | cmd` run commands;
 * `print > file` writes. A command or file given as a single string literal is judged; a
 * computed one is unknown.
 */
export function awkProgramEffects(program: string, name: string, command?: Invocation): Effect[] {
  const tokens = tokenizeAwk(program);
  if (typeof tokens === "string") {
    return [{ kind: "unknown", what: `${name}: ${tokens} in its program` }];
  }
  const out: Effect[] = [];
  let printing = false;
  let depth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const next = tokens[k + 1];
    if (t.type === "newline" || (t.type === "op" && (t.text === "{" || t.text === "}"))) {
      printing = false;
      depth = 0;
      continue;
    }
    if (t.type === "name" && (t.text === "print" || t.text === "printf")) {
      printing = true;
      depth = 0;
      continue;
    }
    if (t.type === "op" && (t.text === "(" || t.text === "[")) depth++;
    if (t.type === "op" && (t.text === ")" || t.text === "]")) depth--;
    if (t.type === "name" && t.text === "system") {
      const arg = tokens[k + 2];
      const close = tokens[k + 3];
      if (next?.text === "(" && arg?.type === "string" && close?.text === ")") {
        out.push({ kind: "script", script: arg.text, via: `${name} system()` });
      } else {
        out.push({ kind: "unknown", what: `${name} system() runs a computed command` });
      }
      continue;
    }
    if (t.type === "op" && t.text === "|&") {
      out.push({ kind: "unknown", what: `${name} |& starts a co-process` });
      continue;
    }
    if (t.type === "op" && t.text === "|") {
      if (next?.type === "name" && next.text === "getline") {
        const before = tokens[k - 1];
        const beforeThat = tokens[k - 2];
        const single = before?.type === "string" &&
          (beforeThat === undefined || beforeThat.type === "newline" ||
            ["{", "(", "=", ",", "}", "&&", "||", "!"].includes(beforeThat.text) ||
            (beforeThat.type === "name" && ["while", "if", "do"].includes(beforeThat.text)));
        out.push(
          single
            ? { kind: "script", script: before!.text, via: `${name} | getline` }
            : { kind: "unknown", what: `${name} | getline runs a computed command` },
        );
      } else if (printing && depth === 0) {
        out.push(literalTarget(tokens, k + 1, "script", `${name} print |`, command));
      } else {
        out.push({ kind: "unknown", what: `${name} | outside a print statement` });
      }
      continue;
    }
    if (printing && depth === 0 && t.type === "op" && (t.text === ">" || t.text === ">>")) {
      out.push(literalTarget(tokens, k + 1, "write", `${name} print ${t.text}`, command));
    }
  }
  return out;
}

/** The target of `print > X` or `print | X`: a lone string literal, else unknown. */
function literalTarget(
  tokens: readonly AwkToken[],
  k: number,
  kind: "write" | "script",
  via: string,
  command?: Invocation,
): Effect {
  const target = tokens[k];
  const after = tokens[k + 1];
  const alone = after === undefined || after.type === "newline" || after.text === "}" ||
    after.text === ")";
  if (target?.type !== "string" || !alone) {
    return {
      kind: "unknown",
      what: `${via} to a computed ${kind === "write" ? "file" : "command"}`,
    };
  }
  return kind === "write"
    ? fileWrite(target.text, via, command)
    : { kind: "script", script: target.text, via };
}
