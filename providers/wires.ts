/**
 * Every provider wire the CLI offers, in `--provider` order; the first is the default. One
 * line per wire: the CLI reads this list and names no provider itself.
 *
 * @module
 */

import { anthropicWire } from "./anthropic.ts";
import { openAiWire } from "./openai.ts";
import type { ProviderWire } from "./wire.ts";

/** The wires; the first is used when no provider is configured. */
export const WIRES: readonly [ProviderWire, ...ProviderWire[]] = [
  anthropicWire,
  openAiWire,
];

/** The wires' names, in order (a non-empty tuple, as `z.enum` takes it). */
export const WIRE_NAMES = WIRES.map((wire) => wire.name) as [string, ...string[]];

/** The wire called `name`, if there is one. */
export function wireNamed(name: string): ProviderWire | undefined {
  return WIRES.find((wire) => wire.name === name);
}
