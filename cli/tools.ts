/**
 * `rousseau tools`: the registered tools, sorted by name.
 *
 * @module
 */

import { createWorkerHost } from "../tools/mod.ts";
import { loadConfig } from "./config.ts";
import { EXIT } from "./errors.ts";
import { type GlobalFlags, toolContextFrom } from "./options.ts";
import { writeStdout } from "./output.ts";

/** Runs the `tools` command and returns its exit code. */
export async function toolsCommand(
  flags: GlobalFlags & { readonly json?: boolean },
): Promise<number> {
  // The list comes from the worker, so custom modules appear exactly as they will run.
  const config = await loadConfig(flags.config);
  await using host = await createWorkerHost({
    ...await toolContextFrom(flags, config, false),
    modules: config.modules,
  });
  const definitions = host.registry.definitions();
  if (flags.json) {
    await writeStdout(JSON.stringify(definitions, null, 2) + "\n");
    return EXIT.ok;
  }
  const width = Math.max(...definitions.map((d) => d.name.length));
  const lines = definitions.map((d) => {
    const summary = d.description.split(/(?<=\.)\s/)[0] ?? d.description;
    return `${d.name.padEnd(width)}  ${summary}`;
  });
  await writeStdout(lines.join("\n") + "\n");
  return EXIT.ok;
}
