import { factsOf, toolsWhere } from "../../approver/mod.ts";
import { createBuiltinTools } from "../../mod.ts";
import { assertEquals } from "../_helpers/assert.ts";

Deno.test("factsOf() gives the built-ins' own facts, and none for any other name", async (t) => {
  for (const tool of createBuiltinTools()) {
    await t.step(tool.name, () => assertEquals(factsOf(tool.name), tool.facts ?? {}));
  }
  // A lookup on a plain object would answer these from Object.prototype.
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "BASH", "mcp"]) {
    await t.step(name, () => assertEquals(factsOf(name), undefined));
  }
});

Deno.test("toolsWhere() lists the built-ins by their facts, in createBuiltinTools() order", () => {
  assertEquals(toolsWhere((f) => f.path !== undefined), ["read", "write", "edit", "grep"]);
  assertEquals(toolsWhere((f) => f.path === "write"), ["write", "edit"]);
  assertEquals(toolsWhere((f) => f.command === true), ["bash"]);
});
