/**
 * sed: its options, and a reader for its scripts (`e` and `s///e` run commands, `w`, `W` and
 * `s///w` write files); anything the reader does not understand is `unknown`.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { fileWrite, type Word, wordAt, writeWord } from "./_words.ts";
import type { Effect, Invocation } from "./types.ts";

/** `sed [-i] [-e SCRIPT]... FILE...`: the script's effects, and the files `-i` rewrites. */
export function sedEffects(command: Invocation, name: string): Effect[] {
  const argv = command.argv;
  const out: Effect[] = [];
  const scripts: string[] = [];
  const operands: Word[] = [];
  let inPlace = false;
  let sandbox = false;
  let ended = false;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (!ended && word.startsWith(DYNAMIC)) {
      return [{
        kind: "unknown",
        what: `a word computed at run time could be an option of ${name}`,
      }];
    }
    if (ended || !word.startsWith("-") || word === "-") {
      operands.push(wordAt(command, i)!);
      continue;
    }
    if (word === "--") {
      ended = true;
      continue;
    }
    if (word.startsWith("--")) {
      const [key, value] = word.includes("=")
        ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)]
        : [word, undefined];
      if ("--expression".startsWith(key) && key.length > 3) {
        const script = value ?? argv[++i];
        if (script === undefined) return [{ kind: "unknown", what: `${name} -e without a script` }];
        scripts.push(script);
      } else if ("--file".startsWith(key) && key.length > 3) {
        return [{ kind: "unknown", what: `${name} --file reads its script from a file` }];
      } else if ("--in-place".startsWith(key) && key.length > 3) inPlace = true;
      else if ("--sandbox".startsWith(key) && key.length > 3) sandbox = true;
      else if (["--line-length", "-l"].includes(key) && value === undefined) i++;
      continue;
    }
    for (let j = 1; j < word.length; j++) {
      const c = word[j]!;
      if (c === "i") {
        inPlace = true; // the rest of the cluster is the backup suffix: `-ie` is -i with suffix e
        break;
      }
      if (c === "e" || c === "f" || c === "l") {
        const rest = word.slice(j + 1);
        const value = rest !== "" ? rest : argv[++i];
        if (value === undefined) {
          return [{ kind: "unknown", what: `${name} -${c} without a value` }];
        }
        if (c === "e") scripts.push(value);
        if (c === "f") {
          return [{ kind: "unknown", what: `${name} -f reads its script from a file` }];
        }
        break;
      }
    }
  }
  if (scripts.length === 0) {
    const script = operands.shift();
    if (script === undefined) return [{ kind: "unknown", what: `${name} without a script` }];
    scripts.push(script.text);
  }
  const script = scripts.join("\n");
  if (script.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a script computed at run time` }];
  }
  // `--sandbox` makes sed refuse e, w and r; its effects are listed all the same (stricter).
  void sandbox;
  out.push(...sedScriptEffects(script, name, command));
  if (inPlace) {
    for (const operand of operands) out.push(writeWord(command, operand, false, `${name} -i`));
  }
  return out;
}

/**
 * The effects of a sed script: `e` and `s///e` run commands, `w`/`W` and `s///w` write files.
 * Anything the reader does not understand is unknown.
 */
export function sedScriptEffects(script: string, name: string, command?: Invocation): Effect[] {
  const out: Effect[] = [];
  const s = script;
  let i = 0;
  const unknownAt = (what: string): Effect[] => [
    ...out,
    { kind: "unknown", what: `${name}: ${what} at character ${i + 1} of its script` },
  ];
  const toEol = () => {
    const end = s.indexOf("\n", i);
    const text = s.slice(i, end < 0 ? s.length : end);
    i = end < 0 ? s.length : end;
    return text;
  };
  const skipBlank = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t")) i++;
  };
  /** Reads up to the unescaped `delim`; returns false when it never comes. */
  const delimited = (delim: string): boolean => {
    while (i < s.length) {
      const c = s[i]!;
      if (c === "\\") {
        i += 2;
        continue;
      }
      if (c === delim) {
        i++;
        return true;
      }
      if (c === "\n" && delim !== "\n") return false;
      i++;
    }
    return false;
  };
  const address = (): boolean => {
    const c = s[i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (i < s.length && /[0-9~]/.test(s[i]!)) i++;
      return true;
    }
    if (c === "$") {
      i++;
      return true;
    }
    if (c === "/" || c === "\\") {
      let delim = "/";
      if (c === "\\") {
        delim = s[i + 1] ?? "";
        i += 2;
      } else i++;
      if (delim === "" || !delimited(delim)) return false;
      while (s[i] === "I" || s[i] === "M") i++;
      return true;
    }
    return true;
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === ";") {
      i++;
      continue;
    }
    if (c === "#") {
      toEol();
      continue;
    }
    if (!address()) return unknownAt("an unterminated address");
    skipBlank();
    if (s[i] === ",") {
      i++;
      skipBlank();
      if (s[i] === "+" || s[i] === "~") i++;
      if (!address()) return unknownAt("an unterminated address");
      skipBlank();
    }
    while (s[i] === "!" || s[i] === " ") i++;
    const cmd = s[i];
    if (cmd === undefined) break;
    i++;
    if ("{}=dDgGhHnNpPxzF".includes(cmd)) continue;
    if ("lLqQ".includes(cmd)) {
      skipBlank();
      while (i < s.length && /[0-9]/.test(s[i]!)) i++;
      continue;
    }
    if ("aic".includes(cmd)) {
      // Text to the end of the line; a trailing backslash continues it.
      while (i < s.length) {
        const line = toEol();
        if (!line.endsWith("\\") || i >= s.length) break;
        i++;
      }
      continue;
    }
    if ("btT:v".includes(cmd)) {
      while (i < s.length && s[i] !== "\n" && s[i] !== ";") i++;
      continue;
    }
    if (cmd === "r" || cmd === "R") {
      toEol();
      continue;
    }
    if (cmd === "w" || cmd === "W") {
      skipBlank();
      const file = toEol();
      out.push(fileWrite(file, `${name} ${cmd}`, command));
      continue;
    }
    if (cmd === "e") {
      skipBlank();
      const line = toEol();
      if (line.trim() === "") {
        out.push({ kind: "unknown", what: `${name} e runs the text it edits as a command` });
      } else out.push({ kind: "script", script: line, via: `${name} e` });
      continue;
    }
    if (cmd === "s" || cmd === "y") {
      const delim = s[i];
      if (delim === undefined || delim === "\n" || delim === "\\") {
        return unknownAt(`a ${cmd} command without a delimiter`);
      }
      i++;
      if (!delimited(delim) || !delimitedReplacement(delim)) {
        return unknownAt(`an unterminated ${cmd} command`);
      }
      if (cmd === "y") continue;
      while (i < s.length) {
        const flag = s[i]!;
        if ("gpiImM0123456789".includes(flag)) {
          i++;
          continue;
        }
        if (flag === "e") {
          out.push({ kind: "unknown", what: `${name} s///e runs the text it edits as a command` });
          i++;
          continue;
        }
        if (flag === "w") {
          i++;
          skipBlank();
          out.push(fileWrite(toEol(), `${name} s///w`, command));
          continue;
        }
        break;
      }
      skipBlank();
      if (i < s.length && !";\n}#".includes(s[i]!)) return unknownAt(`an unknown s flag ${s[i]}`);
      continue;
    }
    return unknownAt(`an unknown command ${JSON.stringify(cmd)}`);
  }
  return out;

  function delimitedReplacement(delim: string): boolean {
    while (i < s.length) {
      const c = s[i]!;
      if (c === "\\") {
        i += 2;
        continue;
      }
      i++;
      if (c === delim) return true;
    }
    return false;
  }
}
