/**
 * What a simple command does beyond its plain effect (spec: "What an allow grants: effects"):
 * `effectsOf(command)` lists the programs it runs, the files it writes, its changes to the
 * shell, and what cannot be known from the text. The approver (`expand.ts`) judges each one.
 *
 * Where the knowledge lives:
 * - `_table.ts`: the data. One `ProgramSpec` per program (options, operands, subcommands,
 *   wrappers), plus the lists of shells, interpreters, shell variables and changers, git config
 *   keys and find primaries. A new program whose options and operands the table's vocabulary
 *   can state is one entry there, and nothing else.
 * - `engine.ts`: `effectsOf`, which reads redirections and assignments and sends the program to
 *   the right reader; `options.ts` (getopt-style option reading, what an `OptionEffect` means),
 *   `generic.ts` (the walk over a plain entry), `_words.ts` (words, and where a write lands),
 *   `types.ts` (`Invocation`, `Effect`).
 * - One file per program family whose knowledge is not plain rows: `git.ts` and `git_config.ts`,
 *   `find.ts`, `sed.ts` (its scripts), `awk.ts` (its programs), `tar.ts`, `make.ts`,
 *   `coreutils.ts` (`dd`, `split`, `csplit`), `wrappers.ts`, `shells.ts`, `interpreters.ts`
 *   (and package runners). A program that needs a reader of its own gets an entry in `_table.ts`
 *   with `analyse` set, a family file, and a `case` in `engine.ts`'s `specEffects`.
 * - Tests: `tests/approver/effects/<family>_test.ts`.
 *
 * What the overlay makes redundant. When bash runs over an overlay of the roots
 * (`ApproverOptions.observed`; `doctor`: "bash changes observed"), the approver allows a
 * predicted `write` effect whose path resolves inside a root without consulting any rule
 * (`judgeWrite` in `approver.ts`); what the line really changed is judged after it ran
 * (`judgeChanges`: protected paths, deny rules, a rule's `effects: [write]` path, write rules).
 * So for writes inside the roots, the write knowledge is needed only by the fallback (no
 * overlay: `tools.bash.overlay: off`, no sandbox, a kernel that does not allow it): the table's
 * `write`, `writeTree`, `writeOperands` and `cwd` option effects and its `OperandEffect`s,
 * redirections, `find -delete`/`-fprint`, sed's `-i` and `w`, awk's `print >`, tar's `-f` and
 * `-x`, `dd of=`, split's prefixes, git's `.git`/work-tree/config/clone writes.
 * That same knowledge is still needed under the overlay for writes it finds outside the roots,
 * which are refused before the line runs ("outside the workspace"). It is still applied under
 * the overlay inside the roots in two ways the overlay would also cover, and which this folder
 * keeps as they are: a predicted write into a protected path, or a tree holding one (`tar -x`
 * or `find . -delete` at a root that holds the state directory), is refused before the line
 * runs (`expand.ts`); and a write whose place is not in the text (a pattern, a computed path,
 * `{}` of `find -exec`, a relative path after `cd`, a line that can also make links) is an
 * `unknown` effect that blocks the line.
 * Never redundant, with or without the overlay (it observes files, not what ran): every `run`,
 * `script`, `shell` and other `unknown` effect — wrappers, shells, interpreters and package
 * runners, git's config keys, aliases, hooks, pagers and editors, `find -exec`, sed's `e`,
 * awk's `system()` and pipes, tar's `--to-command`, make's `-f` and variables, shell variables
 * and changers — and deny rules, which also test the programs a line runs through effects.
 *
 * @module
 */

export { effectsOf, programName } from "./engine.ts";
export type { Effect, Invocation } from "./types.ts";
export { isShellVariable } from "./shells.ts";
export { sedScriptEffects } from "./sed.ts";
export { awkProgramEffects } from "./awk.ts";
