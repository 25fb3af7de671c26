import { renderSchemas } from "../../scripts/gen_tool_schemas.ts";
import { assertEquals } from "../_helpers/assert.ts";

Deno.test("docs/tool-schemas.json matches the registry (run `deno task schemas` to update)", async () => {
  const committed = await Deno.readTextFile(
    new URL("../../docs/tool-schemas.json", import.meta.url),
  );
  assertEquals(committed, renderSchemas());
});
