/**
 * Entry point: run the CLI and exit with its code. The only caller of `Deno.exit`.
 *
 * `version`, `--version` and `-v` alone are answered before the CLI's modules are loaded
 * (cli/version.ts); everything else imports the CLI, and `tool NAME` first starts the tool
 * worker (cli/early_worker.ts).
 *
 * The CLI is imported by a computed URL: Deno reads every module a literal `import("…")`
 * names, and all of theirs, before the first line runs, which for the CLI (its commands, the
 * SDKs) cost more than the whole of `version`. The same holds for each command's module in
 * cli/mod.ts; `deno task compile` includes them by directory.
 *
 * @module
 */

import { fastOutput } from "./cli/version.ts";
import { startEarlyWorker } from "./cli/early_worker.ts";
import { writeStderr, writeStdout } from "./cli/output.ts";

const fast = fastOutput(Deno.args);
if (fast !== undefined) {
  try {
    await writeStdout(fast);
  } catch (error) {
    await writeStderr(`rousseau: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
  Deno.exit(0);
}
// `tool NAME`: start the tool worker first, so that it loads the tools while this isolate
// loads the CLI (cli/early_worker.ts).
startEarlyWorker(Deno.args);
const cli: typeof import("./cli/mod.ts") = await import(
  new URL("./cli/mod.ts", import.meta.url).href
);
Deno.exit(await cli.main(Deno.args));
