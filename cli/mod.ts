/**
 * The command table: argv in, exit code out. Nothing below `cli/` parses flags or exits.
 *
 * @module
 */

import { Command, CommanderError, Option } from "commander";
import { EXIT } from "./errors.ts";
import { guarded } from "./guard.ts";
import { writeStderr, writeStdout, writeSync } from "./terminal/output.ts";
import { VERSION, versionReport } from "./startup/version.ts";
import { GLOBAL_OPTIONS, type OptionRow, TOOL_OPTIONS } from "./config/option_table.ts";
import type { ToolCall } from "./startup/tool_args.ts";
import { didYouMean } from "../approver/suggest.ts";

export { VERSION } from "./startup/version.ts";

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Commander's option for a row of cli/config/option_table.ts. */
function commanderOption(row: OptionRow): Option {
  const option = new Option(row.flags, row.description);
  if (row.repeatable) option.argParser(collect);
  if (row.choices !== undefined) option.choices(row.choices);
  return option;
}

/**
 * A command's module, imported when that command runs, so start-up loads only the argument
 * parser and what the chosen command needs. The URL is computed so that Deno does not read
 * every command's modules before the first line runs (see main.ts).
 */
function load<T>(path: string): Promise<T> {
  return import(new URL(path, import.meta.url).href);
}

/**
 * The program: `run` receives each command's work, and for `tool` also what was parsed (the
 * fast path of cli/startup/tool_args.ts is checked against it).
 */
