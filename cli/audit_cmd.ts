/**
 * `rousseau audit verify [FILE]`: checks the audit log's hash chain and names the first
 * line that was changed, removed or reordered.
 *
 * @module
 */

import { join } from "node:path";
import { chainHead, verifyChain } from "../approver/mod.ts";
import { loadConfig } from "./config.ts";
import { EXIT, UsageError } from "./errors.ts";
import type { GlobalFlags } from "./options.ts";
import { writeStdout } from "./output.ts";

/** Flags of `audit`. */
export interface AuditFlags extends GlobalFlags {
  /** `--json`. */
  readonly json?: boolean;
  /** `--head HASH`: the last line's hash as recorded elsewhere. */
  readonly head?: string;
}

/** Runs `audit ACTION [FILE]` and returns the exit code: 0 intact, 1 broken or unreadable. */
export async function auditCommand(
  action: string,
  file: string | undefined,
  flags: AuditFlags,
): Promise<number> {
  if (action !== "verify") {
    throw new UsageError(`audit: unknown action ${JSON.stringify(action)} (want verify)`);
  }
  const path = file ?? join((await loadConfig(flags.config)).stateDir, "audit.jsonl");
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? "no such file (nothing has been audited yet, or state.dir points elsewhere)"
      : (error as Error).message;
    throw new Error(`audit verify: cannot read ${path}: ${why}`, { cause: error });
  }
  const lines = text.split("\n").filter((line, i, all) => line !== "" || i < all.length - 1).length;
  let broken = await verifyChain(text);
  const last = await chainHead(text);
  if (broken === undefined && flags.head !== undefined && flags.head.toLowerCase() !== last) {
    broken = {
      line: lines,
      problem: `the last line's hash is ${last}, not the --head given: ` +
        "the last line was edited, or lines were removed from or added to the end",
    };
  }
  if (flags.json) {
    await writeStdout(
      JSON.stringify({
        file: path,
        lines,
        intact: broken === undefined,
        ...(broken === undefined ? { head: last } : { line: broken.line, problem: broken.problem }),
      }) + "\n",
    );
  } else if (broken === undefined) {
    await writeStdout(`audit verify: ${path}: intact, ${lines} lines, head ${last}\n`);
  } else {
    await writeStdout(`audit verify: ${path}: line ${broken.line}: ${broken.problem}\n`);
  }
  return broken === undefined ? EXIT.ok : EXIT.failure;
}
