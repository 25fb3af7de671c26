/**
 * `rousseau audit verify [FILE]`: checks the audit log's hash chain and its head (kept beside
 * the log in `<FILE>.head`) and names the first line that was changed, removed or reordered.
 *
 * @module
 */

import { join } from "node:path";
import {
  type ChainBreak,
  chainHead,
  headPathOf,
  readAuditLog,
  verifyChain,
  verifyHead,
} from "../approver/mod.ts";
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
  const headPath = headPathOf(path);
  let snapshot;
  try {
    snapshot = await readAuditLog(path);
  } catch (error) {
    throw new Error(`audit verify: cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const { head } = snapshot;
  let text = snapshot.text;
  let broken: ChainBreak | undefined;
  if (text === undefined) {
    if (head === undefined && file !== undefined) {
      throw new Error(
        `audit verify: cannot read ${path}: no such file (nothing has been audited yet, or ` +
          "state.dir points elsewhere)",
      );
    }
    // The state directory's own log: with neither a log nor a head, nothing was audited yet.
    text = "";
    if (head !== undefined) {
      broken = {
        line: 1,
        problem: typeof head === "string"
          ? `the log is missing and its head file ${headPath} is damaged (${head})`
          : `the log is missing but its head records ${head.seq} ${
            head.seq === 1 ? "entry" : "entries"
          }: the log was deleted`,
      };
    }
  }
  const lines = text.split("\n").filter((line, i, all) => line !== "" || i < all.length - 1).length;
  broken ??= await verifyChain(text);
  const last = await chainHead(text);
  if (broken === undefined && flags.head !== undefined && flags.head.toLowerCase() !== last) {
    broken = {
      line: lines,
      problem: `the last line's hash is ${last}, not the --head given: ` +
        "the last line was edited, or lines were removed from or added to the end",
    };
  }
  // A head given on the command line stands in for a missing head file.
  if (broken === undefined && !(head === undefined && flags.head !== undefined)) {
    broken = await verifyHead(text, head, headPath);
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
