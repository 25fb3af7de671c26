/**
 * What common programs do beyond their plain use: which options and subcommands run another
 * program, write a file, or cannot be judged from the text. The readers beside it (`engine.ts`,
 * `generic.ts` and the family files) apply it; a new program is an entry here.
 *
 * Conventions of an entry (`ProgramSpec`):
 * - `options` lists spellings (`-o`, `--output`); long options are also matched by any
 *   abbreviation (GNU getopt and git accept unambiguous prefixes), so `--out=F` is `--output`.
 *   Only options that take a value, or that have an effect, need listing: an unlisted option is
 *   read as a flag, which can only make the check stricter (its neighbour is seen as an option).
 * - `operands` says what the words that are not options do.
 * - A program not in the table is assumed to have only its plain effect: the operator who
 *   names it in an allow rule vouches for it.
 *
 * @module
 */

/** What an option's presence or value does. */
export type OptionEffect =
  /** Its value is a file the program writes. */
  | "write"
  /** Its value is a directory the program writes into. */
  | "writeTree"
  /** Its value is a shell command line the program runs (`sh -c VALUE`). */
  | "script"
  /** Its value is a program (one word) the program runs, with arguments it chooses. */
  | "program"
  /** Its value is the directory relative paths are taken from. */
  | "cwd"
  /** git `-c NAME=VALUE`: judged by the config key. */
  | "gitConfig"
  /** git `--config-env=NAME=ENVVAR`: the value is not in the text. */
  | "gitConfigEnv"
  /** Makes a wrapper run an interactive or stdin shell: what runs is not in the text. */
  | "stdinShell"
  /** Does something no text can judge; the string says what. */
  | { readonly unknown: string }
  /** Runs fixed programs (the argv of each). */
  | { readonly runs: readonly (readonly string[])[] }
  /** Writes the operands (`sed -i`, `perl -i`): the files named later are rewritten. */
  | "writeOperands";

/** One option. */
export interface OptionSpec {
  /** Whether it takes a value: `required` (next word or `=`/attached), `optional` (attached only). */
  readonly value?: "required" | "optional";
  /** What it does; absent means nothing beyond the plain effect. */
  readonly effect?: OptionEffect;
}

/** What the operands (non-option words) of a program do. */
export type OperandEffect =
  /** Every operand is written (rm, touch, tee, shred...). */
  | "write"
  /** The last operand is written unless `-t DIR` named it (cp, mv sources are also removed). */
  | "writeLast"
  /** All operands but the first are written (chmod MODE FILE..., chown OWNER FILE...). */
  | "writeAfterFirst"
  /** The second operand is written (uniq IN OUT). */
  | "writeSecond"
  /** The first operand is written (mknod NAME TYPE). */
  | "writeFirst"
  /** Every operand is read: nothing beyond the plain effect. */
  | "read";

/** A program that runs its operands as another command (env, nice, xargs, sudo...). */
export interface WrapperSpec {
  /** Operands to skip before the command (`timeout DURATION`, `flock FILE`, `chroot DIR`). */
  readonly skip?: number;
  /** What runs when no command is given: nothing more (`env` prints), or a shell (`chroot`). */
  readonly bare?: "plain" | "shell";
  /** The command gets words that only exist at run time (xargs appends its input). */
  readonly appendsInput?: boolean;
  /** The command words are joined and run by `sh -c` (watch). */
  readonly joinsAsScript?: boolean;
  /** `NAME=VALUE` operands before the command are assignments (env). */
  readonly assignments?: boolean;
  /** Writes its skipped operand (flock creates the lock file). */
  readonly writesSkipped?: boolean;
}

/** What one program does beyond its plain use. */
export interface ProgramSpec {
  /** Options by spelling. */
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** What operands do. */
  readonly operands?: OperandEffect;
  /** The program runs its operands as a command. */
  readonly wrapper?: WrapperSpec;
  /** Options end at the first operand (POSIX `getopt`; wrappers). GNU programs permute. */
  readonly optionsFirst?: boolean;
  /** A reader of its own (a family file `engine.ts` dispatches to), for what options cannot say. */
  readonly analyse?:
    | "sed"
    | "awk"
    | "find"
    | "git"
    | "tar"
    | "dd"
    | "make"
    | "split"
    | "interpreter";
  /** Subcommands: the first operand picks one (git, npm). */
  readonly subcommands?: Readonly<Record<string, ProgramSpec>>;
  /** Whether subcommands not listed have only their plain effect (true) or cannot be judged. */
  readonly otherSubcommandsPlain?: boolean;
  /** An effect every use of the program has (a pager that runs commands). */
  readonly always?: OptionEffect;
  /**
   * What the plain use writes: git's own state (`.git/`), or the working tree too
   * (checkout, reset...). Judged as writes like any other.
   */
  readonly writes?: "gitdir" | "worktree";
}

const value = { value: "required" } as const;
const optional = { value: "optional" } as const;
const writes = { value: "required", effect: "write" } as const;
const writesTree = { value: "required", effect: "writeTree" } as const;
const script = { value: "required", effect: "script" } as const;
const program = { value: "required", effect: "program" } as const;
const cwd = { value: "required", effect: "cwd" } as const;
function unknown(what: string): OptionSpec {
  return { effect: { unknown: what } };
}
function unknownValue(what: string): OptionSpec {
  return { value: "required", effect: { unknown: what } };
}

