/**
 * git: global options (`-c`, `-C`, `--exec-path`...), the subcommand's entry in `_table.ts`,
 * and the subcommands whose listing forms read while their other forms change the repository
 * or the work tree (branch, tag, stash, config, clone...).
 *
 * @module
 */

import { basename } from "node:path";
import { DYNAMIC } from "../shell.ts";
import { type OptionSpec, PROGRAMS } from "./_table.ts";
import { write } from "./_words.ts";
import { foundEffects, optionEffects, type Parsed, parseOptions } from "./options.ts";
import type { Effect, Invocation } from "./types.ts";

/** Options with values of the subcommands `gitStateEffects` reads (branch, tag...). */
const GIT_BRANCH_VALUES: Readonly<Record<string, OptionSpec>> = {
  "--contains": { value: "required" },
  "--no-contains": { value: "required" },
  "--merged": { value: "required" },
  "--no-merged": { value: "required" },
  "--points-at": { value: "required" },
  "--sort": { value: "required" },
  "--format": { value: "required" },
  "-u": { value: "required" },
  "--set-upstream-to": { value: "required" },
  "-m": { value: "required" },
  "--message": { value: "required" },
  "-F": { value: "required" },
  "--file": { value: "required" },
  "--color": { value: "optional" },
  "--column": { value: "optional" },
  "--abbrev": { value: "optional" },
  "-n": { value: "optional" },
};

/** `git [global options] SUBCOMMAND ...`: the subcommand's entry in `_table.ts`, then its state. */
export function gitEffects(command: Invocation): Effect[] {
  const global = parseOptions(command, 1, PROGRAMS.git!.options ?? {}, true);
  const out: Effect[] = [];
  for (const option of global.found) {
    if (option.spec?.effect !== undefined) {
      out.push(
        ...optionEffects(
          command,
          option.spec.effect,
          option.value,
          `git ${option.key}`,
          option.glob,
        ),
      );
    }
  }
  const first = global.operands[0];
  if (global.dynamicOption || first?.text.includes(DYNAMIC)) {
    out.push({ kind: "unknown", what: "git with a subcommand or option computed at run time" });
    return out;
  }
  if (first === undefined) return out;
  const sub = first.text;
  const spec = PROGRAMS.git!.subcommands?.[sub];
  if (spec === undefined) {
    out.push({
      kind: "unknown",
      what: `git ${sub} is not a subcommand the checker knows (an alias or a git-${sub} program?)`,
    });
    return out;
  }
  const options = { ...spec.options, ...(spec.analyse === "git" ? GIT_BRANCH_VALUES : {}) };
  const parsed = parseOptions(command, first.index + 1, options, false);
  const via = `git ${sub}`;
  if (parsed.dynamicOption) {
    out.push({ kind: "unknown", what: `a word computed at run time could be an option of ${via}` });
  }
  out.push(...foundEffects(command, parsed.found, via));
  if (spec.always !== undefined) out.push(...optionEffects(command, spec.always, undefined, via));
  const gitdir: Effect = write(".git", true, via, command);
  const worktree: Effect = write(".", true, via, command);
  if (spec.writes === "gitdir") out.push(gitdir);
  if (spec.writes === "worktree") out.push(worktree);
  if (spec.analyse === "git") out.push(...gitStateEffects(command, sub, parsed, gitdir, worktree));
  return out;
}

