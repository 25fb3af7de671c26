/**
 * The version texts, and the start-up fast path that prints them and the program's help
 * without loading the argument parser (commander pulls in Node's compatibility layer:
 * `node:fs`, `node:child_process`, `node:process`, which is most of a cold start).
 *
 * @module
 */

import meta from "../../deno.json" with { type: "json" };
import { HELP } from "./help_text.ts";

/** The product version, from `deno.json`. */
export const VERSION: string = meta.version;

/** What `rousseau version` prints. */
export function versionReport(): string {
  return `rousseau ${VERSION}\ndeno ${Deno.version.deno}\ntarget ${Deno.build.target}\n`;
}

/**
 * The stdout of argument lists whose whole answer is a constant text (exit 0): `version`,
 * `--version` and `-v` alone, and `--help` and `-h` alone when stdout is not a terminal
 * (commander wraps help to a terminal's width; to a pipe it prints cli/startup/help_text.ts's text,
 * which tests/cli/commands/tools_test.ts keeps equal to commander's). Undefined for everything
 * else, which goes to the full CLI. The texts are exactly what the full CLI prints for the
 * same words (tests/cli/commands/tools_test.ts runs both paths).
 */
export function fastOutput(args: readonly string[], stdoutIsTerminal: boolean): string | undefined {
  if (args.length !== 1) return undefined;
  if (args[0] === "version") return versionReport();
  if (args[0] === "--version" || args[0] === "-v") return `${VERSION}\n`;
  if ((args[0] === "--help" || args[0] === "-h") && !stdoutIsTerminal) return HELP;
  return undefined;
}
