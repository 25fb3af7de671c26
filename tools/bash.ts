/**
 * bash: `/bin/sh -c <command>` in the first workspace root, output captured and capped.
 *
 * The shell leads a new session. On timeout, on cancellation and when the shell exits,
 * everything the command started is killed: under bwrap by ending its PID namespace (nothing
 * escapes that); without a sandbox, where a cgroup of its own can be made for the call
 * (tools/_reaper.ts: root, cgroup v2), by `cgroup.kill` on it, which reaches every process
 * the command started, detached or not; elsewhere by killing the shell's process group, its
 * session and every process descended from it that is still found under it (a scan of
 * `/proc`, tens of milliseconds a call). There, a process that leaves the session and whose
 * parent has already exited (`setsid cmd &` once the shell is gone, a double fork) is no
 * longer anyone's descendant and can outlive the call.
 *
 * The session comes from `setsid(1)`, exec'd by the first shell, where it is installed; the
 * runtime's own `detached` is the fallback, since it forks the whole runtime process (page
 * tables included: milliseconds per call in a process of 100 MiB) where a plain spawn does not.
 *
 * @module
 */

import { defineTool, ToolError } from "./define.ts";
import { parseFields, requireNonEmpty } from "./_input.ts";
import { HeadTail } from "./_truncate.ts";
import {
  callCovers,
  feed,
  procsToJoinInside,
  procsToJoinOutside,
  type Sandbox,
  sandboxArgs,
  sandboxCommand,
  spawnSandboxed,
  withNetwork,
} from "./_sandbox.ts";
import { park, takeParked } from "./_bash_park.ts";
import {
  applyChanges,
  ApplyError,
  type ChangeSet,
  collectChanges,
  type PreparedOverlay,
  prepareOverlay,
  removeTree,
  setupProblem,
} from "./_overlay.ts";
import { ENDED } from "./_overlay_root.ts";
import { formatDuration } from "./_duration.ts";
import { SCOPE_ABSTRACT_PERL } from "./_landlock.ts";
import { findReaper, JOIN_SLOT, reap, type Slot, takeSlot } from "./_reaper.ts";
import { DEFAULT_BASH_MAX_OUTPUT_BYTES, DEFAULT_BASH_TIMEOUT_MS } from "./limits.ts";
import type { Tool, ToolContext } from "./types.ts";

/** Input of the bash tool. */
export interface BashInput {
  /** The command line, run by `/bin/sh -c`. */
  readonly command: string;
}

const NAME = "bash";
const SHELL = "/bin/sh";
/** Where `setsid(1)` is looked for: the usual system directories, never the caller's PATH. */
const SETSID_PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
/** How long output is still read after the shell is gone or killed. */
const DRAIN_GRACE_MS = 500;
/** Size of the one buffer output is read into. */
const READ_BUFFER_BYTES = 65_536;
/**
 * What the shell inside the sandbox writes on stderr just before it runs the command, once the
 * set-up is done (every namespace, mount, filter and cgroup in place). stderr is the set-up's
 * own: everything before the shell (perl, setpriv, unshare, bwrap) writes its failures there;
 * the command cannot write to it (the shell has joined it to stdout by then). Its absence
 * after a normal exit means the command never ran: the status is the set-up's, not the
 * command's.
 */
export const STARTED = "rousseau-bash-set-up-done";
/** How much of the set-up's stderr is kept for the report. */
const SETUP_TEXT_BYTES = 8192;

// Go's names for the signals a command is commonly killed by.
const SIGNAL_NAMES: Readonly<Record<string, string>> = {
  SIGHUP: "hangup",
  SIGINT: "interrupt",
  SIGQUIT: "quit",
  SIGILL: "illegal instruction",
  SIGTRAP: "trace/breakpoint trap",
  SIGABRT: "aborted",
  SIGBUS: "bus error",
  SIGFPE: "floating point exception",
  SIGKILL: "killed",
  SIGUSR1: "user defined signal 1",
  SIGSEGV: "segmentation fault",
  SIGUSR2: "user defined signal 2",
  SIGPIPE: "broken pipe",
  SIGALRM: "alarm clock",
  SIGTERM: "terminated",
  SIGSTKFLT: "stack fault",
  SIGXCPU: "CPU time limit exceeded",
  SIGXFSZ: "file size limit exceeded",
  SIGVTALRM: "virtual timer expired",
  SIGPROF: "profiling timer expired",
  SIGIO: "I/O possible",
  SIGPOLL: "I/O possible",
  SIGPWR: "power failure",
  SIGSYS: "bad system call",
};