export function buildProgram(
  run: (work: () => Promise<number>, tool?: ToolCall) => void,
  signal: AbortSignal,
): Command {
  const program = new Command("rousseau")
    .description("A coding agent for the terminal, CI pipelines and locked-down servers.")
    .version(VERSION, "-v, --version", "print the version and exit")
    .helpOption("-h, --help", "show help")
    .addHelpText(
      "after",
      `
Without a command, rousseau starts chat when stdin and stdout are a terminal.
-p PROMPT (--print PROMPT) is the same as run PROMPT: one turn, the answer on stdout.

Examples:
  rousseau
  rousseau -p "explain what src/main.ts does"
  rousseau --allow edit chat -c`,
    )
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => writeSync("stdout", text),
      writeErr: (text) => writeSync("stderr", text),
      outputError: (text, write) => write(usageErrorText(text, program)),
    });

  for (const row of GLOBAL_OPTIONS) program.addOption(commanderOption(row));

  const tool = program.command("tool")
    .description("run one tool through the same layers the model's calls go through")
    .argument("<name>", "tool name, exactly as registered (see `rousseau tools`)")
    .argument("[json]", "the input as one JSON object; - or absent reads it from stdin");
  for (const row of TOOL_OPTIONS) tool.addOption(commanderOption(row));
  tool
    .addHelpText(
      "after",
      `
Output: the tool's output on stdout; on a tool error or a denial, the error text on
stderr (for bash that text holds the command's output, then "bash: exit status N"). --json
prints one object on stdout either way.
Exit codes: 0 success, 1 tool error or denial (any non-zero bash status), 2 usage.

Examples:
  rousseau tool read '{"path": "/srv/app/README.md"}'
  echo '{"command": "git status"}' | rousseau tool bash - --json
  rousseau tool grep '{"pattern": "TODO", "path": "/srv/app", "include": "*.ts"}'`,
    )
    .action((name: string, json: string | undefined, _opts: unknown, command: Command) => {
      const flags = command.optsWithGlobals();
      run(
        async () =>
          (await load<typeof import("./commands/tool.ts")>("./commands/tool.ts")).toolCommand(
            name,
            json,
            flags,
            signal,
          ),
        { name, json, flags },
      );
    });

  program.command("run")
    .description("one non-interactive agent turn (CI steps, scripts)")
    .argument("[prompt]", "the task; - or absent reads it from stdin")
    .option("--output <format>", "text (the final answer), json (one result object) or stream-json")
    .option("--max-iterations <n>", "most model calls in the turn (default 32)")
    .option("--session <id>", "continue a stored session (see `rousseau session list`)")
    .option("-c, --continue", "continue the most recent session of this workspace")
    .option("--resume <id>", "continue the session with this id (the same as --session)")
    .option("--deadline <duration>", "stop the whole run after this long, e.g. 90s, 10m (exit 5)")
    .option("--denials-ok", "exit 0 even when the policy denied tool calls")
    .option("-q, --quiet", "no layers header on stderr; only errors there")
    .option("--timeout <duration>", "bash timeout per command, e.g. 500ms, 90s, 2m (default 1m0s)")
    .option("--context-window <tokens>", "the model's context window (default: known or learned)")
    .option("--no-instructions", "do not read AGENTS.md / CLAUDE.md instruction files")
    .addHelpText(
      "after",
      `
Exit codes: 0 success, 1 error (provider, config, I/O), 2 usage, 3 iteration budget
exhausted, 4 finished but tool calls were denied, 5 deadline reached, 130/143 interrupted.

Examples:
  rousseau run "fix the failing test in src/parse.ts"
  git diff | rousseau run --output json -
  rousseau --allow edit --allow 'bash:^\\{"command":"npm test"' run --deadline 10m "make npm test pass"
  rousseau --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen3 run "summarise README.md"`,
    )
    .action((prompt: string | undefined, _opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/run.ts")>("./commands/run.ts")).runCommand(
          prompt,
          command.optsWithGlobals(),
          signal,
        )
      );
    });

  program.command("chat")
    .description("interactive session: streamed replies, tool calls as they happen, approvals")
    .option("--session <id>", "resume a stored session (see `rousseau session list`)")
    .option("-c, --continue", "continue the most recent session of this workspace")
    .option("--resume [id]", "continue a session; without an id, pick one of this workspace's")
    .option("--max-iterations <n>", "most model calls per turn (default 32)")
    .option("--timeout <duration>", "bash timeout per command, e.g. 500ms, 90s, 2m (default 1m0s)")
    .option("--context-window <tokens>", "the model's context window (default: known or learned)")
    .option("--no-instructions", "do not read AGENTS.md / CLAUDE.md instruction files")
    .addHelpText(
      "after",
      `
By default read and grep run at once; write, edit and bash ask first.
Inside: /help, /tools, /approver, /session, /context, /compact, /exit.
Ctrl+C cancels a turn, Ctrl+D leaves.

Examples:
  rousseau chat
  rousseau --allow edit chat --session 3f2a
  rousseau --provider openai --base-url http://127.0.0.1:11434/v1 --model qwen3 chat`,
    )
    .action((_opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/chat.ts")>("./commands/chat.ts")).chatCommand(
          command.optsWithGlobals(),
          signal,
        )
      );
    });

  program.command("session")
    .description("stored sessions: list, show ID, delete ID")
    .argument("<action>", "list, show or delete")
    .argument("[id]", "session id (or a unique prefix of at least 4 characters)")
    .option("--json", "print JSON instead of text")
    .addHelpText(
      "after",
      `
Examples:
  rousseau session list
  rousseau session show 3f2a --json
  rousseau run --session 3f2a "now add a test for it"`,
    )
    .action((action: string, id: string | undefined, _opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/session.ts")>("./commands/session.ts"))
          .sessionCommand(
            action,
            id,
            command.optsWithGlobals(),
          )
      );
    });

  program.command("undo")
    .description("put back what the last turn(s) of a session changed in the workspace")
    .argument("[session]", "session id or unique prefix (default: this workspace's latest)")
    .option("--turns <n>", "undo the last N turns that changed files (default 1)")
    .option("--list", "show the session's turns and the files each changed")
    .option("--force", "restore even files changed since the turn")
    .option("--json", "print JSON instead of text")
    .addHelpText(
      "after",
      `
Covers what write, edit and bash (or any tool that is not read-only) changed: contents and
modes come back, files the turn created go, files it deleted return. A file changed again
after the turn is a conflict: nothing is written and the paths are named (--force restores
anyway). Exit codes: 0 restored or nothing to undo, 1 conflict or failure, 2 usage.

Examples:
  rousseau undo
  rousseau undo --list
  rousseau undo 3f2a --turns 2 --json`,
    )
    .action((session: string | undefined, _opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/undo.ts")>("./commands/undo.ts")).undoCommand(
          session,
          command.optsWithGlobals(),
        )
      );
    });

  program.command("mcp")
    .description("serve the registered tools to an MCP client over stdio, through the approver")
    .option("--timeout <duration>", "bash timeout per command, e.g. 500ms, 90s, 2m (default 1m0s)")
    .addHelpText(
      "after",
      `
stdout carries only MCP protocol messages; logs go to stderr. Without a configured
approver, read and grep are allowed and everything else is denied (see docs/mcp.md).

Examples:
  rousseau --workspace /srv/app mcp
  rousseau --workspace /srv/app --allow edit --allow 'bash:^\\{"command":"npm test"' mcp`,
    )
    .action((_opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/mcp.ts")>("./commands/mcp.ts")).mcpCommand(
          command.optsWithGlobals(),
          signal,
        )
      );
    });

  program.command("tools")
    .description("list the registered tools")
    .option("--json", "print [{name, description, input_schema}] sorted by name")
    .addHelpText(
      "after",
      `
Built-ins, your modules (tools.modules) and MCP servers' tools (mcp__<server>__<tool>).

Examples:
  rousseau tools
  rousseau --config config.yaml tools --json | jq -r '.[].name'`,
    )
    .action((_opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/tools.ts")>("./commands/tools.ts")).toolsCommand(
          command.optsWithGlobals(),
        )
      );
    });

  program.command("init")
    .description("write a commented config file (default: ~/.config/rousseau/config.yaml)")
    .option("--force", "replace an existing file")
    .option("--print", "print the file on stdout instead of writing it")
    .addHelpText(
      "after",
      `
The file is written to --config FILE when given. With --provider openai it is set up for
a local OpenAI-compatible server (--base-url, default Ollama's http://127.0.0.1:11434/v1).

Examples:
  rousseau init
  rousseau --provider openai --base-url http://127.0.0.1:8000/v1 init --config ./rousseau.yaml
  rousseau init --print > /etc/rousseau/config.yaml`,
    )
    .action((_opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/init.ts")>("./commands/init.ts")).initCommand(
          command.optsWithGlobals(),
        )
      );
    });

  program.command("doctor")
    .description("check the config and show each permission layer as it will be set up")
    .option(
      "--online",
      "also contact the provider: its model list, and one tiny request that offers a tool",
    )
    .addHelpText(
      "after",
      "\nExit codes: 0 every check passed, 1 a check failed.\n\nExamples:\n  rousseau --config policy.yaml doctor\n  rousseau --provider openai --base-url http://127.0.0.1:11434/v1 doctor --online",
    )
    .action((_opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/doctor.ts")>("./commands/doctor.ts")).doctorCommand(
          command.optsWithGlobals(),
        )
      );
    });

  program.command("policy")
    .description("check, test or replay the approver policy without running any tool")
    .argument("<action>", "check TOOL JSON, test, or replay SESSION")
    .argument("[args...]", "the action's arguments")
    .option("--for <command>", "whose policy: run (default), chat, mcp or tool")
    .option("--json", "print JSON instead of text")
    .option("--strict", "test: warnings fail too")
    .addHelpText(
      "after",
      `
check   the decision, deciding rule and reason for one call; exit 0 allow, 1 deny, 4 ask
test    every rule's examples / not_examples, and lint warnings (rules that can never
        match or never decide, tools that are not registered); exit 1 on a failure
replay  a stored session's tool calls through the current policy, nothing executed;
        exit 1 if any would now be denied, 4 if any would ask

Examples:
  rousseau --config policy.yaml policy check bash '{"command": "git status; rm -rf /"}'
  rousseau --config policy.yaml policy test --strict
  rousseau --config policy.yaml policy replay 3f2a --json`,
    )
    .action((action: string, args: string[], _opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/policy.ts")>("./commands/policy.ts")).policyCommand(
          action,
          args,
          command.optsWithGlobals(),
        )
      );
    });

  program.command("audit")
    .description("verify the audit log's hash chain")
    .argument("<action>", "verify")
    .argument("[file]", "audit file (default: audit.jsonl in the state directory)")
    .option("--head <sha256>", "also check the last line against a hash recorded elsewhere")
    .option("--json", "print JSON instead of text")
    .addHelpText(
      "after",
      `
The chain's head (last seq and hash) is kept beside the log in FILE.head and checked too,
so lines dropped from the end, an emptied or a rewritten log are caught; --head stands in
for a missing head file.

Exit codes: 0 the chain is intact, 1 a line was edited, removed or reordered (named), or
the file cannot be read.

Examples:
  rousseau audit verify
  rousseau audit verify /var/lib/rousseau/audit.jsonl --json`,
    )
    .action((action: string, file: string | undefined, _opts: unknown, command: Command) => {
      run(async () =>
        (await load<typeof import("./commands/audit.ts")>("./commands/audit.ts")).auditCommand(
          action,
          file,
          command.optsWithGlobals(),
        )
      );
    });

  program.command("completion")
    .description("print a shell completion script (bash, zsh or fish)")
    .argument("<shell>", "bash, zsh or fish")
    .addHelpText(
      "after",
      `
Examples:
  rousseau completion bash > ~/.local/share/bash-completion/completions/rousseau
  rousseau completion zsh > "\${fpath[1]}/_rousseau"
  rousseau completion fish > ~/.config/fish/completions/rousseau.fish`,
    )
    .action((shell: string) => {
      run(async () => {
        await writeStdout(
          (await load<typeof import("./commands/completion.ts")>("./commands/completion.ts"))
            .completionScript(
              shell,
              program,
            ),
        );
        return EXIT.ok;
      });
    });

  program.command("version")
    .description("print the version, the Deno version and the build target")
    .addHelpText("after", "\nExample:\n  rousseau version")
    .action(() => {
      run(async () => {
        await writeStdout(versionReport());
        return EXIT.ok;
      });
    });
  return program;
}

