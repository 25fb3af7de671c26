/**
 * Resolving `tools.bash.sandbox` (auto | bwrap | none) into the sandbox bash runs under.
 * Done in the main isolate: finding bwrap needs PATH and a trial run, which the tool
 * worker is not allowed.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import { DEFAULT_HIDDEN, type HiddenPath, type Sandbox } from "../tools/mod.ts";
import type { Config } from "./config.ts";
import { UsageError } from "./errors.ts";

/** What the sandbox check found, for `doctor` and the run header. */
export interface SandboxReport {
  /** The sandbox in use, if any. */
  readonly sandbox?: Sandbox;
  /** The configured mode. */
  readonly mode: "auto" | "bwrap" | "none";
  /** One line for people: what is in use and why. */
  readonly summary: string;
}

function findOnPath(name: string, path: string): string | undefined {
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      const info = Deno.statSync(candidate);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function usable(bwrap: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(bwrap, {
      args: ["--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--", "/bin/true"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.success) return undefined;
    return new TextDecoder().decode(out.stderr).trim() || `exit status ${out.code}`;
  } catch (error) {
    return (error as Error).message;
  }
}

function hiddenPaths(config: Pick<Config, "values">, home: string | undefined): HiddenPath[] {
  const wanted = [
    ...(home ? DEFAULT_HIDDEN.map((p) => join(home, p)) : []),
    ...(config.values.tools?.bash?.hide ?? []).map((p) =>
      p.startsWith("~/") && home ? join(home, p.slice(2)) : p
    ),
  ];
  const out: HiddenPath[] = [];
  for (const path of wanted) {
    if (!isAbsolute(path)) continue;
    try {
      const info = Deno.statSync(path);
      out.push({ path, kind: info.isDirectory ? "dir" : "file" });
    } catch {
      // nothing to hide
    }
  }
  return out;
}

/** Resolves the sandbox; throws a `UsageError` when bwrap is required but cannot run. */
export async function resolveSandbox(
  config: Pick<Config, "values">,
  env: Readonly<Record<string, string>> = Deno.env.toObject(),
): Promise<SandboxReport> {
  const mode = config.values.tools?.bash?.sandbox ?? "auto";
  const network = config.values.tools?.bash?.network ?? false;
  if (mode === "none") return { mode, summary: "none (tools.bash.sandbox: none)" };
  const bwrap = findOnPath("bwrap", env.PATH ?? "/usr/bin:/bin");
  const problem = bwrap === undefined ? "bwrap is not installed" : await usable(bwrap);
  if (problem !== undefined) {
    if (mode === "bwrap") {
      throw new UsageError(
        `sandbox: tools.bash.sandbox is "bwrap" but ${
          bwrap === undefined ? problem : `bwrap cannot run here: ${problem}`
        }; install bubblewrap (Debian: apt-get install bubblewrap) and allow user namespaces, ` +
          "or set tools.bash.sandbox: none",
      );
    }
    return { mode, summary: `none (auto: ${problem}; bash runs unsandboxed)` };
  }
  const sandbox: Sandbox = { bwrap: bwrap!, network, hide: hiddenPaths(config, env.HOME) };
  return {
    mode,
    sandbox,
    summary: `bwrap (${bwrap}; network ${
      network ? "on" : "off"
    }; ${sandbox.hide.length} paths hidden)`,
  };
}
