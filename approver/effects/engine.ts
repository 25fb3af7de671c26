/**
 * What a simple command does beyond its plain effect (spec: "What an allow grants: effects").
 *
 * `effectsOf` reads one command — its words after quote removal, its prefix assignments and
 * its redirections — and lists every further effect: another program it runs, a file it
 * writes, a change to the shell itself, or something that cannot be known from the text.
 * It is pure: the approver resolves paths and judges each effect as a call of its own.
 *
 * Hazard: every branch here must fail closed. When a word is computed at run time, a path is
 * a pattern, or a program's input cannot be read with certainty, the answer is an `unknown`
 * effect, never silence.
 *
 * @module
 */

import { basename } from "node:path";
import {
  DECLARATION_BUILTINS,
  FIND_EXEC_PRIMARIES,
  FIND_VALUE_PRIMARIES,
  FIND_WRITE_PRIMARIES,
  GIT_PROGRAM_KEYS,
  GIT_SAFE_KEYS,
  INTERPRETERS,
  type OptionEffect,
  type OptionSpec,
  PROGRAMS,
  type ProgramSpec,
  SHELL_CHANGERS,
  SHELL_VARIABLE_PATTERNS,
  SHELL_VARIABLES,
  SHELLS,
  WRAPPERS,
} from "./_table.ts";
import { type Assignment, DYNAMIC, type Redirect } from "../shell.ts";

/** The command `effectsOf` reads: a subset of the parser's `SimpleCommand`. */
export interface Invocation {
  /** Words after quote removal; `DYNAMIC` marks what is computed at run time. */
  readonly argv: readonly string[];
  /** Per word: an unquoted pattern the shell may replace with file names. */
  readonly globs?: readonly boolean[];
  /** Prefix assignments. */
  readonly assignments?: readonly Assignment[];
  /** Redirections. */
  readonly redirects?: readonly Redirect[];
  /** Directory (as written, relative to the line's) the program runs in, if a wrapper set one. */
  readonly cwd?: string;
  /** Words standing for paths the program is given at run time (`{}` of `find -exec`). */
  readonly runtimePaths?: readonly string[];
}

/** One effect beyond the plain one. `via` names its cause for reasons: `git log --output`. */
export type Effect =
  /** Runs another program: judged as its own simple command. */
  | { readonly kind: "run"; readonly command: Invocation; readonly via: string }
  /** Runs a shell command line: parsed and each simple command judged. */
  | { readonly kind: "script"; readonly script: string; readonly via: string }
  /**
   * Writes, deletes or truncates `path` (relative paths are relative to the line's working
   * directory; `tree`: everything under it too). `path` is undefined when it cannot be known.
   */
  | {
    readonly kind: "write";
    readonly path: string;
    readonly tree: boolean;
    readonly via: string;
  }
  /** Changes the shell itself (`what` is a phrase: `defining the function ls`). */
  | { readonly kind: "shell"; readonly what: string }
  /** Cannot be known from the text (`what` is a phrase saying what). */
  | { readonly kind: "unknown"; readonly what: string };

/** Files a write to which changes nothing. */
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/[0-9]+)$/;
const WRITE_OPS = new Set([">", ">>", ">|", "<>", "&>", "&>>"]);

/** True when the assignment of `name` changes what programs run or load. */
export function isShellVariable(name: string): boolean {
  return SHELL_VARIABLES.has(name) || SHELL_VARIABLE_PATTERNS.some((re) => re.test(name));
}

/** Every effect of `command` beyond its plain one. */
export function effectsOf(command: Invocation): Effect[] {
  const out: Effect[] = [];
  for (const assignment of command.assignments ?? []) {
    if (isShellVariable(assignment.name)) {
      out.push({ kind: "shell", what: `assigning ${assignment.name}` });
    }
  }
  for (const redirect of command.redirects ?? []) out.push(...redirectEffects(redirect, command));
  if (command.argv.length > 0) out.push(...programEffects(command));
  // Writing to /dev/null and the standard streams changes nothing.
  return out.filter((e) => e.kind !== "write" || !HARMLESS_TARGETS.test(e.path));
}

function redirectEffects(redirect: Redirect, command: Invocation): Effect[] {
  const via = `the redirection ${redirect.fd ?? ""}${redirect.op}`;
  if (WRITE_OPS.has(redirect.op)) return [write(redirect.target, false, via, command)];
  if (redirect.op === ">&") {
    // `>&2`, `>&-` duplicate or close a descriptor; `>&file` (bash) writes the file.
    if (/^([0-9]+|-)$/.test(redirect.target)) return [];
    return [write(redirect.target, false, via, command)];
  }
  if (redirect.op === "<&" && !/^([0-9]+|-)$/.test(redirect.target)) {
    return [{ kind: "unknown", what: `${via}${redirect.target} duplicates a computed descriptor` }];
  }
  return [];
}