/** Every flag of `program` and its commands, with the commands that take it ("" for global). */
function flagOwners(program: Command): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  const add = (flags: Iterable<string>, owner: string) => {
    for (const flag of flags) owners.set(flag, [...(owners.get(flag) ?? []), owner]);
  };
  add(flagsOf(program.options).keys(), "");
  for (const command of program.commands) add(flagsOf(command.options).keys(), command.name());
  return owners;
}

/**
 * Commander's error text in the house style: the `rousseau:` prefix every error has, and
 * for an unknown option a did-you-mean drawn from every command's flags, or where the flag
 * belongs when it is another command's (`-c` is an option of run and chat).
 */
export function usageErrorText(text: string, program: Command): string {
  const unknown = /^error: unknown option '([^']+)'(?:\n\(Did you mean (.+)\?\))?\n?$/s.exec(text);
  if (unknown === null) return text.replace(/^error: /, "rousseau: ");
  const flag = unknown[1]!;
  const owners = flagOwners(program);
  const commands = (owners.get(flag) ?? []).filter((owner) => owner !== "");
  let hint = "";
  if (unknown[2] !== undefined) hint = ` (did you mean ${unknown[2]}?)`;
  else if (commands.length > 0) {
    hint = ` (${flag} is an option of ${commands.join(", ")}: rousseau ${commands[0]} ${flag})`;
  } else {
    const near = flag.startsWith("--") ? didYouMean(flag, owners.keys()) : undefined;
    if (near !== undefined) hint = ` (did you mean ${near}?)`;
  }
  return `rousseau: unknown option '${flag}'${hint}\n`;
}

