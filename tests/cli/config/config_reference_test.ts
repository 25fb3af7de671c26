/** docs/configuration.md is generated from the schema and documents every key. */

import { configJsonSchema } from "../../../cli/config/config.ts";
import { KEY_DOCS, schemaKeys } from "../../../cli/config/config_reference.ts";
import { renderConfigReference } from "../../../scripts/gen_config_reference.ts";
import { assertEquals } from "../../_helpers/assert.ts";

Deno.test("config reference: every schema key has words, and no words describe a missing key", async () => {
  const keys = schemaKeys(await configJsonSchema()).map(([path]) => path).sort();
  assertEquals(Object.keys(KEY_DOCS).sort(), keys);
});

Deno.test("config reference: docs/configuration.md is up to date (deno task docs)", async () => {
  const file = await Deno.readTextFile(new URL("../../../docs/configuration.md", import.meta.url));
  assertEquals(file, await renderConfigReference());
});
