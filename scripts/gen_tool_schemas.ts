/**
 * Writes docs/tool-schemas.json: the built-in tools exactly as the model sees them.
 * `tests/tools/schemas_test.ts` fails when the file and the registry drift apart.
 *
 * @module
 */

import { createBuiltinTools, Registry } from "../mod.ts";

/** The file's expected contents. */
export function renderSchemas(): string {
  return JSON.stringify(new Registry(createBuiltinTools()).definitions(), null, 2) + "\n";
}

if (import.meta.main) {
  const target = new URL("../docs/tool-schemas.json", import.meta.url);
  await Deno.writeTextFile(target, renderSchemas());
}
