/**
 * A directory tree as a flat record, to compare what a tree held before and after (undo,
 * chat): each path relative to the root maps to its kind, mode and content.
 *
 * @module
 */

import { join } from "node:path";

/** How {@linkcode snapshotTree} reads a tree. */
export interface SnapshotOptions {
  /** Entry names left out with all that is under them (e.g. `.git`). */
  readonly skip?: readonly string[];
  /** A file's content as its text (default) or as that text JSON-quoted. */
  readonly content?: "text" | "json";
}

/**
 * Every path under `root`: `link TARGET`, `dir MODE`, `file MODE CONTENT`, or `other MODE`
 * (FIFOs, sockets, devices: never opened). Links are not followed.
 */
export async function snapshotTree(
  root: string,
  options: SnapshotOptions = {},
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (options.skip?.includes(entry.name)) continue;
      const path = join(dir, entry.name);
      const info = await Deno.lstat(path);
      const mode = ((info.mode ?? 0) & 0o7777).toString(8);
      const rel = path.slice(root.length + 1);
      if (info.isSymlink) out[rel] = `link ${await Deno.readLink(path)}`;
      else if (info.isDirectory) {
        out[rel] = `dir ${mode}`;
        await walk(path);
      } else if (info.isFile) {
        const text = await Deno.readTextFile(path);
        out[rel] = `file ${mode} ${options.content === "json" ? JSON.stringify(text) : text}`;
      } else out[rel] = `other ${mode}`;
    }
  };
  await walk(root);
  return out;
}
