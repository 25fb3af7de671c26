/**
 * Workspace paths: resolving a path the way the kernel will (symlinks and `..` included),
 * confinement to the roots by real path, and rousseau's protected paths. Nothing here opens a
 * file or loads Node's fs layer, so the CLI's isolate can use it without that cost; opening
 * a file confined, and proving what was opened, is `_workspace.ts` (the tool worker's side).
 *
 * Deno's `--allow-read=<dir>` compares path strings and does not see where a symlink points,
 * so this layer has to hold on its own.
 *
 * @module
 */

import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { ToolError } from "./tool_error.ts";
import { isNotFound, pathError } from "./_os_error.ts";
import type { Workspace } from "./data_types.ts";
import { replaceSafeDevicesHere } from "./_replace_durability.ts";

const MAX_LINKS = 40;

/**
 * Resolves `roots` to real directories; throws an `Error` naming a root that is not one.
 * `protectedPaths` are rousseau's own files and directories (the config in use, the config
 * directory, the state directory): absolute, existing or not; no tool touches them.
 */
export async function createWorkspace(
  roots: readonly string[],
  protectedPaths: readonly string[] = [],
): Promise<Workspace> {
  if (roots.length === 0) throw new Error("workspace: at least one root is required");
  const real: string[] = [];
  for (const root of roots) {
    let path: string;
    try {
      path = await Deno.realPath(resolve(root));
    } catch (error) {
      throw new Error(
        `workspace: root ${JSON.stringify(root)} cannot be used: ${
          isNotFound(error) ? "no such directory" : String(error)
        }`,
        { cause: error },
      );
    }
    const info = await Deno.stat(path);
    if (!info.isDirectory) {
      throw new Error(`workspace: root ${JSON.stringify(root)} is not a directory`);
    }
    if (!real.includes(path)) real.push(path);
  }
  const spelled = new Set<string>();
  for (const path of protectedPaths) {
    const absolute = resolve(path);
    spelled.add(stripSlashes(absolute));
    try {
      spelled.add(resolveRealSync(absolute));
    } catch {
      // Unresolvable now (a loop, no permission): the path as configured still counts.
    }
  }
  const list = [...spelled];
  return Object.freeze({
    roots: Object.freeze(real),
    protected: Object.freeze(list),
    protectedIds: Object.freeze([...identities(list)]),
    replaceSafeDevices: Object.freeze(replaceSafeDevicesHere()),
  });
}

// ---- Protected paths -------------------------------------------------------------------------

/** Most entries looked at below one protected directory when collecting file identities. */
const MAX_PROTECTED_ENTRIES = 4096;
/** Deepest level looked at below one protected directory. */
const MAX_PROTECTED_DEPTH = 4;

function stripSlashes(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, "") || "/" : path;
}

/**
 * The form paths are compared in: NFC and lower case. A case-insensitive file system (macOS,
 * ext4 casefold) opens `CONFIG.YAML` for `config.yaml`; refusing a differently cased name on a
 * case-sensitive one costs nothing.
 */
function fold(path: string): string {
  return path.normalize("NFC").toLowerCase();
}

/** True when `path` is `base` or below it; both folded. */
function under(path: string, base: string): boolean {
  return path === base || path.startsWith(base.endsWith("/") ? base : base + "/");
}

/** `dev:ino` of every protected file reachable now, bounded; what cannot be looked at is skipped. */
function identities(paths: readonly string[]): Set<string> {
  const ids = new Set<string>();
  let budget = MAX_PROTECTED_ENTRIES * Math.max(1, paths.length);
  const visit = (path: string, depth: number) => {
    if (budget-- <= 0) return;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      return;
    }
    if (info.isFile) ids.add(`${info.dev}:${info.ino}`);
    if (!info.isDirectory || depth >= MAX_PROTECTED_DEPTH) return;
    try {
      for (const entry of Deno.readDirSync(path)) {
        if (entry.isFile || entry.isDirectory) visit(join(path, entry.name), depth + 1);
      }
    } catch {
      // Unreadable here (the worker's grants): the identities recorded at start stand.
    }
  };
  for (const path of paths) visit(path, 0);
  return ids;
}

/** Identities of the protected files, as last collected; see `isProtectedInode`. */
const ids = new WeakMap<Workspace, Set<string>>();
/** Workspaces whose collected identities are from an earlier call. */
const staleIds = new WeakSet<Workspace>();

/**
 * Protected paths this isolate may not look at: outside the worker's grants as written. The
 * runtime checks a path as written, before any lookup, and grants only ever narrow, so such
 * a refusal stands for the isolate's life and the lookup is not tried again on every call
 * (the refusal, an error built with its stack, cost ~30 µs a path per call).
 */
const refusedHere = new Set<string>();

/** Protected prefixes, folded, as last resolved; see `protectedPrefixes`. */
const prefixes = new WeakMap<Workspace, readonly string[]>();

/**
 * The protected paths of `workspace`, folded: as configured, as resolved at start, and as
 * resolved now (a directory created, or replaced by a symlink, after start). `refresh`
 * resolves again; otherwise the last resolution is reused (the grep walk asks per file).
 */
