/**
 * Durations written and read the way Go's `time.Duration` does: `1m0s`, `1.5s`, `50ms`.
 *
 * @module
 */

const UNITS_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3, // U+00B5 micro sign
  "μs": 1e-3, // U+03BC Greek mu, which Go accepts too
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

function trimFraction(value: string): string {
  return value.includes(".") ? value.replace(/0+$/, "").replace(/\.$/, "") : value;
}

/** Formats milliseconds as Go prints a Duration (`1m0s`, `2m30s`, `1.5s`, `50ms`, `1h0m0s`). */
export function formatDuration(ms: number): string {
  ms = Math.round(ms * 1e6) / 1e6; // a Duration is whole nanoseconds
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  if (abs < 1) {
    const us = abs * 1000;
    return us < 1 ? `${sign}${Math.round(us * 1000)}ns` : `${sign}${trimFraction(us.toFixed(3))}µs`;
  }
  if (abs < 1000) return `${sign}${trimFraction(abs.toFixed(6))}ms`;
  const hours = Math.floor(abs / 3_600_000);
  const minutes = Math.floor((abs % 3_600_000) / 60_000);
  const seconds = trimFraction(((abs % 60_000) / 1000).toFixed(9));
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

/**
 * Parses a Go duration string (`500ms`, `90s`, `2m`, `1h30m`, `1.5s`) into milliseconds.
 * Throws a `RangeError` naming the accepted form when it is not one.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  if (trimmed === "" || trimmed === "0") {
    if (trimmed === "0") return 0;
  } else {
    while (at < trimmed.length) {
      part.lastIndex = at;
      const m = part.exec(trimmed);
      if (m === null) break;
      total += Number(m[1]) * UNITS_MS[m[2]!]!;
      at = part.lastIndex;
    }
    if (at === trimmed.length) return Math.round(total * 1e6) / 1e6; // whole nanoseconds
  }
  throw new RangeError(
    `invalid duration ${
      JSON.stringify(text)
    } (want a number with a unit, e.g. 500ms, 90s, 2m, 1h30m)`,
  );
}
