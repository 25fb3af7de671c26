/**
 * Runs the CLI the way a user does: `deno task cli ...`, in a real subprocess.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { GREP_V8_FLAGS } from "../../tools/grep.ts";
import { killTree } from "./processes.ts";

/** The repository root. */
export const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Config and state directories for CLI runs, so tests never read the developer's config or
 * write into their audit log.
 */
export const TEST_HOME: string = Deno.makeTempDirSync({ prefix: "rousseau-cli-home-" });
// Removed when the test module ends, passed or failed (`unload` fires in both cases).
globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(TEST_HOME, { recursive: true });
  } catch {
    // already gone: nothing to clean
  }
});

function withoutInitCwd(env: Record<string, string>): Record<string, string> {
  const { INIT_CWD: _, ...rest } = env;
  return rest;
}

/** `deno` arguments that run the CLI directly, as `deno task cli` does; append the CLI's own. */
export const CLI_ARGS: readonly string[] = [
  "run",
  "--quiet",
  "--config",
  `${REPO}deno.json`,
  "-P=cli",
  "--no-prompt",
  `--v8-flags=${GREP_V8_FLAGS}`,
  `${REPO}main.ts`,
];

/** The environment of a CLI run: ours, minus INIT_CWD, with test config and state dirs. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...withoutInitCwd(Deno.env.toObject()),
    NO_COLOR: "1",
    XDG_CONFIG_HOME: `${TEST_HOME}/config`,
    XDG_DATA_HOME: `${TEST_HOME}/data`,
    ...extra,
  };
}

/** What a CLI run produced. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `deno task cli ...args` from `cwd` (default: the repository) with optional stdin. */
export async function runCli(
  args: readonly string[],
  options: { stdin?: string; cwd?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", `${REPO}deno.json`, "cli", ...args],
    cwd: options.cwd ?? REPO,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    // The inner `deno task` sets INIT_CWD to `cwd` only when it is unset; an outer
    // `deno task test` would otherwise leak its own directory into every run.
    clearEnv: true,
    env: cliEnv(options.env),
  }).spawn();
  // Deno's tests have no timeout of their own: a CLI run that hangs is killed, with all it
  // started, and fails its test instead of holding up the whole suite.
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    killTree(child.pid);
  }, CLI_LIMIT_MS);
  try {
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    }
    const { code, stdout, stderr } = await child.output();
    const decoder = new TextDecoder();
    const run = { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
    if (killed) {
      throw new Error(
        `rousseau ${args.join(" ")} ran past ${CLI_LIMIT_MS / 1000} s and was killed; ` +
          `stderr: ${run.stderr.slice(-2000)}`,
      );
    }
    return run;
  } finally {
    clearTimeout(timer);
  }
}

/** How long one `runCli` may take before it is killed: far above any run the tests make. */
const CLI_LIMIT_MS = 300_000;

/**
 * Starts the CLI as the one process `deno task cli` runs (no task runner in between), so a
 * test can send it signals; stdout and stderr are piped.
 */
export function spawnCli(
  args: readonly string[],
  options: { env?: Record<string, string>; stdin?: "null" | "piped" } = {},
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [...CLI_ARGS, ...args],
    cwd: REPO,
    stdin: options.stdin ?? "null",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: cliEnv(options.env),
  }).spawn();
}

/** Collects a spawned CLI's exit code and output. */
export async function finished(child: Deno.ChildProcess): Promise<CliRun> {
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}
