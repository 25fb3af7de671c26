/**
 * A full disk on demand, as root: a small tmpfs mounted on a new temporary directory, and a
 * filler that takes its last byte.
 *
 * @module
 */

import { join } from "node:path";

/** A tmpfs of `size` mounted on a new temp dir; unmounted and removed on dispose. */
export async function smallDisk(size: string): Promise<{ dir: string } & AsyncDisposable> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-disk-" }));
  const mount = await new Deno.Command("mount", {
    args: ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir],
    stderr: "piped",
  }).output();
  if (!mount.success) {
    await Deno.remove(dir);
    throw new Error(`mount tmpfs on ${dir}: ${new TextDecoder().decode(mount.stderr)}`);
  }
  return {
    dir,
    async [Symbol.asyncDispose]() {
      await new Deno.Command("umount", { args: ["-l", dir] }).output();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Fills the file system holding `dir` to the last byte with a file `dir/fill`. */
export async function fill(dir: string): Promise<void> {
  using file = await Deno.open(join(dir, "fill"), { write: true, create: true });
  const chunk = new Uint8Array(64 * 1024);
  try {
    for (;;) await file.write(chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOSPC") throw error;
  }
  // The last partial chunk: byte by byte up to the last free byte.
  const one = new Uint8Array(1);
  try {
    for (;;) await file.write(one);
  } catch (error) {
    if ((error as { code?: string }).code !== "ENOSPC") throw error;
  }
}
