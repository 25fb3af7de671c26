/**
 * Programs that run their operands as another command (`WRAPPERS` in `_table.ts` says how each
 * finds its command): the command is reported as a `run` effect with the wrapper's directory and
 * assignments, so the rules judge it as a simple command of its own.
 *
 * @module
 */

import { type Assignment, DYNAMIC } from "../shell.ts";
import type { ProgramSpec } from "./_table.ts";
import { joinCwd, write } from "./_words.ts";
import { optionEffects, parseOptions } from "./options.ts";
import { isShellVariable } from "./shells.ts";
import type { Effect, Invocation } from "./types.ts";

/** `env`, `nice`, `xargs`, `sudo`, `timeout`...: the command they run, judged as its own. */
export function wrapperEffects(command: Invocation, name: string, spec: ProgramSpec): Effect[] {
  const wrapper = spec.wrapper!;
  const argv = command.argv;
  const parsed = parseOptions(command, 1, spec.options ?? {}, true);
  const out: Effect[] = [];
  let cwd = command.cwd;
  let hasScript = false;
  for (const option of parsed.found) {
    const effect = option.spec?.effect;
    if (effect === undefined) continue;
    if (effect === "cwd") {
      if (option.value === undefined || option.value.includes(DYNAMIC)) {
        out.push({
          kind: "unknown",
          what: `${name} ${option.key} changes to a computed directory`,
        });
      } else cwd = joinCwd(cwd, option.value);
      continue;
    }
    if (effect === "script") hasScript = true;
    out.push(...optionEffects(command, effect, option.value, `${name} ${option.key}`, option.glob));
  }
  if (parsed.dynamicOption) {
    out.push({ kind: "unknown", what: `${name} runs a command computed at run time` });
    return out;
  }
  let start = parsed.operands[0]?.index ?? argv.length;
  const skipped = argv.slice(start, start + (wrapper.skip ?? 0));
  if (wrapper.writesSkipped && skipped[0] !== undefined && !/^[0-9]+$/.test(skipped[0])) {
    out.push(write(skipped[0], false, name, command));
  }
  start += wrapper.skip ?? 0;
  const assignments: Assignment[] = [...command.assignments ?? []];
  if (wrapper.assignments) {
    while (start < argv.length && /^[^=]+=/.test(argv[start]!)) {
      const word = argv[start]!;
      const eq = word.indexOf("=");
      const assignment = { name: word.slice(0, eq), value: word.slice(eq + 1) };
      if (isShellVariable(assignment.name)) {
        out.push({ kind: "shell", what: `${name} assigning ${assignment.name}` });
      }
      assignments.push(assignment);
      start++;
    }
  }
  const rest = argv.slice(start);
  if (rest.length === 0) {
    if (hasScript || wrapper.bare !== "shell") return out;
    out.push({ kind: "unknown", what: `${name} without a command runs a shell` });
    return out;
  }
  if (wrapper.joinsAsScript) {
    out.push({ kind: "script", script: rest.join(" "), via: name });
    return out;
  }
  const globs = command.globs?.slice(start);
  const inner: Invocation = {
    argv: wrapper.appendsInput ? [...rest, DYNAMIC] : rest,
    ...(globs === undefined ? {} : { globs }),
    assignments: assignments.filter((a) => !isShellVariable(a.name)),
    ...(cwd === undefined ? {} : { cwd }),
  };
  out.push({ kind: "run", command: inner, via: name });
  return out;
}
