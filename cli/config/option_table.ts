/**
 * The options of the global command line and of `tool`, as data: cli/mod.ts builds
 * commander's options from these rows, and cli/startup/tool_args.ts parses `tool` calls from the
 * same rows without loading commander. One table, so the two cannot drift apart (and
 * tests/cli/startup/tool_args_test.ts compares their parses word list by word list).
 *
 * @module
 */

/** One `--flag <value>` or boolean `--flag` option. */
export interface OptionRow {
  /** As commander takes it: `--config <file>` (takes a value) or `--json` (boolean). */
  readonly flags: string;
  readonly description: string;
  /** Repeatable: every value is collected into a list. */
  readonly repeatable?: boolean;
  /** The only values accepted. */
  readonly choices?: readonly string[];
}

/** The program's options, in help order (`-v` and `-h` are commander's own). */
export const GLOBAL_OPTIONS: readonly OptionRow[] = [
  {
    flags: "--config <file>",
    description: "config file (default: ~/.config/rousseau/config.yaml)",
  },
  { flags: "--workspace <dir>", description: "workspace root (default: the current directory)" },
  {
    flags: "--add-dir <dir>",
    description: "another workspace root (repeatable)",
    repeatable: true,
  },
  { flags: "--approver <mode>", description: "approval mode: allow_all, deny_all or pattern" },
  {
    flags: "--allow <tool[:regex]>",
    description: "allow a tool (regex on its JSON input); repeatable",
    repeatable: true,
  },
  {
    flags: "--deny <tool[:regex]>",
    description: "deny a tool (regex on its JSON input); repeatable",
    repeatable: true,
  },
  // The wires' names (providers/wires.ts), spelled out: main.ts reads this table before
  // anything else and must not load providers/; tests/providers/wires_test.ts keeps them in step.
  { flags: "--provider <name>", description: "model provider", choices: ["anthropic", "openai"] },
  { flags: "--model <name>", description: "model name (default per provider)" },
  { flags: "--base-url <url>", description: "provider base URL (a proxy, Ollama, vLLM, ...)" },
  { flags: "--max-tokens <n>", description: "output-token limit per model reply (max_tokens)" },
  {
    flags: "--log-level <level>",
    description: "log level on stderr",
    choices: ["debug", "info", "warn", "error"],
  },
  {
    flags: "--log-format <format>",
    description: "log format on stderr",
    choices: ["text", "json"],
  },
];

/** The options of `tool`, in help order. */
export const TOOL_OPTIONS: readonly OptionRow[] = [
  {
    flags: "--json",
    description: 'print {"output": string, "is_error": boolean} instead of plain text',
  },
  {
    flags: "--timeout <duration>",
    description: "bash timeout, e.g. 500ms, 90s, 2m (default 1m0s)",
  },
  { flags: "--max-matches <n>", description: "grep: most rows returned (default 200)" },
  {
    flags: "--max-file-bytes <n>",
    description: "grep: skip files larger than this (default 4194304)",
  },
];

/** `--add-dir` of `--add-dir <dir>`. */
export function longFlag(row: OptionRow): string {
  return row.flags.split(" ")[0]!;
}

/** Whether the option takes a value. */
export function takesValue(row: OptionRow): boolean {
  return row.flags.includes(" <");
}

/** The key commander gives the option's value: `--add-dir` is `addDir`. */
export function optionKey(row: OptionRow): string {
  return longFlag(row).slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
