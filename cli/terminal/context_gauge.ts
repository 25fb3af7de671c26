/**
 * How the context is shown to a person: chat's gauge after each turn and the line a
 * compaction prints (chat) or logs (run).
 *
 * @module
 */

import type { Compaction } from "../../agent/types.ts";

/** `12.3k`, `200k`, `950`. */
export function tokens(n: number): string {
  if (n < 1000) return String(n);
  const k = n / 1000;
  return `${k >= 100 || Number.isInteger(k) ? Math.round(k) : k.toFixed(1)}k`;
}

/** `context 12.3k / 200k tokens (6%)`, with the compactions so far. */
export function gaugeLine(
  window: number | undefined,
  used: number,
  compactions: number,
): string {
  const size = window === undefined
    ? `context ${tokens(used)} tokens (window unknown until the server states it)`
    : `context ${tokens(used)} / ${tokens(window)} tokens (${
      Math.min(100, Math.round((used / window) * 100))
    }%)`;
  return compactions === 0 ? size : `${size} · compacted ${compactions}×`;
}

/** `context compacted (near the window): 5 old tool results elided, ...`. */
export function compactionLine(event: Compaction): string {
  const why = {
    threshold: "near the window",
    overflow: "the server said the prompt is too long",
    manual: "/compact",
  }[event.reason];
  const did = [
    ...(event.elided === 0 ? [] : [`${event.elided} old tool result(s) elided`]),
    ...(event.summarized === 0 ? [] : [`${event.summarized} message(s) summarised`]),
  ].join(", ");
  return `context compacted (${why}): ${did}; ${tokens(event.tokensBefore)} → ${
    tokens(event.tokensAfter)
  } tokens${event.window === undefined ? "" : ` of ${tokens(event.window)}`}`;
}
