/**
 * The pids cgroup that bounds how many processes sandboxed bash may have
 * (`tools.bash.max_processes`): one cgroup per rousseau process, `<pids hierarchy>/rousseau/<pid>-<PID namespace>-<random>` (one per isolate),
 * made when the sandbox is resolved and removed when the process exits (and, after a crash, by
 * the next rousseau that finds it empty). Each sandboxed command writes its own pid into the
 * cgroup's member list first — the only file of the cgroup tree writable inside the sandbox — so
 * a fork bomb stops at the limit; killing bwrap at the end of the call tears down its PID
 * namespace, so nothing stays in the cgroup between calls.
 *
 * Works with cgroup v1 (a `pids` hierarchy) and v2 (the `pids` controller enabled down to
 * ours). Needs write access to the hierarchy: root, or a delegated subtree. Where there is none
 * (not root, read-only cgroupfs, v2 without the controller), `resolvePids` says why; `doctor`
 * and the run header repeat it. systemd-run is not used: it is often missing where rousseau runs.
 *
 * @module
 */

import { join } from "node:path";
import type { PidsLimit } from "../../tools/hosting.ts";

/** A usable limit, or why there is none. */
export type PidsResult = { readonly limit: PidsLimit } | { readonly problem: string };

interface Hierarchy {
  readonly mount: string;
  readonly version: 1 | 2;
}

/** The mount point of the pids hierarchy, from /proc/self/mountinfo. */
function findHierarchy(): Hierarchy | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync("/proc/self/mountinfo");
  } catch {
    return undefined;
  }
  let v2: string | undefined;
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (left === undefined || right === undefined) continue;
    const mount = left.split(" ")[4]?.replace(/\\040/g, " ");
    const [type, , options] = right.split(" ");
    if (mount === undefined) continue;
    if (type === "cgroup" && options?.split(",").includes("pids")) return { mount, version: 1 };
    if (type === "cgroup2" && v2 === undefined) {
      try {
        const controllers = Deno.readTextFileSync(join(mount, "cgroup.controllers"));
        if (controllers.split(/\s+/).includes("pids")) v2 = mount;
      } catch {
        // not readable: not usable
      }
    }
  }
  return v2 === undefined ? undefined : { mount: v2, version: 2 };
}

function enablePids(dir: string): void {
  const control = join(dir, "cgroup.subtree_control");
  if (Deno.readTextFileSync(control).split(/\s+/).includes("pids")) return;
  Deno.writeTextFileSync(control, "+pids");
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * This process's PID namespace, as the inode of its nsfs file: a pid names a process only
 * within one namespace. Undefined where /proc cannot tell (then nothing is swept).
 */
function pidNamespace(): number | undefined {
  try {
    return Deno.statSync(`/proc/${Deno.pid}/ns/pid`).ino ?? undefined;
  } catch {
    return undefined;
  }
}

/** `<pid>-<PID namespace>`: the name of a rousseau process's cgroup under `rousseau/`. */
/** `<pid>-<PID namespace>-<random>`: the random part per isolate (see `create`). */
const NAME = /^(\d+)-(\d+)(?:-[0-9a-f]+)?$/;

/**
 * Removes the cgroups of rousseau processes that are gone (a crash skips the exit hook).
 *
 * Hazard: only cgroups of this PID namespace are judged. A rousseau in another one (a
 * container sharing the host's cgroup tree, `unshare --pid`) has pids this process cannot see:
 * judged from here it would look dead, and its cgroup, empty between two bash calls, would be
 * removed under it (its next call then failed with "cannot join the process-limit cgroup").
 */
function sweep(parent: string, namespace: number): void {
  try {
    for (const entry of Deno.readDirSync(parent)) {
      const name = NAME.exec(entry.name);
      if (!entry.isDirectory || name === null || Number(name[2]) !== namespace) continue;
      if (alive(Number(name[1]))) continue;
      try {
        Deno.removeSync(join(parent, entry.name));
      } catch {
        // still populated, or not ours to remove
      }
    }
  } catch {
    // nothing to sweep
  }
}

let made: PidsResult | undefined;

/**
 * The pids cgroup of this process, limited to `max` (made once; later calls return the same,
 * with the limit rewritten).
 */
export function resolvePids(max: number): PidsResult {
  if (made !== undefined && "limit" in made && made.limit.max !== max) {
    try {
      Deno.writeTextFileSync(join(made.limit.dir, "pids.max"), String(max));
      made = { limit: { dir: made.limit.dir, max } };
    } catch (error) {
      return { problem: `${made.limit.dir}/pids.max: ${(error as Error).message}` };
    }
  }
  if (made !== undefined) return made;
  made = create(max);
  return made;
}

function create(max: number): PidsResult {
  const hierarchy = findHierarchy();
  if (hierarchy === undefined) {
    return { problem: "no cgroup hierarchy with the pids controller is mounted" };
  }
  const parent = join(hierarchy.mount, "rousseau");
  const namespace = pidNamespace();
  // Isolates of one process (test files run side by side) each make and remove their own: a
  // name shared by pid alone was removed at one's exit under the others' running calls.
  const random = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(16);
  const dir = join(parent, `${Deno.pid}-${namespace ?? "unknown"}-${random}`);
  try {
    if (hierarchy.version === 2) enablePids(hierarchy.mount);
    Deno.mkdirSync(parent, { recursive: true });
    if (hierarchy.version === 2) enablePids(parent);
    if (namespace !== undefined) sweep(parent, namespace);
    Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(join(dir, "pids.max"), String(max));
  } catch (error) {
    try {
      Deno.removeSync(dir);
    } catch {
      // never made
    }
    const why = error instanceof Deno.errors.PermissionDenied
      ? "permission denied (needs root or a delegated cgroup)"
      : (error as Error).message;
    return { problem: `cannot make a pids cgroup under ${hierarchy.mount}: ${why}` };
  }
  globalThis.addEventListener("unload", () => {
    try {
      Deno.removeSync(dir);
    } catch {
      // a command still dying in it: the next rousseau sweeps it
    }
  });
  return { limit: { dir, max } };
}
