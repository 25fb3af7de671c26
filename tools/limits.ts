/**
 * Default limits, in one place so descriptions and docs interpolate them.
 *
 * @module
 */

import type { Limits } from "./types.ts";

/** read: bytes returned verbatim before truncation. */
export const DEFAULT_READ_MAX_BYTES = 262_144;
/** edit: the largest file edit reads (16 MiB). */
export const DEFAULT_EDIT_MAX_BYTES = 16 * 1024 * 1024;
/** grep: rows returned before truncation. */
export const DEFAULT_GREP_MAX_MATCHES = 200;
/** grep: files larger than this are skipped (4 MiB). */
export const DEFAULT_GREP_MAX_FILE_BYTES = 4 * 1024 * 1024;
/** bash: timeout of one command (60 s). */
export const DEFAULT_BASH_TIMEOUT_MS = 60_000;
/** bash: output bytes kept (first and last halves). */
export const DEFAULT_BASH_MAX_OUTPUT_BYTES = 131_072;
/** bash: processes (threads included) a sandboxed command may have (a pids cgroup). */
export const DEFAULT_BASH_MAX_PROCESSES = 512;
/**
 * grep: the largest compiled pattern (RE2 program instructions; `a{1000}` is 1,002). Matching
 * is linear in the text, but each byte costs up to one step per instruction: measured here, a
 * 28,806-instruction alternation took 33 s over one 4 MiB file, so one call could hold the
 * tool worker for hours. RE2 itself caps its program by memory (`max_mem`) for this reason.
 */
export const GREP_MAX_PROGRAM_SIZE = 10_000;
/** grep: characters of one row's text before it is cut with `…`. */
export const GREP_MAX_LINE_CHARS = 2000;
/** read, edit, grep: bytes sniffed for a NUL to tell binary from text. */
export const BINARY_SNIFF_BYTES = 512;

/** The built-in defaults. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  readMaxBytes: DEFAULT_READ_MAX_BYTES,
  editMaxBytes: DEFAULT_EDIT_MAX_BYTES,
  grepMaxMatches: DEFAULT_GREP_MAX_MATCHES,
  grepMaxFileBytes: DEFAULT_GREP_MAX_FILE_BYTES,
  bashTimeoutMs: DEFAULT_BASH_TIMEOUT_MS,
  bashMaxOutputBytes: DEFAULT_BASH_MAX_OUTPUT_BYTES,
});
