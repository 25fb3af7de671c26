/**
 * Writes what is generated from the built-in tools' own definitions:
 * - docs/tool-schemas.json: the tools exactly as the model sees them;
 * - approver/builtin_tools.json: each tool's `facts`, for the layers that may not import
 *   tools/ (the approver) or load the tools' code (the CLI's isolate).
 *
 * `tests/tools/schemas_test.ts` fails when either file and the tools drift apart.
 *
 * @module
 */

import { createBuiltinTools, Registry } from "../mod.ts";

/** docs/tool-schemas.json's expected contents. */
export function renderSchemas(): string {
  return JSON.stringify(new Registry(createBuiltinTools()).definitions(), null, 2) + "\n";
}

/**
 * approver/builtin_tools.json's expected contents: each built-in tool's facts by name, in
 * `createBuiltinTools()` order (a tool that declares none has `{}`).
 */
export function renderFacts(): string {
  const facts = Object.fromEntries(createBuiltinTools().map((t) => [t.name, t.facts ?? {}]));
  return JSON.stringify(facts, null, 2) + "\n";
}

if (import.meta.main) {
  await Deno.writeTextFile(new URL("../docs/tool-schemas.json", import.meta.url), renderSchemas());
  await Deno.writeTextFile(
    new URL("../approver/builtin_tools.json", import.meta.url),
    renderFacts(),
  );
}
