/**
 * Chat's quiet line after each turn and its `/cost` answer (tokens in and out, the context
 * used, and the cost when the model has a price, cli/terminal/prices.ts), and its header fitted to
 * the terminal.
 *
 * @module
 */

import type { Usage } from "../../providers/types.ts";
import { tokens } from "./context_gauge.ts";
import { dollars } from "./prices.ts";

/** `· 1.2k in · 35 out · context 1.3k / 200k (1%) · $0.0042`. */
export function statusLine(
  usage: Usage,
  context: { readonly window: number | undefined; readonly used: number },
  cost: number | undefined,
): string {
  const read = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  const window = context.window === undefined
    ? `context ${tokens(context.used)}`
    : `context ${tokens(context.used)} / ${tokens(context.window)} (${
      Math.min(100, Math.round((context.used / context.window) * 100))
    }%)`;
  return [
    `· ${tokens(read)} in`,
    `${tokens(usage.outputTokens)} out`,
    window,
    ...(cost === undefined ? [] : [dollars(cost)]),
  ].join(" · ");
}

/** `/cost`: what this chat spent so far. */
export function costLine(
  usage: Usage,
  cost: number | undefined,
  models: readonly string[],
): string {
  const read = usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  const spent = cost === undefined
    ? `no price known for ${models.join(", ")} (see cli/terminal/prices.ts)`
    : `${dollars(cost)} at list prices`;
  return `this chat: ${tokens(read)} tokens in, ${tokens(usage.outputTokens)} out · ${spent}`;
}

/**
 * A line of ` · `-separated fields (the layers header) fitted to `width` columns: it breaks
 * between fields, never inside one, and continuation lines are indented by two spaces. A
 * field wider than the terminal stands alone on its line.
 */
export function fitFields(line: string, width: number): string {
  const lines: string[] = [];
  let current = "";
  for (const field of line.split(" · ")) {
    const joined = current === "" ? field : `${current} · ${field}`;
    if (current !== "" && joined.length > width) {
      lines.push(current);
      current = `  ${field}`;
    } else current = joined;
  }
  lines.push(current);
  return lines.join("\n");
}