/** How the shell ended; `signal` is a Deno signal name or Go's `signal <n>` for one without. */
interface ShellStatus {
  readonly code: number;
  readonly signal: string | null;
}

/** Deno rejects a status whose signal it has no name for (the real-time ones). */
function unnamedSignal(error: unknown): ShellStatus {
  const number = /^Invalid signal: (\d+)$/.exec(error instanceof Error ? error.message : "")?.[1];
  if (number === undefined) throw error;
  return { code: 128 + Number(number), signal: `signal ${number}` };
}

// Linux signal numbers, for exit statuses that carry 128 + n.
const SIGNAL_BY_NUMBER: Readonly<Record<number, string>> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
  24: "SIGXCPU",
  25: "SIGXFSZ",
  31: "SIGSYS",
};

/** Creates the bash tool. */
export function createBashTool(): Tool<BashInput> {
  return defineTool({
    name: NAME,
    description: "Run a command with /bin/sh -c (POSIX shell) in the workspace root, stdin " +
      "empty, and return stdout and stderr combined. A non-zero exit is an error that still " +
      `carries the output. Commands time out after ${
        formatDuration(DEFAULT_BASH_TIMEOUT_MS)
      } by default; background processes are killed when the command ends. Output over ` +
      `${DEFAULT_BASH_MAX_OUTPUT_BYTES} bytes keeps its beginning and end.`,
    inputSchema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The shell command line to run." },
      },
      required: ["command"],
    },
    readOnly: false,
    facts: { command: true, summary: ["command"], example: '{"command": "ls"}' },
    parseInput(raw: unknown): BashInput {
      const fields = parseFields(NAME, raw, { command: "string" });
      return { command: requireNonEmpty(NAME, fields, "command") };
    },
    execute: runRetryingSetUp,
  });
}

/**
 * Kills, unsandboxed, the session and process group led by the shell (`$1`) and every
 * process descended from the shell or from one of them. Each pass stops (SIGSTOP) what it
 * finds, so nothing can fork or be orphaned while the tree is collected; passes repeat until
 * one finds nothing new; then everything collected is killed. Run by `/bin/sh` with
 * builtins only: it needs nothing but the run grant the tool worker already has, and no `ps`.
 */
const KILL_SESSION = `
sid=$1
tree=" "
all=
pass=0
while [ $pass -lt 50 ]; do
  new=
  for d in /proc/[0-9]*; do
    pid=\${d#/proc/}
    case "$tree" in *" $pid "*) continue ;; esac
    read -r s < "$d/stat" || continue
    s=\${s##*) }
    set -- $s
    [ "$1" = Z ] && continue
    case "$tree" in *" $2 "*) ;; *) [ "$pid" = "$sid" ] || [ "$3" = "$sid" ] || [ "$4" = "$sid" ] || continue ;; esac
    tree="$tree$pid "
    new="$new $pid"
  done 2>/dev/null
  [ -z "$new" ] && break
  kill -STOP $new 2>/dev/null
  all="$all$new"
  pass=$((pass + 1))
done
kill -9 $all 2>/dev/null
kill -9 -$sid 2>/dev/null
exit 0`;

/**
 * Kills everything the command started. Sandboxed, killing bwrap tears down its PID
 * namespace. Otherwise the session script above runs first, while the shell may still be
 * alive to hold its children; then the group is killed directly where the runtime allows it
 * (in the tool worker, whose run grant is only `/bin/sh`, `Deno.kill` and reading /proc
 * are not allowed: the script did it).
 */
