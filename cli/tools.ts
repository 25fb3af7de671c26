/**
 * `rousseau tools`: the registered tools, sorted by name.
 *
 * @module
 */

import { createBuiltinTools, Registry } from "../tools/mod.ts";
import { EXIT } from "./errors.ts";
import { writeStdout } from "./output.ts";

/** Runs the `tools` command and returns its exit code. */
export async function toolsCommand(flags: { readonly json?: boolean }): Promise<number> {
  const definitions = new Registry(createBuiltinTools()).definitions();
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
