/**
 * CLI failure classes, mapped to exit codes in one place (`cli/mod.ts`).
 *
 * @module
 */

/** Exit codes of the command-line contract. */
export const EXIT = Object.freeze({ ok: 0, failure: 1, usage: 2, sigint: 130, sigterm: 143 });

/** A mistake in how the command was called: exit 2, message on stderr. */
export class UsageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UsageError";
  }
}
