import { fileURLToPath } from "node:url";
import { join } from "node:path";

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
