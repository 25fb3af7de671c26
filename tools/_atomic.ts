/**
 * Atomic replacement of a file's contents: write a temporary file beside the target, flush it,
 * then rename it over the target. A crash or a full disk leaves the old file or the new one,
 * never half of either.
 *
 * @module
 */

import { basename, dirname, join } from "node:path";
import { constants } from "node:fs";
import { ToolError } from "./define.ts";
import { isNotFound, pathError } from "./_os_error.ts";
import { openConfined } from "./_workspace.ts";
import type { Workspace } from "./types.ts";

const NEW_FILE_MODE = 0o644;
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

function tempName(target: string): string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  return join(
    dirname(target),
    `.${basename(target)}.${random[0]!.toString(36)}${random[1]!.toString(36)}.tmp`,
  );
}

/**
 * Replaces the contents of the real path `real` with `bytes`. An existing file keeps its
 * permission bits; a new one gets 0644 less the umask. `path` is the caller's spelling.
 */
export async function writeAtomic(
  tool: string,
  path: string,
  real: string,
  bytes: Uint8Array,
  workspace: Workspace,
  signal: AbortSignal,
): Promise<void> {
  let mode: number | undefined;
  try {
    const info = await Deno.stat(real);
    if (info.isDirectory) throw new ToolError(tool, `${tool}: open ${path}: is a directory`);
    mode = info.mode === null ? undefined : info.mode & 0o7777;
    // A file the caller may not write stays untouched, as a plain open for writing would.
    const probe = await Deno.open(real, { write: true });
    probe.close();
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (!isNotFound(error)) {
      throw new ToolError(tool, `${tool}: ${pathError("open", path, error)}`, { cause: error });
    }
  }
  signal.throwIfAborted();
  const temp = tempName(real);
  let handle;
  try {
    handle = await openConfined(tool, path, temp, workspace, CREATE_NEW, NEW_FILE_MODE);
  } catch (error) {
    if (error instanceof ToolError) throw error;
    throw new ToolError(tool, `${tool}: ${pathError("open", path, error)}`, { cause: error });
  }
  let renamed = false;
  try {
    try {
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
        written += bytesWritten;
      }
      if (mode !== undefined) await handle.chmod(mode);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    signal.throwIfAborted();
    await Deno.rename(temp, real);
    renamed = true;
  } catch (error) {
    if (error instanceof ToolError || signal.aborted) throw error;
    throw new ToolError(tool, `${tool}: ${pathError("write", path, error)}`, { cause: error });
  } finally {
    if (!renamed) await Deno.remove(temp).catch(() => {});
  }
}