/** A write of `path` as written (relative to `command.cwd` when one is set). */
function write(path: string, tree: boolean, via: string, command?: Invocation): Effect {
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
function writeWord(
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

/** A word with whether the shell may expand it as a pattern. */
interface Word {
  readonly text: string;
  readonly glob: boolean;
}

function wordsOf(command: Invocation, from: number): Word[] {
  return command.argv.slice(from).map((_, i) => wordAt(command, from + i)!);
}

/** Word `i` of `command` (undefined past the end). */
function wordAt(command: Invocation, i: number): Word | undefined {
  const text = command.argv[i];
  if (text === undefined) return undefined;
  // `{a,b}` and `{1..3}` are brace expansions in bash (`sh` on some systems).
  return { text, glob: command.globs?.[i] === true || /[{]/.test(text) && /[,.]/.test(text) };
}

/** The program's name as the table knows it: `/usr/bin/git` → `git`. */
export function programName(word: string): string {
  return basename(word);
}

function programEffects(command: Invocation): Effect[] {
  const argv0 = command.argv[0]!;
  if (argv0.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: "the program's name is computed at run time" }];
  }
  if (command.globs?.[0]) {
    return [{ kind: "unknown", what: `the program ${argv0} is a pattern the shell expands` }];
  }
  const name = programName(argv0);
  const changer = SHELL_CHANGERS[name];
  if (changer !== undefined) return [{ kind: "shell", what: changer }];
  if (DECLARATION_BUILTINS.has(name)) return declarationEffects(command, name);
  if (name === "command" && command.argv.slice(1).some((w) => /^-[a-zA-Z]*[vV]/.test(w))) {
    return []; // `command -v NAME` prints where NAME is
  }
  const wrapper = WRAPPERS[name];
  if (wrapper !== undefined) return wrapperEffects(command, name, wrapper);
  if (SHELLS.has(name)) return shellEffects(command, name);
  if (name in INTERPRETERS) return interpreterEffects(command, name);
  const spec = PROGRAMS[name];
  if (spec === undefined) return [];
  return specEffects(command, name, spec, 1);
}

function declarationEffects(command: Invocation, name: string): Effect[] {
  const out: Effect[] = [];
  for (const word of command.argv.slice(1)) {
    if (word.includes(DYNAMIC)) {
      out.push({ kind: "unknown", what: `${name} with a word computed at run time` });
    } else if (/^-[a-zA-Z]*f/.test(word)) {
      out.push({ kind: "shell", what: `${name} -f exporting a function` });
    } else {
      const variable = /^([A-Za-z_][A-Za-z0-9_]*)(\+?=|$)/.exec(word)?.[1];
      if (variable !== undefined && isShellVariable(variable)) {
        out.push({ kind: "shell", what: `${name} ${variable}` });
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Options

/** One option found on a command line. */
interface Found {
  /** The spelling it was matched to (`--output`), or as written for unknown ones. */
  readonly key: string;
  readonly spec?: OptionSpec;
  readonly value?: string;
  /** The value is (part of) an unquoted pattern the shell expands. */
  readonly glob?: boolean;
}

interface Parsed {
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
function parseOptions(
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

/** Whether a spec has any effect at all (for deciding what a computed option could do). */
function hasEffects(spec: ProgramSpec): boolean {
  return spec.analyse !== undefined || spec.operands !== undefined || spec.always !== undefined ||
    spec.wrapper !== undefined || spec.subcommands !== undefined ||
    Object.values(spec.options ?? {}).some((o) => o.effect !== undefined);
}

/** The effects of one option (or of a program's `always`). */
/** The effects of every option found that has one, each named `<via> <option>`. */
function foundEffects(command: Invocation, found: readonly Found[], via: string): Effect[] {
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

function optionEffects(
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
    case "gitConfigEnv": {
      const key = value.slice(0, value.indexOf("=") < 0 ? value.length : value.indexOf("="));
      if (GIT_SAFE_KEYS.some((re) => re.test(key.toLowerCase()))) return [];
      return [{
        kind: "unknown",
        what: `${via} ${key} takes its value from the environment, which can name a program`,
      }];
    }
  }
}

/** The effects of a spec'd program from argv[from]. */
function specEffects(
  command: Invocation,
  name: string,
  spec: ProgramSpec,
  from: number,
): Effect[] {
  switch (spec.analyse) {
    case "find":
      return findEffects(command);
    case "sed":
      return sedEffects(command, name);
    case "awk":
      return awkEffects(command, name);
    case "tar":
      return tarEffects(command, name);
    case "dd":
      return ddEffects(command);
    case "make":
      return makeEffects(command, name);
    case "interpreter":
      return packageRunnerEffects(command, name, from);
    case "split":
      return splitEffects(command, name);
    case "git":
      if (name === "git") return gitEffects(command);
  }
  if (spec.subcommands !== undefined) return subcommandEffects(command, name, spec, from);
  const parsed = parseOptions(command, from, spec.options ?? {}, spec.optionsFirst ?? false);
  return genericEffects(command, name, spec, parsed);
}

/** `npm [options] SUBCOMMAND ...`: global options, then the subcommand's own entry. */
function subcommandEffects(
  command: Invocation,
  name: string,
  spec: ProgramSpec,
  from: number,
): Effect[] {
  const global = parseOptions(command, from, spec.options ?? {}, true);
  const { subcommands: _subcommands, ...own } = spec;
  const out = genericEffects(command, name, { ...own, operands: "read" }, {
    ...global,
    operands: [],
  });
  const first = global.operands[0];
  if (first === undefined) return out;
  if (first.text.includes(DYNAMIC)) {
    out.push({ kind: "unknown", what: `${name} with a subcommand computed at run time` });
    return out;
  }
  const sub = spec.subcommands![first.text];
  if (sub === undefined) {
    if (!spec.otherSubcommandsPlain) {
      out.push({
        kind: "unknown",
        what: `${name} ${first.text} is not a subcommand the checker knows`,
      });
    }
    return out;
  }
  out.push(...specEffects(command, `${name} ${first.text}`, sub, first.index + 1));
  return out;
}

/** Options, operands and `always` of a program with a declarative entry. */
function genericEffects(
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

function joinCwd(base: string | undefined, dir: string): string {
  if (base === undefined || dir.startsWith("/")) return dir;
  return `${base}/${dir}`;
}

// ---------------------------------------------------------------------------------------------
// Wrappers, shells, interpreters

function wrapperEffects(command: Invocation, name: string, spec: ProgramSpec): Effect[] {
  const wrapper = spec.wrapper!;
  const argv = command.argv;
  const parsed = parseOptions(command, 1, spec.options ?? {}, true);
  const out: Effect[] = [];
  let cwd = command.cwd;
  let hasScript = false;
  for (const option of parsed.found) {
    const effect = option.spec?.effect;
    if (effect === undefined) continue;
    if (effect === "cwd") {
      if (option.value === undefined || option.value.includes(DYNAMIC)) {
        out.push({
          kind: "unknown",
          what: `${name} ${option.key} changes to a computed directory`,
        });
      } else cwd = joinCwd(cwd, option.value);
      continue;
    }
    if (effect === "script") hasScript = true;
    out.push(...optionEffects(command, effect, option.value, `${name} ${option.key}`, option.glob));
  }
  if (parsed.dynamicOption) {
    out.push({ kind: "unknown", what: `${name} runs a command computed at run time` });
    return out;
  }
  let start = parsed.operands[0]?.index ?? argv.length;
  const skipped = argv.slice(start, start + (wrapper.skip ?? 0));
  if (wrapper.writesSkipped && skipped[0] !== undefined && !/^[0-9]+$/.test(skipped[0])) {
    out.push(write(skipped[0], false, name, command));
  }
  start += wrapper.skip ?? 0;
  const assignments: Assignment[] = [...command.assignments ?? []];
  if (wrapper.assignments) {
    while (start < argv.length && /^[^=]+=/.test(argv[start]!)) {
      const word = argv[start]!;
      const eq = word.indexOf("=");
      const assignment = { name: word.slice(0, eq), value: word.slice(eq + 1) };
      if (isShellVariable(assignment.name)) {
        out.push({ kind: "shell", what: `${name} assigning ${assignment.name}` });
      }
      assignments.push(assignment);
      start++;
    }
  }
  const rest = argv.slice(start);
  if (rest.length === 0) {
    if (hasScript || wrapper.bare !== "shell") return out;
    out.push({ kind: "unknown", what: `${name} without a command runs a shell` });
    return out;
  }
  if (wrapper.joinsAsScript) {
    out.push({ kind: "script", script: rest.join(" "), via: name });
    return out;
  }
  const globs = command.globs?.slice(start);
  const inner: Invocation = {
    argv: wrapper.appendsInput ? [...rest, DYNAMIC] : rest,
    ...(globs === undefined ? {} : { globs }),
    assignments: assignments.filter((a) => !isShellVariable(a.name)),
    ...(cwd === undefined ? {} : { cwd }),
  };
  out.push({ kind: "run", command: inner, via: name });
  return out;
}

/** `sh -c SCRIPT`, `bash script.sh`, `sh` reading its input. */
function shellEffects(command: Invocation, name: string): Effect[] {
  const argv = command.argv;
  let inline = false;
  let stdin = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      return [{ kind: "unknown", what: `${name} with an option computed at run time` }];
    }
    if (word === "--" || word === "-") {
      i++;
      break;
    }
    if (/^--(rcfile|init-file)$/.test(word) || /^--(rcfile|init-file)=/.test(word)) {
      return [{ kind: "unknown", what: `${name} ${word} runs a startup file` }];
    }
    if (word.startsWith("--")) continue;
    if (!/^[-+]/.test(word)) break;
    const letters = word.slice(1);
    if (letters.includes("c")) inline = true;
    if (letters.includes("s") || letters.includes("i")) stdin = true;
    // `-o OPTION` and `-O OPTION` take the next word.
    if (/[oO]$/.test(letters)) i++;
  }
  const operand = argv[i];
  if (inline) {
    if (operand === undefined) {
      return [{ kind: "unknown", what: `${name} -c without a command` }];
    }
    if (operand.includes(DYNAMIC)) {
      return [{ kind: "unknown", what: `${name} -c runs a command computed at run time` }];
    }
    return [{ kind: "script", script: operand, via: `${name} -c` }];
  }
  if (stdin || operand === undefined) {
    return [{ kind: "unknown", what: `${name} reads the commands it runs from its input` }];
  }
  if (operand.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a script computed at run time` }];
  }
  return []; // runs the named script: its plain effect
}

/** `python -c CODE`, `node -e CODE`, `perl -pi -e ...`: code given inline cannot be judged. */
function interpreterEffects(command: Invocation, name: string): Effect[] {
  const spec = INTERPRETERS[name]!;
  const argv = command.argv;
  const out: Effect[] = [];
  let inPlace = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      return [{ kind: "unknown", what: `${name} with an option computed at run time` }];
    }
    if (word === "--") {
      i++;
      break;
    }
    if (word === "-") {
      return [{ kind: "unknown", what: `${name} reads the code it runs from its input` }];
    }
    if (!word.startsWith("-")) break;
    const inline = spec.inline.find((o) =>
      word === o || word.startsWith(`${o}=`) || (o.length === 2 && word.startsWith(o))
    );
    // Clustered single-letter flags (`perl -pie`, `ruby -ne`): any inline letter counts.
    const cluster = /^-[a-zA-Z]+$/.test(word) &&
      spec.inline.some((o) => o.length === 2 && word.slice(1).includes(o[1]!));
    if (inline !== undefined || (cluster && ["perl", "ruby"].includes(name))) {
      return [{
        kind: "unknown",
        what: `${name} ${inline ?? word} runs code given on the command line`,
      }];
    }
    if (
      spec.inPlace?.some((o) => word.startsWith(o)) || (/^-[a-zA-Z]*i/.test(word) && spec.inPlace)
    ) {
      inPlace = true;
    }
    // `python -m MODULE` runs a module by name: its plain effect, like a script.
    if (word === "-m" && name.startsWith("py")) return out;
    if (["-W", "-X", "-Q", "--import", "-I"].includes(word)) i++;
  }
  if (name === "deno") {
    const sub = argv[i];
    if (sub === "eval" || sub === "repl" || sub === undefined) {
      return [{ kind: "unknown", what: `deno ${sub ?? ""} runs code that is not in a file` }];
    }
    return out;
  }
  if (i >= argv.length) {
    return [{ kind: "unknown", what: `${name} reads the code it runs from its input` }];
  }
  if (argv[i]!.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a script computed at run time` }];
  }
  if (inPlace) {
    for (const word of wordsOf(command, i + 1)) {
      out.push(writeWord(command, word, false, `${name} -i`));
    }
  }
  return out;
}

/** `npx PKG ARGS`, `npm exec -- PKG`: runs the package's program, judged as its own command. */
function packageRunnerEffects(command: Invocation, name: string, from: number): Effect[] {
  const parsed = parseOptions(command, from, {
    "-p": { value: "required" },
    "--package": { value: "required" },
    "-c": { value: "required", effect: "script" },
    "--call": { value: "required", effect: "script" },
    "-w": { value: "required" },
    "--workspace": { value: "required" },
  }, true);
  const out: Effect[] = [];
  const via = from === 1 ? name : `${name} ${command.argv[from - 1]}`;
  out.push(...foundEffects(command, parsed.found, via));
  if (parsed.dynamicOption) {
    out.push({ kind: "unknown", what: `${via} runs a package computed at run time` });
  }
  const first = parsed.operands[0];
  if (first === undefined) {
    if (out.length === 0) out.push({ kind: "unknown", what: `${via} without a package` });
    return out;
  }
  out.push({ kind: "run", command: { argv: command.argv.slice(first.index) }, via });
  return out;
}

// ---------------------------------------------------------------------------------------------
// git

function gitConfigEffects(value: string, via: string): Effect[] {
  const eq = value.indexOf("=");
  const key = (eq < 0 ? value : value.slice(0, eq)).toLowerCase();
  const setting = eq < 0 ? "true" : value.slice(eq + 1);
  if (key.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${via} sets a configuration key computed at run time` }];
  }
  if (GIT_PROGRAM_KEYS.some((re) => re.test(key))) {
    if (setting.includes(DYNAMIC)) {
      return [{ kind: "unknown", what: `${via} ${key} names a program computed at run time` }];
    }
    if (
      /^(include|includeif\..+)\.path$|^core\.(worktree|attributesfile|excludesfile)$/.test(key)
    ) {
      return [{ kind: "unknown", what: `${via} ${key} makes git read another file` }];
    }
    if (key === "core.hookspath") {
      return [{ kind: "unknown", what: `${via} core.hooksPath runs hooks from another directory` }];
    }
    if (key.startsWith("alias.") && !setting.startsWith("!")) {
      return [{
        kind: "run",
        command: { argv: ["git", ...setting.split(/\s+/).filter(Boolean)] },
        via: `${via} ${key}`,
      }];
    }
    if (key === "core.fsmonitor" && /^(true|false)$/i.test(setting)) return [];
    return [{ kind: "script", script: setting.replace(/^!/, ""), via: `${via} ${key}` }];
  }
  if (GIT_SAFE_KEYS.some((re) => re.test(key))) return [];
  return [{ kind: "unknown", what: `${via} ${key} may change what git runs` }];
}

const GIT_BRANCH_VALUES: Readonly<Record<string, OptionSpec>> = {
  "--contains": { value: "required" },
  "--no-contains": { value: "required" },
  "--merged": { value: "required" },
  "--no-merged": { value: "required" },
  "--points-at": { value: "required" },
  "--sort": { value: "required" },
  "--format": { value: "required" },
  "-u": { value: "required" },
  "--set-upstream-to": { value: "required" },
  "-m": { value: "required" },
  "--message": { value: "required" },
  "-F": { value: "required" },
  "--file": { value: "required" },
  "--color": { value: "optional" },
  "--column": { value: "optional" },
  "--abbrev": { value: "optional" },
  "-n": { value: "optional" },
};

function gitEffects(command: Invocation): Effect[] {
  const global = parseOptions(command, 1, PROGRAMS.git!.options ?? {}, true);
  const out: Effect[] = [];
  for (const option of global.found) {
    if (option.spec?.effect !== undefined) {
      out.push(
        ...optionEffects(
          command,
          option.spec.effect,
          option.value,
          `git ${option.key}`,
          option.glob,
        ),
      );
    }
  }
  const first = global.operands[0];
  if (global.dynamicOption || first?.text.includes(DYNAMIC)) {
    out.push({ kind: "unknown", what: "git with a subcommand or option computed at run time" });
    return out;
  }
  if (first === undefined) return out;
  const sub = first.text;
  const spec = PROGRAMS.git!.subcommands?.[sub];
  if (spec === undefined) {
    out.push({
      kind: "unknown",
      what: `git ${sub} is not a subcommand the checker knows (an alias or a git-${sub} program?)`,
    });
    return out;
  }
  const options = { ...spec.options, ...(spec.analyse === "git" ? GIT_BRANCH_VALUES : {}) };
  const parsed = parseOptions(command, first.index + 1, options, false);
  const via = `git ${sub}`;
  if (parsed.dynamicOption) {
    out.push({ kind: "unknown", what: `a word computed at run time could be an option of ${via}` });
  }
  out.push(...foundEffects(command, parsed.found, via));
  if (spec.always !== undefined) out.push(...optionEffects(command, spec.always, undefined, via));
  const gitdir: Effect = write(".git", true, via, command);
  const worktree: Effect = write(".", true, via, command);
  if (spec.writes === "gitdir") out.push(gitdir);
  if (spec.writes === "worktree") out.push(worktree);
  if (spec.analyse === "git") out.push(...gitStateEffects(command, sub, parsed, gitdir, worktree));
  return out;
}

/** The subcommands whose listing forms read and whose other forms change state. */
function gitStateEffects(
  command: Invocation,
  sub: string,
  parsed: Parsed,
  gitdir: Effect,
  worktree: Effect,
): Effect[] {
  const has = (...keys: string[]) => parsed.found.some((o) => keys.includes(o.key));
  const operands = parsed.operands.map((o) => o.text);
  const via = `git ${sub}`;
  switch (sub) {
    case "branch": {
      if (has("--edit-description")) {
        return [{ kind: "unknown", what: "git branch --edit-description runs an editor" }];
      }
      const changes = has(
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "-f",
        "--force",
        "-t",
        "--track",
        "--no-track",
        "--create-reflog",
      );
      const lists = has("-l", "--list");
      return changes || (operands.length > 0 && !lists) ? [gitdir] : [];
    }
    case "tag": {
      if (has("-v", "--verify", "-s", "--sign", "-u", "--local-user")) {
        return [{ kind: "unknown", what: `${via} with signatures runs gpg` }];
      }
      if (has("-e", "--edit")) return [{ kind: "unknown", what: "git tag -e runs an editor" }];
      const changes = has("-d", "--delete", "-a", "--annotate", "-f", "--force", "-m", "--message");
      const lists = has("-l", "--list", "-n", "--contains", "--no-contains", "--points-at");
      return changes || (operands.length > 0 && !lists) ? [gitdir] : [];
    }
    case "stash":
      return ["list", "show"].includes(operands[0] ?? "") ? [] : [worktree];
    case "remote":
      return operands.length === 0 || ["show", "get-url"].includes(operands[0]!) ? [] : [gitdir];
    case "reflog":
      return ["expire", "delete", "drop"].includes(operands[0] ?? "") ? [gitdir] : [];
    case "notes":
      return operands.length === 0 || ["list", "show", "get-ref"].includes(operands[0]!)
        ? []
        : [gitdir];
    case "worktree":
      return operands[0] === "list" ? [] : [worktree];
    case "bisect":
      if (operands[0] === "run") {
        const start = parsed.operands[1]?.index;
        if (start === undefined) {
          return [{ kind: "unknown", what: "git bisect run without a command" }];
        }
        return [worktree, { kind: "run", command: { argv: command.argv.slice(start) }, via }];
      }
      if (["visualize", "view"].includes(operands[0] ?? "")) {
        return [{ kind: "unknown", what: "git bisect visualize runs gitk or a pager" }];
      }
      return ["log", "terms"].includes(operands[0] ?? "") ? [] : [worktree];
    case "submodule":
      if (operands[0] === "foreach") {
        const script = command.argv.slice(parsed.operands[1]?.index ?? command.argv.length)
          .join(" ");
        return script.includes(DYNAMIC)
          ? [{ kind: "unknown", what: "git submodule foreach runs a computed command" }]
          : [worktree, { kind: "script", script, via: "git submodule foreach" }];
      }
      return ["status", "summary"].includes(operands[0] ?? "") ? [] : [worktree];
    case "config":
      return gitConfigWrites(command, parsed);
    case "clone": {
      const out: Effect[] = [];
      const url = operands[0];
      if (url !== undefined && /^ext::/.test(url)) {
        out.push({ kind: "unknown", what: "git clone ext:: runs the command in its URL" });
      }
      const dir = operands[1] ??
        basename((url ?? "").replace(/\/+$/, "").replace(/\.git$/, "")).replace(/:.*$/, "");
      out.push(write(dir === "" ? "." : dir, true, via, command));
      return out;
    }
  }
  return [];
}

function gitConfigWrites(command: Invocation, parsed: Parsed): Effect[] {
  const has = (...keys: string[]) => parsed.found.some((o) => keys.includes(o.key));
  const operands = parsed.operands.map((o) => o.text);
  if (has("-e", "--edit") || operands[0] === "edit") {
    return [{ kind: "unknown", what: "git config --edit runs an editor" }];
  }
  const reads = has(
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "-l",
    "--list",
  ) || ["get", "list"].includes(operands[0] ?? "");
  const writes = has(
    "--unset",
    "--unset-all",
    "--add",
    "--replace-all",
    "--rename-section",
    "--remove-section",
  ) || ["set", "unset", "rename-section", "remove-section"].includes(operands[0] ?? "") ||
    (!reads && operands.length >= 2);
  if (!writes) return [];
  if (has("--global", "--system")) {
    return [{ kind: "unknown", what: "git config --global writes the user's configuration" }];
  }
  const file = parsed.found.find((o) => o.key === "-f" || o.key === "--file");
  if (file !== undefined) return [write(file.value ?? "", false, "git config --file", command)];
  return [write(".git/config", false, "git config", command)];
}

// ---------------------------------------------------------------------------------------------
// find

function findEffects(command: Invocation): Effect[] {
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

// ---------------------------------------------------------------------------------------------
// sed

function sedEffects(command: Invocation, name: string): Effect[] {
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

/** A file named inside a program's own script (not expanded by the shell). */
function fileWrite(file: string, via: string, command?: Invocation): Effect {
  return write(file, false, via, command);
}

// ---------------------------------------------------------------------------------------------
// awk

function awkEffects(command: Invocation, name: string): Effect[] {
  const argv = command.argv;
  const programs: string[] = [];
  const out: Effect[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      return [{
        kind: "unknown",
        what: `a word computed at run time could be an option of ${name}`,
      }];
    }
    if (word === "--") {
      i++;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    const long = word.startsWith("--") ? word.slice(2).split("=")[0]! : "";
    const longValue = word.includes("=") ? word.slice(word.indexOf("=") + 1) : undefined;
    const short = word[1]!;
    const attached = word.slice(2);
    if (long !== "") {
      if ("source".startsWith(long) && long.length > 1) {
        const text = longValue ?? argv[++i];
        if (text === undefined) return [{ kind: "unknown", what: `${name} --source without text` }];
        programs.push(text);
      } else if (["file", "include", "load", "exec", "debug"].some((o) => o.startsWith(long))) {
        return [{ kind: "unknown", what: `${name} --${long} runs code from a file` }];
      } else if (["pretty-print", "profile", "dump-variables"].some((o) => o.startsWith(long))) {
        const file = longValue ?? (long.startsWith("d") ? "awkvars.out" : "awkprof.out");
        out.push(write(file, false, `${name} --${long}`, command));
      } else if (["field-separator", "assign"].some((o) => o.startsWith(long)) && !longValue) i++;
      continue;
    }
    if (short === "F" || short === "v") {
      if (attached === "") i++;
      continue;
    }
    if (short === "e") {
      const text = attached !== "" ? attached : argv[++i];
      if (text === undefined) return [{ kind: "unknown", what: `${name} -e without text` }];
      programs.push(text);
      continue;
    }
    if ("fEilD".includes(short)) {
      return [{ kind: "unknown", what: `${name} -${short} runs code from a file` }];
    }
    if ("opd".includes(short)) {
      const file = attached !== "" ? attached : short === "d" ? "awkvars.out" : "awkprof.out";
      out.push(write(file, false, `${name} -${short}`, command));
    }
  }
  if (programs.length === 0) {
    const program = argv[i];
    if (program === undefined) return [{ kind: "unknown", what: `${name} without a program` }];
    programs.push(program);
  }
  const text = programs.join("\n");
  if (text.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a program computed at run time` }];
  }
  out.push(...awkProgramEffects(text, name, command));
  return out;
}

interface AwkToken {
  readonly type: "string" | "regex" | "name" | "number" | "op" | "newline";
  readonly text: string;
}

/** Tokens after which `/` divides rather than starting a regex. */
function operandEnds(token: AwkToken | undefined): boolean {
  if (token === undefined) return false;
  if (["string", "regex", "number"].includes(token.type)) return true;
  if (token.type === "name") {
    return !["print", "printf", "return", "in", "case", "getline", "do", "else"].includes(
      token.text,
    );
  }
  return token.text === ")" || token.text === "]" || token.text === "$" ||
    token.text === "++" || token.text === "--";
}

function tokenizeAwk(text: string): AwkToken[] | string {
  const tokens: AwkToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\" && text[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      i++;
      continue;
    }
    if (c === "\n" || c === ";") {
      tokens.push({ type: "newline", text: c });
      i++;
      continue;
    }
    if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "@") return "a gawk @ directive or indirect call";
    if (c === '"') {
      let value = "";
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < text.length) {
          const e = text[i + 1]!;
          value += e === "n"
            ? "\n"
            : e === "t"
            ? "\t"
            : e === "\\" || e === '"' || e === "/"
            ? e
            : `\\${e}`;
          i += 2;
          continue;
        }
        if (text[i] === "\n") return "an unterminated string";
        value += text[i];
        i++;
      }
      if (i >= text.length) return "an unterminated string";
      i++;
      tokens.push({ type: "string", text: value });
      continue;
    }
    if (c === "/" && !operandEnds(tokens.at(-1))) {
      let j = i + 1;
      let bracket = false;
      for (; j < text.length; j++) {
        const d = text[j]!;
        if (d === "\\") {
          j++;
          continue;
        }
        if (d === "\n") return "an unterminated regular expression";
        if (d === "[") bracket = true;
        else if (d === "]") bracket = false;
        else if (d === "/" && !bracket) break;
      }
      if (j >= text.length) return "an unterminated regular expression";
      const body = text.slice(i + 1, j);
      // A misread division would hide code: code-like text inside a regex is not accepted.
      if (/["{};]|system|getline/.test(body)) return "a regular expression that looks like code";
      tokens.push({ type: "regex", text: body });
      i = j + 1;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))?.[0];
    if (name !== undefined) {
      tokens.push({ type: "name", text: name });
      i += name.length;
      continue;
    }
    const number = /^[0-9.][0-9.eExX]*/.exec(text.slice(i))?.[0];
    if (number !== undefined) {
      tokens.push({ type: "number", text: number });
      i += number.length;
      continue;
    }
    const op = /^(\|\||\|&|&&|>>|>=|<=|==|!=|!~|\+\+|--|\+=|-=|\*=|\/=|%=|\^=|\*\*=?|.)/s
      .exec(text.slice(i))![0];
    tokens.push({ type: "op", text: op });
    i += op.length;
  }
  return tokens;
}

