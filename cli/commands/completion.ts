/**
 * `rousseau completion bash|zsh|fish`: shell completion scripts generated from the command
 * table itself, so a new command or flag is completed without anyone editing a script.
 *
 * @module
 */

import type { Command, Option } from "commander";
import { UsageError } from "../errors.ts";

/** One flag as the scripts need it. */
interface Flag {
  readonly long?: string;
  readonly short?: string;
  readonly description: string;
  readonly takesValue: boolean;
  readonly choices: readonly string[];
}

/** One command as the scripts need it. */
interface Entry {
  readonly name: string;
  readonly description: string;
  readonly flags: readonly Flag[];
  /** Words its first argument takes (`session list|show|delete`), when fixed. */
  readonly actions: readonly string[];
}

/** The shells a script can be written for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;

const HELP: Flag = {
  long: "--help",
  short: "-h",
  description: "show help",
  takesValue: false,
  choices: [],
};

/**
 * Values of flags that the commands check themselves (so their errors can say more than
 * commander's), keyed by long flag.
 */
const VALUES: Readonly<Record<string, readonly string[]>> = {
  "--output": ["text", "json", "stream-json"],
  "--for": ["run", "chat", "mcp", "tool"],
  "--approver": ["allow_all", "deny_all", "pattern"],
};

function flagOf(option: Option): Flag {
  return {
    ...(option.long === undefined ? {} : { long: option.long }),
    ...(option.short === undefined ? {} : { short: option.short }),
    description: option.description,
    takesValue: option.required || option.optional,
    choices: option.argChoices ?? VALUES[option.long ?? ""] ?? [],
  };
}

/** Fixed first words of commands whose first argument is an action. */
const ACTIONS: Readonly<Record<string, readonly string[]>> = {
  session: ["list", "show", "delete"],
  policy: ["check", "test", "replay"],
  audit: ["verify"],
  completion: SHELLS,
};

function entriesOf(program: Command): { globals: Flag[]; commands: Entry[] } {
  return {
    globals: [...program.options.map(flagOf), HELP],
    commands: program.commands.map((command) => ({
      name: command.name(),
      description: command.description(),
      flags: [...command.options.map(flagOf), HELP],
      actions: ACTIONS[command.name()] ?? [],
    })),
  };
}

function words(flags: readonly Flag[]): string {
  return flags.flatMap((f) => [f.long, f.short]).filter((w) => w !== undefined).join(" ");
}

function bash(program: Command): string {
  const { globals, commands } = entriesOf(program);
  const valued = [...globals, ...commands.flatMap((c) => c.flags)].filter((f) => f.takesValue);
  const choiceCases = valued.filter((f) => f.choices.length > 0).map((f) =>
    `    ${[f.long, f.short].filter(Boolean).join("|")}) COMPREPLY=($(compgen -W "${
      f.choices.join(" ")
    }" -- "$cur")); return ;;`
  );
  const fileFlags = valued.filter((f) => f.choices.length === 0).flatMap((f) => [f.long, f.short])
    .filter((w) => w !== undefined);
  const commandCases = commands.map((c) =>
    `    ${c.name}) opts="${words(c.flags)} ${words(globals)}"; actions="${c.actions.join(" ")}" ;;`
  );
  return `# bash completion for rousseau (rousseau completion bash)
_rousseau() {
  local cur prev cmd opts actions i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  case "$prev" in
${choiceCases.join("\n")}
    ${[...new Set(fileFlags)].join("|")}) COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in
      -*) ;;
      *) case "\${COMP_WORDS[i-1]}" in
           ${
    [...new Set(globals.filter((f) => f.takesValue).flatMap((f) => [f.long, f.short]))]
      .filter(Boolean).join("|")
  }) ;;
           *) cmd="\${COMP_WORDS[i]}"; break ;;
         esac ;;
    esac
  done
  if [ -z "$cmd" ]; then
    COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(" ")} ${words(globals)}" -- "$cur"))
    return
  fi
  opts=""; actions=""
  case "$cmd" in
${commandCases.join("\n")}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [ -n "$actions" ] && [ "$prev" = "$cmd" ]; then
    COMPREPLY=($(compgen -W "$actions" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _rousseau rousseau
`;
}

