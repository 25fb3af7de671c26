/**
 * coreutils whose writes the plain table cannot state: `dd` (operands `of=FILE`) and `split`,
 * `csplit` (output files named from a prefix).
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { PROGRAMS } from "./_table.ts";
import { wordsOf, write, writeWord } from "./_words.ts";
import { genericEffects } from "./generic.ts";
import { parseOptions } from "./options.ts";
import type { Effect, Invocation } from "./types.ts";

/** `dd of=FILE`: the operand syntax getopt does not read. */
export function ddEffects(command: Invocation): Effect[] {
  const out: Effect[] = [];
  for (const word of wordsOf(command, 1)) {
    if (word.text.startsWith(DYNAMIC)) {
      out.push({ kind: "unknown", what: "a word computed at run time could be an operand of dd" });
    } else if (word.text.startsWith("of=")) {
      out.push(writeWord(command, { ...word, text: word.text.slice(3) }, false, "dd of="));
    }
  }
  return out;
}

/** `split`, `csplit`: they write files named by a prefix, `x` or `xx` when none is given. */
export function splitEffects(command: Invocation, name: string): Effect[] {
  const spec = PROGRAMS[name]!;
  const parsed = parseOptions(command, 1, spec.options ?? {}, false);
  const { analyse: _custom, ...plain } = spec;
  const out = genericEffects(command, name, plain, parsed);
  if (name === "csplit") {
    if (!parsed.found.some((o) => o.key === "-f" || o.key === "--prefix")) {
      out.push(write("xx", false, "csplit", command));
    }
    return out;
  }
  const prefix = parsed.operands[1];
  out.push(
    prefix === undefined
      ? write("x", false, "split", command)
      : writeWord(command, prefix, false, "split"),
  );
  return out;
}
