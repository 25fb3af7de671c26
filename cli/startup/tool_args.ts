/**
 * `[global options] tool NAME [JSON|-] [tool options]` parsed without commander, for the
 * start-up fast path: commander pulls Node's compatibility layer (`node:fs`,
 * `node:child_process`) into the CLI's isolate, about 80 ms measured before the first tool
 * call could start.
 *
 * Only word lists whose meaning is certain are decided here, from the rows of
 * cli/config/option_table.ts that commander is built from: each option once (the repeatable ones
 * any number of times), `--flag value` or `--flag=value` with a value that does not start
 * with `-`, choices respected, global options before `tool` and the tool's own after it.
 * Anything else (help, `--`, an unknown or repeated option, a missing value, a third word)
 * is left to commander: `undefined`, and the full CLI parses the words and says what is
 * wrong exactly as it always did. tests/cli/startup/tool_args_test.ts checks, word list by word
 * list, that every decided parse is the one commander makes.
 *
 * @module
 */

import {
  GLOBAL_OPTIONS,
  longFlag,
  optionKey,
  type OptionRow,
  takesValue,
  TOOL_OPTIONS,
} from "../config/option_table.ts";

/** A parsed `tool` call: what cli/commands/tool.ts's `toolCommand` takes. */
export interface ToolCall {
  readonly name: string;
  /** The input word; undefined when absent (read from stdin). */
  readonly json: string | undefined;
  /** As commander's `optsWithGlobals()` gives them: camelCase keys, only those given. */
  readonly flags: Readonly<Record<string, string | boolean | readonly string[]>>;
}

const GLOBAL = new Map(GLOBAL_OPTIONS.map((row) => [longFlag(row), row]));
const TOOL = new Map(TOOL_OPTIONS.map((row) => [longFlag(row), row]));

/** The `tool` call `args` make, or undefined when commander must decide. */
export function parseToolArgs(args: readonly string[]): ToolCall | undefined {
  const flags: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  let command = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!command && arg === "tool") {
      command = true;
      continue;
    }
    if (arg === "-" || !arg.startsWith("-")) {
      if (!command) return undefined; // another command, or a habit commander rewrites
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const row = (command ? TOOL : GLOBAL).get(flag);
    if (row === undefined) return undefined;
    const key = optionKey(row);
    if (!takesValue(row)) {
      if (eq !== -1 || key in flags) return undefined;
      flags[key] = true;
      continue;
    }
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (!acceptable(row, value)) return undefined;
    if (row.repeatable) flags[key] = [...(flags[key] as string[] | undefined) ?? [], value!];
    else if (key in flags) return undefined;
    else flags[key] = value!;
  }
  if (!command || positionals.length === 0 || positionals.length > 2) return undefined;
  return { name: positionals[0]!, json: positionals[1], flags };
}

function acceptable(row: OptionRow, value: string | undefined): boolean {
  if (value === undefined || value === "" || value.startsWith("-")) return false;
  return row.choices === undefined || row.choices.includes(value);
}
