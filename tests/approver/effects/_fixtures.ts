/**
 * Shared by the effects tests: what the engine reads from the first simple command of a line,
 * without `via` texts, and the table-test loop over rows of a line and its effects.
 */

import { type Effect, effectsOf, splitCommands } from "../../../approver/mod.ts";
import { assertEquals } from "../../_helpers/assert.ts";

/** A line and the effects the engine must read from its first simple command. */
export type Row = [string, unknown[]];

/** The effects of the first simple command of `line`, without `via` texts. */
export async function effects(line: string): Promise<unknown[]> {
  const split = await splitCommands(line);
  return effectsOf(split.commands[0]!).map((e: Effect) => {
    switch (e.kind) {
      case "write":
        return ["write", e.path, e.tree];
      case "run":
        return ["run", e.command.argv.join(" ")];
      case "script":
        return ["script", e.script];
      default:
        return [e.kind];
    }
  });
}

/** One step per row, named by the line. */
export async function checkRows(t: Deno.TestContext, rows: readonly Row[]): Promise<void> {
  for (const [line, want] of rows) {
    await t.step(line, async () => assertEquals(await effects(line), want));
  }
}
