/**
 * Counts system calls between marks: a script run with `deno eval` under strace writes
 * `MARK\n` on stderr before each step (and after the last), and each step's count is how
 * many traced calls matching `counted` fall between its mark and the next. Paths of
 * descriptors are shown (`-y`), so `counted` may name the file a call acts on.
 *
 * @module
 */

import { assert } from "./assert.ts";

/** Runs `script` under strace (fsync, fdatasync and write traced); per step, the matching calls. */
export async function callsBetweenMarks(script: string, counted: RegExp): Promise<number[]> {
  const out = await new Deno.Command("strace", {
    args: ["-f", "-y", "-e", "trace=fsync,fdatasync,write", "-e", "signal=none"]
      .concat([Deno.execPath(), "eval", script]),
    stdout: "null",
    stderr: "piped",
  }).output();
  const trace = new TextDecoder().decode(out.stderr);
  assert(out.success, trace.slice(-2000));
  const counts: number[] = [];
  for (const line of trace.split("\n")) {
    if (/write\(2(<[^>]*>)?, "MARK\\n"/.test(line)) counts.push(0);
    else if (counted.test(line) && counts.length > 0) counts[counts.length - 1]!++;
  }
  return counts.slice(0, -1);
}