async function killAll(
  child: Deno.ChildProcess,
  sandboxed: boolean,
  slot: Slot | undefined,
  cutShort: boolean,
  program: string,
): Promise<void> {
  if (slot !== undefined) {
    if (cutShort) {
      // The shell first: until it has joined the slot and taken its own session (the first
      // things it does), the reaper's kills cannot find it, so a shell slow to get there could
      // go on to run the command after them. Whatever it started once it had joined is in the
      // slot. Its handle is still ours (not yet waited
      // for), so this pid is the shell's. (Without a slot, the session script finds the shell
      // by its pid.)
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
    return await reap(slot, child.pid);
  }
  if (sandboxed) {
    // Cut short (timeout, cancellation): the whole process group first, not only its leader.
    // A wrapper that had forked but whose child had not yet taken its parent-death signal
    // (`unshare --fork --kill-child`, bwrap's `--die-with-parent`) left that child, and the
    // sandbox it went on to build, running for good when only the leader was killed (seen 16
    // survivors in 40 cancels). Until the command's own session inside bwrap, every process
    // of the set-up is in this group; after it, the death signals hold. The tool worker may
    // not signal a group itself: its shell does. A shell that ended by itself waited for its
    // set-up, so a normal exit needs none of this.
    if (cutShort) {
      const [killer, ...args] = groupKillArgv(program, child.pid);
      await new Deno.Command(killer!, {
        args,
        stdin: "null",
        stdout: "null",
        stderr: "null",
        clearEnv: true,
      }).output().catch(() => {});
    }
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    return;
  }
  await new Deno.Command(SHELL, {
    args: ["-c", KILL_SESSION, SHELL, String(child.pid)],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    clearEnv: true,
  }).output().catch(() => {});
  try {
    Deno.kill(-child.pid, "SIGKILL");
  } catch {
    // the group is gone, or not ours to signal here
  }
}

/**
 * A command that SIGKILLs process group `group`, started through `program`: the one program the
 * tool worker may run (its run grant is that program alone). setpriv(1) and bwrap run the shell
 * that signals (bwrap binding `/` as it is, in no PID namespace of its own); perl signals itself.
 */
function groupKillArgv(program: string, group: number): string[] {
  const script = ["-c", 'kill -9 -"$1" 2>/dev/null; exit 0', SHELL, String(group)];
  if (program.endsWith("/perl")) return [program, "-e", "kill 'KILL', -$ARGV[0]", String(group)];
  if (program.endsWith("/setpriv")) return [program, SHELL, ...script];
  if (program.endsWith("/bwrap")) return [program, "--dev-bind", "/", "/", "--", SHELL, ...script];
  return [SHELL, ...script];
}

function withLine(output: string, line: string): string {
  if (output === "") return line;
  return output.endsWith("\n") ? output + line : `${output}\n${line}`;
}

/** Reads `stream` into `sink` until it ends or `stop` resolves; then releases it. */
async function drain(
  stream: ReadableStream<Uint8Array>,
  sink: HeadTail,
  stop: Promise<void>,
): Promise<void> {
  // One buffer, lent to each read and handed back, so reading allocates nothing however
  // much the command prints.
  const reader = stream.getReader({ mode: "byob" });
  let buffer = new Uint8Array(READ_BUFFER_BYTES);
  // Cancelling ends a pending read. (Racing each read against `stop` instead would keep
  // every chunk read alive, through the race promises `stop` holds, until it resolves.)
  stop.then(() => reader.cancel()).catch(() => {});
  try {
    for (;;) {
      const next = await reader.read(buffer);
      if (next.done) break;
      sink.push(next.value);
      buffer = new Uint8Array(next.value.buffer);
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

let setsidFound: Promise<string | undefined> | undefined;

/** The absolute path of `setsid(1)`, or undefined; looked up once, through the shell. */
function findSetsid(): Promise<string | undefined> {
  setsidFound ??= new Deno.Command(SHELL, {
    args: ["-c", "command -v setsid"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    clearEnv: true,
    env: { PATH: SETSID_PATH },
  }).output().then((out) => {
    const path = new TextDecoder().decode(out.stdout).trim();
    return out.success && path.startsWith("/") ? path : undefined;
  }, () => undefined);
  return setsidFound;
}

/**
 * The argv that runs `command`: `/bin/sh` joins stderr to stdout, so both arrive in write
 * order on one pipe, joins the pids cgroup when there is one (failing the call if it cannot:
 * a limit that silently does not apply is worse than none), then becomes (through `setsid`
 * when given: same pid, a new session) `/bin/sh -c <command>`, whose line numbers are the
 * command's.
 */
function shellArgv(
  command: string,
  setsid: string | undefined,
  sandbox?: Sandbox,
  slot?: Slot,
): string[] {
  const scope = sandbox?.network === true ? sandbox.scopeAbstract : undefined;
  const exec = setsid !== undefined
    ? 'exec "$2" "$0" -c -- "$1"'
    : scope !== undefined
    ? 'exec "$4" -e "$5" "$0" -c -- "$1"'
    : 'exec "$0" -c -- "$1"';
  const procs = slot?.dir ?? procsToJoinInside(sandbox);
  const join = slot !== undefined
    ? JOIN_SLOT
    : procs === undefined
    ? ""
    : '{ echo $$ > "$3"; } 2>/dev/null || { echo "bash: cannot join the process-limit cgroup ' +
      '$3"; exit 125; }; ';
  // stdin is /dev/null: under a seccomp filter it was the pipe that carried the filter.
  // Sandboxed, stderr is the set-up's own channel until the shell has joined the cgroup: the
  // shell says there that the set-up is done, then joins stderr to stdout, so the command never
  // holds that channel (see `STARTED`).
  const redirect = sandbox === undefined
    ? "exec </dev/null 2>&1; " + join
    : `exec </dev/null; ${join}echo ${STARTED} >&2; exec 2>&1; `;
  return [
    SHELL,
    "-c",
    `${redirect}${exec}`,
    SHELL,
    command,
    setsid ?? "",
    procs ?? "",
    ...(scope === undefined ? [] : [scope, SCOPE_ABSTRACT_PERL]),
  ];
}

/** `text` as one single-quoted word of sh. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * The script the shell of bwrap started ahead reads (`sh -s`) once the overlays and covers are
 * in place: into the working directory (only now: bwrap's own `--chdir` would have entered the
 * directory under the overlay), `OLDPWD` put back as the environment had it (`cd` sets it),
 * the set-up's end mark on its own channel (see `STARTED`), then the command's shell, stdin
 * /dev/null and stderr joined to stdout, as `shellArgv`'s does. One line: sh parses a whole
 * line before it runs any of it.
 */
function aheadScript(command: string, cwd: string, oldpwd: string | undefined): string {
  const back = oldpwd === undefined ? "unset OLDPWD" : `OLDPWD=${quoted(oldpwd)}`;
  return `cd -- ${quoted(cwd)} || exit 125; ${back}; echo ${STARTED} >&2; ` +
    `exec </dev/null 2>&1 ${SHELL} -c -- ${quoted(command)}\n`;
}

/** A sandbox set-up that failed before the command ran (see `setupFailure`). */
class SetUpFailure extends ToolError {}

/**
 * Runs the call, and runs it once more if its sandbox set-up failed: the command never ran, so
 * nothing was changed, and a set-up fails for reasons that pass (a mount on the host that went
 * away while bwrap bound the host's tree, a moment short of processes or memory). A second
 * failure is the result.
 */
async function runRetryingSetUp(input: BashInput, context: ToolContext): Promise<string> {
  try {
    return await runCommand(input, context);
  } catch (error) {
    if (!(error instanceof SetUpFailure) || context.signal.aborted) throw error;
    const sandbox = context.sandbox && withoutGone(context.sandbox, error);
    return await runCommand(input, sandbox === undefined ? context : { ...context, sandbox });
  }
}

/**
 * `sandbox` without the hidden path bwrap could not make a mount point for, as `failure`
 * says: its directory is gone from the host (a socket's server removed it after the call's
 * list was made), so there is nothing there to hide. Anything else is kept as it was.
 */
function withoutGone(sandbox: Sandbox, failure: SetUpFailure): Sandbox {
  const gone = /^bwrap: Can't (?:mkdir parents for|create file at) (\/.*?): /m
    .exec(failure.message)?.[1];
  if (gone === undefined) return sandbox;
  return { ...sandbox, hide: sandbox.hide.filter((h) => h.path !== gone) };
}

async function runCommand(input: BashInput, context: ToolContext): Promise<string> {
  const { sandbox, workspace, signal } = context;
  if (sandbox?.overlay === undefined) return await runShell(input, context);
  signal.throwIfAborted();
  let prepared: PreparedOverlay;
  try {
    prepared = prepareOverlay(sandbox.overlay, workspace.roots, {
      ...(sandbox.identity === undefined ? {} : { identity: sandbox.identity }),
      ...(procsToJoinOutside(sandbox) === undefined ? {} : { procs: procsToJoinOutside(sandbox)! }),
    });
  } catch (error) {
    throw new ToolError(
      NAME,
      `${NAME}: the overlay's scratch directory could not be made: ${(error as Error).message}`,
    );
  }
  try {
    return await runShell(input, context, prepared);
  } finally {
    // A set-up that said how the command ended may not have exited yet: until it has, its
    // mount namespace holds the overlay, and what the command wrote keeps its blocks on the
    // state directory's disk (a full disk then refused the call's own audit line). An empty
    // upper layer holds none: its scratch directory goes at once.
    const exit = setupExits.get(prepared);
    if (exit !== undefined && wroteAnything(prepared)) await exit;
    removeTree(prepared.dir);
  }
}

/** The exit of each set-up that said how its command ended before it exited (see `collect`). */
const setupExits = new WeakMap<PreparedOverlay, Promise<unknown>>();

/**
 * The status in the set-up's `ENDED` line (see `_overlay_root.ts`), if that is the last thing
 * it said: nothing can follow it, and a line before it is not the set-up's.
 */
function endedStatus(said: string): ShellStatus | undefined {
  const line = said.trimEnd().split("\n").at(-1) ?? "";
  const digits = line.startsWith(`${ENDED} `) ? line.slice(ENDED.length + 1) : "";
  const code = /^[0-9]{1,3}$/.test(digits) ? Number(digits) : NaN;
  return code <= 255 ? { code, signal: null } : undefined; // NaN: no ENDED line
}

/** True when the command wrote anything to an upper layer. */
function wroteAnything(prepared: PreparedOverlay): boolean {
  return prepared.roots.some((_, i) => {
    try {
      return !Deno.readDirSync(`${prepared.dir}/${i}/u`)[Symbol.iterator]().next().done;
    } catch {
      return false;
    }
  });
}

/** `path (what)` for each entry, as one line's list. */
function listed(entries: readonly { path: string; what: string }[]): string {
  return entries.map((e) => `${e.path} (${e.what})`).join(", ");
}

/**
 * After the command ended normally: reads its change set, has it judged
 * (`context.settleChanges`), applies it, and returns a line for the output when something
 * was left out. Throws the tool's error when the changes cannot or may not be applied.
 */
async function settleOverlay(
  prepared: PreparedOverlay,
  context: ToolContext,
  text: string,
): Promise<string | undefined> {
  const refuse = (why: string, withhold = false) =>
    new ToolError(
      NAME,
      withhold
        ? `${NAME}: ${why}; nothing it changed was applied, and its output is withheld`
        : withLine(text, `${NAME}: the command's changes were not applied: ${why}`),
    );
  const problem = setupProblem(prepared);
  if (problem !== undefined) {
    throw new ToolError(
      NAME,
      withLine(text, `${NAME}: the overlay could not be set up: ${problem}`),
    );
  }
  let set: ChangeSet;
  try {
    set = collectChanges(prepared);
  } catch (error) {
    throw refuse(`they could not be read: ${(error as Error).message}`);
  }
  const note = set.skipped.length === 0
    ? undefined
    : `${NAME}: not applied (only files, directories and symbolic links are): ${
      listed(set.skipped)
    }`;
  const verdict = await (context.settleChanges?.(set, text) ??
    Promise.resolve({ apply: true as const }));
  context.signal.throwIfAborted();
  if (!verdict.apply) throw refuse(verdict.reason, verdict.withhold === true);
  if (set.changes.length === 0) return note;
  try {
    applyChanges(prepared, set, context.workspace);
  } catch (error) {
    if (error instanceof ApplyError) throw refuse(error.message);
    throw error;
  }
  return note;
}

async function runShell(
  { command }: BashInput,
  context: ToolContext,
  prepared?: PreparedOverlay,
): Promise<string> {
  const { workspace, signal, env, sandbox } = context;
  signal.throwIfAborted();
  const cwd = workspace.roots[0]!;
  // Under bwrap, killing bwrap ends its PID namespace: the session only keeps the terminal's
  // signals away, as `detached` does.
  const [setsid, reaper] = sandbox === undefined
    ? await Promise.all([findSetsid(), findReaper()])
    : [undefined, undefined];
  signal.throwIfAborted();
  const slot = reaper === undefined ? undefined : takeSlot(reaper);
  // As root under the overlay with nothing to do between bwrap and the command (no cgroup to
  // join from inside, no Landlock scope, no network set-up around bwrap), bwrap is started
  // with the set-up, ahead of the call when the set-up was parked: the sandbox is made by
  // then, and its shell reads the call (see `aheadScript`).
  const ahead = sandbox !== undefined && prepared?.input !== undefined &&
    procsToJoinInside(sandbox) === undefined &&
    !(sandbox.network && (sandbox.scopeAbstract !== undefined || sandbox.userNet !== undefined));
  const shell = ahead ? [SHELL, "-s"] : shellArgv(command, setsid, sandbox, slot);
  const wrap = (exec: readonly string[]) => withNetwork(sandbox!, exec);
  const bwrapArgs = sandbox === undefined || prepared === undefined
    ? undefined
    : sandboxArgs(sandbox, workspace.roots, ahead ? "/" : cwd, shell, ahead);
  const { program, args } = sandbox === undefined
    ? { program: SHELL, args: shell.slice(1) }
    : prepared !== undefined
    ? {
      program: prepared.program,
      args: prepared.argv(
        sandbox.bwrap,
        bwrapArgs!,
        wrap,
        ahead ? { filter: sandbox.seccomp } : undefined,
      ),
    }
    : sandboxCommand(sandbox, workspace.roots, cwd, shell);
  const options: Omit<Deno.CommandOptions, "stdin"> = {
    args,
    cwd,
    stdout: "piped",
    // Sandboxed, the set-up's own channel (see `STARTED`).
    stderr: sandbox === undefined ? "null" : "piped",
    clearEnv: true,
    // Under the overlay, git's opportunistic index refresh (`git status`) would be a write
    // to judge like any other: ask git not to make it.
    env: prepared ? { ...env, GIT_OPTIONAL_LOCKS: "0" } : { ...env },
    // The root overlay's perl program leads a session itself: `detached` would fork the
    // whole runtime to make one.
    detached: setsid === undefined && prepared?.input === undefined,
  };
  let child: Deno.ChildProcess;
  if (sandbox !== undefined && prepared?.input !== undefined) {
    // As root under the overlay: the set-up does not depend on the call, so it may have been
    // started ahead (`_bash_park.ts`); the call is handed to it on stdin. The next call's is
    // started beside this one: calls that follow each other at once find it ready.
    const input = prepared.input(
      sandbox.bwrap,
      bwrapArgs!,
      wrap,
      sandbox.seccomp,
      ahead
        ? {
          covers: callCovers(sandbox, workspace.roots),
          script: aheadScript(command, cwd, env.OLDPWD),
        }
        : undefined,
    );
    const key = JSON.stringify([program, options.args, options.cwd, options.env]);
    const start = () => new Deno.Command(program, { ...options, stdin: "piped" }).spawn();
    child = takeParked(key) ?? start();
    // Parked only once the call is handed over: starting a process holds this thread for
    // milliseconds, and the call's bytes would wait behind it.
    feed(child, input).then(() => park(key, start));
  } else {
    child = sandbox === undefined
      ? new Deno.Command(program, { ...options, stdin: "null" }).spawn()
      : spawnSandboxed(sandbox, program, options);
  }
  return await collect(child, context, program, slot, prepared);
}

/**
 * The error of a call whose sandbox set-up failed before the command ran (the shell never said
 * `STARTED`): what failed, in the set-up's own words (its stderr, the overlay's error file, what
 * it printed on stdout), and what to do. Never the command's exit status: it did not run.
 */
function setupFailure(
  status: ShellStatus,
  stderr: string,
  stdout: string,
  prepared: PreparedOverlay | undefined,
): SetUpFailure {
  const said = [
    ...stderr.split("\n"),
    ...(prepared === undefined ? [] : [setupProblem(prepared) ?? ""]),
    ...stdout.split("\n"),
  ].map((line) => line.trim()).filter((line, i, all) => line !== "" && all.indexOf(line) === i);
  const how = status.signal !== null
    ? `signal ${SIGNAL_NAMES[status.signal] ?? status.signal}`
    : `exit status ${status.code}`;
  // The set-up's words first, as a command's output comes before its status; the last line
  // says what happened (a preview's withheld note quotes it).
  return new SetUpFailure(
    NAME,
    withLine(
      said.join("\n"),
      `${NAME}: the sandbox could not be set up, so the command did not run (the set-up ended ` +
        `with ${how}${said.length === 0 ? " and said nothing" : ""}); nothing was changed: run ` +
        "`rousseau doctor` to check the sandbox, and if it passes, try the command again (the " +
        "machine may have been short of processes, memory or namespaces)",
    ),
  );
}

/** Reads the started command's output, waits for it, and turns how it ended into the result. */
async function collect(
  child: Deno.ChildProcess,
  context: ToolContext,
  program: string,
  slot: Slot | undefined,
  prepared: PreparedOverlay | undefined,
): Promise<string> {
  const { limits, signal, sandbox } = context;
  const output = new HeadTail(limits.bashMaxOutputBytes);
  type End = "exit" | "timeout" | "cancel";
  let ended = "exit" as End;
  let endStop!: () => void;
  const stopReading = new Promise<void>((resolve) => endStop = resolve);
  let grace: ReturnType<typeof setTimeout> | undefined;
  let killing: Promise<void> = Promise.resolve();
  const finish = (why: "exit" | "timeout" | "cancel") => {
    if (grace !== undefined) return; // the first reason wins
    ended = why;
    killing = killAll(child, sandbox !== undefined, slot, why !== "exit", program);
    grace = setTimeout(endStop, DRAIN_GRACE_MS);
  };
  const timer = setTimeout(() => finish("timeout"), limits.bashTimeoutMs);
  const onAbort = () => finish("cancel");
  signal.addEventListener("abort", onAbort, { once: true });

  // Sandboxed: what the set-up said on stderr, and whether the shell said it was done.
  const setup = sandbox === undefined ? undefined : new HeadTail(SETUP_TEXT_BYTES);
  let status: ShellStatus;
  /** The set-up said how the command ended (`ENDED`) before it had itself exited. */
  let early = false;
  try {
    const reading = Promise.all([
      drain(child.stdout, output, stopReading),
      setup === undefined ? undefined : drain(child.stderr, setup, stopReading),
    ]);
    try {
      const exited = child.status.catch(unnamedSignal).then((s) => ({ s, early: false }));
      // As root under the overlay, the set-up's last words say how the command ended, with
      // nothing of it alive, and its output ends with them: the teardown of its mount
      // namespace, which its exit waits for, is not on the call's time (see runCommand).
      const said = setup === undefined || prepared?.input === undefined
        ? undefined
        : reading.then(() => endedStatus(setup.text()), () => undefined)
          .then((s) => s === undefined ? exited : { s, early: true });
      const first = await (said === undefined ? exited : Promise.race([exited, said]));
      status = first.s;
      early = first.early;
      if (early) setupExits.set(prepared!, child.status.catch(() => {}));
    } finally {
      // The shell is gone: anything it left running dies now, and its output is collected.
      // (Ended early, nothing of the command is alive, and the set-up ends by itself.)
      if (!early) finish("exit");
      await Promise.all([reading, killing]);
    }
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
    signal.removeEventListener("abort", onAbort);
  }

  let text = output.text();
  // A command that did not finish leaves a partial change set: it is discarded, and said so.
  const discarded = prepared !== undefined && ended !== "exit" && wroteAnything(prepared)
    ? `\n${NAME}: what it changed was discarded (nothing of it reached the workspace)`
    : "";
  if (ended === "timeout") {
    throw new ToolError(
      NAME,
      withLine(text, `${NAME}: timed out after ${formatDuration(limits.bashTimeoutMs)}`) +
        discarded,
    );
  }
  if (ended === "cancel") {
    throw new ToolError(NAME, withLine(text, `${NAME}: cancelled`) + discarded);
  }
  if (setup !== undefined) {
    const said = setup.text().split("\n").filter((line) => !line.startsWith(`${ENDED} `));
    if (!said.includes(STARTED)) throw setupFailure(status, said.join("\n"), text, prepared);
  }
  if (prepared !== undefined) {
    const note = await settleOverlay(prepared, context, text);
    if (note !== undefined) text = withLine(text, note);
  }
  // bwrap reports a command killed by a signal as exit status 128 + n.
  if (sandbox !== undefined && status.signal === null && status.code > 128 && status.code < 160) {
    const name = SIGNAL_BY_NUMBER[status.code - 128];
    if (name !== undefined) status = { code: status.code, signal: name };
  }
  if (status.signal !== null) {
    const name = SIGNAL_NAMES[status.signal] ?? status.signal;
    throw new ToolError(NAME, withLine(text, `${NAME}: signal: ${name}`));
  }
  if (status.code !== 0) {
    throw new ToolError(NAME, withLine(text, `${NAME}: exit status ${status.code}`));
  }
  return text;
}
