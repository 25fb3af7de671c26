/**
 * The next bash call's set-up, started ahead (once a call is handed over, beside it, so calls
 * that follow each other at once, and those after the model thought, find it ready): as root under the
 * overlay, the perl program of `_overlay_root.ts` does everything that does not depend on the
 * call (session, namespaces, id mappings, the clones of the trees) and then waits on its stdin;
 * the call hands it the rest, and only bwrap and the shell start on the call's time.
 *
 * Up to two chains are parked, for one set-up (see `DEPTH`): a call takes the oldest only when
 * it was started with exactly the call's program, arguments, working directory and environment
 * (the arguments name the roots by device and inode, their owners, the home directory, the
 * covers, bwrap's own arguments), and only if it is still alive; otherwise they are killed and
 * a fresh one starts. A chain taken is never parked again: its stdin ends with the call it was
 * handed. One more is started once a call is handed over, and once more when a call ends if
 * fewer than two are parked.
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

/**
 * How many chains are kept parked. Two: back to back, a call's own run leaves the chain started
 * beside it too little time to be made (bwrap's set-up included) before the next call comes;
 * the one started a call earlier is ready by then.
 */
const DEPTH = 2;

let parked: Parked[] = [];

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

/** Keeps the chains started for `key` that are alive; every other one is killed. */
function keepOnly(key: string): void {
  const keep = parked.filter((chain) => chain.key === key && !chain.exited);
  for (const chain of parked) if (!keep.includes(chain)) discard(chain);
  parked = keep;
}

/**
 * The oldest parked chain started for `key` that is alive, taken out of the pool; chains
 * started for another key are killed.
 */
export function takeParked(key: string): Deno.ChildProcess | undefined {
  keepOnly(key);
  const chain = parked.shift();
  if (chain === undefined) return undefined;
  chain.child.ref();
  return chain.child;
}

/**
 * Parks one more chain for `key`, started by `spawn`, when parking is on and fewer than
 * `DEPTH` are parked (chains for another key are killed first). A failure to start leaves
 * nothing more parked: a call then starts its own and reports.
 */
export function park(key: string, spawn: () => Deno.ChildProcess): void {
  if (!enabled) return;
  keepOnly(key);
  if (parked.length >= DEPTH) return;
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
  parked.push(chain);
}

/** Kills the parked chains, if any (the next call starts its own). */
export function disposeParked(): void {
  const chains = parked;
  parked = [];
  for (const chain of chains) discard(chain);
}
