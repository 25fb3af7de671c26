/**
 * A race against the tools' confinement: while a tool works on a workspace file, the file is
 * swapped, over and over, for a link to a file outside the workspace and back.
 *
 * @module
 */

import type { TmpWorkspace } from "./tmp_workspace.ts";

/**
 * Runs `work` while `target` (in `ws`) flips, each swap one atomic rename, between a link to
 * `outside` and a regular file holding `text`. The flipping stops before this returns, even
 * when `work` fails; a failed swap fails the caller.
 */
export async function whileFlipping(
  ws: TmpWorkspace,
  target: string,
  outside: string,
  text: string,
  work: () => Promise<unknown>,
): Promise<void> {
  let running = true;
  async function flip(): Promise<void> {
    while (running) {
      await Deno.symlink(outside, ws.path(".flip-link"));
      await Deno.rename(ws.path(".flip-link"), target);
      await Deno.writeTextFile(ws.path(".flip-file"), text);
      await Deno.rename(ws.path(".flip-file"), target);
    }
  }
  const flipping = flip();
  try {
    await work();
  } finally {
    running = false;
    await flipping;
  }
}
