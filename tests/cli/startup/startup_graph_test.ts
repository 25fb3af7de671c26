// What Deno loads before the first line runs: the module graph of the entry point, static
// imports and literal dynamic `import("…")`s alike (`deno info` shows the same graph). Each
// module here costs start-up time, and some cost tens of milliseconds (Node's compatibility
// layer through `node:fs`, `node:crypto` or a CommonJS package). These checks keep the cheap
// paths cheap; the times themselves are measured by `deno task bench --only cold`.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

interface Info {
  roots: string[];
  modules: {
    specifier: string;
    dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
  }[];
}

/**
 * The modules Deno reads for `root` before running it (code dependencies, literal dynamic
 * imports included), or with `evaluated` only those the static imports evaluate with it.
 */
async function startupGraph(root: string, evaluated = false): Promise<string[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root],
    cwd: REPO,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const info: Info = JSON.parse(new TextDecoder().decode(stdout));
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...info.roots];
  while (stack.length > 0) {
    const specifier = stack.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      if (dep.code !== undefined && !(evaluated && dep.isDynamic)) stack.push(dep.code.specifier);
    }
  }
  return [...seen].map((s) => s.startsWith("file://") ? s.slice(`file://${REPO}`.length) : s)
    .sort();
}

Deno.test("main.ts loads only the entry modules before it runs; each path imports its own", async () => {
  assert.deepEqual(await startupGraph("main.ts"), [
    // The built-in tools' facts (data): which tool runs commands, left to start its own worker.
    "approver/builtin_tools.json",
    "cli/config/option_table.ts",
    "cli/startup/early_worker.ts",
    "cli/startup/help_text.ts",
    "cli/startup/tool_args.ts",
    "cli/startup/version.ts",
    "cli/terminal/output.ts",
    "deno.json",
    "main.ts",
    "tools/worker_start.ts",
  ]);
});

Deno.test("a tool call's CLI side evaluates no tool implementation, commander, node:fs or node:crypto", async () => {
  const graph = await startupGraph("cli/commands/tool.ts", true);
  const heavy = graph.filter((m) =>
    /^npm:|^node:(fs|crypto|child_process|process)/.test(m) && m !== "npm:re2js@2.10.0" ||
    /^tools\/(read|write|edit|grep|bash|builtin|_workspace)\.ts$/.test(m) ||
    /^(providers|agent\/loop|cli\/mod)/.test(m)
  );
  assert.deepEqual(heavy, []);
});

Deno.test("the full CLI's start-up graph holds commander but no command's module or SDK", async () => {
  const graph = await startupGraph("cli/mod.ts");
  assert.deepEqual(graph.filter((m) => m.startsWith("npm:")), ["npm:commander@15.1.0"]);
  assert.ok(
    !graph.includes("cli/commands/chat.ts") && !graph.includes("cli/commands/tool.ts"),
    graph.join(" "),
  );
});