/**
 * The effects of an awk program: `system()`, `cmd | getline`, `print | cmd` run commands;
 * `print > file` writes. A command or file given as a single string literal is judged; a
 * computed one is unknown.
 */
export function awkProgramEffects(program: string, name: string, command?: Invocation): Effect[] {
  const tokens = tokenizeAwk(program);
  if (typeof tokens === "string") {
    return [{ kind: "unknown", what: `${name}: ${tokens} in its program` }];
  }
  const out: Effect[] = [];
  let printing = false;
  let depth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const next = tokens[k + 1];
    if (t.type === "newline" || (t.type === "op" && (t.text === "{" || t.text === "}"))) {
      printing = false;
      depth = 0;
      continue;
    }
    if (t.type === "name" && (t.text === "print" || t.text === "printf")) {
      printing = true;
      depth = 0;
      continue;
    }
    if (t.type === "op" && (t.text === "(" || t.text === "[")) depth++;
    if (t.type === "op" && (t.text === ")" || t.text === "]")) depth--;
    if (t.type === "name" && t.text === "system") {
      const arg = tokens[k + 2];
      const close = tokens[k + 3];
      if (next?.text === "(" && arg?.type === "string" && close?.text === ")") {
        out.push({ kind: "script", script: arg.text, via: `${name} system()` });
      } else {
        out.push({ kind: "unknown", what: `${name} system() runs a computed command` });
      }
      continue;
    }
    if (t.type === "op" && t.text === "|&") {
      out.push({ kind: "unknown", what: `${name} |& starts a co-process` });
      continue;
    }
    if (t.type === "op" && t.text === "|") {
      if (next?.type === "name" && next.text === "getline") {
        const before = tokens[k - 1];
        const beforeThat = tokens[k - 2];
        const single = before?.type === "string" &&
          (beforeThat === undefined || beforeThat.type === "newline" ||
            ["{", "(", "=", ",", "}", "&&", "||", "!"].includes(beforeThat.text) ||
            (beforeThat.type === "name" && ["while", "if", "do"].includes(beforeThat.text)));
        out.push(
          single
            ? { kind: "script", script: before!.text, via: `${name} | getline` }
            : { kind: "unknown", what: `${name} | getline runs a computed command` },
        );
      } else if (printing && depth === 0) {
        out.push(literalTarget(tokens, k + 1, "script", `${name} print |`, command));
      } else {
        out.push({ kind: "unknown", what: `${name} | outside a print statement` });
      }
      continue;
    }
    if (printing && depth === 0 && t.type === "op" && (t.text === ">" || t.text === ">>")) {
      out.push(literalTarget(tokens, k + 1, "write", `${name} print ${t.text}`, command));
    }
  }
  return out;
}

