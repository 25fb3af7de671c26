/**
 * Options as GNU getopt reads them (clusters, abbreviations, `--`, options after operands), and
 * what a table entry's `OptionEffect` means for one option found on a line.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import type { OptionEffect, OptionSpec } from "./_table.ts";
import { type Word, wordAt, write } from "./_words.ts";
import { gitConfigEffects, gitConfigEnvEffects } from "./git_config.ts";
import type { Effect, Invocation } from "./types.ts";

/** One option found on a command line. */
export interface Found {
  /** The spelling it was matched to (`--output`), or as written for unknown ones. */
  readonly key: string;
  readonly spec?: OptionSpec;
  readonly value?: string;
  /** The value is (part of) an unquoted pattern the shell expands. */
  readonly glob?: boolean;
}

export interface Parsed {
  readonly found: Found[];
  /** Operands with their index in argv. */
  readonly operands: Array<Word & { readonly index: number }>;
  /** A word computed at run time stood where an option may be. */
  readonly dynamicOption: boolean;
}

/** The spec of long option `name` (without `=value`), abbreviations included. */
function longOption(
  options: Readonly<Record<string, OptionSpec>>,
  name: string,
): [string, OptionSpec] | undefined {
  const exact = options[name];
  if (exact !== undefined) return [name, exact];
  const candidates = Object.entries(options).filter(([key]) =>
    key.startsWith("--") && key.startsWith(name)
  );
  // An abbreviation that could be an option with an effect counts as that option.
  return candidates.find(([, spec]) => spec.effect !== undefined) ??
    (candidates.length === 1 ? candidates[0] : undefined);
}

/**
 * Reads `argv[from..]` as GNU getopt would (options may follow operands unless
 * `optionsFirst`; `--` ends options; short options cluster; long options abbreviate).
 */
export function parseOptions(
  command: Invocation,
  from: number,
  options: Readonly<Record<string, OptionSpec>>,
  optionsFirst: boolean,
): Parsed {
  const found: Found[] = [];
  const operands: Array<Word & { index: number }> = [];
  let dynamicOption = false;
  let ended = false;
  const argv = command.argv;
  for (let i = from; i < argv.length; i++) {
    const word = argv[i]!;
    const operand = () => {
      operands.push({ text: word, glob: wordAt(command, i)!.glob, index: i });
      if (optionsFirst) ended = true;
    };
    if (ended) {
      operand();
      continue;
    }
    if (word.startsWith(DYNAMIC)) {
      dynamicOption = true;
      operand();
      continue;
    }
    if (word === "--") {
      ended = true;
      continue;
    }
    if (!word.startsWith("-") || word === "-") {
      operand();
      continue;
    }
    if (word.startsWith("--")) {
      const eq = word.indexOf("=");
      const name = eq < 0 ? word : word.slice(0, eq);
      const match = longOption(options, name);
      if (match === undefined) {
        found.push({ key: name });
        continue;
      }
      const [key, spec] = match;
      if (eq >= 0) {
        found.push({ key, spec, value: word.slice(eq + 1), glob: command.globs?.[i] === true });
      } else if (spec.value === "required") {
        const next = argv[++i];
        found.push(
          next === undefined
            ? { key, spec }
            : { key, spec, value: next, glob: command.globs?.[i] === true },
        );
      } else found.push({ key, spec });
      continue;
    }
    // A cluster of short options: `-rf`, `-ofile`, `-o file`.
    for (let j = 1; j < word.length; j++) {
      const key = `-${word[j]}`;
      const spec = options[key];
      if (spec?.value === "required" || spec?.value === "optional") {
        const rest = word.slice(j + 1);
        if (rest !== "") found.push({ key, spec, value: rest, glob: command.globs?.[i] === true });
        else if (spec.value === "required" && argv[i + 1] !== undefined) {
          i++;
          found.push({ key, spec, value: argv[i]!, glob: command.globs?.[i] === true });
        } else found.push({ key, spec });
        break;
      }
      found.push(spec === undefined ? { key } : { key, spec });
    }
  }
  return { found, operands, dynamicOption };
}

/** The effects of every option found that has one, each named `<via> <option>`. */
export function foundEffects(command: Invocation, found: readonly Found[], via: string): Effect[] {
  return found.flatMap((option) =>
    option.spec?.effect === undefined ? [] : optionEffects(
      command,
      option.spec.effect,
      option.value,
      `${via} ${option.key}`,
      option.glob,
    )
  );
}

/** The effects of one option (or of a program's `always`). */
export function optionEffects(
  command: Invocation,
  effect: OptionEffect,
  value: string | undefined,
  via: string,
  glob = false,
): Effect[] {
  if (typeof effect === "object" && "unknown" in effect) {
    return [{ kind: "unknown", what: effect.unknown }];
  }
  if (typeof effect === "object" && "runs" in effect) {
    return effect.runs.map((argv) => ({ kind: "run", command: { argv }, via }));
  }
  if (effect === "stdinShell") {
    return [{ kind: "unknown", what: `${via} runs a shell that reads commands from its input` }];
  }
  if (effect === "writeOperands" || effect === "cwd") return [];
  if (value === undefined) {
    return [{ kind: "unknown", what: `${via} without its value` }];
  }
  switch (effect) {
    case "write":
    case "writeTree":
      if (glob) {
        return [{ kind: "unknown", what: `${via} writes ${value}, a pattern the shell expands` }];
      }
      return [write(value, effect === "writeTree", via, command)];
    case "script":
      if (value.includes(DYNAMIC)) {
        return [{ kind: "unknown", what: `${via} runs a command computed at run time` }];
      }
      return [{ kind: "script", script: value, via }];
    case "program":
      if (value.includes(DYNAMIC)) {
        return [{ kind: "unknown", what: `${via} runs a program computed at run time` }];
      }
      return [{ kind: "run", command: { argv: [value] }, via }];
    case "gitConfig":
      return gitConfigEffects(value, via);
    case "gitConfigEnv":
      return gitConfigEnvEffects(value, via);
  }
}
