/**
 * git configuration given on the command line (`git -c KEY=VALUE`, `--config-env`): which keys
 * name a program git runs, which make it read another file, and which are safe. The key lists
 * are `GIT_PROGRAM_KEYS` and `GIT_SAFE_KEYS` in `_table.ts`.
 *
 * @module
 */

import { DYNAMIC } from "../shell.ts";
import { GIT_PROGRAM_KEYS, GIT_SAFE_KEYS } from "./_table.ts";
import type { Effect } from "./types.ts";

/** What `git -c KEY=VALUE` does: judged by the key (a program, another file, or nothing). */
export function gitConfigEffects(value: string, via: string): Effect[] {
  const eq = value.indexOf("=");
  const key = (eq < 0 ? value : value.slice(0, eq)).toLowerCase();
  const setting = eq < 0 ? "true" : value.slice(eq + 1);
  if (key.includes(DYNAMIC)) {
    return [{ kind: "unknown", what: `${via} sets a configuration key computed at run time` }];
  }
  if (GIT_PROGRAM_KEYS.some((re) => re.test(key))) {
    if (setting.includes(DYNAMIC)) {
      return [{ kind: "unknown", what: `${via} ${key} names a program computed at run time` }];
    }
    if (
      /^(include|includeif\..+)\.path$|^core\.(worktree|attributesfile|excludesfile)$/.test(key)
    ) {
      return [{ kind: "unknown", what: `${via} ${key} makes git read another file` }];
    }
    if (key === "core.hookspath") {
      return [{ kind: "unknown", what: `${via} core.hooksPath runs hooks from another directory` }];
    }
    if (key.startsWith("alias.") && !setting.startsWith("!")) {
      return [{
        kind: "run",
        command: { argv: ["git", ...setting.split(/\s+/).filter(Boolean)] },
        via: `${via} ${key}`,
      }];
    }
    if (key === "core.fsmonitor" && /^(true|false)$/i.test(setting)) return [];
    return [{ kind: "script", script: setting.replace(/^!/, ""), via: `${via} ${key}` }];
  }
  if (GIT_SAFE_KEYS.some((re) => re.test(key))) return [];
  return [{ kind: "unknown", what: `${via} ${key} may change what git runs` }];
}

/** What `git --config-env=KEY=ENVVAR` does: the value is not in the text; only safe keys pass. */
export function gitConfigEnvEffects(value: string, via: string): Effect[] {
  const key = value.slice(0, value.indexOf("=") < 0 ? value.length : value.indexOf("="));
  if (GIT_SAFE_KEYS.some((re) => re.test(key.toLowerCase()))) return [];
  return [{
    kind: "unknown",
    what: `${via} ${key} takes its value from the environment, which can name a program`,
  }];
}
