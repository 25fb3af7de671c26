/**
 * Which file systems keep a file replaced by rename whole across a power loss without a sync
 * of the new file's data: knowledge, kept as a table. `write` and `edit` replace a file by
 * writing a temporary file beside it and renaming it over the old one (`_atomic.ts`); on
 * most file systems the new data must be synced before the rename, or a crash soon after can
 * leave the name pointing at an empty or partial file. Where the file system orders the new
 * data before the rename itself, that sync (about a millisecond per call on ext4) buys
 * nothing: after a crash the name holds the old contents or the new, as with the sync.
 *
 * Only a replacement is covered: a file created anew is still synced before it is named.
 *
 * @module
 */

/** A file system that orders a replaced file's data before the rename, and what undoes it. */
interface Rule {
  /** The type as `/proc/self/mountinfo` names it. */
  readonly type: string;
  /** Super block options that turn the ordering off. */
  readonly unless: readonly string[];
  /** Where the behaviour is documented. */
  readonly source: string;
}

const RULES: readonly Rule[] = [
  {
    // auto_da_alloc (on by default): a rename over an existing file forces the new file's
    // delayed blocks out at the next journal commit, before the rename commits; data=ordered
    // (the default) and data=journal write data before the metadata that names it.
    type: "ext4",
    unless: ["noauto_da_alloc", "data=writeback"],
    source: "Linux Documentation/admin-guide/ext4.rst, auto_da_alloc",
  },
];

/** The device number `stat` reports for `major:minor` (glibc's `makedev`). */
export function deviceNumber(major: number, minor: number): number {
  return (minor % 0x100) + (major % 0x1000) * 2 ** 8 + Math.floor(minor / 0x100) * 2 ** 20 +
    Math.floor(major / 0x1000) * 2 ** 44;
}

/**
 * The devices (as `Deno.FileInfo.dev`) of the mounts in `mountinfo` (the text of
 * `/proc/self/mountinfo`) whose file system keeps a file replaced by rename whole without a
 * sync. A line that cannot be read counts for nothing.
 */
export function replaceSafeDevices(mountinfo: string): number[] {
  const safe = new Set<number>();
  const unsafe = new Set<number>();
  for (const line of mountinfo.split("\n")) {
    // ID parent major:minor root mount-point options [optional...] - type source super-options
    const [left, right] = line.split(" - ", 2);
    if (left === undefined || right === undefined) continue;
    const device = /^\d+ \d+ (\d+):(\d+) /.exec(left);
    const [type, , options = ""] = right.split(" ");
    if (device === null || type === undefined) continue;
    const dev = deviceNumber(Number(device[1]), Number(device[2]));
    const rule = RULES.find((r) => r.type === type);
    const flags = options.split(",");
    if (rule !== undefined && !rule.unless.some((u) => flags.includes(u))) safe.add(dev);
    else unsafe.add(dev); // one device mounted twice with different types never counts
  }
  return [...safe].filter((dev) => !unsafe.has(dev));
}

/** {@linkcode replaceSafeDevices} of this process's mounts; none when they cannot be read. */
export function replaceSafeDevicesHere(): number[] {
  try {
    return replaceSafeDevices(Deno.readTextFileSync("/proc/self/mountinfo"));
  } catch {
    return []; // not Linux, or no permission: every replacement is synced
  }
}
