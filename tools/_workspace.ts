/**
 * Workspace confinement: every path is resolved (symlinks and `..` included) before it is
 * used, and every opened file is checked again through the kernel's own record of what was
 * opened, which closes the race between the check and the open.
 *
 * Deno's `--allow-read=<dir>` compares path strings and does not see where a symlink points,
 * so this layer has to hold on its own.
 *
 * @module
 */

import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { ToolError } from "./define.ts";
import { isNotFound, pathError } from "./_os_error.ts";
import type { Workspace } from "./types.ts";

const MAX_LINKS = 40;

/**
 * Flags for opening a file to read. `O_NONBLOCK` keeps a FIFO planted in the workspace from
 * blocking the open forever; it changes nothing for regular files.
 */
export const READ_FLAGS: number = constants.O_RDONLY | constants.O_NONBLOCK;

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
      try {
        all.add(fold(resolveRealSync(path)));
      } catch {
        // Not resolvable from here (outside the worker's grants): the start-time form stands.
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
function isProtectedInode(workspace: Workspace, info: { dev: number; ino: number; nlink: number }) {
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

/**
 * False once `/proc/self/fd` turned out to be unreadable here (not Linux, or a Deno worker,
 * whose runtime refuses `/proc/self` paths to anything short of `--allow-all`): each later
 * proof goes straight to `askHost` or the fallback instead of paying for a refused lookup.
 */
let procReadable = true;
/** Where the tool worker asks its host isolate instead (see `_fd_channel.ts`). */
let askHost: ((fd: number) => string | undefined) | undefined;

/**
 * Installs how this isolate learns where an open file descriptor leads when it cannot read
 * `/proc/self/fd` itself: the tool worker asks its host. The function returns undefined when
 * the answer is unknown and throws when no answer can be had (the proof then fails closed).
 */
export function setOpenedPathLookup(lookup: (fd: number) => string | undefined): void {
  askHost = lookup;
}

/** What the kernel says `fd` refers to, or undefined where nobody can tell. */
function openedPath(fd: number): string | undefined {
  let link: string | undefined;
  if (procReadable) {
    try {
      link = Deno.readLinkSync(`/proc/self/fd/${fd}`);
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable || isNotFound(error)) procReadable = false;
    }
  }
  if (link === undefined && !procReadable && askHost !== undefined) link = askHost(fd);
  if (link === undefined) return undefined;
  return link.endsWith(" (deleted)") ? link.slice(0, -" (deleted)".length) : link;
}

/**
 * Proves that the open file `fd`, opened by the real path `real` (found by `confineSync`), is
 * inside the workspace: a symlink swapped in between the check and the open is caught here.
 * Throws `<tool>: <path> is outside the workspace` otherwise; `path` is the caller's
 * spelling, for messages. The caller still owns `fd`.
 */
export function proveOpenedSync(
  tool: string,
  path: string,
  fd: number,
  real: string,
  workspace: Workspace,
): void {
  let kernel: string | undefined;
  try {
    kernel = openedPath(fd);
  } catch (error) {
    throw new ToolError(
      tool,
      `${tool}: ${path}: cannot prove the opened file is inside the workspace: ${
        (error as Error).message
      }`,
      { cause: error },
    );
  }
  if (kernel !== undefined) {
    if (!isInside(workspace, kernel)) throw outside(tool, path);
    refuseProtectedFd(tool, path, fd, kernel, workspace);
    return;
  }
  // No kernel record (no /proc: not Linux): compare the descriptor with a fresh resolution
  // of the same path, which a directory swapped at the right moments can fool.
  let again: string;
  try {
    again = Deno.realPathSync(real);
  } catch {
    throw outside(tool, path);
  }
  if (!isInside(workspace, again)) throw outside(tool, path);
  const a = fstatSync(fd);
  const b = Deno.statSync(again);
  if (a.dev !== b.dev || a.ino !== b.ino) {
    throw new ToolError(tool, `${tool}: ${path} changed while it was being opened; try again`);
  }
  refuseProtectedFd(tool, path, fd, again, workspace);
}

/**
 * Throws the protected-path refusal when the open file `fd`, found at `opened`, is one of
 * rousseau's own files: by where the kernel says it is, and by identity (a hard link).
 */
function refuseProtectedFd(
  tool: string,
  path: string,
  fd: number,
  opened: string,
  workspace: Workspace,
): void {
  if ((workspace.protected ?? []).length === 0) return;
  if (isProtected(workspace, opened)) throw protectedError(tool, path);
  if (isProtectedInode(workspace, fstatSync(fd))) throw protectedError(tool, path);
}

/**
 * Opens the real path `real` (found by `confine`) and proves the opened file is the one that
 * was checked (see `proveOpenedSync`). `path` is the caller's spelling, for messages. The
 * caller owns the returned handle.
 */
export async function openConfined(
  tool: string,
  path: string,
  real: string,
  workspace: Workspace,
  flags: string | number,
  mode?: number,
): Promise<FileHandle> {
  const handle = await openFile(real, flags, mode);
  try {
    proveOpenedSync(tool, path, handle.fd, real, workspace);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * `openConfined` with a file descriptor, for reads that fit one synchronous pass. A refusal
 * throws a `ToolError`; an open that fails throws the runtime's error, for `pathError`.
 */
export function openConfinedFdSync(
  tool: string,
  path: string,
  real: string,
  workspace: Workspace,
  flags: number,
): number {
  const fd = openSync(real, flags);
  try {
    proveOpenedSync(tool, path, fd, real, workspace);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * `openConfinedFdSync` for the grep walk, which skips what it cannot use: undefined (nothing
 * left open) when the file cannot be opened or is outside. Synchronous calls cost a tenth
 * of the asynchronous ones per small file; the caller must yield to the event loop between
 * batches.
 */
export function openConfinedSync(
  real: string,
  workspace: Workspace,
  flags: number,
): number | undefined {
  try {
    return openConfinedFdSync("grep", real, real, workspace, flags);
  } catch {
    return undefined;
  }
}
