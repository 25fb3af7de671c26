/**
 * The temporary directories of the start-up probes (`rousseau-identity-probe-*`,
 * `rousseau-overlay-probe-*`), named for the process that made them, and the sweep of those a
 * killed process left behind. A probe removes its directory itself; only a SIGKILL (or a
 * crash) between making and removing leaves one.
 *
 * A name carries `<pid namespace>.<pid>.<start time>` of its maker (the namespace's inode from
 * /proc/self/ns/pid, the start time in clock ticks since boot from /proc/<pid>/stat): within
 * one pid namespace, pid and start time name one process and no later one, so a directory
 * of our namespace whose pair names no live process is provably stale. A directory without
 * the three (made by an older version, or where /proc cannot be read), of another namespace
 * (a container sharing the temporary directory sees other pids), or whose maker lives is
 * never touched.
 *
 * @module
 */

import { dirname, join } from "node:path";

/** What a probe directory is for; part of its name. */
export type ProbeKind = "identity" | "overlay";

/** The uid the identity probe hands its directory to (its mapped root's owner). */
const IDENTITY_PROBE_OWNER = 1;

/** `<pid>.<start time>`: names this process's scratch directories, and no later process's. */
export function processTag(pid: number): string | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The fields after the command name, which is in parentheses and may hold anything.
    const start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
    return start === undefined ? undefined : `${pid}.${start}`;
  } catch {
    return undefined;
  }
}

/** `<pid namespace inode>.<pid>.<start time>` of this process, or undefined without /proc. */
function ownTag(): string | undefined {
  const tag = processTag(Deno.pid);
  return tag === undefined ? undefined : namespaceOf(tag);
}

/** `tag` prefixed with this process's pid namespace inode. */
function namespaceOf(tag: string): string | undefined {
  try {
    const ns = /^pid:\[(\d+)\]$/.exec(Deno.readLinkSync("/proc/self/ns/pid"))?.[1];
    return ns === undefined ? undefined : `${ns}.${tag}`;
  } catch {
    return undefined;
  }
}

/**
 * Makes a fresh `rousseau-<kind>-probe-<ns>.<pid>.<start>-*` directory in the temporary
 * directory, then removes the ones of that kind whose maker is gone. Returns its path.
 */
export async function makeProbeDir(kind: ProbeKind): Promise<string> {
  const tag = ownTag();
  // Without /proc the name cannot carry its maker: it is made, and never swept, as before.
  const dir = await Deno.makeTempDir({
    prefix: `rousseau-${kind}-probe-${tag === undefined ? "" : `${tag}-`}`,
  });
  // The new directory's parent is the temporary directory Deno chose (TMPDIR or /tmp).
  if (tag !== undefined) sweepStaleProbeDirs(dirname(dir), kind);
  return dir;
}

/**
 * Removes the `rousseau-<kind>-probe-<ns>.<pid>.<start>-*` directories in `tmp` made in this
 * process's pid namespace whose maker no longer runs. Only real directories (never a symlink) owned by this user, or for the
 * identity probe by the uid it hands its directory to, are removed; failures are ignored (a
 * directory another sweep removed first, one not ours to remove).
 */
export function sweepStaleProbeDirs(tmp: string, kind: ProbeKind): void {
  const ns = ownTag()?.split(".")[0];
  if (ns === undefined) return;
  const pattern = new RegExp(`^rousseau-${kind}-probe-${ns}\\.(\\d+)\\.(\\d+)-`);
  const owners = new Set([Deno.uid(), ...(kind === "identity" ? [IDENTITY_PROBE_OWNER] : [])]);
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(tmp)];
  } catch {
    return;
  }
  for (const entry of entries) {
    const match = pattern.exec(entry.name);
    if (match === null || !entry.isDirectory) continue;
    const [, pid, start] = match;
    if (processTag(Number(pid)) === `${pid}.${start}`) continue;
    const path = join(tmp, entry.name);
    try {
      // Racy: re-read the entry itself, so a name swapped for a symlink meanwhile is left.
      const info = Deno.lstatSync(path);
      if (!info.isDirectory || info.uid === null || !owners.has(info.uid)) continue;
      Deno.removeSync(path, { recursive: true });
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
}
