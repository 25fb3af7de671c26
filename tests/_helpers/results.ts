/**
 * Small builders shared by the tool tests.
 *
 * @module
 */

import type { ToolResult } from "../../mod.ts";

/** A successful result with `output`. */
export function ok(output: string): ToolResult {
  return { output, isError: false };
}

/** An error result with `output`. */
export function fail(output: string): ToolResult {
  return { output, isError: true };
}

/** Sorted names in `dir`. */
export async function list(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

/**
 * A signal that aborts, and stays aborted, as soon as `dir` holds a name not in `known`: it
 * cancels an edit at the first signal check after the temporary file exists.
 */
export function abortOnNewEntry(dir: string, known: readonly string[]): AbortSignal {
  const controller = new AbortController();
  const check = () => {
    if (controller.signal.aborted) return;
    for (const entry of Deno.readDirSync(dir)) {
      if (!known.includes(entry.name)) {
        controller.abort();
        return;
      }
    }
  };
  return new Proxy(controller.signal, {
    get(target, key) {
      if (key === "aborted" || key === "throwIfAborted") check();
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
