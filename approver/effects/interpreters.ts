/**
 * Interpreters (`python`, `node`, `perl`...: code given inline cannot be judged; `-i` rewrites
 * files) and package runners (`npx PKG`, `npm exec`: the package's program is judged as a
 * command of its own).
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { INTERPRETERS } from "./_table.ts";
import { wordsOf, writeWord } from "./_words.ts";
import { foundEffects, parseOptions } from "./options.ts";
import type { Effect, Invocation } from "./types.ts";

/** `python -c CODE`, `node -e CODE`, `perl -pi -e ...`: code given inline cannot be judged. */
export function interpreterEffects(command: Invocation, name: string): Effect[] {
  const spec = INTERPRETERS[name]!;
  const argv = command.argv;
  const out: Effect[] = [];
  let inPlace = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith(DYNAMIC)) {
      return [{ kind: "unknown", what: `${name} with an option computed at run time` }];
    }
    if (word === "--") {
      i++;
      break;
    }
    if (word === "-") {
      return [{ kind: "unknown", what: `${name} reads the code it runs from its input` }];
    }
    if (!word.startsWith("-")) break;
    const inline = spec.inline.find((o) =>
      word === o || word.startsWith(`${o}=`) || (o.length === 2 && word.startsWith(o))
    );
    // Clustered single-letter flags (`perl -pie`, `ruby -ne`): any inline letter counts.
    const cluster = /^-[a-zA-Z]+$/.test(word) &&
      spec.inline.some((o) => o.length === 2 && word.slice(1).includes(o[1]!));
    if (inline !== undefined || (cluster && ["perl", "ruby"].includes(name))) {
      return [{
        kind: "unknown",
        what: `${name} ${inline ?? word} runs code given on the command line`,
      }];
    }
    if (
      spec.inPlace?.some((o) => word.startsWith(o)) || (/^-[a-zA-Z]*i/.test(word) && spec.inPlace)
    ) {
      inPlace = true;
    }
    // `python -m MODULE` runs a module by name: its plain effect, like a script.
    if (word === "-m" && name.startsWith("py")) return out;
    if (["-W", "-X", "-Q", "--import", "-I"].includes(word)) i++;
  }
  if (name === "deno") {
    const sub = argv[i];
    if (sub === "eval" || sub === "repl" || sub === undefined) {
      return [{ kind: "unknown", what: `deno ${sub ?? ""} runs code that is not in a file` }];
    }
    return out;
  }
  if (i >= argv.length) {
    return [{ kind: "unknown", what: `${name} reads the code it runs from its input` }];
  }
  if (argv[i]!.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${name} runs a script computed at run time` }];
  }
  if (inPlace) {
    for (const word of wordsOf(command, i + 1)) {
      out.push(writeWord(command, word, false, `${name} -i`));
    }
  }
  return out;
}

/** `npx PKG ARGS`, `npm exec -- PKG`: runs the package's program, judged as its own command. */
export function packageRunnerEffects(command: Invocation, name: string, from: number): Effect[] {
  const parsed = parseOptions(command, from, {
    "-p": { value: "required" },
    "--package": { value: "required" },
    "-c": { value: "required", effect: "script" },
    "--call": { value: "required", effect: "script" },
    "-w": { value: "required" },
    "--workspace": { value: "required" },
  }, true);
  const out: Effect[] = [];
  const via = from === 1 ? name : `${name} ${command.argv[from - 1]}`;
  out.push(...foundEffects(command, parsed.found, via));
  if (parsed.dynamicOption) {
    out.push({ kind: "unknown", what: `${via} runs a package computed at run time` });
  }
  const first = parsed.operands[0];
  if (first === undefined) {
    if (out.length === 0) out.push({ kind: "unknown", what: `${via} without a package` });
    return out;
  }
  out.push({ kind: "run", command: { argv: command.argv.slice(first.index) }, via });
  return out;
}
