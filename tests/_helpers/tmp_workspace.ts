/**
 * Real temporary workspaces for tests, disposed with `await using`.
 *
 * @module
 */

import { dirname, join } from "node:path";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkspace,
  DEFAULT_LIMITS,
  type Limits,
  Registry,
  type ToolResult,
  type Workspace,
} from "../../mod.ts";

/** A temporary directory tree and a host running the built-in tools inside it. */
export interface TmpWorkspace extends AsyncDisposable {
  /** Real path of the workspace root. */
  readonly root: string;
  /** Real path of a sibling directory outside the workspace (for escape tests). */
  readonly outside: string;
  /** The confinement object tools receive. */
  readonly workspace: Workspace;
  /** `join(root, ...parts)`. */
  path(...parts: string[]): string;
  /** Runs a built-in tool in the workspace. */
  call(
    name: string,
    input: unknown,
    options?: { limits?: Partial<Limits>; signal?: AbortSignal; env?: Record<string, string> },
  ): Promise<ToolResult>;
}

/** Files to create: relative path to contents (string or bytes). */
export type Files = Readonly<Record<string, string | Uint8Array>>;

/** Creates `files` under a new real temp dir; `outside` gets files outside the workspace. */
export async function tmpWorkspace(
  options: { files?: Files; outside?: Files } = {},
): Promise<TmpWorkspace> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-test-" }));
  const root = join(base, "ws");
  const outside = join(base, "outside");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  for (
    const [dir, files] of [[root, options.files ?? {}], [outside, options.outside ?? {}]] as const
  ) {
    for (const [rel, content] of Object.entries(files)) {
      const path = join(dir, rel);
      await Deno.mkdir(dirname(path), { recursive: true });
      if (typeof content === "string") await Deno.writeTextFile(path, content);
      else await Deno.writeFile(path, content);
    }
  }
  const workspace = await createWorkspace([root]);
  const registry = new Registry(createBuiltinTools());
  return {
    root,
    outside,
    workspace,
    path: (...parts) => join(root, ...parts),
    call(name, input, opts = {}) {
      const host = createInProcessHost(registry, {
        workspace,
        limits: { ...DEFAULT_LIMITS, ...opts.limits },
        env: opts.env ?? { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      });
      return host.call(name, input, opts.signal ?? new AbortController().signal);
    },
    async [Symbol.asyncDispose]() {
      await Deno.chmod(base, 0o755).catch(() => {});
      await Deno.remove(base, { recursive: true });
    },
  };
}

/** A bare temporary directory, removed (with all it holds) on dispose. */
export interface TmpDir extends AsyncDisposable {
  /** Real path of the directory. */
  readonly path: string;
}

/**
 * Makes an empty temporary directory named `<prefix>...` (under `dir`, default the system's);
 * `await using` removes it when the test ends, passed or failed.
 */
export async function tmpDir(prefix: string, options: { dir?: string } = {}): Promise<TmpDir> {
  const path = await Deno.realPath(
    await Deno.makeTempDir({ prefix, ...(options.dir === undefined ? {} : { dir: options.dir }) }),
  );
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.chmod(path, 0o755).catch(() => {});
      await Deno.remove(path, { recursive: true }).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
    },
  };
}
