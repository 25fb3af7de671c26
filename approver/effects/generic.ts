/**
 * The generic walk over a program with a plain table entry: its options' effects, a changed
 * directory, `always`, and which operands it writes (`OperandEffect`). Most programs need
 * nothing more; a family file exists only where the table cannot say it.
 *
 * @module
 */

import { basename } from "node:path";
import { DYNAMIC } from "../shell.ts";
import type { ProgramSpec } from "./_table.ts";
import { joinCwd, write, writeWord } from "./_words.ts";
import { optionEffects, type Parsed } from "./options.ts";
import type { Effect, Invocation } from "./types.ts";

/** Whether a spec has any effect at all (for deciding what a computed option could do). */
function hasEffects(spec: ProgramSpec): boolean {
  return spec.analyse !== undefined || spec.operands !== undefined || spec.always !== undefined ||
    spec.wrapper !== undefined || spec.subcommands !== undefined ||
    Object.values(spec.options ?? {}).some((o) => o.effect !== undefined);
}

/** Options, operands and `always` of a program with a declarative entry. */
export function genericEffects(
  command: Invocation,
  name: string,
  spec: ProgramSpec,
  parsed: Parsed,
): Effect[] {
  const out: Effect[] = [];
  if (parsed.dynamicOption && hasEffects(spec)) {
    out.push({
      kind: "unknown",
      what: `a word computed at run time could be an option of ${name}`,
    });
  }
  let cwd = command.cwd;
  let writeOperands = false;
  for (const option of parsed.found) {
    if (option.spec?.effect === undefined) continue;
    if (option.spec.effect === "cwd") {
      if (option.value === undefined || option.value.includes(DYNAMIC)) {
        out.push({
          kind: "unknown",
          what: `${name} ${option.key} changes to a computed directory`,
        });
      } else cwd = joinCwd(cwd, option.value);
      continue;
    }
    if (option.spec.effect === "writeOperands") writeOperands = true;
    out.push(
      ...optionEffects(
        command,
        option.spec.effect,
        option.value,
        `${name} ${option.key}`,
        option.glob,
      ),
    );
  }
  const inDir: Invocation = cwd === undefined ? command : { ...command, cwd };
  if (spec.always !== undefined) out.push(...optionEffects(inDir, spec.always, undefined, name));
  const recursive = parsed.found.some((o) => ["-r", "-R", "--recursive"].includes(o.key));
  const operands = parsed.operands;
  const targetDir = parsed.found.some((o) => o.spec?.effect === "writeTree" && o.key !== "-T");
  let written: typeof operands = [];
  if (writeOperands) written = operands;
  else {
    switch (spec.operands) {
      case "write":
        written = operands;
        break;
      case "writeLast":
        if (!targetDir && operands.length >= 2) written = operands.slice(-1);
        if (!targetDir && operands.length === 1 && name === "ln") {
          out.push(write(basename(operands[0]!.text), false, name, inDir));
        }
        break;
      case "writeAfterFirst":
        written = parsed.found.some((o) => o.key === "--reference") ? operands : operands.slice(1);
        break;
      case "writeSecond":
        written = operands.slice(1, 2);
        break;
      case "writeFirst":
        written = operands.slice(0, 1);
        break;
    }
  }
  for (const operand of written) out.push(writeWord(inDir, operand, recursive, name));
  return out;
}
