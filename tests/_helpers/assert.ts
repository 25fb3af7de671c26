/**
 * The std/assert shape on `node:assert/strict` (JSR is out of reach here).
 *
 * @module
 */

import assert from "node:assert/strict";

/** Deep strict equality. */
export function assertEquals<T>(actual: T, expected: T, message?: string): void {
  assert.deepStrictEqual(actual, expected, message);
}

/** Strict inequality. */
export function assertNotEquals<T>(actual: T, expected: T, message?: string): void {
  assert.notDeepStrictEqual(actual, expected, message);
}

/** Truthiness. */
export function assert_(condition: unknown, message?: string): asserts condition {
  assert.ok(condition, message);
}
export { assert_ as assert };

/** `text` contains `part`. */
export function assertStringIncludes(text: string, part: string, message?: string): void {
  assert.ok(
    text.includes(part),
    message ?? `expected ${JSON.stringify(text)} to include ${JSON.stringify(part)}`,
  );
}

/** `text` matches `pattern`. */
export function assertMatch(text: string, pattern: RegExp, message?: string): void {
  assert.match(text, pattern, message);
}

/** `fn` throws an instance of `ErrorClass`; returns the error. */
export function assertThrows<E extends Error>(
  fn: () => unknown,
  ErrorClass: new (...args: never[]) => E = Error as unknown as new (...args: never[]) => E,
): E {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ErrorClass, `expected ${ErrorClass.name}, got ${String(error)}`);
    return error as E;
  }
  throw new assert.AssertionError({ message: "expected the function to throw" });
}

/** `fn` rejects with an instance of `ErrorClass`; returns the error. */
export async function assertRejects<E extends Error>(
  fn: () => Promise<unknown>,
  ErrorClass: new (...args: never[]) => E = Error as unknown as new (...args: never[]) => E,
): Promise<E> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof ErrorClass, `expected ${ErrorClass.name}, got ${String(error)}`);
    return error as E;
  }
  throw new assert.AssertionError({ message: "expected the promise to reject" });
}
