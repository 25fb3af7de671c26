/**
 * The shell itself and shells a command starts: variables that change what programs run or
 * load, declaration builtins, and `sh -c SCRIPT` (the script is judged as a line of its own).
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { SHELL_VARIABLE_PATTERNS, SHELL_VARIABLES } from "./_table.ts";
import type { Effect, Invocation } from "./types.ts";

/** True when the assignment of `name` changes what programs run or load. */
export function isShellVariable(name: string): boolean {
  return SHELL_VARIABLES.has(name) || SHELL_VARIABLE_PATTERNS.some((re) => re.test(name));
}

/** `export`, `declare`, `readonly`...: functions exported and variables that change the shell. */
export function declarationEffects(command: Invocation, name: string): Effect[] {
  const out: Effect[] = [];
  for (const word of command.argv.slice(1)) {
    if (word.includes(DYNAMIC)) {
      out.push({ kind: "unknown", what: `${name} with a word computed at run time` });
    } else if (/^-[a-zA-Z]*f/.test(word)) {
      out.push({ kind: "shell", what: `${name} -f exporting a function` });
    } else {
      const variable = /^([A-Za-z_][A-Za-z0-9_]*)(\+?=|$)/.exec(word)?.[1];
      if (variable !== undefined && isShellVariable(variable)) {
        out.push({ kind: "shell", what: `${name} ${variable}` });
      }
    }
  }
  return out;
}

/** `sh -c SCRIPT`, `bash script.sh`, `sh` reading its input. */
export function shellEffects(command: Invocation, name: string): Effect[] {
  const argv = command.argv;
  let inline = false;
  let stdin = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      return [{ kind: "unknown", what: `${name} with an option computed at run time` }];
    }
    if (word === "--" || word === "-") {
      i++;
      break;
    }
    if (/^--(rcfile|init-file)$/.test(word) || /^--(rcfile|init-file)=/.test(word)) {
      return [{ kind: "unknown", what: `${name} ${word} runs a startup file` }];
    }
    if (word.startsWith("--")) continue;
    if (!/^[-+]/.test(word)) break;
    const letters = word.slice(1);
    if (letters.includes("c")) inline = true;
    if (letters.includes("s") || letters.includes("i")) stdin = true;
    // `-o OPTION` and `-O OPTION` take the next word.
    if (/[oO]$/.test(letters)) i++;
  }
  const operand = argv[i];
  if (inline) {
    if (operand === undefined) {
      return [{ kind: "unknown", what: `${name} -c without a command` }];
    }
    if (operand.includes(DYNAMIC)) {
      return [{ kind: "unknown", what: `${name} -c runs a command computed at run time` }];
    }
    return [{ kind: "script", script: operand, via: `${name} -c` }];
  }
  if (stdin || operand === undefined) {
    return [{ kind: "unknown", what: `${name} reads the commands it runs from its input` }];
  }
  if (operand.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a script computed at run time` }];
  }
  return []; // runs the named script: its plain effect
}
