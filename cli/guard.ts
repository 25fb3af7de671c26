/**
 * The one boundary every command runs inside: SIGINT and SIGTERM abort the command's signal
 * (and set the exit code, 130 or 143), a `UsageError` is `rousseau: …` and exit 2, any other
 * failure `rousseau: …` and exit 1.
 *
 * @module
 */

import { EXIT, UsageError } from "./errors.ts";
import { writeStderr } from "./terminal/output.ts";

/** Runs `work` with a signal that the first SIGINT or SIGTERM aborts; returns the exit code. */
export async function guarded(work: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const controller = new AbortController();
  let caught: "SIGINT" | "SIGTERM" | undefined;
  const listeners = (["SIGINT", "SIGTERM"] as const).map((name) => {
    const listener = () => {
      caught ??= name;
      controller.abort(new Error(`interrupted by ${name}`));
    };
    Deno.addSignalListener(name, listener);
    return [name, listener] as const;
  });
  try {
    const code = await work(controller.signal);
    if (caught === "SIGINT") return EXIT.sigint;
    if (caught === "SIGTERM") return EXIT.sigterm;
    return code;
  } catch (error) {
    if (error instanceof UsageError) {
      await writeStderr(`rousseau: ${error.message}`);
      return EXIT.usage;
    }
    await writeStderr(`rousseau: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failure;
  } finally {
    for (const [name, listener] of listeners) Deno.removeSignalListener(name, listener);
  }
}
