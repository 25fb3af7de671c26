/**
 * Words and writes shared by every program family: a word with whether the shell expands it as
 * a pattern, and the one place a written path becomes a `write` effect or, when its place is not
 * in the text (computed, a pattern, `~`, a directory chosen at run time), an `unknown` one.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import type { Effect, Invocation } from "./types.ts";

/** A word with whether the shell may expand it as a pattern. */
export interface Word {
  readonly text: string;
  readonly glob: boolean;
}

export function wordsOf(command: Invocation, from: number): Word[] {
  return command.argv.slice(from).map((_, i) => wordAt(command, from + i)!);
}

/** Word `i` of `command` (undefined past the end). */
export function wordAt(command: Invocation, i: number): Word | undefined {
  const text = command.argv[i];
  if (text === undefined) return undefined;
  // `{a,b}` and `{1..3}` are brace expansions in bash (`sh` on some systems).
  return { text, glob: command.globs?.[i] === true || /[{]/.test(text) && /[,.]/.test(text) };
}

/** A write of `path` as written (relative to `command.cwd` when one is set). */
export function write(path: string, tree: boolean, via: string, command?: Invocation): Effect {
  if (path.includes(DYNAMIC)) {
    return { kind: "unknown", what: `${via} writes a path computed at run time` };
  }
  if (command?.runtimePaths?.includes(path)) {
    return { kind: "unknown", what: `${via} writes files chosen at run time` };
  }
  if (path === "") return { kind: "unknown", what: `${via} writes an empty path` };
  if (path.startsWith("~")) {
    return { kind: "unknown", what: `${via} writes ${path}, whose ~ the shell expands` };
  }
  const base = command?.cwd;
  const full = base === undefined || path.startsWith("/") ? path : `${base}/${path}`;
  if (full.includes(DYNAMIC)) {
    return { kind: "unknown", what: `${via} writes ${path} in a directory chosen at run time` };
  }
  return { kind: "write", path: full, tree, via };
}

/** A write of operand `i` of `words`, failing closed on patterns. */
export function writeWord(
  command: Invocation,
  word: Word,
  tree: boolean,
  via: string,
): Effect {
  if (word.glob) {
    return { kind: "unknown", what: `${via} writes ${word.text}, a pattern the shell expands` };
  }
  return write(word.text, tree, via, command);
}

/** A file named inside a program's own script (not expanded by the shell). */
export function fileWrite(file: string, via: string, command?: Invocation): Effect {
  return write(file, false, via, command);
}

/** `dir` taken from `base` (a directory set earlier on the line), or `dir` when absolute. */
export function joinCwd(base: string | undefined, dir: string): string {
  if (base === undefined || dir.startsWith("/")) return dir;
  return `${base}/${dir}`;
}
