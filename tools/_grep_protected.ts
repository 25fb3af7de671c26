/**
 * rousseau's own files for the grep walk (spec tools.md "Protected paths": the config file
 * in use, the config directory and the state directory are never read by any tool; grep
 * skips them silently).
 *
 * The list is the workspace's `protected` field. Every file grep reads still goes through
 * `_workspace.ts`'s confined open, which refuses protected files by path and by identity;
 * this module is the walk's cheap prefilter, so protected directories are never entered and
 * their names never compared per file.
 *
 * @module
 */

import { resolveRealSync } from "./_workspace.ts";
import type { Workspace } from "./types.ts";

/**
 * The protected paths of `workspace`, each as given and as resolved (symlinks followed where
 * they exist and may be looked at), so a walk over real paths meets them either way.
 */
export function protectedPathsOf(workspace: Workspace): readonly string[] {
  const listed = workspace.protected ?? [];
  const out = new Set<string>();
  for (const path of listed) {
    out.add(path);
    try {
      out.add(resolveRealSync(path));
    } catch {
      // Outside what may be looked at (the worker's grants): confinement keeps grep out anyway.
    }
  }
  return [...out];
}

/** True when the real path `path` is one of `protectedPaths` or lies below one. */
export function isProtectedPath(protectedPaths: readonly string[], path: string): boolean {
  return protectedPaths.some((p) => path === p || path.startsWith(p.endsWith("/") ? p : `${p}/`));
}

/**
 * The names in directory `dir` (real, with a trailing slash) that are protected paths
 * themselves. A walk that never enters a protected directory and never starts inside one
 * (the root is checked whole) need only compare each entry with these.
 */
export function protectedNamesIn(
  protectedPaths: readonly string[],
  dir: string,
): ReadonlySet<string> | undefined {
  let names: Set<string> | undefined;
  for (const path of protectedPaths) {
    if (!path.startsWith(dir)) continue;
    const name = path.slice(dir.length).replace(/\/+$/, "");
    if (name !== "" && !name.includes("/")) (names ??= new Set()).add(name);
  }
  return names;
}
