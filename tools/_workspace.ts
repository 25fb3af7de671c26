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

/** Resolves `roots` to real directories; throws an `Error` naming a root that is not one. */
export async function createWorkspace(roots: readonly string[]): Promise<Workspace> {
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
  return Object.freeze({ roots: Object.freeze(real) });
}

/** True when the real path `real` is one of the roots or below one. */
export function isInside(workspace: Workspace, real: string): boolean {
  return workspace.roots.some((root) =>
    real === root || real.startsWith(root.endsWith("/") ? root : root + "/")
  );
}

/**
 * The real path `path` names, or would name once created: existing parts go through
 * `Deno.realPath`, dangling symlinks are followed by hand, and a missing tail is joined
 * onto the nearest existing ancestor.
 */
export async function resolveReal(path: string, depth = 0): Promise<string> {
  try {
    return await Deno.realPath(path);
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
    const info = await Deno.lstat(path);
    if (info.isSymlink) link = await Deno.readLink(path);
  } catch (error) {
    if (!isNotFound(error) && !(error instanceof Deno.errors.NotADirectory)) throw error;
  }
  const realParent = await resolveReal(parent, depth);
  if (link === undefined) return join(realParent, basename(path));
  return resolveReal(isAbsolute(link) ? link : join(realParent, link), depth + 1);
}

/**
 * Resolves `path` and returns its real path, or throws `<tool>: <path> is outside the
 * workspace`. A resolution failure reads `<tool>: <op> <path>: <reason>`.
 */
export async function confine(
  tool: string,
  path: string,
  workspace: Workspace,
  op = "open",
): Promise<string> {
  let real: string;
  try {
    real = await resolveReal(path);
  } catch (error) {
    // Under narrowed runtime permissions, resolving a path outside the roots is refused
    // before anything is looked at; that is this layer's refusal too.
    if (error instanceof Deno.errors.NotCapable && !isInside(workspace, resolve(path))) {
      throw outside(tool, path);
    }
    throw new ToolError(tool, `${tool}: ${pathError(op, path, error)}`, { cause: error });
  }
  if (!isInside(workspace, real)) throw outside(tool, path);
  return real;
}

/** The spec's refusal text. */
export function outside(tool: string, path: string): ToolError {
  return new ToolError(tool, `${tool}: ${path} is outside the workspace`);
}

/**
 * What the kernel says `handle` refers to, or `undefined` where `/proc/self/fd` is not
 * available (not Linux, or not readable under the runtime permissions).
 */
async function openedPath(handle: FileHandle): Promise<string | undefined> {
  try {
    const link = await Deno.readLink(`/proc/self/fd/${handle.fd}`);
    return link.endsWith(" (deleted)") ? link.slice(0, -" (deleted)".length) : link;
  } catch {
    return undefined;
  }
}

/**
 * Opens the real path `real` (found by `confine`) and proves the opened file is the one that
 * was checked: a symlink swapped in between the check and the open is caught here.
 * `path` is the caller's spelling, for messages. The caller owns the returned handle.
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
    const kernel = await openedPath(handle);
    if (kernel !== undefined) {
      if (!isInside(workspace, kernel)) throw outside(tool, path);
      return handle;
    }
    // No /proc: compare the handle with a fresh resolution of the same path.
    const again = await Deno.realPath(real).catch(() => undefined);
    if (again === undefined || !isInside(workspace, again)) throw outside(tool, path);
    const [a, b] = await Promise.all([handle.stat(), Deno.stat(again)]);
    if (a.dev !== b.dev || a.ino !== b.ino) {
      throw new ToolError(tool, `${tool}: ${path} changed while it was being opened; try again`);
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Synchronous `openConfined` for the grep walk: a returned file descriptor is proved to be
 * inside the workspace the same way. Synchronous calls cost a tenth of the asynchronous
 * ones per small file; the caller must yield to the event loop between batches.
 * Returns undefined (nothing opened) when the file cannot be opened or is outside.
 */
export function openConfinedSync(
  real: string,
  workspace: Workspace,
  flags: number,
): number | undefined {
  let fd: number;
  try {
    fd = openSync(real, flags);
  } catch {
    return undefined;
  }
  try {
    let kernel: string | undefined;
    try {
      kernel = Deno.readLinkSync(`/proc/self/fd/${fd}`);
    } catch {
      kernel = undefined;
    }
    if (kernel !== undefined) {
      if (kernel.endsWith(" (deleted)")) kernel = kernel.slice(0, -" (deleted)".length);
      if (isInside(workspace, kernel)) return fd;
    } else {
      const again = Deno.realPathSync(real);
      const a = fstatSync(fd);
      const b = Deno.statSync(again);
      if (isInside(workspace, again) && a.dev === b.dev && a.ino === b.ino) return fd;
    }
  } catch {
    // fall through: refused
  }
  closeSync(fd);
  return undefined;
}
