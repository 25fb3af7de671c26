/**
 * Workspace confinement of opened files: every path is resolved before it is used
 * (`_paths.ts`), and every opened file is checked again through the kernel's own record of
 * what was opened, which closes the race between the check and the open.
 *
 * This module loads Node's fs layer (for open flags and descriptors), which costs tens of
 * milliseconds at start: only the tools themselves import it, in the tool worker.
 *
 * @module
 */

import { closeSync, constants, fstatSync, openSync, type Stats } from "node:fs";
import { open as openFile } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { ToolError } from "./tool_error.ts";
import { isNotFound } from "./_os_error.ts";
import { isInside, isProtected, isProtectedInode, outside, protectedError } from "./_paths.ts";
import type { Workspace } from "./data_types.ts";
import type { OpenedProof } from "./_later_proofs.ts";

export {
  confine,
  confineSync,
  createWorkspace,
  isInside,
  isProtected,
  outside,
  protectedError,
  resolveReal,
  resolveRealSync,
} from "./_paths.ts";

/**
 * Flags for opening a file to read. `O_NONBLOCK` keeps a FIFO planted in the workspace from
 * blocking the open forever; it changes nothing for regular files.
 */
export const READ_FLAGS: number = constants.O_RDONLY | constants.O_NONBLOCK;

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
 * spelling, for messages. The caller still owns `fd`. `info`: the descriptor's status, when the
 * caller took it already (it is taken here otherwise, when needed).
 */
export function proveOpenedSync(
  tool: string,
  path: string,
  fd: number,
  real: string,
  workspace: Workspace,
  info?: Stats,
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
    refuseProtectedFd(tool, path, fd, kernel, workspace, info);
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
  const a = info ?? fstatSync(fd);
  const b = Deno.statSync(again);
  if (a.dev !== b.dev || a.ino !== b.ino) {
    throw new ToolError(tool, `${tool}: ${path} changed while it was being opened; try again`);
  }
  refuseProtectedFd(tool, path, fd, again, workspace, a);
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
  info?: Stats,
): void {
  if ((workspace.protected ?? []).length === 0) return;
  if (isProtected(workspace, opened)) throw protectedError(tool, path);
  if (isProtectedInode(workspace, info ?? fstatSync(fd))) throw protectedError(tool, path);
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
  mode?: number,
): number {
  const fd = openSync(real, flags, mode);
  try {
    proveOpenedSync(tool, path, fd, real, workspace);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * `openConfinedFdSync` that also gives the opened file's status, taken once for the proof and
 * the caller (Node's `fstatSync` costs more than the rest of a small read's open). With
 * `later`, a regular file's proof may be left to the host, after the call (see
 * {@linkcode LaterProofs}); the caller then closes the descriptor with
 * {@linkcode closeOpened} only.
 */
export function openConfinedStatSync(
  tool: string,
  path: string,
  real: string,
  workspace: Workspace,
  flags: number,
  later?: LaterProofs,
): { readonly fd: number; readonly info: Stats } {
  const fd = openSync(real, flags);
  try {
    const info = fstatSync(fd);
    if (later?.take(tool, path, real, fd, info) !== true) {
      proveOpenedSync(tool, path, fd, real, workspace, info);
    }
    return { fd, info };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Closes `fd`, opened by {@linkcode openConfinedStatSync} with `later`: a descriptor whose
 * proof was left to the host stays open for it, which closes it once proven.
 */
export function closeOpened(fd: number, later?: LaterProofs): void {
  if (later === undefined) closeSync(fd);
  else later.release(fd);
}

/**
 * The proofs of one call that its host makes after the call, with the result in hand, instead
 * of one question to it (and its thread) per opened file while the call runs: a small read
 * spent more on that round trip than on the rest of its work.
 *
 * Only a regular file on a device of a workspace root is taken (read before it is proven:
 * reading such a file has no effect a refusal would have to undo; anything else is proven at
 * once). The descriptor stays open from the open until the host has proven it: where the
 * kernel says it leads (inside the workspace, not a protected path) and that it is still the
 * file opened (device and inode), the same checks as `proveOpenedSync`, made once the bytes
 * are read. A failed proof turns the call's result into that refusal, so no byte of a file
 * outside the workspace or of a protected one is ever returned. Descriptors a call has not
 * released when it ends (a call given up after a cancellation) are proven here, at once.
 */
export class LaterProofs {
  readonly #devices: ReadonlySet<number>;
  readonly #workspace: Workspace;
  /** Taken and not yet released by the tool, with the real path it opened. */
  readonly #open = new Map<number, OpenedProof & { readonly real: string }>();
  /** Released by the tool: handed to the host with the result. */
  readonly #released: OpenedProof[] = [];
  #sealed = false;

  /** `devices`: the devices of the workspace roots. */
  constructor(workspace: Workspace, devices: ReadonlySet<number>) {
    this.#workspace = workspace;
    this.#devices = devices;
  }

  /** Takes `fd`'s proof over: true when it is left to the host. */
  take(tool: string, path: string, real: string, fd: number, info: Stats): boolean {
    if (this.#sealed || !info.isFile() || !this.#devices.has(info.dev)) return false;
    this.#open.set(fd, { fd, tool, path, real, dev: info.dev, ino: info.ino });
    return true;
  }

  /** The tool is done with `fd`: kept open for the host when taken, closed otherwise. */
  release(fd: number): void {
    const taken = this.#open.get(fd);
    if (taken === undefined || this.#sealed) {
      this.#open.delete(fd);
      closeSync(fd);
      return;
    }
    this.#open.delete(fd);
    const { real: _, ...proof } = taken;
    this.#released.push(proof);
  }

  /**
   * Ends the call's taking: the proofs to hand to the host, and the refusal of a descriptor
   * still in use, proven now (through the host's channel, as `proveOpenedSync` does).
   */
  seal(): { readonly proofs: readonly OpenedProof[]; readonly refusal?: string } {
    this.#sealed = true;
    let refusal: string | undefined;
    for (const { fd, tool, path, real } of this.#open.values()) {
      try {
        proveOpenedSync(tool, path, fd, real, this.#workspace);
      } catch (error) {
        refusal ??= error instanceof Error ? error.message : String(error);
      }
    }
    return { proofs: this.#released, ...(refusal === undefined ? {} : { refusal }) };
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
