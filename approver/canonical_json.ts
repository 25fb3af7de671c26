/**
 * Canonical JSON: the parsed input serialised again, compactly. Escapes and whitespace in
 * the model's raw text disappear, so `{"command":"\u0072m"}` is seen as `{"command":"rm"}`.
 *
 * @module
 */

/** `JSON.stringify(input)`, with `undefined` as `null`. */
export function canonicalJson(input: unknown): string {
  return JSON.stringify(input) ?? "null";
}
