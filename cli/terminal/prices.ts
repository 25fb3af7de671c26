/**
 * List prices of the models whose cost chat shows, in US dollars per million tokens, as the
 * providers publish them (anthropic.com/pricing, openai.com/api/pricing). A model not listed
 * here gets no cost at all: a wrong figure is worse than none. Local servers cost nothing
 * per token and are not listed either.
 *
 * @module
 */

import type { Usage } from "../../providers/types.ts";

/** Dollars per million tokens. */
export interface Price {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
}

function price(input: number, output: number, cacheRead: number, cacheWrite = input): Price {
  return { input, output, cacheRead, cacheWrite };
}

/** By model name as sent to the API; a dated snapshot (`-20250929`) takes its family's price. */
export const PRICES: Readonly<Record<string, Price>> = {
  "claude-opus-4-5": price(5, 25, 0.5, 6.25),
  "claude-opus-4-1": price(15, 75, 1.5, 18.75),
  "claude-opus-4": price(15, 75, 1.5, 18.75),
  "claude-sonnet-4-5": price(3, 15, 0.3, 3.75),
  "claude-sonnet-4": price(3, 15, 0.3, 3.75),
  "claude-3-7-sonnet": price(3, 15, 0.3, 3.75),
  "claude-haiku-4-5": price(1, 5, 0.1, 1.25),
  "claude-3-5-haiku": price(0.8, 4, 0.08, 1),
  "gpt-5": price(1.25, 10, 0.125),
  "gpt-5-mini": price(0.25, 2, 0.025),
  "gpt-5-nano": price(0.05, 0.4, 0.005),
  "gpt-4.1": price(2, 8, 0.5),
  "gpt-4.1-mini": price(0.4, 1.6, 0.1),
  "gpt-4.1-nano": price(0.1, 0.4, 0.025),
  "gpt-4o": price(2.5, 10, 1.25),
  "gpt-4o-mini": price(0.15, 0.6, 0.075),
  "o3": price(2, 8, 0.5),
  "o4-mini": price(1.1, 4.4, 0.275),
};

/** The price of `model`, or undefined when it is not known. */
export function priceOf(model: string): Price | undefined {
  const exact = PRICES[model];
  if (exact !== undefined) return exact;
  // `claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`, `claude-3-5-haiku-latest`.
  const family = model.replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "");
  return family === model ? undefined : PRICES[family];
}

/** What `usage` cost on `model` in dollars, or undefined for a model without a price. */
export function costOf(model: string, usage: Usage): number | undefined {
  const p = priceOf(model);
  if (p === undefined) return undefined;
  return (usage.inputTokens * p.input + usage.outputTokens * p.output +
    usage.cacheReadTokens * p.cacheRead + usage.cacheWriteTokens * p.cacheWrite) / 1_000_000;
}

/** `$0.0123`, `$1.24`. */
export function dollars(amount: number): string {
  return `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`;
}
