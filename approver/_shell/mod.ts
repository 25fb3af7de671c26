/**
 * A parser for the POSIX shell language as dash (`/bin/sh` on Debian) reads it, written for
 * the approver: it finds every command a line runs, with each word's value after quote
 * removal, and says where it cannot be sure.
 *
 * What it models, as dash does (checked against dash 0.5.12, see tests/approver/shell_test.ts):
 * - backslash-newline is removed before anything else is read, everywhere but inside single
 *   quotes, comments and quoted here-documents: `"$\⏎(cmd)"` is a command substitution;
 * - words, quotes, escapes, `$name`, `${...}` (its inner word read for substitutions),
 *   `$((...))`, `$(...)` (parsed in place), backquotes (their text unescaped and parsed again),
 *   here-documents (bodies read at the next newline; unquoted ones for substitutions);
 * - lists, pipelines, `!`, subshells, groups, if/while/until/for/case, function definitions.
 *
 * Constructs bash reads differently when it is `/bin/sh` (`$'...'`, `$"..."`, `$[...]`,
 * `((`, `[[`, `function`, `${x@P}`, `${!x}`, brace expansion) are noted on the word or
 * command, so no allow rule passes them; `$'...'` also makes the caller parse the line a
 * second time the way bash would, so deny rules see both readings.
 *
 * Bounded: nesting deeper than `MAX_NESTING` and more than `MAX_STEPS` characters read in
 * all (backquotes are read again per level) stop the parse with a `ShellSyntaxError`.
 *
 * The parts: `syntax.ts` (limits, result shapes, the syntax error), `lexer.ts` (characters,
 * tokens, words and their expansions, here-document bodies), `parser.ts` (the grammar).
 *
 * @module
 */

export { BRACE_NOTE } from "./lexer.ts";
export { parseShell } from "./parser.ts";
export {
  type Budget,
  MAX_COMMANDS,
  MAX_NESTING,
  MAX_STEPS,
  MAX_WORDS,
  type ParseOptions,
  type ParseResult,
  type Part,
  type RawCommand,
  type RawRedirect,
  ShellSyntaxError,
  type Word,
} from "./syntax.ts";
