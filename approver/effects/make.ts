/**
 * make: options that run another makefile's recipes and variables that change what the
 * recipes run; the recipes of the workspace's own makefile are the operator's to vouch for.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { foundEffects, parseOptions } from "./options.ts";
import type { Effect, Invocation } from "./types.ts";

/** `make [options] [VAR=VALUE] [target]...`: what would make it run other recipes. */
export function makeEffects(command: Invocation, name: string): Effect[] {
  const parsed = parseOptions(command, 1, {
    "-f": { value: "required", effect: { unknown: `${name} -f runs the recipes of another file` } },
    "--file": {
      value: "required",
      effect: { unknown: `${name} -f runs the recipes of another file` },
    },
    "--makefile": {
      value: "required",
      effect: { unknown: `${name} -f runs the recipes of another file` },
    },
    "-C": { value: "required", effect: { unknown: `${name} -C runs another directory's recipes` } },
    "--directory": {
      value: "required",
      effect: { unknown: `${name} -C runs another directory's recipes` },
    },
    "-I": {
      value: "required",
      effect: { unknown: `${name} -I includes makefiles from elsewhere` },
    },
    "--include-dir": {
      value: "required",
      effect: { unknown: `${name} -I includes makefiles from elsewhere` },
    },
    "-E": { value: "required", effect: { unknown: `${name} --eval adds recipes` } },
    "--eval": { value: "required", effect: { unknown: `${name} --eval adds recipes` } },
    "-o": { value: "required" },
    "--old-file": { value: "required" },
    "--assume-old": { value: "required" },
    "-W": { value: "required" },
    "--what-if": { value: "required" },
    "--new-file": { value: "required" },
    "--assume-new": { value: "required" },
    "-j": { value: "optional" },
    "--jobs": { value: "optional" },
    "-l": { value: "optional" },
    "--load-average": { value: "optional" },
    "-O": { value: "optional" },
    "--output-sync": { value: "optional" },
    "--debug": { value: "optional" },
  }, false);
  const out: Effect[] = [];
  if (parsed.dynamicOption) {
    out.push({
      kind: "unknown",
      what: `a word computed at run time could be an option of ${name}`,
    });
  }
  out.push(...foundEffects(command, parsed.found, name));
  for (const operand of parsed.operands) {
    const variable = /^([^=:+?]+)(:{0,3}=|\+=|\?=|!=)/.exec(operand.text)?.[1];
    if (variable !== undefined) {
      out.push({
        kind: "unknown",
        what: `${name} ${variable}=... can change what the recipes run`,
      });
    } else if (operand.text.includes(DYNAMIC)) {
      out.push({ kind: "unknown", what: `${name} with a target computed at run time` });
    }
  }
  return out;
}