/** The target of `print > X` or `print | X`: a lone string literal, else unknown. */
function literalTarget(
  tokens: readonly AwkToken[],
  k: number,
  kind: "write" | "script",
  via: string,
  command?: Invocation,
): Effect {
  const target = tokens[k];
  const after = tokens[k + 1];
  const alone = after === undefined || after.type === "newline" || after.text === "}" ||
    after.text === ")";
  if (target?.type !== "string" || !alone) {
    return {
      kind: "unknown",
      what: `${via} to a computed ${kind === "write" ? "file" : "command"}`,
    };
  }
  return kind === "write"
    ? fileWrite(target.text, via, command)
    : { kind: "script", script: target.text, via };
}

// ---------------------------------------------------------------------------------------------
// tar, dd, make, split

/** Letters of old-style `tar xzf FILE` bundles that take the next word. */
const TAR_VALUE_LETTERS = "fbCTXNLVgKHIF";

const TAR_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  "--to-command": { value: "required", effect: "script" },
  "-I": { value: "required", effect: "script" },
  "--use-compress-program": { value: "required", effect: "script" },
  "-F": { value: "required", effect: "script" },
  "--info-script": { value: "required", effect: "script" },
  "--new-volume-script": { value: "required", effect: "script" },
  "--rsh-command": { value: "required", effect: "program" },
  "--rmt-command": { value: "required", effect: "program" },
  "--checkpoint-action": { value: "required" },
  "-C": { value: "required" },
  "--directory": { value: "required" },
  "-f": { value: "required" },
  "--file": { value: "required" },
  "-g": { value: "required", effect: "write" },
  "--listed-incremental": { value: "required", effect: "write" },
  "--index-file": { value: "required", effect: "write" },
  "--volno-file": { value: "required", effect: "write" },
  "-T": { value: "required" },
  "--files-from": { value: "required" },
  "-X": { value: "required" },
  "--exclude-from": { value: "required" },
  "-b": { value: "required" },
  "-N": { value: "required" },
  "-L": { value: "required" },
  "-V": { value: "required" },
  "-K": { value: "required" },
  "-H": { value: "required" },
  "--format": { value: "required" },
  "--owner": { value: "required" },
  "--group": { value: "required" },
  "--mode": { value: "required" },
  "--mtime": { value: "required" },
  "--transform": { value: "required" },
  "--xform": { value: "required" },
  "--exclude": { value: "required" },
  "--checkpoint": { value: "optional" },
};

