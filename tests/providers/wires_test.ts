/**
 * The provider wires as data (providers/wires.ts): the places that cannot read the list at
 * run time agree with it, and each wire's descriptor is complete (docs/add-a-provider.md).
 */

import { WIRE_VARIABLE } from "../../cli/config/config.ts";
import { GLOBAL_OPTIONS } from "../../cli/config/option_table.ts";
import { WIRE_NAMES, wireNamed, WIRES } from "../../providers/wires.ts";
import { SECRET_VARIABLES } from "../../tools/_env.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";

Deno.test("--provider offers exactly the wires, in their order, when the option table is read", () => {
  // option_table.ts is on main.ts's start-up path, which must not load providers/ (see
  // tests/cli/startup/startup_graph_test.ts), so it spells the names out; this keeps them in step.
  const row = GLOBAL_OPTIONS.find((option) => option.flags === "--provider <name>");
  assertEquals(row?.choices, WIRE_NAMES);
});

Deno.test("every wire has its own name and the common keys when its config section is built", async () => {
  const zod = await import("zod");
  assertEquals(new Set(WIRE_NAMES).size, WIRES.length);
  for (const wire of WIRES) {
    assertEquals(wireNamed(wire.name), wire);
    const schema = wire.configSchema(zod) as unknown as { shape: Record<string, unknown> };
    const keys = Object.keys(schema.shape);
    for (const common of ["api_key", "model", "base_url", "max_tokens"]) {
      assert(keys.includes(common), `${wire.name}: no ${common} key`);
    }
    assertEquals(Object.keys(wire.keyDocs).sort(), [...keys].sort(), `${wire.name}: key words`);
    for (const key of Object.keys(wire.environment)) {
      assert(keys.includes(key), `${wire.name}: variable for unknown key ${key}`);
    }
    // An unknown key in the section is an error (the section is strict).
    assert(!schemaAccepts(wire.configSchema(zod), { no_such_key: 1 }), wire.name);
  }
});

function schemaAccepts(schema: unknown, value: unknown): boolean {
  return (schema as { safeParse(v: unknown): { success: boolean } }).safeParse(value).success;
}

Deno.test("every wire's own variable has a name the config loader looks for when it starts", () => {
  // loadConfig loads providers/ to know the wires' variables only when a name of this shape
  // is set (cli/config/config.ts, readsEnvironment): a variable named otherwise is never read.
  for (const wire of WIRES) {
    for (const name of Object.values(wire.environment)) {
      assert(WIRE_VARIABLE.test(name), `${wire.name}: ${name} does not match ${WIRE_VARIABLE}`);
    }
  }
});

Deno.test("every wire's API-key variable is removed from the tools' child processes when one is listed", () => {
  // tools/ imports nothing of providers/, so tools/_env.ts spells the names out; a wire whose
  // key variable is missing there would hand the key to every bash command the model runs.
  for (const wire of WIRES) {
    const name = wire.environment.api_key;
    if (name === undefined) continue; // a keyless wire reads no variable
    assert(SECRET_VARIABLES.includes(name), `${wire.name}: ${name} not in tools/_env.ts`);
  }
});