/** A git subcommand that only reads. */
const gitRead: ProgramSpec = {};

/** git's diff-family options (log, show, diff, whatchanged, format-patch...). */
const GIT_DIFF_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  "--output": writes,
  "--ext-diff": unknown("--ext-diff runs the external diff program the configuration names"),
  "--open-files-in-pager": {
    value: "optional",
    effect: { unknown: "--open-files-in-pager runs a pager" },
  },
  "-O": value, // orderfile: read
  "--format": value,
  "--pretty": value,
  "-n": value,
  "--max-count": value,
  "--skip": value,
  "--since": value,
  "--until": value,
  "--author": value,
  "--committer": value,
  "--grep": value,
  "-G": value,
  "-S": value,
  "--date": value,
  "-U": value,
  "-L": value,
  "--relative": optional,
  "--show-signature": { effect: { runs: [["gpg", "--verify"]] } },
};

/** Subcommands that change the repository state under `.git/` only. */
const gitState: ProgramSpec = { writes: "gitdir" };
/** Subcommands that change the working tree too. */
const gitTree: ProgramSpec = { writes: "worktree" };

/** git: subcommands, then per-subcommand options. `analyse: "git"` handles the rest. */
export const GIT: ProgramSpec = {
  analyse: "git",
  options: {
    "-c": { value: "required", effect: "gitConfig" },
    "--config-env": { value: "required", effect: "gitConfigEnv" },
    "-C": unknownValue("git -C DIR uses DIR's repository, whose configuration can name programs"),
    "--git-dir": unknownValue(
      "git --git-dir uses another repository, whose configuration can name programs",
    ),
    "--work-tree": unknownValue("git --work-tree points git at another tree"),
    "--exec-path": {
      value: "optional",
      effect: { unknown: "git --exec-path=DIR runs git's commands from DIR" },
    },
    "--namespace": value,
    "--super-prefix": value,
    "--list-cmds": value,
    "--attr-source": value,
    "--html-path": {},
  },
  subcommands: {
    // Read-only.
    status: gitRead,
    log: { options: GIT_DIFF_OPTIONS },
    show: { options: GIT_DIFF_OPTIONS },
    diff: { options: GIT_DIFF_OPTIONS },
    whatchanged: { options: GIT_DIFF_OPTIONS },
    "diff-tree": { options: GIT_DIFF_OPTIONS },
    "diff-files": { options: GIT_DIFF_OPTIONS },
    "diff-index": { options: GIT_DIFF_OPTIONS },
    "range-diff": { options: GIT_DIFF_OPTIONS },
    "format-patch": {
      options: {
        ...GIT_DIFF_OPTIONS,
        "-o": writesTree,
        "--output-directory": writesTree,
      },
    },
    blame: gitRead,
    annotate: gitRead,
    shortlog: gitRead,
    describe: gitRead,
    "rev-parse": gitRead,
    "rev-list": gitRead,
    "ls-files": gitRead,
    "ls-tree": gitRead,
    "cat-file": gitRead,
    "show-ref": gitRead,
    "for-each-ref": gitRead,
    "merge-base": gitRead,
    "name-rev": gitRead,
    "check-ignore": gitRead,
    "check-attr": gitRead,
    "count-objects": gitRead,
    cherry: gitRead,
    version: gitRead,
    grep: {
      options: {
        "-O": { value: "optional", effect: { unknown: "git grep -O runs a pager" } },
        "--open-files-in-pager": {
          value: "optional",
          effect: { unknown: "git grep --open-files-in-pager runs a pager" },
        },
        "--ext-grep": unknown("git grep --ext-grep runs an external grep"),
        "-e": value,
        "-f": value,
        "-A": value,
        "-B": value,
        "-C": value,
        "-m": value,
        "--max-depth": value,
        "--threads": value,
      },
    },
    // Handled by the analyser: listing forms read, other forms write.
    branch: { analyse: "git" },
    tag: { analyse: "git" },
    stash: { analyse: "git" },
    remote: { analyse: "git" },
    config: { analyse: "git" },
    reflog: { analyse: "git" },
    notes: { analyse: "git" },
    worktree: { analyse: "git" },
    help: {
      options: {
        "-w": unknown("git help --web runs a browser"),
        "--web": unknown("git help --web runs a browser"),
        "-i": unknown("git help --info runs info"),
        "--info": unknown("git help --info runs info"),
      },
    },
    difftool: {
      options: {
        "-x": script,
        "--extcmd": script,
        "-t": unknownValue("git difftool --tool runs a diff tool"),
        "--tool": unknownValue("git difftool --tool runs a diff tool"),
      },
      always: { unknown: "git difftool runs the configured diff tool" },
    },
    mergetool: { always: { unknown: "git mergetool runs the configured merge tool" } },
    // State-changing: `.git/` and, for most, the working tree.
    commit: gitState,
    add: gitState,
    fetch: { ...gitState, options: { "--upload-pack": script } },
    gc: gitState,
    prune: gitState,
    repack: gitState,
    "update-ref": gitState,
    "update-index": gitState,
    "symbolic-ref": gitState,
    "pack-refs": gitState,
    "reset": gitTree,
    checkout: gitTree,
    switch: gitTree,
    restore: gitTree,
    clean: gitTree,
    merge: gitTree,
    pull: { ...gitTree, options: { "--upload-pack": script } },
    rebase: {
      ...gitTree,
      options: {
        "-x": script,
        "--exec": script,
        "-i": unknown("git rebase -i runs an editor"),
        "--interactive": unknown("git rebase -i runs an editor"),
      },
    },
    "cherry-pick": gitTree,
    revert: gitTree,
    am: gitTree,
    apply: gitTree,
    rm: gitTree,
    mv: gitTree,
    init: gitTree,
    clone: {
      analyse: "git",
      options: {
        "-u": script,
        "--upload-pack": script,
        "--template": unknownValue("git clone --template installs hooks"),
        "-c": { value: "required", effect: "gitConfig" },
        "--config": { value: "required", effect: "gitConfig" },
        "-o": value,
        "-b": value,
        "--depth": value,
        "--reference": value,
        "--separate-git-dir": writesTree,
      },
    },
    push: {
      options: {
        "--receive-pack": script,
        "--exec": script,
        "-o": value,
        "--push-option": value,
        "--repo": value,
      },
    },
    "ls-remote": { options: { "--upload-pack": script } },
    archive: {
      options: { "--exec": script, "-o": writes, "--output": writes, "--remote": value },
    },
    bisect: { analyse: "git" },
    submodule: { analyse: "git" },
    "filter-branch": { always: { unknown: "git filter-branch runs the filters it is given" } },
    "send-email": { always: { unknown: "git send-email runs a mailer" } },
    "sparse-checkout": gitTree,
    maintenance: gitState,
  },
  otherSubcommandsPlain: false,
};