function tarEffects(command: Invocation, name: string): Effect[] {
  const argv = [...command.argv];
  const globs = [...(command.globs ?? argv.map(() => false))];
  // Old style: `tar xzf a.tgz -C dir` → `tar -x -z -f a.tgz -C dir`.
  const first = argv[1];
  if (first !== undefined && !first.startsWith("-") && !first.includes(DYNAMIC)) {
    const expanded: string[] = [];
    const values = argv.slice(2);
    let used = 0;
    for (const letter of first) {
      expanded.push(`-${letter}`);
      if (TAR_VALUE_LETTERS.includes(letter)) {
        if (used < values.length) expanded.push(values[used]!);
        used++;
      }
    }
    argv.splice(1, 1 + Math.min(used, values.length), ...expanded);
    globs.splice(1, 1 + Math.min(used, values.length), ...expanded.map(() => false));
  }
  const view: Invocation = { ...command, argv, globs };
  const parsed = parseOptions(view, 1, TAR_OPTIONS, false);
  const out: Effect[] = [];
  if (parsed.dynamicOption) {
    out.push({
      kind: "unknown",
      what: `a word computed at run time could be an option of ${name}`,
    });
  }
  const has = (...keys: string[]) => parsed.found.some((o) => keys.includes(o.key));
  let dir: string | undefined = command.cwd;
  let archive: string | undefined;
  for (const option of parsed.found) {
    const effect = option.spec?.effect;
    if (option.key === "-C" || option.key === "--directory") {
      if (option.value === undefined || option.value.includes(DYNAMIC)) {
        out.push({ kind: "unknown", what: `${name} -C changes to a computed directory` });
      } else dir = joinCwd(dir, option.value);
    }
    if (option.key === "-f" || option.key === "--file") archive = option.value;
    if (option.key === "--checkpoint-action") {
      const action = option.value ?? "";
      const exec = /^exec=(.*)$/s.exec(action)?.[1];
      if (exec !== undefined) {
        out.push(optionEffects(view, "script", exec, `${name} --checkpoint-action=exec`)[0]!);
      }
      continue;
    }
    if (effect !== undefined) {
      out.push(...optionEffects(view, effect, option.value, `${name} ${option.key}`, option.glob));
    }
  }
  if (archive !== undefined && /^[^/]*:/.test(archive) && !has("--force-local")) {
    out.push({
      kind: "unknown",
      what: `${name} -f ${archive} is a remote archive, reached with rsh`,
    });
  }
  const creates = has(
    "-c",
    "--create",
    "-r",
    "--append",
    "-u",
    "--update",
    "-A",
    "--catenate",
    "--concatenate",
    "--delete",
  );
  const extracts = has("-x", "--extract", "--get");
  if (creates && archive !== undefined && archive !== "-") {
    out.push(write(archive, false, `${name} -f`, view));
  }
  if (has("--remove-files")) {
    for (const operand of parsed.operands) {
      out.push(writeWord(view, operand, true, `${name} --remove-files`));
    }
  }
  if (extracts && !has("-O", "--to-stdout", "--to-command")) {
    if (has("-P", "--absolute-names")) {
      out.push({ kind: "unknown", what: `${name} -x -P writes wherever the archive says` });
    } else out.push(write(dir ?? ".", true, `${name} -x`, { argv: [] }));
  }
  return out;
}

