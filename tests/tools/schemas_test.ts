import { renderFacts, renderSchemas } from "../../scripts/gen_tool_schemas.ts";
import type { ToolFacts } from "../../approver/mod.ts";
import { createBuiltinTools } from "../../mod.ts";
import { assertEquals } from "../_helpers/assert.ts";

Deno.test("docs/tool-schemas.json matches the registry (run `deno task schemas` to update)", async () => {
  const committed = await Deno.readTextFile(
    new URL("../../docs/tool-schemas.json", import.meta.url),
  );
  assertEquals(committed, renderSchemas());
});

Deno.test("approver/builtin_tools.json matches the tools' facts (run `deno task schemas` to update)", async () => {
  const committed = await Deno.readTextFile(
    new URL("../../approver/builtin_tools.json", import.meta.url),
  );
  assertEquals(committed, renderFacts());
  // The approver's copy of the type takes every fact a tool can declare (checked by deno check).
  const facts: readonly (ToolFacts | undefined)[] = createBuiltinTools().map((t) => t.facts);
  assertEquals(facts.length, createBuiltinTools().length);
});
