/**
 * Built-in tools run in a deno process of their own: for a peak memory of its own, a real
 * kill, or Deno permissions narrower than the tests'.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { ToolResult } from "../../mod.ts";
import { assertEquals } from "./assert.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const MOD = new URL("../../mod.ts", import.meta.url).href;

/**
 * Runs `body` in a `deno` process of its own (for a peak memory of its own, or a real kill),
 * after a preamble that makes `host`: the built-in tools in-process over the workspace `root`,
 * with `limits` (a TypeScript expression; `DEFAULT_LIMITS` is in scope). The script is
 * written to `scriptPath`.
 */
export async function runHostScript(
  scriptPath: string,
  root: string,
  body: string,
  limits = "DEFAULT_LIMITS",
): Promise<Deno.CommandOutput> {
  await Deno.writeTextFile(
    scriptPath,
    `import { createBuiltinTools, createInProcessHost, createWorkspace, DEFAULT_LIMITS, Registry } from ${
      JSON.stringify(MOD)
    };
const host = createInProcessHost(new Registry(createBuiltinTools()), {
  workspace: await createWorkspace([${JSON.stringify(root)}]),
  limits: ${limits},
  env: {},
});
${body}`,
  );
  return await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", "--config", join(REPO, "deno.json"), scriptPath],
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/** How {@linkcode callsUnderPermissions} runs its calls. */
export interface PermittedCalls {
  /** The workspace roots, as given (not resolved). */
  readonly roots: readonly string[];
  /** Each call's input, run one after the other. */
  readonly calls: readonly unknown[];
  /** The child's Deno permission flags; `script` is the probe's path, which it must read. */
  readonly flags: (script: string) => string[];
  /** A umask for the child (an octal string), set by a shell before it starts. */
  readonly mask?: string;
}

/**
 * Runs `calls` of the built-in `tool` in a fresh deno process that has only the permissions
 * `flags` grants, so a refusal by Deno's permissions can be seen; returns each call's result.
 * The probe script is written to `scriptDir/probe.ts` and removed afterwards.
 */
export async function callsUnderPermissions(
  scriptDir: string,
  tool: string,
  options: PermittedCalls,
): Promise<ToolResult[]> {
  const script = join(scriptDir, "probe.ts");
  await Deno.writeTextFile(
    script,
    `import { createBuiltinTools, createInProcessHost, DEFAULT_LIMITS, Registry } from ${
      JSON.stringify(MOD)
    };
const host = createInProcessHost(new Registry(createBuiltinTools()), {
  workspace: { roots: ${JSON.stringify(options.roots)} },
  limits: DEFAULT_LIMITS,
  env: {},
});
const results = [];
for (const input of ${JSON.stringify(options.calls)}) {
  results.push(await host.call(${JSON.stringify(tool)}, input, new AbortController().signal));
}
await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(results)));
`,
  );
  try {
    const deno = [
      Deno.execPath(),
      "run",
      "--quiet",
      "--no-prompt",
      "--config",
      join(REPO, "deno.json"),
      ...options.flags(script),
      script,
    ];
    // The umask is set by a shell in the child, so this process's umask never changes.
    const [command, ...args] = options.mask === undefined
      ? deno
      : ["/bin/sh", "-c", `umask ${options.mask} && exec "$0" "$@"`, ...deno];
    const { code, stdout, stderr } = await new Deno.Command(command!, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const decoder = new TextDecoder();
    assertEquals(code, 0, decoder.decode(stderr));
    return JSON.parse(decoder.decode(stdout));
  } finally {
    await Deno.remove(script);
  }
}