function ddEffects(command: Invocation): Effect[] {
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

function makeEffects(command: Invocation, name: string): Effect[] {
  const parsed = parseOptions(command, 1, {
    "-f": { value: "required", effect: { unknown: `${name} -f runs the recipes of another file` } },
    "--file": {
      value: "required",
      effect: { unknown: `${name} -f runs the recipes of another file` },
    },
    "--makefile": {
      value: "required",
      effect: { unknown: `${name} -f runs the recipes of another file` },
    },
    "-C": { value: "required", effect: { unknown: `${name} -C runs another directory's recipes` } },
    "--directory": {
      value: "required",
      effect: { unknown: `${name} -C runs another directory's recipes` },
    },
    "-I": {
      value: "required",
      effect: { unknown: `${name} -I includes makefiles from elsewhere` },
    },
    "--include-dir": {
      value: "required",
      effect: { unknown: `${name} -I includes makefiles from elsewhere` },
    },
    "-E": { value: "required", effect: { unknown: `${name} --eval adds recipes` } },
    "--eval": { value: "required", effect: { unknown: `${name} --eval adds recipes` } },
    "-o": { value: "required" },
    "--old-file": { value: "required" },
    "--assume-old": { value: "required" },
    "-W": { value: "required" },
    "--what-if": { value: "required" },
    "--new-file": { value: "required" },
    "--assume-new": { value: "required" },
    "-j": { value: "optional" },
    "--jobs": { value: "optional" },
    "-l": { value: "optional" },
    "--load-average": { value: "optional" },
    "-O": { value: "optional" },
    "--output-sync": { value: "optional" },
    "--debug": { value: "optional" },
  }, false);
  const out: Effect[] = [];
  if (parsed.dynamicOption) {
    out.push({
      kind: "unknown",
      what: `a word computed at run time could be an option of ${name}`,
    });
  }
  out.push(...foundEffects(command, parsed.found, name));
  for (const operand of parsed.operands) {
    const variable = /^([^=:+?]+)(:{0,3}=|\+=|\?=|!=)/.exec(operand.text)?.[1];
    if (variable !== undefined) {
      out.push({
        kind: "unknown",
        what: `${name} ${variable}=... can change what the recipes run`,
      });
    } else if (operand.text.includes(DYNAMIC)) {
      out.push({ kind: "unknown", what: `${name} with a target computed at run time` });
    }
  }
  return out;
}

function splitEffects(command: Invocation, name: string): Effect[] {
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