/** Text safe inside a single-quoted shell word, with `:` escaped for zsh's _describe. */
function quoted(text: string, colon = false): string {
  const escaped = text.replaceAll("'", "'\\''");
  return colon ? escaped.replaceAll(":", "\\:") : escaped;
}

function zshSpec(flag: Flag): string[] {
  const value = !flag.takesValue
    ? ""
    : flag.choices.length > 0
    ? `:value:(${flag.choices.join(" ")})`
    : ":value:_files";
  const help = quoted(flag.description.replaceAll("[", "(").replaceAll("]", ")"));
  const names = [flag.long, flag.short].filter((n) => n !== undefined);
  if (names.length === 2) {
    return [`'(${names.join(" ")})'{${names.join(",")}}'[${help}]${value}'`];
  }
  return [`'${names[0]}[${help}]${value}'`];
}

function zsh(program: Command): string {
  const { globals, commands } = entriesOf(program);
  const described = commands.map((c) =>
    `    '${quoted(c.name, true)}:${quoted(c.description, true)}'`
  );
  const cases = commands.map((c) =>
    `      ${c.name})
        _arguments -s \\
          ${[...c.flags, ...globals].flatMap(zshSpec).join(" \\\n          ")} \\
          ${c.actions.length > 0 ? `'1:action:(${c.actions.join(" ")})' ` : ""}'*:file:_files'
        ;;`
  );
  return `#compdef rousseau
# zsh completion for rousseau (rousseau completion zsh)
_rousseau() {
  local -a commands
  commands=(
${described.join("\n")}
  )
  local curcontext="$curcontext" state line
  _arguments -C \\
    ${globals.flatMap(zshSpec).join(" \\\n    ")} \\
    '1:command:->command' \\
    '*::arg:->args'
  case $state in
    command) _describe 'command' commands ;;
    args)
      case $words[1] in
${cases.join("\n")}
      esac
      ;;
  esac
}
compdef _rousseau rousseau
`;
}

function fishLine(flag: Flag, condition: string): string {
  const parts = [`complete -c rousseau -n '${condition}'`];
  if (flag.long !== undefined) parts.push(`-l ${flag.long.slice(2)}`);
  if (flag.short !== undefined) parts.push(`-s ${flag.short.slice(1)}`);
  if (flag.takesValue) {
    parts.push(flag.choices.length > 0 ? `-x -a '${flag.choices.join(" ")}'` : "-r -F");
  }
  parts.push(`-d '${quoted(flag.description)}'`);
  return parts.join(" ");
}

function fish(program: Command): string {
  const { globals, commands } = entriesOf(program);
  const names = commands.map((c) => c.name).join(" ");
  const lines = [
    "# fish completion for rousseau (rousseau completion fish)",
    "complete -c rousseau -f",
    ...globals.map((f) => fishLine(f, "true")),
    ...commands.map((c) =>
      `complete -c rousseau -n 'not __fish_seen_subcommand_from ${names}' -a ${c.name} -d '${
        quoted(c.description)
      }'`
    ),
    ...commands.flatMap((c) => [
      ...c.flags.filter((f) => f !== HELP).map((f) =>
        fishLine(f, `__fish_seen_subcommand_from ${c.name}`)
      ),
      ...(c.actions.length > 0
        ? [
          `complete -c rousseau -n '__fish_seen_subcommand_from ${c.name}' -a '${
            c.actions.join(" ")
          }'`,
        ]
        : []),
    ]),
  ];
  return lines.join("\n") + "\n";
}

/** The completion script for `shell`; a shell we do not write for is a usage error. */
export function completionScript(shell: string, program: Command): string {
  switch (shell) {
    case "bash":
      return bash(program);
    case "zsh":
      return zsh(program);
    case "fish":
      return fish(program);
    default:
      throw new UsageError(
        `completion: unknown shell ${JSON.stringify(shell)} (want ${SHELLS.join(", ")})`,
      );
  }
}