/** Config keys whose value is a program git runs (through the shell). */
export const GIT_PROGRAM_KEYS: readonly RegExp[] = [
  /^core\.(pager|fsmonitor|sshcommand|editor|askpass|gitproxy|alternaterefscommand|hookspath)$/,
  /^diff\.external$/,
  /^diff\..+\.(textconv|command)$/,
  /^merge\..+\.driver$/,
  /^filter\..+\.(clean|smudge|process)$/,
  /^alias\..+$/,
  /^pager\..+$/,
  /^sequence\.editor$/,
  /^gpg(\..+)?\.program$/,
  /^credential(\..+)?\.helper$/,
  /^uploadpack\.packobjectshook$/,
  /^remote\..+\.(uploadpack|receivepack|proxy|vcs)$/,
  /^interactive\.difffilter$/,
  /^(web\.browser|browser\..+\.(cmd|path))$/,
  /^man\.(viewer|.+\.(cmd|path))$/,
  /^(difftool|mergetool)\..+\.(cmd|path)$/,
  /^(include|includeif\..+)\.path$/,
  /^core\.(worktree|attributesfile|excludesfile)$/,
  /^ssh\.variant$/,
];

/** Config keys that change only how git reads and prints: safe on the command line. */
export const GIT_SAFE_KEYS: readonly RegExp[] = [
  /^color\./,
  /^core\.(quotepath|abbrev|autocrlf|safecrlf|eol|ignorecase|filemode|precomposeunicode)$/,
  /^diff\.(renames|renamelimit|algorithm|colormoved|colormovedws|context|interhunkcontext|mnemonicprefix|noprefix|relative|statgraphwidth|statnamewidth|submodule|suppressblankempty|wserrorhighlight|indentheuristic|dirstat|ignoresubmodules)$/,
  /^log\.(date|decorate|abbrevcommit|follow|graphcolors|showroot|mailmap|initialdecorationset|excludedecoration)$/,
  /^format\.pretty$/,
  /^pretty\./,
  /^user\.(name|email)$/,
  /^advice\./,
  /^status\.(showuntrackedfiles|short|branch|relativepaths|renames|renamelimit|aheadbehind)$/,
  /^grep\.(linenumber|column|patterntype|extendedregexp|fullname|fallbacktonoindex)$/,
  /^init\.defaultbranch$/,
  /^blame\./,
  /^column\./,
  /^i18n\./,
];

/** Programs run through the shell as a whole line: `sh -c '...'` and friends. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "ash",
  "yash",
  "fish",
  "csh",
  "tcsh",
]);

/** Interpreters and the options that give them code on the command line. */
export const INTERPRETERS: Readonly<
  Record<string, { readonly inline: readonly string[]; readonly inPlace?: readonly string[] }>
