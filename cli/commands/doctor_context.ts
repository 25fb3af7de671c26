/**
 * `doctor`'s lines about what a session will put in front of the model: the instruction
 * files that will be read (cli.md "Project instructions") and the context window in force
 * (cli.md "Context").
 *
 * @module
 */

import { dirname } from "node:path";
import { knownContextWindow } from "../../agent/context_windows.ts";
import { loadInstructions } from "../../agent/instructions.ts";
import { type Config, defaultConfigPath } from "../config/config.ts";
import { type GlobalFlags, workspaceFrom } from "../config/options.ts";
import { type ProviderFlags, providerSettings } from "../config/provider.ts";

/** One doctor line. */
export interface ContextCheck {
  readonly ok: boolean;
  readonly name: string;
  readonly detail: string;
}

/** The `instructions` and `context` lines. */
export async function contextChecks(
  flags: GlobalFlags & ProviderFlags,
  config: Config,
): Promise<ContextCheck[]> {
  const ws = await workspaceFrom(flags, config);
  const home = defaultConfigPath(Deno.env.toObject());
  const found = await loadInstructions({
    workspace: ws.roots[0]!,
    ...(home === undefined ? {} : { userDir: dirname(home) }),
    protectedPaths: config.protectedPaths,
  });
  const listed = found.files.map((f) => `${f.path} (${f.bytes} bytes)`);
  const skipped = found.skipped.map((s) => `skipped ${s.path}: ${s.reason}`);
  const checks: ContextCheck[] = [{
    ok: true,
    name: "instructions",
    detail: [...listed, ...skipped].join("; ") ||
      "none found (AGENTS.md or CLAUDE.md from the repository root down to the workspace)",
  }];
  const settings = providerSettings(config, flags);
  const configured = config.values.agent?.context_window;
  const known = knownContextWindow(settings.model);
  checks.push({
    ok: true,
    name: "context",
    detail: configured !== undefined
      ? `window ${configured} tokens (agent.context_window)`
      : known !== undefined
      ? `window ${known} tokens (known for ${settings.model}; a server's "too long" error corrects it)`
      : `window of ${settings.model} unknown: learned from the server's first "too long" error (set agent.context_window to compact earlier)`,
  });
  return checks;
}
