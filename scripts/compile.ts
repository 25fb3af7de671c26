// deno-lint-ignore-file no-console
/**
 * `deno task compile [--target T] [--output FILE]`: builds the single `rousseau` binary with
 * the same permission set `deno task cli` uses (`permissions.cli` in deno.json).
 *
 * `deno compile` downloads its runtime (`denort`) for the target. Where that download is
 * impossible (no internet), set `DENORT_BIN` to a `denort` binary of the same Deno version.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { GREP_V8_FLAGS } from "../tools/grep.ts";

/** The targets `deno compile` can build, and the release workflow builds. */
export const TARGETS: readonly string[] = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
];

const REPO = fileURLToPath(new URL("../", import.meta.url));

/** The directories whose modules the program may import at run time. */
export const SOURCE_DIRS: readonly string[] = ["agent", "approver", "cli", "providers", "tools"];

/** The `deno compile` arguments for `target`, writing `output`. */
export function compileArgs(target: string, output: string): string[] {
  return [
    "compile",
    "--quiet",
    "-P=cli",
    "--no-prompt",
    // grep's regular expressions fall back to V8's linear-time engine (tools/grep.ts).
    `--v8-flags=${GREP_V8_FLAGS}`,
    "--target",
    target,
    "--output",
    output,
    // The tool worker and every command's module are loaded by computed URLs (see main.ts),
    // which the module graph does not show: include the source directories whole (deno
    // compile analyses the modules of an included directory).
    ...SOURCE_DIRS.flatMap((dir) => ["--include", `${REPO}${dir}`]),
    `${REPO}main.ts`,
  ];
}

/** Runs `deno compile`; resolves to the exit code, with a clear message on a runtime fetch failure. */
export async function compile(
  target: string,
  output: string,
): Promise<{ code: number; message: string }> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(target, output),
    cwd: REPO,
    stdout: "inherit",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stderr);
  if (code === 0) return { code, message: `compiled ${output} for ${target}` };
  if (/denort|dl\.deno\.land|error sending request|dns error/i.test(text)) {
    return {
      code,
      message: `compile: deno compile could not fetch its runtime (denort) for ${target}; ` +
        "this machine cannot reach dl.deno.land. Download denort for Deno " +
        `${Deno.version.deno} and ${target} elsewhere and set DENORT_BIN=/path/to/denort.\n` +
        text.trim(),
    };
  }
  return { code, message: `compile: deno compile failed for ${target}:\n${text.trim()}` };
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { target: { type: "string" }, output: { type: "string" } },
  });
  const target = values.target ?? Deno.build.target;
  if (!TARGETS.includes(target)) {
    console.error(
      `compile: unknown target ${JSON.stringify(target)} (want one of ${TARGETS.join(", ")})`,
    );
    Deno.exit(2);
  }
  const suffix = target.includes("windows") ? ".exe" : "";
  const output = values.output ??
    `${REPO}dist/rousseau${target === Deno.build.target ? "" : `-${target}`}${suffix}`;
  const result = await compile(target, output);
  (result.code === 0 ? console.log : console.error)(result.message);
  Deno.exit(result.code === 0 ? 0 : 1);
}