> = {
  python: { inline: ["-c"] },
  python3: { inline: ["-c"] },
  python2: { inline: ["-c"] },
  pypy: { inline: ["-c"] },
  pypy3: { inline: ["-c"] },
  node: { inline: ["-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader"] },
  nodejs: { inline: ["-e", "--eval", "-p", "--print", "-r", "--require"] },
  deno: { inline: ["eval"] },
  bun: { inline: ["-e", "--eval", "-p", "--print"] },
  perl: { inline: ["-e", "-E", "-M", "-m"], inPlace: ["-i"] },
  ruby: { inline: ["-e", "-r"], inPlace: ["-i"] },
  php: { inline: ["-r", "-B", "-R", "-E", "-F"] },
  lua: { inline: ["-e", "-l"] },
  tclsh: { inline: [] },
  Rscript: { inline: ["-e"] },
  osascript: { inline: ["-e"] },
  pwsh: { inline: ["-c", "-Command", "-command", "-EncodedCommand", "-e"] },
  jshell: { inline: [] },
  irb: { inline: [] },
};

/** Variables whose value is a program or code that programs run or load. */
export const SHELL_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "IFS",
  "PS4",
  "PS1",
  "PS2",
  "PROMPT_COMMAND",
  "ENV",
  "BASH_ENV",
  "SHELL",
  "SHELLOPTS",
  "BASHOPTS",
  "CDPATH",
  "HOME",
  "XDG_CONFIG_HOME",
  "XDG_CONFIG_DIRS",
  "PAGER",
  "MANPAGER",
  "MANOPT",
  "SYSTEMD_PAGER",
  "EDITOR",
  "VISUAL",
  "BROWSER",
  "LESSOPEN",
  "LESSCLOSE",
  "LESS",
  "LESSKEY",
  "LESSKEYIN",
  "LESSSECURE",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "TMPDIR",
  "MAKEFLAGS",
  "MAKEFILES",
  "MFLAGS",
  "GNUMAKEFLAGS",
  "TAR_OPTIONS",
  "GREP_OPTIONS",
  "RIPGREP_CONFIG_PATH",
  "SUDO_ASKPASS",
  "SSH_ASKPASS",
  "RSYNC_RSH",
  "CARGO_HOME",
  "RUSTC_WRAPPER",
  "RUSTC",
  "RUSTDOCFLAGS",
  "RUSTFLAGS",
  "CC",
  "CXX",
  "LD",
  "NPM_CONFIG_USERCONFIG",
  "HISTFILE",
  "TERMINFO",
  "LOCPATH",
  "GCONV_PATH",
  "HOSTALIASES",
  "RESOLV_HOST_CONF",
  "MALLOC_CHECK_",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "DOTNET_STARTUP_HOOKS",
]);

/** Variable name patterns with the same power (`GIT_CONFIG_*`, `LD_PRELOAD`, `PYTHONSTARTUP`...). */
export const SHELL_VARIABLE_PATTERNS: readonly RegExp[] = [
  /^GIT_/,
  /^LD_/,
  /^DYLD_/,
  /^PYTHON/,
  /^BASH_FUNC_/,
  /^npm_config_/i,
  /^CARGO_/,
  /^DENO_/,
  /^BUN_/,
  /^PIP_/,
  /^RUST/,
  /^SSH_/,
];

/** Builtins whose operands are assignments (`export PATH=...`). */
export const DECLARATION_BUILTINS: ReadonlySet<string> = new Set([
  "export",
  "readonly",
  "local",
  "declare",
  "typeset",
]);

/** Builtins that change the shell itself whatever their operands. */
export const SHELL_CHANGERS: Readonly<Record<string, string>> = {
  alias: "defining an alias",
  unalias: "removing an alias",
  hash: "changing the shell's command table",
  enable: "loading or toggling builtins",
  source: "running a file in the shell",
  ".": "running a file in the shell",
  trap: "setting a trap that runs a command",
  eval: "eval running a computed command",
  shopt: "changing shell options",
  bind: "changing key bindings",
  complete: "defining completions that run commands",
  fc: "re-running history through an editor",
  coproc: "starting a co-process",
};

