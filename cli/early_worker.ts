/**
 * Start-up overlap for `rousseau tool NAME`: the entry point starts the tool worker before it
 * loads the argument parser, the config and the rest of the CLI, so the worker loads the
 * tools (a second isolate, with Node's compatibility layer) while this isolate loads its own
 * modules.
 *
 * Nothing here decides anything: the words are read only to guess `--workspace` and
 * `--add-dir`, and the grants are guessed as if the config named no workspace roots and no
 * tool modules. `createWorkerHost` takes the worker only when its grants equal, entry by
 * entry, those derived after the real parse and the config; any other worker is stopped. A
 * wrong guess costs time, never a grant. The config is read where it always was (its errors
 * and warnings are unchanged).
 *
 * bash is left out: its grants depend on the sandbox, which costs a trial run of bwrap.
 *
 * @module
 */

import { type StartedWorker, startToolWorker } from "../tools/worker_start.ts";

/** Global options that take a value (cli/mod.ts), besides the three read here. */
const VALUE_FLAGS = new Set([
  "--approver",
  "--allow",
  "--deny",
  "--provider",
  "--model",
  "--base-url",
  "--max-tokens",
  "--log-level",
  "--log-format",
]);
/** Options whose value changes the grants or the config; the guess gives up if seen again. */
const SHAPING = ["--config", "--workspace", "--add-dir"];

let early: StartedWorker | undefined;

/**
 * The `--config`, `--workspace` and `--add-dir` values of `[global options] tool NAME ...`
 * for a NAME other than bash, or undefined for any other shape of words.
 */
export function guessToolFlags(
  args: readonly string[],
): { config?: string; workspace?: string; addDir?: string[] } | undefined {
  const flags: { config?: string; workspace?: string; addDir?: string[] } = {};
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    const value = args[i + 1];
    if (arg === "tool") break;
    if (value === undefined || value.startsWith("-")) return undefined;
    if (arg === "--config" && flags.config === undefined) flags.config = value;
    else if (arg === "--workspace" && flags.workspace === undefined) flags.workspace = value;
    else if (arg === "--add-dir") flags.addDir = [...flags.addDir ?? [], value];
    else if (!VALUE_FLAGS.has(arg)) return undefined;
    i++;
  }
  const name = args[i + 1];
  if (i >= args.length || name === undefined || name.startsWith("-") || name === "bash") {
    return undefined;
  }
  for (const arg of args.slice(i + 2)) {
    if (arg === "--") break;
    if (SHAPING.some((flag) => arg === flag || arg.startsWith(`${flag}=`))) return undefined;
    if (arg === "-h" || arg === "--help") return undefined;
  }
  return flags;
}

/**
 * The grants `createWorkerHost` will derive when the config names no workspace roots and no
 * tool modules: read and write on the real paths of `--workspace` (else the start
 * directory) and every `--add-dir`, run on /bin/sh. Undefined when a root does not resolve.
 */
function guessPermissions(flags: { workspace?: string; addDir?: string[] }) {
  const init = Deno.env.get("INIT_CWD");
  const base = init !== undefined && init.startsWith("/") ? init : Deno.cwd();
  const roots: string[] = [];
  try {
    for (const dir of [flags.workspace ?? base, ...flags.addDir ?? []]) {
      const real = Deno.realPathSync(dir.startsWith("/") ? dir : `${base}/${dir}`);
      if (!roots.includes(real)) roots.push(real);
    }
  } catch {
    return undefined;
  }
  return {
    read: [...roots, "/proc/self/fd"],
    write: roots,
    run: ["/bin/sh"],
    net: false,
    env: false,
    ffi: false,
    sys: false,
    import: false,
  } as const;
}

/**
 * Starts the tool worker for `args` when they are a `tool` call, with the grants guessed
 * from the words alone; else does nothing. Never throws: a worker that cannot start here
 * is started again, and its error reported, by `createWorkerHost`.
 */
export function startEarlyWorker(args: readonly string[]): void {
  const flags = guessToolFlags(args);
  const permissions = flags === undefined ? undefined : guessPermissions(flags);
  if (permissions === undefined) return;
  try {
    early = startToolWorker(permissions);
  } catch {
    early = undefined;
  }
}

/** The worker started early, taken once (the taker hands it on or terminates it). */
export function takeEarlyWorker(): StartedWorker | undefined {
  const taken = early;
  early = undefined;
  return taken;
}
