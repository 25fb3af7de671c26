/**
 * `rousseau audit verify [FILE]`: checks the audit log's hash chain and its head (kept beside
 * the log in `<FILE>.head`) and names the first line that was changed, removed or reordered.
 * A rotated log is checked whole: its rotated files (`<FILE>.000000001`, …) oldest first,
 * each hooked onto the one before, the oldest onto the start of the chain (or onto the start
 * recorded in `<FILE>.start` once older files were removed), and the head at the end.
 *
 * @module
 */

import { basename, join } from "node:path";
import {
  chainHead,
  type FileBreak,
  headPathOf,
  readAuditFiles,
  verifyFiles,
  verifyHead,
} from "../../approver/mod.ts";
import { loadConfig } from "../config/config.ts";
import { EXIT, UsageError } from "../errors.ts";
import type { GlobalFlags } from "../config/options.ts";
import { writeStdout } from "../terminal/output.ts";

/** Flags of `audit`. */
export interface AuditFlags extends GlobalFlags {
  /** `--json`. */
  readonly json?: boolean;
  /** `--head HASH`: the last line's hash as recorded elsewhere. */
  readonly head?: string;
}

function lineCount(text: string | undefined): number {
  return (text ?? "").split("\n").filter((line, i, all) => line !== "" || i < all.length - 1)
    .length;
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
    snapshot = await readAuditFiles(path);
  } catch (error) {
    throw new Error(`audit verify: cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const { head, start } = snapshot;
  const rotated = snapshot.files.slice(0, -1);
  const current = snapshot.files.at(-1)!;
  let broken: FileBreak | undefined;
  if (current.text === undefined && rotated.length === 0) {
    if (head === undefined && file !== undefined) {
      throw new Error(
        `audit verify: cannot read ${path}: no such file (nothing has been audited yet, or ` +
          "state.dir points elsewhere)",
      );
    }
    // The state directory's own log: with neither a log nor a head, nothing was audited yet.
    if (head !== undefined) {
      broken = {
        file: path,
        line: 1,
        problem: typeof head === "string"
          ? `the log is missing and its head file ${headPath} is damaged (${head})`
          : `the log is missing but its head records ${head.seq} ${
            head.seq === 1 ? "entry" : "entries"
          }: the log was deleted`,
      };
    }
  }
  const present = snapshot.files.filter((f) => f.text !== undefined);
  const lines = present.reduce((sum, f) => sum + lineCount(f.text), 0);
  // The head names the end of the chain: the last file holding a line (right after a
  // rotation that is the log itself again, from its first line on).
  const tail = [...present].reverse().find((f) => lineCount(f.text) > 0) ??
    { path, text: current.text ?? "" };
  const text = tail.text ?? "";
  broken ??= await verifyFiles(snapshot.files, start, path);
  const last = await chainHead(text);
  if (broken === undefined && flags.head !== undefined && flags.head.toLowerCase() !== last) {
    broken = {
      file: tail.path,
      line: lineCount(text),
      problem: `the last line's hash is ${last}, not the --head given: ` +
        "the last line was edited, or lines were removed from or added to the end",
    };
  }
  // A head given on the command line stands in for a missing head file.
  if (broken === undefined && !(head === undefined && flags.head !== undefined)) {
    const found = await verifyHead(text, head, headPath);
    if (found !== undefined) broken = { file: tail.path, ...found };
  }
  const files = present.length > 1
    ? ` in ${present.length} files (the oldest ${basename(present[0]!.path)})`
    : "";
  if (flags.json) {
    await writeStdout(
      JSON.stringify({
        file: path,
        lines,
        intact: broken === undefined,
        ...(present.length > 1 ? { files: present.map((f) => f.path) } : {}),
        ...(broken === undefined ? { head: last } : {
          ...(broken.file === path ? {} : { "broken_file": broken.file }),
          line: broken.line,
          problem: broken.problem,
        }),
      }) + "\n",
    );
  } else if (broken === undefined) {
    await writeStdout(`audit verify: ${path}: intact, ${lines} lines${files}, head ${last}\n`);
  } else {
    await writeStdout(`audit verify: ${broken.file}: line ${broken.line}: ${broken.problem}\n`);
  }
  return broken === undefined ? EXIT.ok : EXIT.failure;
}
