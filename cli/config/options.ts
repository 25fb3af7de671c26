/**
 * Global flags turned into the plain values the layers below take. Only `cli/` reads the
 * environment; tools get a finished `ToolContext`.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import {
  createWorkspace,
  DEFAULT_LIMITS,
  type Limits,
  parseDuration,
  scrubEnvironment,
  type ToolContext,
  type Workspace,
} from "../../tools/hosting.ts";
import type { Config } from "./config.ts";
import { UsageError } from "../errors.ts";
import { resolveSandbox, sandboxForRoots } from "../layers/sandbox.ts";

/** Flags every command accepts. */
export interface GlobalFlags {
  /** `--config FILE`. */
  readonly config?: string;
  /** `--workspace DIR`. */
  readonly workspace?: string;
  /** `--add-dir DIR`, repeatable. */
  readonly addDir?: readonly string[];
}

/** Flags that set tool limits. */
export interface LimitFlags {
  /** `--timeout DURATION` for bash. */
  readonly timeout?: string;
  /** `--max-matches N` for grep. */
  readonly maxMatches?: string;
  /** `--max-file-bytes N` for grep. */
  readonly maxFileBytes?: string;
}

/** The directory the user started the command from (`deno task` changes directory). */
export function startDirectory(): string {
  const init = Deno.env.get("INIT_CWD");
  return init !== undefined && isAbsolute(init) ? init : Deno.cwd();
}

/**
 * Workspace roots: `--workspace` (else `workspace.roots` from config, else the start
 * directory) plus every `--add-dir`; the config's protected paths go with them, so every
 * tool, in this isolate or in the worker, refuses rousseau's own files.
 */
export async function workspaceFrom(flags: GlobalFlags, config?: Config): Promise<Workspace> {
  const base = startDirectory();
  const configured = config?.values.workspace?.roots ?? [];
  const first = flags.workspace !== undefined
    ? [flags.workspace]
    : configured.length > 0
    ? configured
    : [base];
  const roots = [...first, ...(flags.addDir ?? [])].map((dir) => resolve(base, dir));
  try {
    return await createWorkspace(roots, config?.protectedPaths ?? []);
  } catch (error) {
    throw new UsageError(
      `${
        error instanceof Error ? error.message : String(error)
      }; pass an existing directory to --workspace or --add-dir`,
      { cause: error },
    );
  }
}

function positiveInteger(flag: string, text: string, min: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(
      `${flag}: want a whole number of at least ${min}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** Limits from the config (or the defaults) and the limit flags. */
export function limitsFrom(flags: LimitFlags, base: Limits = DEFAULT_LIMITS): Limits {
  const limits: { -readonly [K in keyof Limits]: Limits[K] } = { ...base };
  if (flags.timeout !== undefined) {
    try {
      limits.bashTimeoutMs = parseDuration(flags.timeout);
    } catch (error) {
      throw new UsageError(`--timeout: ${(error as Error).message}`, { cause: error });
    }
    if (limits.bashTimeoutMs <= 0) throw new UsageError("--timeout: want a duration above zero");
  }
  if (flags.maxMatches !== undefined) {
    limits.grepMaxMatches = positiveInteger("--max-matches", flags.maxMatches, 1);
  }
  if (flags.maxFileBytes !== undefined) {
    limits.grepMaxFileBytes = positiveInteger("--max-file-bytes", flags.maxFileBytes, 0);
  }
  return limits;
}

/**
 * Everything a tool call needs except its signal. `sandboxed` says whether bash may run at
 * all (only then is the sandbox resolved, which costs a trial run of bwrap).
 */
export async function toolContextFrom(
  flags: GlobalFlags & LimitFlags,
  config: Config,
  sandboxed = true,
): Promise<Omit<ToolContext, "signal">> {
  const report = sandboxed ? await resolveSandbox(config) : undefined;
  const workspace = await workspaceFrom(flags, config);
  const sandbox = report?.sandbox === undefined
    ? undefined
    : sandboxForRoots(report.sandbox, workspace.roots).sandbox;
  return {
    workspace,
    limits: limitsFrom(flags, config.limits),
    env: scrubEnvironment(Deno.env.toObject(), config.envRemove),
    ...(sandbox === undefined ? {} : { sandbox }),
  };
}
