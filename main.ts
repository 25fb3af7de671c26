/**
 * Entry point: run the CLI and exit with its code. The only caller of `Deno.exit`.
 *
 * Three paths, from the cheapest: `version`, `--version`, `-v`, and `--help` or `-h` to a
 * pipe, alone, are answered before anything else loads (cli/startup/version.ts); a plain `tool` call (cli/startup/tool_args.ts decides which)
 * starts the tool worker at once (cli/startup/early_worker.ts) and runs without the argument parser;
 * everything else goes through the full CLI (cli/mod.ts, commander).
 *
 * Modules loaded on one path only are imported by computed URLs: Deno reads every module a
 * literal `import("…")` names, and all of theirs, before the first line runs, which for the
 * CLI (its commands, the SDKs) cost more than the whole of `version`. The same holds for each
 * command's module in cli/mod.ts; `deno task compile` includes them by directory.
 *
 * @module
 */

import { fastOutput } from "./cli/startup/version.ts";
import { startEarlyWorker } from "./cli/startup/early_worker.ts";
import { writeStderr, writeStdout } from "./cli/terminal/output.ts";
import { parseToolArgs } from "./cli/startup/tool_args.ts";

// The npm package's bin (bin/rousseau.cjs) set DENO_DIR to the package's own cache: the
// programs bash starts get the caller's values back (Deno read its cache directory already).
const npmEnv = Deno.env.get("ROUSSEAU_NPM_ENV");
if (npmEnv !== undefined) {
  Deno.env.delete("ROUSSEAU_NPM_ENV");
  for (const [name, value] of Object.entries(JSON.parse(npmEnv) as Record<string, unknown>)) {
    if (typeof value === "string") Deno.env.set(name, value);
    else Deno.env.delete(name);
  }
}

const fast = fastOutput(Deno.args, Deno.stdout.isTerminal());
if (fast !== undefined) {
  try {
    await writeStdout(fast);
  } catch (error) {
    await writeStderr(`rousseau: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
  Deno.exit(0);
}
const call = parseToolArgs(Deno.args);
if (call !== undefined) {
  // Started first: it loads the tools on its own thread while this isolate loads its own.
  startEarlyWorker(call);
  const tool: typeof import("./cli/commands/tool.ts") = await import(
    new URL("./cli/commands/tool.ts", import.meta.url).href
  );
  Deno.exit(await tool.toolMain(call));
}
const cli: typeof import("./cli/mod.ts") = await import(
  new URL("./cli/mod.ts", import.meta.url).href
);
Deno.exit(await cli.main(Deno.args));