/** Wrappers: programs whose operands are another command. */
export const WRAPPERS: Readonly<Record<string, ProgramSpec>> = {
  env: {
    optionsFirst: true,
    wrapper: { assignments: true, bare: "plain" },
    options: {
      "-u": value,
      "--unset": value,
      "-C": cwd,
      "--chdir": cwd,
      "-S": script,
      "--split-string": script,
      "-i": {},
      "--ignore-environment": {},
      "-0": {},
      "--null": {},
      "-v": {},
      "--debug": {},
      "--default-signal": optional,
      "--ignore-signal": optional,
      "--block-signal": optional,
      "-P": unknownValue("env -P searches another PATH"),
      "-a": value,
      "--argv0": value,
    },
  },
  nice: { optionsFirst: true, wrapper: {}, options: { "-n": value, "--adjustment": value } },
  nohup: { optionsFirst: true, wrapper: {} },
  setsid: { optionsFirst: true, wrapper: {} },
  time: {
    optionsFirst: true,
    wrapper: {},
    options: { "-o": writes, "--output": writes, "-f": value, "--format": value },
  },
  command: {
    optionsFirst: true,
    wrapper: {},
    options: {
      // `command -v NAME` and `-V` only print where NAME is.
      "-v": unknown("(printing)"),
      "-V": unknown("(printing)"),
    },
  },
  builtin: { optionsFirst: true, wrapper: {} },
  exec: { optionsFirst: true, wrapper: { bare: "plain" }, options: { "-a": value } },
  timeout: {
    optionsFirst: true,
    wrapper: { skip: 1 },
    options: { "-s": value, "--signal": value, "-k": value, "--kill-after": value },
  },
  stdbuf: {
    optionsFirst: true,
    wrapper: {},
    options: {
      "-i": value,
      "-o": value,
      "-e": value,
      "--input": value,
      "--output": value,
      "--error": value,
    },
  },
  ionice: {
    optionsFirst: true,
    wrapper: {},
    options: { "-c": value, "-n": value, "-p": value, "-P": value, "-u": value },
  },
  taskset: {
    optionsFirst: true,
    wrapper: { skip: 1 },
    options: { "-p": unknown("taskset -p changes another process") },
  },
  chrt: {
    optionsFirst: true,
    wrapper: { skip: 1 },
    options: { "-T": value, "-P": value, "-D": value },
  },
  sudo: {
    optionsFirst: true,
    wrapper: { bare: "shell" },
    options: {
      "-u": value,
      "--user": value,
      "-g": value,
      "--group": value,
      "-C": value,
      "-D": cwd,
      "--chdir": cwd,
      "-h": value,
      "--host": value,
      "-p": value,
      "--prompt": value,
      "-r": value,
      "-t": value,
      "-T": value,
      "-U": value,
      "-s": { effect: "stdinShell" },
      "--shell": { effect: "stdinShell" },
      "-i": { effect: "stdinShell" },
      "--login": { effect: "stdinShell" },
      "-e": unknown("sudo -e edits files through an editor"),
      "--edit": unknown("sudo -e edits files through an editor"),
      "-A": unknown("sudo -A runs the askpass program"),
      "--askpass": unknown("sudo -A runs the askpass program"),
    },
  },
  doas: {
    optionsFirst: true,
    wrapper: { bare: "shell" },
    options: { "-u": value, "-C": value, "-s": { effect: "stdinShell" } },
  },
  pkexec: { optionsFirst: true, wrapper: { bare: "shell" }, options: { "--user": value } },
  runuser: {
    optionsFirst: true,
    wrapper: { bare: "shell" },
    options: { "-u": value, "-g": value, "-G": value, "-c": script, "--command": script },
  },
  su: {
    optionsFirst: false,
    wrapper: { bare: "shell" },
    options: {
      "-c": script,
      "--command": script,
      "-s": unknownValue("su -s runs another shell"),
      "--shell": unknownValue("su -s runs another shell"),
      "-g": value,
      "-G": value,
    },
    operands: "read",
  },
  chroot: {
    optionsFirst: true,
    wrapper: { skip: 1, bare: "shell" },
    options: { "--userspec": value, "--groups": value },
  },
  unshare: {
    optionsFirst: true,
    wrapper: { bare: "shell" },
    options: {
      "-S": value,
      "--setuid": value,
      "-G": value,
      "--setgid": value,
      "-R": value,
      "--root": value,
      "-w": cwd,
      "--wd": cwd,
      "--map-user": value,
      "--map-group": value,
      "--map-users": value,
      "--map-groups": value,
      "--propagation": value,
      "--kill-child": optional,
      "-m": optional,
      "--mount": optional,
      "-u": optional,
      "--uts": optional,
      "-i": optional,
      "--ipc": optional,
      "-n": optional,
      "--net": optional,
      "-p": optional,
      "--pid": optional,
      "-U": optional,
      "--user": optional,
      "-C": optional,
      "--cgroup": optional,
      "-T": optional,
      "--time": optional,
    },
  },
  nsenter: {
    optionsFirst: true,
    wrapper: { bare: "shell" },
    options: {
      "-t": value,
      "--target": value,
      "-S": value,
      "--setuid": value,
      "-G": value,
      "--setgid": value,
      "-r": optional,
      "--root": optional,
      "-w": optional,
      "--wd": optional,
      "-m": optional,
      "--mount": optional,
      "-u": optional,
      "--uts": optional,
      "-i": optional,
      "--ipc": optional,
      "-n": optional,
      "--net": optional,
      "-p": optional,
      "--pid": optional,
      "-U": optional,
      "--user": optional,
      "-C": optional,
      "--cgroup": optional,
      "-T": optional,
      "--time": optional,
    },
  },
  flock: {
    optionsFirst: true,
    wrapper: { skip: 1, writesSkipped: true },
    options: {
      "-c": script,
      "--command": script,
      "-w": value,
      "--wait": value,
      "--timeout": value,
      "-E": value,
      "--conflict-exit-code": value,
    },
  },
  watch: {
    optionsFirst: true,
    wrapper: { joinsAsScript: true },
    options: {
      "-n": value,
      "--interval": value,
      "-d": optional,
      "--differences": optional,
      "-q": value,
      "--equexit": value,
    },
  },
  strace: {
    optionsFirst: true,
    wrapper: {},
    options: {
      "-o": writes,
      "--output": writes,
      "-e": value,
      "-p": value,
      "-s": value,
      "-u": value,
      "-a": value,
      "-X": value,
      "-O": value,
      "-S": value,
      "-U": value,
      "-b": value,
      "-P": value,
      "-I": value,
      "-E": unknownValue("strace -E sets variables for the traced program"),
      "--env": unknownValue("strace -E sets variables for the traced program"),
    },
  },
  ltrace: {
    optionsFirst: true,
    wrapper: {},
    options: {
      "-o": writes,
      "--output": writes,
      "-e": value,
      "-p": value,
      "-s": value,
      "-u": value,
      "-a": value,
      "-n": value,
      "-l": value,
      "-F": value,
      "-x": value,
      "-L": {},
    },
  },
  xargs: {
    optionsFirst: true,
    wrapper: { appendsInput: true },
    options: {
      "-a": value,
      "--arg-file": value,
      "-d": value,
      "--delimiter": value,
      "-E": value,
      "-e": optional,
      "--eof": optional,
      "-I": value,
      "-i": optional,
      "--replace": optional,
      "-L": value,
      "-l": optional,
      "--max-lines": optional,
      "-n": value,
      "--max-args": value,
      "-P": value,
      "--max-procs": value,
      "-s": value,
      "--max-chars": value,
      "--process-slot-var": value,
    },
  },
  busybox: { optionsFirst: true, wrapper: {} },
  unbuffer: { optionsFirst: true, wrapper: {} },
  fakeroot: { optionsFirst: true, wrapper: {}, options: { "-i": value, "-s": writes } },
  firejail: { optionsFirst: true, wrapper: {} },
  "dbus-run-session": { optionsFirst: true, wrapper: {} },
  catchsegv: { optionsFirst: true, wrapper: {} },
  "systemd-run": {
    optionsFirst: true,
    wrapper: {},
    options: { "-p": value, "--property": value, "-u": value, "--unit": value },
  },
};

