/**
 * A real temp tree for undo tests: a workspace, a directory outside it, an undo store and a
 * recorder over the workspace; everything removed on dispose.
 *
 * @module
 */

import { join } from "node:path";
import {
  createUndoRecorder,
  openUndoStore,
  type UndoRecorder,
  type UndoStore,
} from "../../agent/undo/mod.ts";

/** What {@linkcode undoBench} made. */
export interface UndoBench extends AsyncDisposable {
  /** Real path of the temp dir that holds all the rest. */
  readonly base: string;
  /** The workspace the recorder watches (session `s1`). */
  readonly root: string;
  /** A directory beside the workspace, outside it. */
  readonly outside: string;
  /** The undo store's directory. */
  readonly state: string;
  readonly store: UndoStore;
  readonly recorder: UndoRecorder;
  /** `root/protected`, a protected path of the recorder. */
  readonly protectedDir: string;
  /** `join(root, ...parts)`. */
  path(...parts: string[]): string;
  /** `join(outside, ...parts)`. */
  out(...parts: string[]): string;
}

/** Makes an {@linkcode UndoBench} in a new temp dir named `<prefix>...`. */
export async function undoBench(
  prefix: string,
  options: { maxBytes?: number; maxFileBytes?: number } = {},
): Promise<UndoBench> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  const state = join(base, "state");
  const protectedDir = join(root, "protected");
  const dispose = () => Deno.remove(base, { recursive: true });
  try {
    await Deno.mkdir(root);
    await Deno.mkdir(outside);
    const store = openUndoStore(state, options.maxBytes ? { maxBytes: options.maxBytes } : {});
    const recorder = createUndoRecorder({
      store,
      sessionId: "s1",
      roots: [root],
      protectedPaths: [protectedDir],
      ...(options.maxFileBytes ? { maxFileBytes: options.maxFileBytes } : {}),
    });
    return {
      base,
      root,
      outside,
      state,
      store,
      recorder,
      protectedDir,
      path: (...parts) => join(root, ...parts),
      out: (...parts) => join(outside, ...parts),
      [Symbol.asyncDispose]: dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Runs `command` with `sh -c` in `cwd`; throws with its stderr when it fails. */
export async function sh(cwd: string, command: string): Promise<void> {
  const out = await new Deno.Command("sh", { args: ["-c", command], cwd, stderr: "piped" })
    .output();
  if (!out.success) throw new Error(`${command}: ${new TextDecoder().decode(out.stderr)}`);
}
