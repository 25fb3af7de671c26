/**
 * tar: old-style letter bundles, programs it runs (`--to-command`, `-I`, `--checkpoint-action`),
 * remote archives reached with rsh, the archive it creates and the tree it extracts into.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import type { OptionSpec } from "./_table.ts";
import { joinCwd, write, writeWord } from "./_words.ts";
import { optionEffects, parseOptions } from "./options.ts";
import type { Effect, Invocation } from "./types.ts";

/** Letters of old-style `tar xzf FILE` bundles that take the next word. */
const TAR_VALUE_LETTERS = "fbCTXNLVgKHIF";

/** tar's options that take a value or run a program. */
const TAR_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  "--to-command": { value: "required", effect: "script" },
  "-I": { value: "required", effect: "script" },
  "--use-compress-program": { value: "required", effect: "script" },
  "-F": { value: "required", effect: "script" },
  "--info-script": { value: "required", effect: "script" },
  "--new-volume-script": { value: "required", effect: "script" },
  "--rsh-command": { value: "required", effect: "program" },
  "--rmt-command": { value: "required", effect: "program" },
  "--checkpoint-action": { value: "required" },
  "-C": { value: "required" },
  "--directory": { value: "required" },
  "-f": { value: "required" },
  "--file": { value: "required" },
  "-g": { value: "required", effect: "write" },
  "--listed-incremental": { value: "required", effect: "write" },
  "--index-file": { value: "required", effect: "write" },
  "--volno-file": { value: "required", effect: "write" },
  "-T": { value: "required" },
  "--files-from": { value: "required" },
  "-X": { value: "required" },
  "--exclude-from": { value: "required" },
  "-b": { value: "required" },
  "-N": { value: "required" },
  "-L": { value: "required" },
  "-V": { value: "required" },
  "-K": { value: "required" },
  "-H": { value: "required" },
  "--format": { value: "required" },
  "--owner": { value: "required" },
  "--group": { value: "required" },
  "--mode": { value: "required" },
  "--mtime": { value: "required" },
  "--transform": { value: "required" },
  "--xform": { value: "required" },
  "--exclude": { value: "required" },
  "--checkpoint": { value: "optional" },
};

/** `tar`, old style (`tar xzf A`) or not: what it runs, extracts into and creates. */
export function tarEffects(command: Invocation, name: string): Effect[] {
  const argv = [...command.argv];
  const globs = [...(command.globs ?? argv.map(() => false))];
  // Old style: `tar xzf a.tgz -C dir` → `tar -x -z -f a.tgz -C dir`.
  const first = argv[1];
  if (first !== undefined && !first.startsWith("-") && !first.includes(DYNAMIC)) {
    const expanded: string[] = [];
    const values = argv.slice(2);
    let used = 0;
    for (const letter of first) {
      expanded.push(`-${letter}`);
      if (TAR_VALUE_LETTERS.includes(letter)) {
        if (used < values.length) expanded.push(values[used]!);
        used++;
      }
    }
    argv.splice(1, 1 + Math.min(used, values.length), ...expanded);
    globs.splice(1, 1 + Math.min(used, values.length), ...expanded.map(() => false));
  }
  const view: Invocation = { ...command, argv, globs };
  const parsed = parseOptions(view, 1, TAR_OPTIONS, false);
  const out: Effect[] = [];
  if (parsed.dynamicOption) {
    out.push({
      kind: "unknown",
      what: `a word computed at run time could be an option of ${name}`,
    });
  }
  const has = (...keys: string[]) => parsed.found.some((o) => keys.includes(o.key));
  let dir: string | undefined = command.cwd;
  let archive: string | undefined;
  for (const option of parsed.found) {
    const effect = option.spec?.effect;
    if (option.key === "-C" || option.key === "--directory") {
      if (option.value === undefined || option.value.includes(DYNAMIC)) {
        out.push({ kind: "unknown", what: `${name} -C changes to a computed directory` });
      } else dir = joinCwd(dir, option.value);
    }
    if (option.key === "-f" || option.key === "--file") archive = option.value;
    if (option.key === "--checkpoint-action") {
      const action = option.value ?? "";
      const exec = /^exec=(.*)$/s.exec(action)?.[1];
      if (exec !== undefined) {
        out.push(optionEffects(view, "script", exec, `${name} --checkpoint-action=exec`)[0]!);
      }
      continue;
    }
    if (effect !== undefined) {
      out.push(...optionEffects(view, effect, option.value, `${name} ${option.key}`, option.glob));
    }
  }
  if (archive !== undefined && /^[^/]*:/.test(archive) && !has("--force-local")) {
    out.push({
      kind: "unknown",
      what: `${name} -f ${archive} is a remote archive, reached with rsh`,
    });
  }
  const creates = has(
    "-c",
    "--create",
    "-r",
    "--append",
    "-u",
    "--update",
    "-A",
    "--catenate",
    "--concatenate",
    "--delete",
  );
  const extracts = has("-x", "--extract", "--get");
  if (creates && archive !== undefined && archive !== "-") {
    out.push(write(archive, false, `${name} -f`, view));
  }
  if (has("--remove-files")) {
    for (const operand of parsed.operands) {
      out.push(writeWord(view, operand, true, `${name} --remove-files`));
    }
  }
  if (extracts && !has("-O", "--to-stdout", "--to-command")) {
    if (has("-P", "--absolute-names")) {
      out.push({ kind: "unknown", what: `${name} -x -P writes wherever the archive says` });
    } else out.push(write(dir ?? ".", true, `${name} -x`, { argv: [] }));
  }
  return out;
}