/** The subcommands whose listing forms read and whose other forms change state. */
function gitStateEffects(
  command: Invocation,
  sub: string,
  parsed: Parsed,
  gitdir: Effect,
  worktree: Effect,
): Effect[] {
  const has = (...keys: string[]) => parsed.found.some((o) => keys.includes(o.key));
  const operands = parsed.operands.map((o) => o.text);
  const via = `git ${sub}`;
  switch (sub) {
    case "branch": {
      if (has("--edit-description")) {
        return [{ kind: "unknown", what: "git branch --edit-description runs an editor" }];
      }
      const changes = has(
        "-d",
        "-D",
        "--delete",
        "-m",
        "-M",
        "--move",
        "-c",
        "-C",
        "--copy",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "-f",
        "--force",
        "-t",
        "--track",
        "--no-track",
        "--create-reflog",
      );
      const lists = has("-l", "--list");
      return changes || (operands.length > 0 && !lists) ? [gitdir] : [];
    }
    case "tag": {
      if (has("-v", "--verify", "-s", "--sign", "-u", "--local-user")) {
        return [{ kind: "unknown", what: `${via} with signatures runs gpg` }];
      }
      if (has("-e", "--edit")) return [{ kind: "unknown", what: "git tag -e runs an editor" }];
      const changes = has("-d", "--delete", "-a", "--annotate", "-f", "--force", "-m", "--message");
      const lists = has("-l", "--list", "-n", "--contains", "--no-contains", "--points-at");
      return changes || (operands.length > 0 && !lists) ? [gitdir] : [];
    }
    case "stash":
      return ["list", "show"].includes(operands[0] ?? "") ? [] : [worktree];
    case "remote":
      return operands.length === 0 || ["show", "get-url"].includes(operands[0]!) ? [] : [gitdir];
    case "reflog":
      return ["expire", "delete", "drop"].includes(operands[0] ?? "") ? [gitdir] : [];
    case "notes":
      return operands.length === 0 || ["list", "show", "get-ref"].includes(operands[0]!)
        ? []
        : [gitdir];
    case "worktree":
      return operands[0] === "list" ? [] : [worktree];
    case "bisect":
      if (operands[0] === "run") {
        const start = parsed.operands[1]?.index;
        if (start === undefined) {
          return [{ kind: "unknown", what: "git bisect run without a command" }];
        }
        return [worktree, { kind: "run", command: { argv: command.argv.slice(start) }, via }];
      }
      if (["visualize", "view"].includes(operands[0] ?? "")) {
        return [{ kind: "unknown", what: "git bisect visualize runs gitk or a pager" }];
      }
      return ["log", "terms"].includes(operands[0] ?? "") ? [] : [worktree];
    case "submodule":
      if (operands[0] === "foreach") {
        const script = command.argv.slice(parsed.operands[1]?.index ?? command.argv.length)
          .join(" ");
        return script.includes(DYNAMIC)
          ? [{ kind: "unknown", what: "git submodule foreach runs a computed command" }]
          : [worktree, { kind: "script", script, via: "git submodule foreach" }];
      }
      return ["status", "summary"].includes(operands[0] ?? "") ? [] : [worktree];
    case "config":
      return gitConfigWrites(command, parsed);
    case "clone": {
      const out: Effect[] = [];
      const url = operands[0];
      if (url !== undefined && /^ext::/.test(url)) {
        out.push({ kind: "unknown", what: "git clone ext:: runs the command in its URL" });
      }
      const dir = operands[1] ??
        basename((url ?? "").replace(/\/+$/, "").replace(/\.git$/, "")).replace(/:.*$/, "");
      out.push(write(dir === "" ? "." : dir, true, via, command));
      return out;
    }
  }
  return [];
}

function gitConfigWrites(command: Invocation, parsed: Parsed): Effect[] {
  const has = (...keys: string[]) => parsed.found.some((o) => keys.includes(o.key));
  const operands = parsed.operands.map((o) => o.text);
  if (has("-e", "--edit") || operands[0] === "edit") {
    return [{ kind: "unknown", what: "git config --edit runs an editor" }];
  }
  const reads = has(
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "-l",
    "--list",
  ) || ["get", "list"].includes(operands[0] ?? "");
  const writes = has(
    "--unset",
    "--unset-all",
    "--add",
    "--replace-all",
    "--rename-section",
    "--remove-section",
  ) || ["set", "unset", "rename-section", "remove-section"].includes(operands[0] ?? "") ||
    (!reads && operands.length >= 2);
  if (!writes) return [];
  if (has("--global", "--system")) {
    return [{ kind: "unknown", what: "git config --global writes the user's configuration" }];
  }
  const file = parsed.found.find((o) => o.key === "-f" || o.key === "--file");
  if (file !== undefined) return [write(file.value ?? "", false, "git config --file", command)];
  return [write(".git/config", false, "git config", command)];
}
