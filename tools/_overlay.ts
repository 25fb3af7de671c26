/**
 * bash in an overlay: for the length of one command, each workspace root is mounted as an
 * overlayfs whose lower layer is the real root (bound read-only) and whose upper layer is a
 * fresh directory outside every root, hidden from the sandbox. The command writes only to the
 * upper layer; once it and everything it started are dead, the upper layer is read as one
 * change set, judged by the caller, and applied to the real roots — or discarded.
 *
 * The mounts are made by `/bin/sh` in a user and mount namespace of its own
 * (`setpriv --pdeathsig KILL -- unshare --user --map-root-user --mount`), which then starts bwrap with the usual
 * arguments: the overlay sits on the root's own path, so every bind, mask and hidden path of
 * the sandbox applies to it unchanged. When bwrap returns, its PID namespace is gone (nothing
 * the command started is alive); the same shell then lists, for every directory of the upper
 * layer that also exists below, the names below and the names in the merged view: a name
 * below that the merged view lacks was deleted (a whiteout, or an opaque directory). This
 * needs no extended attributes, and its cost is the size of the directories the command
 * touched, never the tree.
 *
 * Hazards:
 * - overlayfs in a user namespace has no redirect_dir: renaming a directory that exists below
 *   fails with EXDEV, and `mv` copies it instead; the change set then holds the copy and the
 *   deletion, which is what happened.
 * - A file copied up (appended to, chmod'ed) is copied whole into the upper layer first, and
 *   carries the layer's `user.overlay.origin` attribute there: such files are applied by
 *   copying their bytes, never by renaming the upper file (which would leak the attribute).
 * - A change of times alone (`touch` of an existing file) is not a change of content or mode:
 *   it is not applied.
 *
 * @module
 */

