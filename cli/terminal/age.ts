/**
 * How long ago something was, as `session list` and the session picker show it.
 *
 * @module
 */

/** How long ago `iso` was, in the largest unit that fits: `now`, `5m`, `3h`, `2d`. */
export function age(iso: string, now: number): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return "now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}
