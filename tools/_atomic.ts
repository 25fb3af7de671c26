/**
 * Atomic replacement of a file's contents: write a temporary file beside the target, flush it,
 * then rename it over the target. A crash or a full disk leaves the old file or the new one,
 * never half of either.
 *
 * Hazards handled here: a target that is not a regular file (a FIFO blocks an open for
 * writing until a reader comes, forever), a file swapped in between the check and the open
 * (every open is non-blocking and proved afterwards), privileges carried over to new content
 * (setuid/setgid are cleared), and temporary files a killed process left behind.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fdatasync,
  fstatSync,
  openSync,
  writeSync,
} from "node:fs";
import { ToolError } from "./define.ts";
import { isNotFound, pathError } from "./_os_error.ts";
import { openConfinedFdSync, proveOpenedSync } from "./_workspace.ts";
import type { Workspace } from "./types.ts";

const NEW_FILE_MODE = 0o644;
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
/**
 * Opens an existing target to prove it may be written, without writing or blocking: a FIFO
 * with no reader fails with ENXIO instead of waiting, and no terminal becomes ours.
 */
const PROBE_FLAGS = constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
/** Permission bits kept from a replaced file: setuid and setgid never survive new content. */
const KEPT_MODE_BITS = 0o1777;
/** Our temporary files: `.<name>.<random>.rousseau.tmp`. */
const TEMP = /^\..+\.[0-9a-z]+\.rousseau\.tmp$/;
/** Age after which a temporary file of ours is left over from a killed process. */
const STALE_MS = 60_000;

function tempName(target: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  return join(
    dirname(target),
    `.${basename(target)}.${random[0]!.toString(36)}${random[1]!.toString(36)}.rousseau.tmp`,
  );
}

/** What a replaced file passes on to its new contents. */
interface Kept {
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  /** The device it is on. */
  readonly dev: number;
}

function notRegular(tool: string, path: string): ToolError {
  return new ToolError(tool, `${tool}: ${path} is not a regular file`);
}

/**
 * Checks the existing target `real` without blocking: undefined when there is none; else its
 * mode and owner. Refuses a directory, anything but a regular file, a file the caller may not
 * write, and (through the open proof) a file outside the workspace or protected.
 */
function inspectTarget(
  tool: string,
  path: string,
  real: string,
  workspace: Workspace,
): Kept | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(real);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw new ToolError(tool, `${tool}: ${pathError("open", path, error)}`, { cause: error });
  }
  if (info.isDirectory) throw new ToolError(tool, `${tool}: open ${path}: is a directory`);
  if (!info.isFile) throw notRegular(tool, path);
  let fd: number;
  try {
    fd = openSync(real, PROBE_FLAGS);
  } catch (error) {
    const code = (error as { code?: string }).code;
    // ENXIO: a FIFO without a reader was swapped in after the stat.
    if (code === "ENXIO") throw notRegular(tool, path);
    if (isNotFound(error)) return undefined;
    throw new ToolError(tool, `${tool}: ${pathError("open", path, error)}`, { cause: error });
  }
  try {
    proveOpenedSync(tool, path, fd, real, workspace);
    const opened = fstatSync(fd);
    if (opened.isDirectory()) throw new ToolError(tool, `${tool}: open ${path}: is a directory`);
    if (!opened.isFile()) throw notRegular(tool, path);
    return { mode: opened.mode & 0o7777, uid: opened.uid, gid: opened.gid, dev: opened.dev };
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes temporary files of ours older than a minute from `dir`: what a process killed
 * mid-write left behind. Best effort; a name that changes meanwhile is left alone.
 */
function removeStale(dir: string): void {
  const now = Date.now();
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile || !TEMP.test(entry.name)) continue;
      const path = join(dir, entry.name);
      try {
        const info = Deno.lstatSync(path);
        if (info.isFile && info.mtime !== null && now - info.mtime.getTime() > STALE_MS) {
          Deno.removeSync(path);
        }
      } catch {
        // Gone already, or not ours to remove.
      }
    }
  } catch {
    // An unreadable directory keeps its leftovers; the write itself succeeded.
  }
}

/**
 * Replaces the contents of the real path `real` with `bytes`. An existing file keeps its
 * permission bits (setuid and setgid cleared) and, where the process may set them, its owner
 * and group; a new one gets 0644 less the umask. `path` is the caller's spelling.
 */
export async function writeAtomic(
  tool: string,
  path: string,
  real: string,
  bytes: Uint8Array,
  workspace: Workspace,
  signal: AbortSignal,
): Promise<void> {
  const kept = inspectTarget(tool, path, real, workspace);
  signal.throwIfAborted();
  const temp = tempName(real);
  let fd: number;
  try {
    fd = openConfinedFdSync(tool, path, temp, workspace, CREATE_NEW, NEW_FILE_MODE);
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(tool, `${tool}: ${pathError("open", path, error)}`, { cause: error });
  }
  // The file's own steps are synchronous: each asynchronous one is a hand-off to another
  // thread and back, which costs more than the step for the small files models write. Only
  // the sync of the data, which can take long on a slow disk, keeps the worker free.
  let renamed = false;
  try {
    try {
      let written = 0;
      while (written < bytes.length) {
        signal.throwIfAborted();
        written += writeSync(fd, bytes, written, bytes.length - written);
      }
      if (kept !== undefined) {
        // Owner first: a chown clears setuid/setgid itself, and the chmod after it sets the
        // bits that stay. Only root may give a file away; for anyone else the chown is a
        // no-op or refused, and the new file stays theirs.
        try {
          fchownSync(fd, kept.uid, kept.gid);
        } catch { /* not ours to give away */ }
        fchmodSync(fd, kept.mode & KEPT_MODE_BITS);
      }
      // Synced before it is named, unless it replaces a file on a file system that orders
      // the data before the rename itself (`_replace_durability.ts`).
      if (kept === undefined || workspace.replaceSafeDevices?.includes(kept.dev) !== true) {
        await new Promise<void>((resolve, reject) =>
          fdatasync(fd, (error) => error ? reject(error) : resolve())
        );
      }
    } finally {
      closeSync(fd);
    }
    signal.throwIfAborted();
    // deno-lint-ignore no-sync-fn-in-async-fn -- on purpose, see above
    Deno.renameSync(temp, real);
    renamed = true;
  } catch (error) {
    if (error instanceof ToolError || signal.aborted) throw error;
    throw new ToolError(tool, `${tool}: ${pathError("write", path, error)}`, { cause: error });
  } finally {
    if (!renamed) {
      try {
        // deno-lint-ignore no-sync-fn-in-async-fn -- on purpose, see above
        Deno.removeSync(temp);
      } catch { /* never made, or gone */ }
    }
  }
  removeStale(dirname(real));
}