/** Programs with their own options and operands. */
export const PROGRAMS: Readonly<Record<string, ProgramSpec>> = {
  git: GIT,
  find: { analyse: "find" },
  sed: { analyse: "sed" },
  gsed: { analyse: "sed" },
  awk: { analyse: "awk" },
  gawk: { analyse: "awk" },
  mawk: { analyse: "awk" },
  nawk: { analyse: "awk" },
  busyboxawk: { analyse: "awk" },
  tar: { analyse: "tar" },
  gtar: { analyse: "tar" },
  bsdtar: { analyse: "tar" },
  dd: { analyse: "dd" },
  make: { analyse: "make" },
  gmake: { analyse: "make" },
  rg: {
    options: {
      "--pre": program,
      "-z": { effect: { runs: DECOMPRESSORS() } },
      "--search-zip": { effect: { runs: DECOMPRESSORS() } },
      "--hostname-bin": program,
      "-e": value,
      "--regexp": value,
      "-f": value,
      "--file": value,
      "-g": value,
      "--glob": value,
      "--iglob": value,
      "-t": value,
      "--type": value,
      "-T": value,
      "--type-not": value,
      "--type-add": value,
      "-A": value,
      "-B": value,
      "-C": value,
      "-m": value,
      "-M": value,
      "-j": value,
      "-E": value,
      "-r": value,
      "--replace": value,
      "--pre-glob": value,
      "--max-depth": value,
      "-d": value,
      "--ignore-file": value,
      "--path-separator": value,
      "--colors": value,
      "--sort": value,
      "--sortr": value,
      "--engine": value,
    },
  },
  grep: {
    options: {
      "-e": value,
      "--regexp": value,
      "-f": value,
      "--file": value,
      "-A": value,
      "-B": value,
      "-C": value,
      "-m": value,
      "-d": value,
      "-D": value,
      "--include": value,
      "--exclude": value,
      "--exclude-dir": value,
      "--exclude-from": value,
      "--label": value,
      "--color": optional,
      "--colour": optional,
    },
  },
  sort: {
    options: {
      "-o": writes,
      "--output": writes,
      "--compress-program": program,
      "-T": writesTree,
      "--temporary-directory": writesTree,
      "-k": value,
      "--key": value,
      "-t": value,
      "--field-separator": value,
      "-S": value,
      "--buffer-size": value,
      "--parallel": value,
      "--batch-size": value,
      "--files0-from": value,
      "--random-source": value,
      "--sort": value,
    },
  },
  uniq: {
    operands: "writeSecond",
    options: {
      "-f": value,
      "--skip-fields": value,
      "-s": value,
      "--skip-chars": value,
      "-w": value,
      "--check-chars": value,
      "--group": optional,
      "--all-repeated": optional,
    },
  },
  tee: { operands: "write", options: { "--output-error": optional } },
  base64: {
    options: {
      "-o": writes,
      "--output": writes,
      "-w": value,
      "--wrap": value,
      "-b": value,
      "-i": value,
      "--input": value,
    },
  },
  base32: { options: { "-w": value, "--wrap": value } },
  man: {
    options: {
      "-P": script,
      "--pager": script,
      "-H": { value: "optional", effect: { unknown: "man -H runs a browser" } },
      "--html": { value: "optional", effect: { unknown: "man --html runs a browser" } },
      "-C": unknownValue("man -C reads another configuration"),
      "--config-file": unknownValue("man -C reads another configuration"),
      "-p": unknownValue("man -p chooses the preprocessors it runs"),
      "--preprocessor": unknownValue("man -p chooses the preprocessors it runs"),
      "-M": value,
      "--manpath": value,
      "-L": value,
      "-S": value,
      "-s": value,
      "-m": value,
      "-E": value,
      "-R": value,
      "-T": optional,
      "-X": optional,
      "-e": value,
    },
  },
  less: { always: { unknown: "less is a pager that can run commands (! and LESSOPEN)" } },
  more: { always: { unknown: "more is a pager that can run commands (!)" } },
  most: { always: { unknown: "most is a pager that can run commands" } },
  pg: { always: { unknown: "pg is a pager that can run commands" } },
  vi: { always: { unknown: "an editor can run commands and write any file" } },
  vim: { always: { unknown: "an editor can run commands and write any file" } },
  nvim: { always: { unknown: "an editor can run commands and write any file" } },
  emacs: { always: { unknown: "an editor can run commands and write any file" } },
  nano: { always: { unknown: "an editor can write any file" } },
  ed: { always: { unknown: "ed can run commands (!) and write files" } },
  ex: { always: { unknown: "an editor can run commands and write any file" } },
  npm: {
    options: {
      "--script-shell": unknownValue("npm --script-shell runs the scripts with another shell"),
      "--prefix": unknownValue("npm --prefix runs another project's scripts"),
      "-C": unknownValue("npm -C runs another project's scripts"),
      "--userconfig": unknownValue("npm --userconfig reads another configuration"),
      "--globalconfig": unknownValue("npm --globalconfig reads another configuration"),
      "--node-options": unknownValue("npm --node-options changes how node runs"),
      "-w": value,
      "--workspace": value,
    },
    subcommands: {
      test: {},
      t: {},
      tst: {},
      run: {},
      "run-script": {},
      rum: {},
      urn: {},
      start: {},
      stop: {},
      restart: {},
      ci: {},
      install: {},
      i: {},
      ls: {},
      list: {},
      outdated: {},
      audit: {},
      view: {},
      info: {},
      version: {},
      help: {},
      exec: { analyse: "interpreter" },
      x: { analyse: "interpreter" },
      explore: { always: { unknown: "npm explore runs a shell in a package" } },
      init: { always: { unknown: "npm init runs an initializer package" } },
      create: { always: { unknown: "npm init runs an initializer package" } },
      config: { always: { unknown: "npm config can write the npm configuration" } },
      set: { always: { unknown: "npm set writes the npm configuration" } },
      edit: { always: { unknown: "npm edit runs an editor" } },
    },
    otherSubcommandsPlain: false,
  },
  npx: { analyse: "interpreter" },
  pnpx: { analyse: "interpreter" },
  bunx: { analyse: "interpreter" },
  cargo: {
    options: {
      "--config": unknownValue("cargo --config can name programs cargo runs"),
      "-Z": unknownValue("cargo -Z enables unstable behaviour"),
      "--manifest-path": unknownValue("cargo --manifest-path builds another project"),
      "-C": unknownValue("cargo -C builds another project"),
      "-p": value,
      "--package": value,
      "-j": value,
      "--jobs": value,
      "--target": value,
      "--target-dir": writesTree,
      "--features": value,
      "-F": value,
      "--bin": value,
      "--example": value,
      "--test": value,
      "--bench": value,
      "--profile": value,
      "--color": value,
    },
  },
  cp: {
    operands: "writeLast",
    options: {
      "-t": writesTree,
      "--target-directory": writesTree,
      "-S": value,
      "--suffix": value,
      "--backup": optional,
      "--reflink": optional,
      "--preserve": optional,
      "--no-preserve": value,
      "--sparse": value,
    },
  },
  mv: {
    operands: "write",
    options: {
      "-t": writesTree,
      "--target-directory": writesTree,
      "-S": value,
      "--suffix": value,
      "--backup": optional,
    },
  },
  rm: { operands: "write", options: { "--interactive": optional, "--preserve-root": optional } },
  unlink: { operands: "write" },
  ln: {
    operands: "writeLast",
    options: {
      "-t": writesTree,
      "--target-directory": writesTree,
      "-S": value,
      "--suffix": value,
      "--backup": optional,
    },
  },
  link: { operands: "writeLast" },
  touch: {
    operands: "write",
    options: {
      "-r": value,
      "--reference": value,
      "-d": value,
      "--date": value,
      "-t": value,
      "--time": value,
    },
  },
  mkdir: { operands: "write", options: { "-m": value, "--mode": value, "--context": optional } },
  rmdir: { operands: "write" },
  mkfifo: { operands: "write", options: { "-m": value, "--mode": value } },
  mknod: { operands: "writeFirst", options: { "-m": value } },
  truncate: {
    operands: "write",
    options: { "-s": value, "--size": value, "-r": value, "--reference": value, "-o": {} },
  },
  install: {
    operands: "writeLast",
    options: {
      "-t": writesTree,
      "--target-directory": writesTree,
      "-m": value,
      "--mode": value,
      "-o": value,
      "--owner": value,
      "-g": value,
      "--group": value,
      "-S": value,
      "--suffix": value,
      "--backup": optional,
      "--strip-program": program,
      "-s": { effect: { runs: [["strip"]] } },
      "--strip": { effect: { runs: [["strip"]] } },
      "-d": { effect: "writeOperands" },
      "--directory": { effect: "writeOperands" },
    },
  },
  chmod: { operands: "writeAfterFirst", options: { "--reference": value } },
  chown: { operands: "writeAfterFirst", options: { "--reference": value, "--from": value } },
  chgrp: { operands: "writeAfterFirst", options: { "--reference": value } },
  chattr: { operands: "writeAfterFirst" },
  setfacl: {
    operands: "write",
    options: {
      "-m": value,
      "-x": value,
      "-M": value,
      "-X": value,
      "--set": value,
      "--set-file": value,
    },
  },
  shred: {
    operands: "write",
    options: {
      "-n": value,
      "--iterations": value,
      "-s": value,
      "--size": value,
      "--random-source": value,
      "--remove": optional,
    },
  },
  split: {
    analyse: "split",
    options: {
      "--filter": script,
      "-a": value,
      "--suffix-length": value,
      "-b": value,
      "--bytes": value,
      "-C": value,
      "--line-bytes": value,
      "-l": value,
      "--lines": value,
      "-n": value,
      "--number": value,
      "-t": value,
      "--separator": value,
      "--additional-suffix": value,
      "--numeric-suffixes": optional,
      "--hex-suffixes": optional,
    },
  },
  csplit: {
    options: {
      "-f": writes,
      "--prefix": writes,
      "-b": value,
      "--suffix-format": value,
      "-n": value,
      "--digits": value,
    },
    analyse: "split",
  },
  patch: {
    options: {
      "-o": writes,
      "--output": writes,
      "-d": unknownValue("patch -d changes the directory it patches"),
      "--directory": unknownValue("patch -d changes the directory it patches"),
      "-i": value,
      "--input": value,
      "-p": value,
      "--strip": value,
      "-B": value,
      "-r": writes,
      "--reject-file": writes,
      "--dry-run": {},
    },
    always: { unknown: "patch writes the files its input names" },
  },
  rsync: {
    always: { unknown: "rsync writes its destination and can run remote shells" },
  },
  scp: { always: { unknown: "scp writes its destination and runs ssh" } },
  curl: {
    options: {
      "-o": writes,
      "--output": writes,
      "-O": unknown("curl -O writes a file named by the server"),
      "--remote-name": unknown("curl -O writes a file named by the server"),
      "--remote-name-all": unknown("curl -O writes a file named by the server"),
      "-J": unknown("curl -J writes a file named by the server"),
      "-D": writes,
      "--dump-header": writes,
      "-c": writes,
      "--cookie-jar": writes,
      "--trace": writes,
      "--trace-ascii": writes,
      "--libcurl": writes,
      "--stderr": writes,
      "--etag-save": writes,
      "--hsts": writes,
      "--alt-svc": writes,
      "-K": unknownValue("curl -K reads options from a file"),
      "--config": unknownValue("curl -K reads options from a file"),
      "-H": value,
      "--header": value,
      "-d": value,
      "--data": value,
      "--data-binary": value,
      "--data-raw": value,
      "-X": value,
      "--request": value,
      "-u": value,
      "--user": value,
      "-A": value,
      "--user-agent": value,
      "-e": value,
      "--referer": value,
      "-m": value,
      "--max-time": value,
      "-F": value,
      "--form": value,
      "-T": value,
      "--upload-file": value,
      "-w": value,
      "--write-out": value,
      "-x": value,
      "--proxy": value,
      "-b": value,
      "--cookie": value,
      "-r": value,
      "--range": value,
      "--connect-timeout": value,
      "--retry": value,
    },
  },
  wget: {
    always: { unknown: "wget writes what it downloads" },
  },
};

