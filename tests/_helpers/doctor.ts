/**
 * Runs `rousseau doctor` the way its tests need it: in a workspace, with an optional config
 * file, and with something listening at the provider's base URL (the server line connects).
 *
 * @module
 */

import { join } from "node:path";
import { type CliRun, runCli } from "./cli.ts";
import { startFakeAnthropic } from "./fake_providers.ts";

/** The Anthropic key doctor runs get; doctor must never print it. */
export const DOCTOR_KEY = { ANTHROPIC_API_KEY: "sk-ant-doctor-test-secret-value" };

/**
 * `rousseau [--config CONFIG] --workspace ROOT doctor` with {@linkcode DOCTOR_KEY}, against a
 * fake Anthropic server started for the run and closed after it. With `config`, its text is
 * written to `dir/name` first (put it outside the workspace) and passed as `--config`.
 */
export async function doctorWithServer(
  root: string,
  config?: { dir: string; name: string; text: string },
): Promise<CliRun> {
  const args = ["--workspace", root, "doctor"];
  if (config !== undefined) {
    const path = join(config.dir, config.name);
    await Deno.writeTextFile(path, config.text);
    args.unshift("--config", path);
  }
  await using server = startFakeAnthropic([]);
  return await runCli(args, { env: { ...DOCTOR_KEY, ANTHROPIC_BASE_URL: server.url } });
}

/** `rousseau --provider openai --base-url URL --workspace ROOT doctor ...extra`. */
export function doctorOpenAI(
  root: string,
  baseUrl: string,
  options: { extra?: string[]; env?: Record<string, string> } = {},
): Promise<CliRun> {
  return runCli(
    [
      "--workspace",
      root,
      "--provider",
      "openai",
      "--base-url",
      baseUrl,
      "doctor",
      ...options.extra ?? [],
    ],
    options.env === undefined ? {} : { env: options.env },
  );
}
