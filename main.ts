/**
 * Entry point: run the CLI and exit with its code. The only caller of `Deno.exit`.
 *
 * `version`, `--version` and `-v` alone are answered before the CLI's modules are loaded
 * (cli/version.ts); everything else imports the CLI.
 *
 * @module
 */

import { fastOutput } from "./cli/version.ts";

const fast = fastOutput(Deno.args);
if (fast !== undefined) {
  const { writeStderr, writeStdout } = await import("./cli/output.ts");
  try {
    await writeStdout(fast);
  } catch (error) {
    await writeStderr(`rousseau: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
  Deno.exit(0);
}
const { main } = await import("./cli/mod.ts");
Deno.exit(await main(Deno.args));
