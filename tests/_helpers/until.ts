/**
 * Waiting in tests for something another process does: `until()` looks again and again until a
 * condition holds, and fails with what it waited for and the caller's diagnostics once a limit
 * has passed. Deno's tests have no timeout of their own, so an unbounded wait would hang the
 * whole suite instead of failing one test. The limit is a guard, never an assertion on time.
 *
 * @module
 */

/** How `until()` waits and what it says when it gives up. */
export interface UntilOptions {
  /**
   * Gives up after this many milliseconds.
   * @default 60_000
   */
  readonly limitMs?: number;
  /**
   * Looks again after this many milliseconds.
   * @default 100
   */
  readonly everyMs?: number;
  /** What a stuck test should show (a screen, a server's stderr, the answers so far). */
  readonly state?: () => string | Promise<string>;
}

/**
 * Resolves once `condition()` holds. Throws `waited <s> s for <what>; <state>` after `limitMs`;
 * a throw from `condition()` ends the wait at once (a caller that sees it can never hold).
 */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  options: UntilOptions = {},
): Promise<void> {
  const { limitMs = 60_000, everyMs = 100, state } = options;
  const deadline = performance.now() + limitMs;
  while (!(await condition())) {
    if (performance.now() > deadline) {
      const shown = state === undefined ? "" : `; ${await state()}`;
      throw new Error(`waited ${limitMs / 1000} s for ${what}${shown}`);
    }
    await pause(everyMs);
  }
}

/** Lets `ms` pass (to let another process work, never to assert on time). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
