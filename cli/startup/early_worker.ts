/**
 * Start-up overlap for `rousseau tool NAME`: the entry point starts the tool worker before it
 * loads the argument parser, the config and the rest of the CLI, so the worker loads the
 * tools (a second isolate, with Node's compatibility layer) while this isolate loads its own
 * modules.
 *
 * Nothing here decides anything: the call's `--workspace` and `--add-dir` (cli/startup/tool_args.ts)
 * are read only to guess the grants, as if the config named no workspace roots and no tool
 * modules. `createWorkerHost` takes the worker only when its grants equal, entry by
 * entry, those derived after the real parse and the config; any other worker is stopped. A
 * wrong guess costs time, never a grant. The config is read where it always was (its errors
 * and warnings are unchanged).
 *
 * A tool that runs command lines (bash, by its facts) is left out: its grants depend on the
 * sandbox, which costs a trial run of bwrap.
 *
 * @module
 */

import {
  derivePermissions,
  type StartedWorker,
  startToolWorker,
  type WorkerPermissions,
} from "../../tools/worker_start.ts";
import type { ToolCall } from "./tool_args.ts";
// The facts' data alone (not approver/tool_facts.ts): one module fewer before the entry runs.
import BUILTIN_TOOLS from "../../approver/builtin_tools.json" with { type: "json" };

let early: StartedWorker | undefined;

/**
 * The grants `createWorkerHost` will derive when the config names no workspace roots and no
 * tool modules: read and write on the real paths of `--workspace` (else the start
 * directory) and every `--add-dir`, run on /bin/sh. Undefined when a root does not resolve.
 */
function guessPermissions(flags: ToolCall["flags"]): WorkerPermissions | undefined {
  const init = Deno.env.get("INIT_CWD");
  const base = init !== undefined && init.startsWith("/") ? init : Deno.cwd();
  const roots: string[] = [];
  try {
    const workspace = typeof flags.workspace === "string" ? flags.workspace : base;
    const more = Array.isArray(flags.addDir) ? flags.addDir : [];
    for (const dir of [workspace, ...more]) {
      const real = Deno.realPathSync(dir.startsWith("/") ? dir : `${base}/${dir}`);
      if (!roots.includes(real)) roots.push(real);
    }
  } catch {
    return undefined;
  }
  return derivePermissions({ roots });
}

/**
 * Starts the tool worker for `call` (not one that runs commands), with the grants guessed from its words
 * alone. Never throws: a worker that cannot start here is started again, and its error
 * reported, by `createWorkerHost`.
 */
export function startEarlyWorker(call: ToolCall): void {
  const facts = Object.hasOwn(BUILTIN_TOOLS, call.name)
    ? (BUILTIN_TOOLS as Record<string, { command?: boolean }>)[call.name]
    : undefined;
  if (facts?.command === true) return;
  const permissions = guessPermissions(call.flags);
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