import {
  closeSync,
  constants,
  fstatSync,
  lchownSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { isProtected } from "./_paths.ts";
import { osReason } from "./_os_error.ts";
import type { ChangeSet, ObservedChange, SkippedChange, Workspace } from "./data_types.ts";
import { dropArgv, type ShellIdentity } from "./_identity.ts";
import { type Cover, rootOverlayArgs, rootOverlayCall } from "./_overlay_root.ts";

/** What the overlay needs; present on the sandbox when overlays work here. */
export interface OverlaySetup {
  /**
   * Absolute path of `setpriv(1)` (util-linux): it starts unshare with a parent-death signal,
   * so that the shell holding the mounts (and with it bwrap, `--die-with-parent`) dies with
   * rousseau even when rousseau is killed outright.
   */
  readonly setpriv: string;
  /** Absolute path of `unshare(1)` (util-linux). */
  readonly unshare: string;
  /** Absolute path of `mount(8)` (util-linux). */
  readonly mount: string;
  /**
   * The directory that holds one scratch directory per command: outside every root, hidden
   * from the sandbox, on a filesystem whose user extended attributes overlayfs can use.
   */
  readonly base: string;
  /** This process's scratch name prefix (`<pid>.<start time>`): a later start removes the rest. */
  readonly owner: string;
}

export type { ChangeSet, ObservedChange, SkippedChange };

/** One command's scratch directory and the argv that runs it over the overlays. */
export interface PreparedOverlay {
  readonly dir: string;
  /**
   * The program to start: setpriv(1), or perl as root with an unprivileged shell
   * (`_overlay_root.ts`); it also makes a link when one cannot be renamed into place.
   */
  readonly program: string;
  readonly roots: readonly string[];
  /** Whether `program` leads a session of its own; otherwise it must be started in one. */
  readonly ownSession: boolean;
  /**
   * The times of a file made just before the command: a path of the roots with a later
   * mtime (ms) or ctime was changed by someone else meanwhile. Deno reports ctime in whole
   * seconds, so a change of mode alone within the command's first second goes unseen.
   */
  readonly stamp: { readonly mtime: number; readonly ctime: number };
  /**
   * With an unprivileged shell, the owner of each root: what the command creates is stored
   * in the upper layer as the shell's uid, and becomes the root owner's when applied.
   */
  readonly owners?: readonly { readonly uid: number; readonly gid: number }[];
  /**
   * The arguments of `program` that mount the overlays, run bwrap, then list deletions.
   * `wrap` turns the argv that starts bwrap (after the drop to the unprivileged uid, if any)
   * into the one to run (the sandbox's network set-up; see `withNetwork` in `_sandbox.ts`).
   * As root (with `input`), only the set-up that does not depend on the call: the program
   * then waits for `input` on its stdin. With `ahead` (the seccomp filter, or undefined for
   * none), the set-up starts bwrap with these arguments before the call (`sandboxArgs` with
   * `ahead`, whose shell reads the call's script); without it they are not used here.
   */
  argv(
    bwrap: string,
    bwrapArgs: readonly string[],
    wrap?: (exec: readonly string[]) => string[],
    ahead?: { readonly filter: Uint8Array | undefined },
  ): string[];
  /**
   * As root: what `program` must be given on its stdin (which then ends) to run the call —
   * the scratch directory, the covers over the overlays, and either (bwrap started ahead)
   * the script its shell runs, or bwrap's argv (as `argv` takes it) and the seccomp filter
   * bwrap loads. Absent otherwise: stdin carries only the filter (`spawnSandboxed`).
   */
  input?(
    bwrap: string,
    bwrapArgs: readonly string[],
    wrap: ((exec: readonly string[]) => string[]) | undefined,
    filter: Uint8Array | undefined,
    ahead?: { readonly covers: readonly Cover[]; readonly script: string },
  ): Uint8Array;
}

/**
 * Run by `/bin/sh` inside the new namespaces (rousseau not root; as root, `_overlay_root.ts`
 * does the same in one perl process): `$1` mount(8), `$2` the scratch directory, `$3` how many
 * roots, then the roots (each bound read-only as its lower layer), then bwrap's argv. Writes
 * `ready` once every overlay is
 * mounted (its absence with an `error` file means the set-up failed), runs bwrap, then writes
 * each root's `listing`: `X<dir>/<name>\0` for each name below (in the lower layer) of a
 * directory of the upper layer that the merged view no longer has — a deletion. An empty
 * upper layer needs no listing. Only shell built-ins run per directory.
 */
const OUTER = `
m=$1 d=$2 n=$3
shift 3
i=0
for r; do
  [ "$i" -lt "$n" ] || break
  eval "r_$i=\\$r"
  "$m" --bind -o ro -- "$r" "$d/$i/l" 2>>"$d/error" || exit 125
  "$m" -t overlay overlay -o "lowerdir=$d/$i/l,upperdir=$d/$i/u,workdir=$d/$i/w,userxattr" -- "$r" 2>>"$d/error" ||
    exit 125
  i=$((i + 1))
done
shift "$n"
: > "$d/ready"
"$@"
rc=$?
i=0
while [ "$i" -lt "$n" ]; do
  eval "r=\\$r_$i"
  : > "$d/$i/listing"
  for f in "$d/$i/u"/* "$d/$i/u"/.[!.]* "$d/$i/u"/..?*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    ( cd "$d/$i/u" && find . -type d -exec sh -c '
        l=$1 v=$2
        shift 2
        for x; do
          [ -d "$l/$x" ] && [ ! -L "$l/$x" ] || continue
          for f in "$l/$x"/* "$l/$x"/.[!.]* "$l/$x"/..?*; do
            [ -e "$f" ] || [ -L "$f" ] || continue
            y=\${f##*/}
            [ -e "$v/$x/$y" ] || [ -L "$v/$x/$y" ] || printf "X%s/%s\\0" "$x" "$y"
          done
        done' sh "$d/$i/l" "$r" {} + ) > "$d/$i/listing" 2>>"$d/error" || : > "$d/$i/failed"
    break
  done
  i=$((i + 1))
done
exit $rc`;

/** Characters overlayfs's option parser gives a meaning to: a scratch path may hold none. */
const UNSAFE_OPTION_CHARS = /[,:\\\n]/;

/** Why `base` cannot hold upper layers, or undefined. */
export function overlayBaseProblem(base: string): string | undefined {
  return UNSAFE_OPTION_CHARS.test(base)
    ? `the scratch directory ${base} holds a character overlayfs options cannot carry (, : \\)`
    : undefined;
}

let sequence = 0;

/**
 * Makes the scratch directory of one command: per root an upper layer `u` (with the root's
 * mode: the merged root takes it), a work directory `w` and a mount point `l` for the lower
 * layer; the shell adds a link `v` to the root (the merged view, inside the namespace: Deno
 * makes symbolic links only with unscoped permissions). Throws with the
 * reason when the scratch directory cannot be made.
 */
export function prepareOverlay(
  setup: OverlaySetup,
  roots: readonly string[],
  options: { identity?: ShellIdentity; procs?: string } = {},
): PreparedOverlay {
  const { identity, procs } = options;
  const random = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(36);
  const dir = join(setup.base, `${setup.owner}.${++sequence}.${random}`);
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    roots.forEach((root, i) => {
      const at = join(dir, String(i));
      Deno.mkdirSync(at, { mode: 0o700 });
      Deno.mkdirSync(join(at, "u"), { mode: 0o700 });
      Deno.chmodSync(join(at, "u"), (Deno.statSync(root).mode ?? 0o755) & 0o7777);
      // The merged root takes the upper layer's owner: the shell's, as the lower layer shows.
      if (identity !== undefined) Deno.chownSync(join(at, "u"), identity.uid, identity.gid);
      Deno.mkdirSync(join(at, "w"), { mode: 0o700 });
      Deno.mkdirSync(join(at, "l"), { mode: 0o700 });
    });
    Deno.writeFileSync(join(dir, "stamp"), new Uint8Array());
  } catch (error) {
    removeTree(dir);
    throw error;
  }
  const made = Deno.lstatSync(join(dir, "stamp"));
  const stamp = {
    mtime: made.mtime?.getTime() ?? Date.now(),
    ctime: made.ctime?.getTime() ?? Date.now(),
  };
  const owners = identity === undefined ? undefined : roots.map((root) => {
    const info = Deno.statSync(root);
    return { uid: info.uid ?? 0, gid: info.gid ?? 0 };
  });
  const outer = (args: readonly string[], run: readonly string[]) => [
    "/bin/sh",
    "-c",
    OUTER,
    "/bin/sh",
    ...args,
    ...run,
  ];
  return {
    dir,
    program: identity === undefined ? setup.setpriv : identity.perl,
    roots,
    ownSession: identity !== undefined,
    stamp,
    ...(owners === undefined ? {} : { owners }),
    argv: (bwrap, bwrapArgs, wrap = (exec) => [...exec], ahead) =>
      identity !== undefined
        ? rootOverlayArgs(
          identity,
          setup.base,
          roots,
          procs,
          ahead === undefined ? undefined : { argv: [bwrap, ...bwrapArgs], filter: ahead.filter },
        )
        : [
          "--pdeathsig",
          "KILL",
          "--",
          setup.unshare,
          "--user",
          "--map-root-user",
          "--mount",
          // Its own PID namespace, whose init (the shell) unshare kills when it dies: killing
          // unshare ends the shell, bwrap and the command together. bwrap's --die-with-parent
          // alone does not hold once bwrap has changed its credentials.
          "--pid",
          "--fork",
          "--kill-child=SIGKILL",
          "--propagation",
          "private",
          ...outer([setup.mount, dir, String(roots.length), ...roots], wrap([bwrap, ...bwrapArgs])),
        ],
    ...(identity === undefined ? {} : {
      // As real root (idmapping needs it), one perl process (`_overlay_root.ts`): the lower
      // layers are the roots mapped to the shell's uid, read-only; it drops to that uid before
      // bwrap, unless the network set-up `wrap` puts before bwrap drops itself (it runs as
      // root, then drops: `dropArgv` is in what it returns).
      input: (
        bwrap: string,
        bwrapArgs: readonly string[],
        wrap: ((exec: readonly string[]) => string[]) | undefined,
        filter: Uint8Array | undefined,
        ahead?: { readonly covers: readonly Cover[]; readonly script: string },
      ) => {
        if (ahead !== undefined) return rootOverlayCall(dir, ahead.covers, ahead);
        const plain = [bwrap, ...bwrapArgs];
        const dropping = [...dropArgv(identity), ...plain];
        const wrapped = wrap?.(dropping) ?? dropping;
        const same = wrapped.length === dropping.length &&
          wrapped.every((arg, i) => arg === dropping[i]);
        return rootOverlayCall(dir, [], { drop: same, argv: same ? plain : wrapped, filter });
      },
    }),
  };
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Why the overlays could not be set up for this command, or undefined when they were. */
export function setupProblem(prepared: PreparedOverlay): string | undefined {
  if (exists(join(prepared.dir, "ready"))) return undefined;
  let text = "";
  try {
    text = Deno.readTextFileSync(join(prepared.dir, "error")).trim();
  } catch {
    // no error file: the shell did not get that far
  }
  return text === "" ? "the mount namespace could not be made" : text.split("\n").at(-1)!;
}

/** Removes a tree that may hold directories without write or search permission. */
export function removeTree(path: string): void {
  try {
    Deno.removeSync(path, { recursive: true });
    return;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
  }
  const open = (dir: string) => {
    try {
      Deno.chmodSync(dir, 0o700);
    } catch { /* not ours */ }
    let entries: Deno.DirEntry[] = [];
    try {
      entries = [...Deno.readDirSync(dir)];
    } catch { /* unreadable */ }
    for (const entry of entries) if (entry.isDirectory) open(join(dir, entry.name));
  };
  open(path);
  try {
    Deno.removeSync(path, { recursive: true });
  } catch { /* left for the next start's clean-up */ }
}

/** The deleted paths (relative to the root), from a root's listing (see {@linkcode OUTER}). */
function deletions(listing: Uint8Array): string[] {
  const out: string[] = [];
  const decoder = new TextDecoder();
  let start = 0;
  for (let i = 0; i < listing.length; i++) {
    if (listing[i] !== 0) continue;
    const record = decoder.decode(listing.subarray(start, i));
    start = i + 1;
    // `X./dir/name` or `X./name`.
    if (record.startsWith("X./")) out.push(record.slice(3).replace(/^\.\//, ""));
  }
  return out;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
const CHUNK = 1 << 20;

/** True when both regular files hold the same bytes (sizes already equal). */
function sameBytes(a: string, b: string): boolean {
  const fa = openSync(a, READ_FLAGS);
  try {
    const fb = openSync(b, READ_FLAGS);
    try {
      const ba = new Uint8Array(CHUNK);
      const bb = new Uint8Array(CHUNK);
      for (;;) {
        const na = readSync(fa, ba, 0, CHUNK, null);
        let nb = 0;
        while (nb < na) {
          const n = readSync(fb, bb, nb, na - nb, null);
          if (n === 0) return false;
          nb += n;
        }
        if (na === 0) return readSync(fb, bb, 0, 1, null) === 0;
        for (let i = 0; i < na; i++) if (ba[i] !== bb[i]) return false;
      }
    } finally {
      closeSync(fb);
    }
  } finally {
    closeSync(fa);
  }
}

function kindOf(info: Deno.FileInfo): "file" | "dir" | "symlink" | "other" {
  return info.isFile ? "file" : info.isDirectory ? "dir" : info.isSymlink ? "symlink" : "other";
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

function special(info: Deno.FileInfo): string {
  if (info.isFifo) return "a FIFO";
  if (info.isSocket) return "a socket";
  if (info.isBlockDevice) return "a block device";
  if (info.isCharDevice) return "a character device";
  return "not a regular file, directory or symbolic link";
}

/**
 * Reads the change set of a finished command from its upper layers. Throws with the reason
 * when a listing is missing (the set-up or the listing failed): then nothing may be applied.
 */
export function collectChanges(prepared: PreparedOverlay): ChangeSet {
  const changes: ObservedChange[] = [];
  const skipped: SkippedChange[] = [];
  prepared.roots.forEach((root, i) => {
    const at = join(prepared.dir, String(i));
    if (exists(join(at, "failed"))) {
      throw new Error(`the deletions under ${root} could not be listed`);
    }
    const upper = join(at, "u");
    const walk = (rel: string) => {
      for (const entry of Deno.readDirSync(rel === "" ? upper : join(upper, rel))) {
        const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
        const from = join(upper, name);
        const path = join(root, name);
        const info = Deno.lstatSync(from);
        // A whiteout: its deletion is in the listing.
        if (info.isCharDevice && (info.rdev ?? 0) === 0) continue;
        const real = lstatOrNull(path);
        const before = real === null ? undefined : kindOf(real);
        const status = real === null ? "A" : "M";
        const replaces = before !== undefined && before !== kindOf(info) ? before : undefined;
        const mode = (info.mode ?? 0) & 0o7777;
        if (info.isDirectory) {
          if (before !== "dir" || ((real!.mode ?? 0) & 0o7777) !== mode) {
            changes.push({ path, status, kind: "dir", mode, ...(replaces ? { replaces } : {}) });
          }
          walk(name);
        } else if (info.isFile) {
          const same = before === "file" && real!.size === info.size &&
            ((real!.mode ?? 0) & 0o7777) === mode && sameBytes(from, path);
          if (!same) {
            changes.push({
              path,
              status,
              kind: "file",
              mode,
              size: info.size,
              upper: from,
              ...(replaces ? { replaces } : {}),
            });
          }
        } else if (info.isSymlink) {
          const target = Deno.readLinkSync(from);
          if (before !== "symlink" || Deno.readLinkSync(path) !== target) {
            changes.push({
              path,
              status,
              kind: "symlink",
              target,
              upper: from,
              ...(replaces ? { replaces } : {}),
            });
          }
        } else {
          skipped.push({ path, what: special(info) });
        }
      }
    };
    // The root itself: only its mode can change (the upper layer's top took the root's).
    const top = (Deno.lstatSync(upper).mode ?? 0) & 0o7777;
    if (top !== ((Deno.lstatSync(root).mode ?? 0) & 0o7777)) {
      changes.push({ path: root, status: "M", kind: "dir", mode: top });
    }
    walk("");
    for (const name of deletions(Deno.readFileSync(join(at, "listing")))) {
      const path = join(root, name);
      const real = lstatOrNull(path);
      const kind = real === null ? "file" : kindOf(real);
      changes.push({ path, status: "D", kind: kind === "other" ? "file" : kind });
    }
  });
  const order = (a: { path: string }, b: { path: string }) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
  return { changes: changes.sort(order), skipped: skipped.sort(order) };
}

/** Why a change set was not applied; the message names the paths. */
export class ApplyError extends Error {}

function under(path: string, dir: string): boolean {
  return path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/**
 * Paths of `set` that changed in the real workspace after the command started (someone else
 * wrote there meanwhile): applying would overwrite their change.
 */
function conflicts(set: ChangeSet, stamp: PreparedOverlay["stamp"]): string[] {
  const out: string[] = [];
  const created = set.changes.filter((c) => c.status === "A" && c.kind === "dir").map((c) =>
    c.path
  );
  for (const change of set.changes) {
    if (created.some((dir) => under(change.path, dir))) continue;
    const real = lstatOrNull(change.path);
    if (change.status === "A") {
      if (real !== null) out.push(`${change.path} (created meanwhile)`);
    } else if (real === null) out.push(`${change.path} (removed meanwhile)`);
    else if (
      (real.mtime?.getTime() ?? 0) > stamp.mtime || (real.ctime?.getTime() ?? 0) > stamp.ctime
    ) out.push(`${change.path} (changed meanwhile)`);
  }
  return out;
}

function tempBeside(target: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  return join(
    dirname(target),
    `.${basename(target)}.${random[0]!.toString(36)}${random[1]!.toString(36)}.rousseau.tmp`,
  );
}

const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Copies the bytes of `from` into a new file `to`, with `mode`, the times of `from`, synced. */
function copyFile(from: string, to: string, mode: number): void {
  const source = openSync(from, READ_FLAGS);
  try {
    const target = openSync(to, CREATE_NEW, 0o600);
    try {
      const buffer = new Uint8Array(CHUNK);
      for (;;) {
        const n = readSync(source, buffer, 0, CHUNK, null);
        if (n === 0) break;
        let done = 0;
        while (done < n) done += writeSync(target, buffer, done, n - done);
      }
    } finally {
      closeSync(target);
    }
    const info = fstatSync(source);
    Deno.chmodSync(to, mode);
    Deno.utimeSync(to, info.atime, info.mtime);
  } finally {
    closeSync(source);
  }
}

/**
 * Puts the command's symbolic link at `temp`: renamed from the upper layer (a link there is
 * always new: links cannot be changed in place), or, across filesystems, made by `program`,
 * the worker's one program (Deno makes links only with unscoped permissions): perl itself, or
 * `ln -s` run through setpriv(1).
 */
function placeLink(program: string, change: ObservedChange, temp: string): void {
  try {
    Deno.renameSync(change.upper!, temp);
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== "EXDEV") throw error;
  }
  const args = program.endsWith("/perl")
    ? ["-e", 'symlink($ARGV[0], $ARGV[1]) or die "ln: $ARGV[1]: $!\\n"', change.target!, temp]
    : ["--pdeathsig", "KILL", "--", "/bin/ln", "-s", "--", change.target!, temp];
  const out = new Deno.Command(program, {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    clearEnv: true,
  }).outputSync();
  if (!out.success) {
    throw new ApplyError(
      `${change.path}: the link could not be made: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
}

/** The parent must be the directory its spelling names: no link swapped in along the way. */
function checkParent(path: string): void {
  const parent = dirname(path);
  let real: string;
  try {
    real = Deno.realPathSync(parent);
  } catch (error) {
    throw new ApplyError(`${parent}: ${osReason(error)}`);
  }
  if (real !== parent) throw new ApplyError(`${parent} is no longer a directory of the workspace`);
}

/**
 * Gives a new entry the owner of its root, when the shell was unprivileged (the upper layer
 * stored it as the shell's uid); otherwise it keeps the creator's, rousseau's.
 */
function ownNew(prepared: PreparedOverlay, path: string, at: string = path): void {
  if (prepared.owners === undefined) return;
  const i = prepared.roots.findIndex((root) => path === root || under(path, root));
  const owner = prepared.owners[i];
  if (owner !== undefined) lchownSync(at, owner.uid, owner.gid);
}

/** What standing in for one file or link until the commit renames it into place. */
interface Staged {
  readonly change: ObservedChange;
  temp?: string;
}

/**
 * Applies `set` to the real roots. First every new directory is made and every file and link
 * staged beside its target (renamed from the upper layer when it is new and on the same
 * filesystem, else copied): a failure there (a full disk) removes what was staged and made,
 * and nothing is applied. Then, in path order, deletions are done and staged entries renamed
 * into place, each atomically. Files keep their owner where the process may set it; setuid
 * and setgid never reach the workspace. Throws {@linkcode ApplyError} naming what failed.
 */
export function applyChanges(
  prepared: PreparedOverlay,
  set: ChangeSet,
  workspace: Workspace,
): void {
  for (const change of set.changes) {
    if (isProtected(workspace, change.path)) {
      throw new ApplyError(`${change.path} is rousseau's own configuration or state`);
    }
  }
  const clash = conflicts(set, prepared.stamp);
  if (clash.length > 0) {
    throw new ApplyError(`the workspace changed while the command ran: ${clash.join(", ")}`);
  }
  const made: string[] = [];
  const staged: Staged[] = [];
  /** Staged temp of each new upper inode, so new hard links stay links. */
  const byInode = new Map<number, string>();
  const replaced = set.changes.filter((c) => c.replaces !== undefined).map((c) => c.path);
  const stage = (item: Staged) => {
    const { change } = item;
    checkParent(change.path);
    const temp = tempBeside(change.path);
    if (change.kind === "symlink") {
      placeLink(prepared.program, change, temp);
    } else {
      const info = Deno.lstatSync(change.upper!);
      const mode = change.mode! & 0o1777;
      const links = info.nlink ?? 1;
      const linked = links > 1 ? byInode.get(info.ino ?? 0) : undefined;
      if (linked !== undefined) Deno.linkSync(linked, temp);
      else if (change.status === "A" && links === 1) {
        try {
          Deno.renameSync(change.upper!, temp);
          Deno.chmodSync(temp, mode);
        } catch (error) {
          if ((error as { code?: string }).code !== "EXDEV") throw error;
          copyFile(change.upper!, temp, mode);
        }
      } else copyFile(change.upper!, temp, mode);
      if (links > 1 && linked === undefined) byInode.set(info.ino ?? 0, temp);
      if (change.status === "M" && change.replaces === undefined) {
        const old = Deno.lstatSync(change.path);
        try {
          Deno.chownSync(temp, old.uid, old.gid);
          Deno.chmodSync(temp, mode);
        } catch { /* only root gives a file away */ }
      }
    }
    if (change.status === "A" || change.replaces !== undefined) {
      ownNew(prepared, change.path, temp);
      // chown clears setuid/setgid; the mode is set again (they never reach the workspace).
      if (change.kind === "file") Deno.chmodSync(temp, change.mode! & 0o1777);
    }
    item.temp = temp;
  };
  try {
    for (const change of set.changes) {
      if (replaced.some((dir) => under(change.path, dir))) {
        staged.push({ change });
        continue;
      }
      if (change.kind === "dir" && change.status === "A") {
        checkParent(change.path);
        Deno.mkdirSync(change.path, { mode: 0o700 });
        ownNew(prepared, change.path);
        made.push(change.path);
      } else if (change.kind !== "dir" && change.status !== "D") {
        const item: Staged = { change };
        staged.push(item);
        stage(item);
      }
    }
  } catch (error) {
    for (const item of staged) if (item.temp !== undefined) Deno.removeSync(item.temp);
    for (const dir of made.reverse()) {
      try {
        Deno.removeSync(dir);
      } catch { /* not empty: someone else's file */ }
    }
    if (error instanceof ApplyError) throw error;
    throw new ApplyError(`staging failed: ${osReason(error)}`);
  }
  const byPath = new Map(staged.map((item) => [item.change.path, item]));
  let done = 0;
  try {
    for (const change of set.changes) {
      // A root is a real path already (and its parent is outside the worker's grants).
      if (!prepared.roots.includes(change.path)) checkParent(change.path);
      // What stood there goes first when it is deleted, or when a rename cannot replace it
      // (a directory, or anything a directory takes the place of).
      const old = change.status === "D" ? change.kind : change.replaces;
      if (old === "dir" || (old !== undefined && change.kind === "dir")) {
        Deno.removeSync(change.path, { recursive: true });
      } else if (change.status === "D") Deno.removeSync(change.path);
      if (change.kind === "dir" && change.status !== "D") {
        if (!made.includes(change.path)) {
          if (change.replaces !== undefined) {
            Deno.mkdirSync(change.path, { mode: 0o700 });
            ownNew(prepared, change.path);
          }
        }
        Deno.chmodSync(change.path, change.mode!);
      } else if (change.status !== "D") {
        const item = byPath.get(change.path)!;
        if (item.temp === undefined) stage(item);
        Deno.renameSync(item.temp!, change.path);
      }
      done++;
    }
  } catch (error) {
    for (const item of staged) {
      if (item.temp !== undefined) Deno.remove(item.temp).catch(() => {});
    }
    const at = set.changes[done]!.path;
    throw new ApplyError(
      `applying ${at} failed: ${
        error instanceof ApplyError ? error.message : osReason(error)
      } (the ${done} changes before it in path order were applied)`,
    );
  }
}