/** The programs `rg -z` runs to decompress. */
function DECOMPRESSORS(): string[][] {
  return [
    ["gzip", "-d", "-c"],
    ["bzip2", "-d", "-c"],
    ["xz", "-d", "-c"],
    ["lz4", "-d", "-c"],
    ["zstd", "-q", "-d", "-c"],
    ["brotli", "-d", "-c"],
    ["uncompress", "-c"],
  ];
}

/** find's primaries that take one argument (so the argument is not read as a primary). */
export const FIND_VALUE_PRIMARIES: ReadonlySet<string> = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-lname",
  "-ilname",
  "-type",
  "-xtype",
  "-newer",
  "-anewer",
  "-cnewer",
  "-perm",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-size",
  "-mtime",
  "-atime",
  "-ctime",
  "-mmin",
  "-amin",
  "-cmin",
  "-used",
  "-maxdepth",
  "-mindepth",
  "-links",
  "-inum",
  "-samefile",
  "-fstype",
  "-context",
  "-printf",
  "-regextype",
  "-files0-from",
]);

/** find's primaries that write their argument (a file name). */
export const FIND_WRITE_PRIMARIES: Readonly<Record<string, number>> = {
  "-fprint": 1,
  "-fprint0": 1,
  "-fls": 1,
  "-fprintf": 2,
};

/** find's primaries that run a command up to `;` or `+`. */
export const FIND_EXEC_PRIMARIES: ReadonlySet<string> = new Set([
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
]);