function protectedPrefixes(workspace: Workspace, refresh: boolean): readonly string[] {
  const list = workspace.protected ?? [];
  if (list.length === 0) return list;
  let known = prefixes.get(workspace);
  if (refresh) staleIds.add(workspace);
  if (known === undefined || refresh) {
    const all = new Set(list.map(fold));
    for (const path of list) {
      if (refusedHere.has(path)) continue;
      try {
        all.add(fold(resolveRealSync(path)));
      } catch (error) {
        // Not resolvable from here (outside the worker's grants): the start-time form stands.
        // Remembered only when the path as written is outside them, not a step beyond it (a
        // link followed out), which a change on disk could make resolvable later.
        if (
          error instanceof Deno.errors.NotCapable &&
          Deno.permissions.querySync({ name: "read", path }).state !== "granted"
        ) refusedHere.add(path);
      }
    }
    known = [...all];
    prefixes.set(workspace, known);
  }
  return known;
}

/**
 * True when the absolute path `path` is one of rousseau's own files or directories or lies
 * below one (tools.md, "Protected paths"). For the grep walk, which skips them silently:
 * pass the resolved path of a directory before descending into it.
 */
export function isProtected(workspace: Workspace, path: string, refresh = false): boolean {
  const known = protectedPrefixes(workspace, refresh);
  if (known.length === 0) return false;
  const folded = fold(stripSlashes(path));
  return known.some((base) => under(folded, base));
}

/** The spec's refusal text for rousseau's own files. */
export function protectedError(tool: string, path: string): ToolError {
  return new ToolError(tool, `${tool}: ${path} is rousseau's own configuration or state`);
}

/**
 * True when the open file described by `info` is a hard link to one of rousseau's own files.
 * A file with a single link is only reachable by its one path, which the path checks see;
 * only a file with more links is compared by identity (rare, so the walk is affordable).
 */
export function isProtectedInode(
  workspace: Workspace,
  info: { dev: number; ino: number; nlink: number },
) {
  if (info.nlink <= 1 || (workspace.protected ?? []).length === 0) return false;
  const id = `${info.dev}:${info.ino}`;
  if ((workspace.protectedIds ?? []).includes(id)) return true;
  // Collected again at most once per call (a grep over hard-linked files asks per file).
  let known = ids.get(workspace);
  if (known === undefined || staleIds.has(workspace)) {
    known = identities(workspace.protected);
    ids.set(workspace, known);
    staleIds.delete(workspace);
  }
  return known.has(id);
}

/** True when the real path `real` is one of the roots or below one. */
export function isInside(workspace: Workspace, real: string): boolean {
  return workspace.roots.some((root) =>
    real === root || real.startsWith(root.endsWith("/") ? root : root + "/")
  );
}

/**
 * The real path `path` names, or would name once created: existing parts go through
 * `Deno.realPathSync`, dangling symlinks are followed by hand, and a missing tail is joined
 * onto the nearest existing ancestor.
 */
export function resolveRealSync(path: string, depth = 0): string {
  try {
    return Deno.realPathSync(path);
  } catch (error) {
    if (!isNotFound(error) && !(error instanceof Deno.errors.NotADirectory)) throw error;
  }
  if (depth > MAX_LINKS) {
    throw new Deno.errors.FilesystemLoop(`too many levels of symbolic links: ${path}`);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  let link: string | undefined;
  try {
    if (Deno.lstatSync(path).isSymlink) link = Deno.readLinkSync(path);
  } catch (error) {
    if (!isNotFound(error) && !(error instanceof Deno.errors.NotADirectory)) throw error;
  }
  const realParent = resolveRealSync(parent, depth);
  if (link === undefined) return join(realParent, basename(path));
  return resolveRealSync(isAbsolute(link) ? link : join(realParent, link), depth + 1);
}

/**
 * `resolveRealSync` as a promise, for the approver's `resolvePath`. The lookups are
 * synchronous: on a local disk each costs a few microseconds, far less than the promise
 * machinery of their asynchronous twins.
 */
export function resolveReal(path: string): Promise<string> {
  try {
    return Promise.resolve(resolveRealSync(path));
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Resolves `path` and returns its real path, or throws `<tool>: <path> is outside the
 * workspace`. A resolution failure reads `<tool>: <op> <path>: <reason>`.
 */
export function confineSync(
  tool: string,
  path: string,
  workspace: Workspace,
  op = "open",
): string {
  let real: string;
  try {
    real = resolveRealSync(path);
  } catch (error) {
    // Under narrowed runtime permissions, resolving a path outside the roots is refused
    // before anything is looked at; that is this layer's refusal too.
    if (error instanceof Deno.errors.NotCapable && !isInside(workspace, resolve(path))) {
      throw outside(tool, path);
    }
    throw new ToolError(tool, `${tool}: ${pathError(op, path, error)}`, { cause: error });
  }
  if (!isInside(workspace, real)) throw outside(tool, path);
  if (isProtected(workspace, resolve(path), true) || isProtected(workspace, real)) {
    throw protectedError(tool, path);
  }
  // A trailing slash asks for a directory: `a.txt/` fails as the OS says, never reads a.txt.
  if (path.length > 1 && path.endsWith("/")) {
    let info: Deno.FileInfo | undefined;
    try {
      info = Deno.statSync(real);
    } catch {
      info = undefined;
    }
    if (info !== undefined && !info.isDirectory) {
      throw new ToolError(tool, `${tool}: ${op} ${path}: not a directory`);
    }
  }
  return real;
}

/** `confineSync` as a promise. */
export function confine(
  tool: string,
  path: string,
  workspace: Workspace,
  op = "open",
): Promise<string> {
  try {
    return Promise.resolve(confineSync(tool, path, workspace, op));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The spec's refusal text. */
export function outside(tool: string, path: string): ToolError {
  return new ToolError(tool, `${tool}: ${path} is outside the workspace`);
}
