/**
 * The next bash call's set-up, started ahead (once a call is handed over, beside it, so calls
 * that follow each other at once, and those after the model thought, find it ready): as root under the
 * overlay, the perl program of `_overlay_root.ts` does everything that does not depend on the
 * call (session, namespaces, id mappings, the clones of the trees, bwrap and its sandbox, when
 * nothing has to run between bwrap and the command) and then waits on its stdin; the call
 * hands it the rest, and only the overlay, the covers over it and the command's shell start on
 * the call's time.
 *
 * One chain at most is parked, for one set-up: a call takes it only when it was started with
 * exactly the call's program, arguments, working directory and environment (the arguments
 * name the roots by device and inode, their owners, the home directory, the covers), and only
 * if it is still alive; otherwise it is killed and a fresh one starts. A chain taken is
 * never parked again: its stdin ends with the call it was handed.
 *
 * A parked chain holds no temporary file (the call's scratch directory is made at the call)
 * and no overlay (mounted only when the call is handed over, so a change to the workspace
 * meanwhile is seen like any other). It dies with its parent: the perl program takes the
 * parent-death signal, bound to the thread that started it, the tool worker's (it ends when the
 * worker is terminated or the process exits); its PID namespace's init takes it from the perl
 * program. Parking is on only where it was turned on (the tool worker, `worker.ts`): a library
 * caller running bash in its own thread gets no process left behind between calls.
 *
 * @module
 */

let enabled = false;

/** Turns parking on for this thread (the tool worker). */
export function enableParking(): void {
  enabled = true;
}

interface Parked {
  readonly key: string;
  readonly child: Deno.ChildProcess;
  exited: boolean;
}

let parked: Parked | undefined;

/** Kills a parked chain and releases its pipes. */
function discard(chain: Parked): void {
  try {
    chain.child.kill("SIGKILL");
  } catch {
    // already gone
  }
  chain.child.stdin.close().catch(() => {});
  chain.child.stdout.cancel().catch(() => {});
  chain.child.stderr.cancel().catch(() => {});
}

/**
 * The parked chain when it was started for `key` and is alive; any other parked chain is
 * killed. Either way nothing stays parked.
 */
export function takeParked(key: string): Deno.ChildProcess | undefined {
  const chain = parked;
  parked = undefined;
  if (chain === undefined) return undefined;
  if (chain.key === key && !chain.exited) {
    chain.child.ref();
    return chain.child;
  }
  discard(chain);
  return undefined;
}

/**
 * Parks a chain for `key`, started by `spawn`, in place of any parked one (when parking is
 * on). A failure to start leaves nothing parked: the call then starts its own and reports.
 */
export function park(key: string, spawn: () => Deno.ChildProcess): void {
  if (!enabled) return;
  if (parked !== undefined) discard(parked);
  parked = undefined;
  let child: Deno.ChildProcess;
  try {
    child = spawn();
  } catch {
    return;
  }
  const chain: Parked = { key, child, exited: false };
  // A parked chain keeps nothing alive: the worker may end while one waits.
  child.unref();
  child.status.then(() => chain.exited = true, () => chain.exited = true);
  parked = chain;
}

/** Kills the parked chain, if any (the next call starts its own). */
export function disposeParked(): void {
  const chain = parked;
  parked = undefined;
  if (chain !== undefined) discard(chain);
}
