/**
 * What a simple command does beyond its plain effect (spec: "What an allow grants: effects").
 *
 * `effectsOf` reads one command — its words after quote removal, its prefix assignments and
 * its redirections — and lists every further effect: another program it runs, a file it
 * writes, a change to the shell itself, or something that cannot be known from the text.
 * It is pure: the approver resolves paths and judges each effect as a call of its own.
 * This file dispatches: redirections, then the program by name (shell changers, declaration
 * builtins, wrappers, shells, interpreters, a family file for `analyse` entries, else the
 * generic walk over the table entry).
 *
 * Hazard: every branch here must fail closed. When a word is computed at run time, a path is
 * a pattern, or a program's input cannot be read with certainty, the answer is an `unknown`
 * effect, never silence.
 *
 * @module
 */

import { basename } from "node:path";
import { DYNAMIC, type Redirect } from "../shell.ts";
import {
  DECLARATION_BUILTINS,
  INTERPRETERS,
  PROGRAMS,
  type ProgramSpec,
  SHELL_CHANGERS,
  SHELLS,
  WRAPPERS,
} from "./_table.ts";
import { write } from "./_words.ts";
import { awkEffects } from "./awk.ts";
import { ddEffects, splitEffects } from "./coreutils.ts";
import { findEffects } from "./find.ts";
import { genericEffects } from "./generic.ts";
import { gitEffects } from "./git.ts";
import { interpreterEffects, packageRunnerEffects } from "./interpreters.ts";
import { makeEffects } from "./make.ts";
import { parseOptions } from "./options.ts";
import { sedEffects } from "./sed.ts";
import { declarationEffects, isShellVariable, shellEffects } from "./shells.ts";
import { tarEffects } from "./tar.ts";
import type { Effect, Invocation } from "./types.ts";
import { wrapperEffects } from "./wrappers.ts";

/** Files a write to which changes nothing. */
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/[0-9]+)$/;
const WRITE_OPS = new Set([">", ">>", ">|", "<>", "&>", "&>>"]);

/** Every effect of `command` beyond its plain one. */
export function effectsOf(command: Invocation): Effect[] {
  const out: Effect[] = [];
  for (const assignment of command.assignments ?? []) {
    if (isShellVariable(assignment.name)) {
      out.push({ kind: "shell", what: `assigning ${assignment.name}` });
    }
  }
  for (const redirect of command.redirects ?? []) out.push(...redirectEffects(redirect, command));
  if (command.argv.length > 0) out.push(...programEffects(command));
  // Writing to /dev/null and the standard streams changes nothing.
  return out.filter((e) => e.kind !== "write" || !HARMLESS_TARGETS.test(e.path));
}

function redirectEffects(redirect: Redirect, command: Invocation): Effect[] {
  const via = `the redirection ${redirect.fd ?? ""}${redirect.op}`;
  if (WRITE_OPS.has(redirect.op)) return [write(redirect.target, false, via, command)];
  if (redirect.op === ">&") {
    // `>&2`, `>&-` duplicate or close a descriptor; `>&file` (bash) writes the file.
    if (/^([0-9]+|-)$/.test(redirect.target)) return [];
    return [write(redirect.target, false, via, command)];
  }
  if (redirect.op === "<&" && !/^([0-9]+|-)$/.test(redirect.target)) {
    return [{ kind: "unknown", what: `${via}${redirect.target} duplicates a computed descriptor` }];
  }
  return [];
}

/** The program's name as the table knows it: `/usr/bin/git` → `git`. */
export function programName(word: string): string {
  return basename(word);
}

function programEffects(command: Invocation): Effect[] {
  const argv0 = command.argv[0]!;
  if (argv0.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: "the program's name is computed at run time" }];
  }
  if (command.globs?.[0]) {
    return [{ kind: "unknown", what: `the program ${argv0} is a pattern the shell expands` }];
  }
  const name = programName(argv0);
  const changer = SHELL_CHANGERS[name];
  if (changer !== undefined) return [{ kind: "shell", what: changer }];
  if (DECLARATION_BUILTINS.has(name)) return declarationEffects(command, name);
  if (name === "command" && command.argv.slice(1).some((w) => /^-[a-zA-Z]*[vV]/.test(w))) {
    return []; // `command -v NAME` prints where NAME is
  }
  const wrapper = WRAPPERS[name];
  if (wrapper !== undefined) return wrapperEffects(command, name, wrapper);
  if (SHELLS.has(name)) return shellEffects(command, name);
  if (name in INTERPRETERS) return interpreterEffects(command, name);
  const spec = PROGRAMS[name];
  if (spec === undefined) return [];
  return specEffects(command, name, spec, 1);
}

/** The effects of a spec'd program from argv[from]. */
function specEffects(
  command: Invocation,
  name: string,
  spec: ProgramSpec,
  from: number,
): Effect[] {
  switch (spec.analyse) {
    case "find":
      return findEffects(command);
    case "sed":
      return sedEffects(command, name);
    case "awk":
      return awkEffects(command, name);
    case "tar":
      return tarEffects(command, name);
    case "dd":
      return ddEffects(command);
    case "make":
      return makeEffects(command, name);
    case "interpreter":
      return packageRunnerEffects(command, name, from);
    case "split":
      return splitEffects(command, name);
    case "git":
      if (name === "git") return gitEffects(command);
  }
  if (spec.subcommands !== undefined) return subcommandEffects(command, name, spec, from);
  const parsed = parseOptions(command, from, spec.options ?? {}, spec.optionsFirst ?? false);
  return genericEffects(command, name, spec, parsed);
}

/** `npm [options] SUBCOMMAND ...`: global options, then the subcommand's own entry. */
function subcommandEffects(
  command: Invocation,
  name: string,
  spec: ProgramSpec,
  from: number,
): Effect[] {
  const global = parseOptions(command, from, spec.options ?? {}, true);
  const { subcommands: _subcommands, ...own } = spec;
  const out = genericEffects(command, name, { ...own, operands: "read" }, {
    ...global,
    operands: [],
  });
  const first = global.operands[0];
  if (first === undefined) return out;
  if (first.text.includes(DYNAMIC)) {
    out.push({ kind: "unknown", what: `${name} with a subcommand computed at run time` });
    return out;
  }
  const sub = spec.subcommands![first.text];
  if (sub === undefined) {
    if (!spec.otherSubcommandsPlain) {
      out.push({
        kind: "unknown",
        what: `${name} ${first.text} is not a subcommand the checker knows`,
      });
    }
    return out;
  }
  out.push(...specEffects(command, `${name} ${first.text}`, sub, first.index + 1));
  return out;
}
