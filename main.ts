/**
 * Entry point: run the CLI and exit with its code. The only caller of `Deno.exit`.
 *
 * `version`, `--version` and `-v` alone are answered before the CLI's modules are loaded
 * (cli/version.ts); everything else imports the CLI, and `tool NAME` first starts the tool
 * worker (cli/early_worker.ts).
 *
 * @module
 */

import { fastOutput } from "./cli/version.ts";
import { startEarlyWorker } from "./cli/early_worker.ts";

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
// `tool NAME`: read the config and start the tool worker first, so that it loads the tools
// while this isolate loads the CLI (cli/early_worker.ts).
await startEarlyWorker(Deno.args);
const { main } = await import("./cli/mod.ts");
Deno.exit(await main(Deno.args));
