/**
 * ripgrep as the grep rows' comparison: its arguments (the same skip list and size limit as
 * our grep), one timed run counting output lines, and its version line.
 *
 * @module
 */

import { DEFAULT_LIMITS } from "../../mod.ts";
import { SKIPPED_DIRS } from "../../tools/grep.ts";

/** One timed run and the number of matching lines it printed. */
export interface Sample {
  readonly ms: number;
  readonly lines: number;
}

export function rgArgs(
  threads: number | undefined,
  extra: readonly string[],
  pattern: string,
): string[] {
  const args = ["--no-config", "-n", "--no-heading", "--color", "never"];
  if (threads !== undefined) args.push(`-j${threads}`);
  args.push("--no-ignore", "--hidden", "--max-filesize", `${DEFAULT_LIMITS.grepMaxFileBytes}`);
  for (const name of SKIPPED_DIRS) args.push("-g", `!${name}/`);
  args.push(...extra, "-e", pattern, ".");
  return args;
}

/** Runs rg in `root` (anchored globs are relative to the working directory). */
export async function runRg(rg: string, root: string, args: string[]): Promise<Sample> {
  const started = performance.now();
  const child = new Deno.Command(rg, {
    args,
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let lines = 0;
  for await (const chunk of child.stdout) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  const status = await child.status;
  const ms = performance.now() - started;
  const errors = await stderr;
  if (status.code > 1 || errors !== "") {
    throw new Error(`rg ${args.join(" ")} exited ${status.code}: ${errors.slice(0, 500)}`);
  }
  return { ms, lines };
}

export async function rgVersion(rg: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(rg, { args: ["--version"], stdout: "piped" }).output();
    return new TextDecoder().decode(out.stdout).split("\n")[0];
  } catch {
    return undefined;
  }
}
