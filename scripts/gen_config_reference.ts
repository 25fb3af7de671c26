/**
 * Writes docs/configuration.md from the config schema. `tests/cli/config/config_reference_test.ts`
 * fails when the file and the schema drift apart.
 *
 * @module
 */

import { configJsonSchema } from "../cli/config/config.ts";
import { renderReference } from "../cli/config/config_reference.ts";

/** The file's expected contents. */
export async function renderConfigReference(): Promise<string> {
  return renderReference(await configJsonSchema());
}

if (import.meta.main) {
  const target = new URL("../docs/configuration.md", import.meta.url);
  await Deno.writeTextFile(target, await renderConfigReference());
}
