/**
 * Where `undo` may write, checked against the disk just before each write. A turn's record
 * names real paths below its workspace's real roots, as they were when the turn ran; by the
 * time of `undo`, often run as root, a directory on the way may have been swapped for a
 * symbolic link (by a later command, another process, a person), the workspace may have been
 * moved, or the protected paths may have come to lie inside it. A write by path name follows
 * the links of every directory above the last component, so each write is preceded by the
 * check that the directories above the path are still themselves: the nearest existing one
 * is a directory whose real path is its own path. The last component itself is never
 * followed: files are put back by renaming a new file over it, links are made anew, entries
 * in the way are unlinked, and modes are set through a descriptor opened with `O_NOFOLLOW`.
 *
 * Hazard: the check and the write are two calls (Deno has no `openat`/`renameat`), so a
 * process racing `undo` in the workspace between them is not excluded; rousseau's own calls
 * are (they hold the workspace's lock, as `undo` does). Reports of the same class: the
 * checkpoint restore of nesquena/hermes-webui#4405 and the rewind of Gitlawb/zero#112
 * followed links planted in the workspace.
 *
 * @module
 */

import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { captureEntry, type Entry } from "./_entry.ts";
import { isCleanPath, isUnder } from "./_check.ts";

/** Set-user-ID and set-group-ID: `undo` never makes a file with either. */
export const SET_ID_BITS = 0o6000;

/** Checks of the paths of one undo. */
export interface RestoreGuard {
  /**
   * Why `path` is never written, from its text alone: not a clean absolute path, outside
   * `roots`, or rousseau's own configuration or state; undefined when it may be.
   */
  refusal(path: string, roots: readonly string[]): string | undefined;
  /**
   * Why the directories above `path` cannot be written through now (a link on the way, a
   * file where a directory was, the workspace gone); undefined when they can. Checked just
   * before each write.
   */
  blocked(path: string, roots: readonly string[]): string | undefined;
  /**
   * What is at `path` now as far as `undo` is concerned: `null` when nothing is, and also
   * when the way to it leads elsewhere (what a link points at is not the turn's path).
   */
  current(path: string, roots: readonly string[], maxFileBytes: number): Entry | null;
}

/** The form paths are compared in against the protected ones (as `tools/_paths.ts` does). */
function fold(path: string): string {
  return path.normalize("NFC").toLowerCase();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The guard of one undo; `protectedPaths` are rousseau's own (the config, the config and
 * state directories, the undo store), absolute, as configured and as they resolve now.
 */
export function createRestoreGuard(protectedPaths: readonly string[]): RestoreGuard {
  const bases = new Set<string>();
  for (const path of protectedPaths) {
    bases.add(fold(resolve(path)));
    try {
      bases.add(fold(Deno.realPathSync(path)));
    } catch { /* not there now: the path as configured still counts */ }
  }
  const isProtected = (path: string) => {
    const folded = fold(path);
    return [...bases].some((base) => isUnder(folded, [base]));
  };

  const blocked = (path: string, roots: readonly string[]): string | undefined => {
    if (roots.includes(path)) return rootGone(path); // a root's own mode: the root must be itself
    let at = dirname(path);
    for (;;) {
      let info: Deno.FileInfo;
      try {
        info = Deno.lstatSync(at);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound && dirname(at) !== at) {
          at = dirname(at); // created again below the nearest directory that is there
          continue;
        }
        if (error instanceof Deno.errors.NotADirectory) {
          return `a file now stands where a directory above ${path} was`;
        }
        return `${at} cannot be looked at: ${messageOf(error)}`;
      }
      if (info.isSymlink) {
        return `${at} is now a symbolic link; undo writes nothing through one`;
      }
      if (!info.isDirectory) return `${at} is no longer a directory`;
      break;
    }
    if (!isUnder(at, roots)) {
      const root = roots.find((r) => isUnder(path, [r])) ?? path;
      return rootGone(root) ?? `the workspace ${root} is not there any more`;
    }
    let real: string;
    try {
      real = Deno.realPathSync(at);
    } catch (error) {
      return `${at} cannot be resolved: ${messageOf(error)}`;
    }
    if (real !== at) {
      return `${at} now leads to ${real} through a symbolic link; undo writes nothing through one`;
    }
    if (isProtected(real) || isProtected(path)) {
      return "it is rousseau's own configuration or state";
    }
    return undefined;
  };

  return {
    refusal(path, roots) {
      if (!isCleanPath(path)) return "not a clean absolute path";
      if (!isUnder(path, roots)) {
        return `it lies outside the turn's workspace (${roots.join(", ")})`;
      }
      if (isProtected(path)) return "it is rousseau's own configuration or state";
      return undefined;
    },
    blocked,
    current(path, roots, maxFileBytes) {
      if (blocked(path, roots) !== undefined) return null;
      return captureEntry(path, { maxFileBytes });
    },
  };
}

/**
 * Why `root`, a workspace root as a turn recorded it (a real path), cannot be written below
 * now: gone, no longer a directory, or reached through a link (moved, and linked back).
 */
export function rootGone(root: string): string | undefined {
  let real: string;
  try {
    real = Deno.realPathSync(root);
  } catch {
    return `the workspace ${root} is not there any more (moved or renamed?)`;
  }
  if (real !== root) {
    return `the workspace ${root} now leads to ${real} through a symbolic link (moved?)`;
  }
  if (!Deno.statSync(real).isDirectory) return `the workspace ${root} is no longer a directory`;
  return undefined;
}

/**
 * Sets the mode of the directory `path` without following a link at its last component; the
 * directory must still be one (a swap since the check is refused).
 */
export function chmodDirectory(path: string, mode: number): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    if (!fstatSync(fd).isDirectory()) throw new Error(`${path} is no longer a directory`);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}
