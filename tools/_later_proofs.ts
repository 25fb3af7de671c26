/**
 * The host's side of the proofs a call leaves to it (`LaterProofs` in `_workspace.ts`): what
 * the worker hands over with a result, and proving it where `/proc/self/fd` can be read. No
 * Node fs layer here: the host loads this module only when it proves calls' files.
 *
 * @module
 */

import { isInside, isProtected, isProtectedInode, outside, protectedError } from "./_paths.ts";
import type { Workspace } from "./data_types.ts";

/**
 * What the host proves of a descriptor a call read, after the call (see `LaterProofs` in
 * `_workspace.ts`).
 */
export interface OpenedProof {
  /** The descriptor, still open: the worker closes it once the host has proven it. */
  readonly fd: number;
  /** The tool and the caller's spelling of the path, for the refusal's text. */
  readonly tool: string;
  readonly path: string;
  /** Which file the call opened there (so a descriptor number reused since is caught). */
  readonly dev: number;
  readonly ino: number;
}

/**
 * The host's side of `LaterProofs` (`_workspace.ts`): proves what `proof` names (in an isolate that
 * may read `/proc/self/fd`), then hands its descriptor to `close` (the worker's to close: a
 * descriptor belongs to the isolate that opened it). The refusal's text, as
 * `proveOpenedSync` would have thrown it; undefined when proven.
 */
export function proveLater(
  proof: OpenedProof,
  workspace: Workspace,
  close: (fd: number) => void,
): string | undefined {
  const { fd, tool, path } = proof;
  if (!Number.isSafeInteger(fd) || fd < 0) {
    return `${tool}: ${path}: cannot prove the opened file is inside the workspace: no descriptor`;
  }
  try {
    const where = `/proc/self/fd/${fd}`;
    let link: string;
    let info: Deno.FileInfo;
    try {
      link = Deno.readLinkSync(where);
      // Through the descriptor itself, not a path: the file it holds open.
      info = Deno.statSync(where);
    } catch (error) {
      return `${tool}: ${path}: cannot prove the opened file is inside the workspace: ${
        (error as Error).message
      }`;
    }
    if (info.dev !== proof.dev || info.ino !== proof.ino) {
      return `${tool}: ${path}: cannot prove the opened file is inside the workspace: ` +
        "its descriptor no longer holds it";
    }
    const kernel = link.endsWith(" (deleted)") ? link.slice(0, -" (deleted)".length) : link;
    if (!isInside(workspace, kernel)) return outside(tool, path).message;
    if ((workspace.protected ?? []).length > 0) {
      if (isProtected(workspace, kernel)) return protectedError(tool, path).message;
      const id = { dev: info.dev, ino: info.ino ?? -1, nlink: info.nlink ?? 1 };
      if (isProtectedInode(workspace, id)) return protectedError(tool, path).message;
    }
    return undefined;
  } finally {
    try {
      close(fd);
    } catch { /* closed already */ }
  }
}