/** How an option takes a value: `required` (`--session <id>`), `optional` (`--resume [id]`). */
type Arity = "none" | "required" | "optional";

/** The flags of `options` (long and short), with how each takes a value. */
function flagsOf(options: readonly Option[]): Map<string, Arity> {
  const out = new Map<string, Arity>();
  for (const option of options) {
    const arity: Arity = option.required ? "required" : option.optional ? "optional" : "none";
    for (const flag of [option.long, option.short]) if (flag !== undefined) out.set(flag, arity);
  }
  return out;
}

/**
 * Habits people bring from other agents (cli.md "Habits"), as the arguments they mean:
 * `-p PROMPT` / `--print PROMPT` before any command is `run PROMPT`, and no command at all
 * is `chat` when a person is at a terminal. Options of `run` and `chat` typed before the
 * command (`rousseau -c -p again`, `rousseau -c chat`) are moved after the command word, so
 * a short flag works in any position. Only words before the command are looked at, so a
 * prompt that happens to read `-p` is never rewritten. Returns undefined when there is no
 * command and nobody at a terminal (help on stderr, exit 2).
 */
export function rewriteHabits(
  args: readonly string[],
  program: Command,
  interactive: boolean,
): string[] | undefined {
  const global = flagsOf(program.options);
  // Options of the commands the habits lead to; what they take decides what the next word is.
  const habitual = flagsOf(
    program.commands.filter((c) => ["run", "chat"].includes(c.name())).flatMap((c) => c.options),
  );
  const names = new Set(program.commands.map((c) => c.name()));
  const kept: string[] = [];
  const moved: string[] = [];
  let unknown = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") return [...args];
    if (arg === "-p" || arg === "--print") return [...kept, "run", ...moved, ...args.slice(i + 1)];
    const joined = /^(?:--print=|-p)(.+)$/s.exec(arg);
    if (joined !== null) return [...kept, "run", joined[1]!, ...moved, ...args.slice(i + 1)];
    if (!arg.startsWith("-")) return [...kept, arg, ...moved, ...args.slice(i + 1)]; // the command
    if (["-h", "--help", "-v", "--version"].includes(arg)) return [...args];
    const flag = arg.split("=")[0]!;
    const inline = arg.includes("=");
    if (global.has(flag)) {
      kept.push(arg);
      if (global.get(flag) === "required" && !inline && i + 1 < args.length) kept.push(args[++i]!);
    } else if (habitual.has(flag)) {
      moved.push(arg);
      const arity = habitual.get(flag);
      const next = args[i + 1];
      const takesNext = arity === "required" ||
        (arity === "optional" && next !== undefined && !next.startsWith("-") && !names.has(next));
      if (takesNext && !inline && next !== undefined) moved.push(args[++i]!);
    } else {
      kept.push(arg); // unknown: commander names it
      unknown = true;
    }
  }
  if (interactive) return [...kept, "chat", ...moved];
  return unknown ? [...kept] : undefined;
}

/** Runs the CLI with `args` (without the program name) and returns the exit code. */
export function main(args: readonly string[]): Promise<number> {
  return guarded(async (signal) => {
    let work: (() => Promise<number>) | undefined;
    const program = buildProgram((w) => work = w, signal);
    const meant = rewriteHabits(
      args,
      program,
      Deno.stdin.isTerminal() && Deno.stdout.isTerminal(),
    );
    if (meant === undefined) {
      await writeStderr(program.helpInformation());
      return EXIT.usage;
    }
    try {
      await program.parseAsync(meant, { from: "user" });
    } catch (error) {
      if (error instanceof CommanderError) {
        return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      }
      throw error;
    }
    if (work === undefined) {
      await writeStderr(program.helpInformation());
      return EXIT.usage;
    }
    return await work();
  });
}
