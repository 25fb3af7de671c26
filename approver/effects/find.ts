/**
 * find: its expression is a small language of its own; the primaries that run commands, write
 * files or take a value are `FIND_*_PRIMARIES` in `_table.ts`.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { FIND_EXEC_PRIMARIES, FIND_VALUE_PRIMARIES, FIND_WRITE_PRIMARIES } from "./_table.ts";
import { type Word, wordAt, writeWord } from "./_words.ts";
import type { Effect, Invocation } from "./types.ts";

/** `find START... EXPRESSION`: `-exec` runs commands, `-delete` and `-fprint` write. */
export function findEffects(command: Invocation): Effect[] {
  const argv = command.argv;
  const out: Effect[] = [];
  let i = 1;
  // Leading options: -H -L -P, -D DEBUG, -O LEVEL.
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (/^-[HLP]+$/.test(word)) continue;
    if (word === "-D") {
      i++;
      continue;
    }
    if (/^-O[0-9]*$/.test(word)) continue;
    break;
  }
  const starts: Word[] = [];
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith("-") || word === "(" || word === "!" || word.startsWith(DYNAMIC)) break;
    starts.push(wordAt(command, i)!);
  }
  if (starts.length === 0) starts.push({ text: ".", glob: false });
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      out.push({ kind: "unknown", what: "a word computed at run time could be a find action" });
      continue;
    }
    if (FIND_VALUE_PRIMARIES.has(word) || /^-newer[aBcmt][aBcmt]$/.test(word)) {
      i++;
      continue;
    }
    if (FIND_EXEC_PRIMARIES.has(word)) {
      const words: string[] = [];
      const globs: boolean[] = [];
      let j = i + 1;
      for (; j < argv.length; j++) {
        const w = argv[j]!;
        if (w === ";" || (w === "+" && words.at(-1) === "{}")) break;
        words.push(w);
        globs.push(command.globs?.[j] === true);
      }
      i = j;
      if (words.length === 0) {
        out.push({ kind: "unknown", what: `find ${word} without a command` });
        continue;
      }
      // -execdir and -okdir run the command in each found file's directory.
      const inDir = word.endsWith("dir") ? { cwd: DYNAMIC } : {};
      out.push({
        kind: "run",
        command: { argv: words, globs, runtimePaths: ["{}"], ...inDir },
        via: `find ${word}`,
      });
      continue;
    }
    if (word === "-delete") {
      for (const start of starts) out.push(writeWord(command, start, true, "find -delete"));
      continue;
    }
    const written = FIND_WRITE_PRIMARIES[word];
    if (written !== undefined) {
      const target = wordAt(command, i + 1);
      out.push(
        target === undefined
          ? { kind: "unknown", what: `find ${word} without a file` }
          : writeWord(command, target, false, `find ${word}`),
      );
      i += written;
    }
  }
  return out;
}
