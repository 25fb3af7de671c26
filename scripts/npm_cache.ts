// deno-lint-ignore-file no-console
/**
 * `npm pack`'s `prepack` step: fills `deno_dir/` with every npm package the CLI can load, so
 * the installed package runs with no network (`bin/rousseau.cjs` points `DENO_DIR` there and
 * passes `--cached-only`).
 *
 * The tool worker and each command's module are imported by computed URLs (see main.ts), which
 * `deno cache main.ts` alone would not follow: every module of the source directories is
 * cached too (the same directories `deno task compile` includes). Only `deno_dir/npm/` is
 * shipped: the other caches Deno keeps there are keyed by absolute paths and rebuilt on use.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { SOURCE_DIRS } from "./compile.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));

/** Where the package keeps its Deno cache, relative to the package root. */
export const PACKAGE_DENO_DIR = "deno_dir";

/**
 * Every module under the source directories (`.ts`, and the `.json` data they import, such as
 * `approver/builtin_tools.json`), sorted, relative to the repository.
 */
export async function sourceModules(root: string = REPO): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(`${root}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && /\.(ts|json)$/.test(entry.name)) found.push(path);
    }
  }
  for (const dir of SOURCE_DIRS) await walk(dir);
  return found.sort();
}

/** The `deno cache` arguments that fetch what `main.ts` and every source module import. */
export async function cacheArgs(root: string = REPO): Promise<string[]> {
  return [
    "cache",
    "--quiet",
    "--frozen",
    "--config",
    `${root}deno.json`,
    `${root}main.ts`,
    ...(await sourceModules(root)).filter((path) => path.endsWith(".ts")).map((path) =>
      `${root}${path}`
    ),
  ];
}

/** Rebuilds `<root>deno_dir/` from the lockfile; resolves to deno's exit code. */
export async function fillDenoDir(root: string = REPO): Promise<number> {
  const denoDir = `${root}${PACKAGE_DENO_DIR}`;
  await Deno.remove(denoDir, { recursive: true }).catch((error: unknown) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: await cacheArgs(root),
    cwd: root,
    env: { DENO_DIR: denoDir, DENO_NO_UPDATE_CHECK: "1" },
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) return code;
  for await (const entry of Deno.readDir(denoDir)) {
    if (entry.name !== "npm") await Deno.remove(`${denoDir}/${entry.name}`, { recursive: true });
  }
  return 0;
}

if (import.meta.main) {
  const code = await fillDenoDir();
  if (code !== 0) {
    console.error(`npm_cache: deno cache failed (exit ${code}); the package would not run offline`);
    Deno.exit(1);
  }
  console.error(`npm_cache: filled ${PACKAGE_DENO_DIR}/npm from deno.lock`);
}
