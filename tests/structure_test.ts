/**
 * The shape of the source, read from Deno's own module graph (`deno info --json`) over every
 * source file: no import circle among the files, the layer arrows one way (cli -> agent ->
 * {providers, approver, tools}; tools, providers and approver import none of the others), and
 * no file of the source or of scripts/ above 800 lines apart from the data tables named below.
 *
 * @module
 */

import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals } from "./_helpers/assert.ts";
import { REPO } from "./_helpers/cli.ts";

/** The folders of the product's source, in layer order (a folder may import those after it). */
const FOLDERS = ["cli", "agent", "providers", "approver", "tools"] as const;

/** Which source folders each folder may import (its own always). */
const MAY_IMPORT: Record<(typeof FOLDERS)[number], readonly string[]> = {
  cli: ["agent", "providers", "approver", "tools"],
  agent: ["providers", "approver", "tools"],
  providers: [],
  approver: [],
  tools: [],
};

/** Files that are data tables (knowledge as rows), allowed past the line limit, with why. */
const DATA_TABLES: Record<string, string> = {
  "approver/effects/_table.ts": "which options of which program write, read or execute",
};

const MAX_LINES = 800;

/** Every .ts file below `folders` (and `extra`), repository-relative, sorted. */
async function tsFiles(folders: readonly string[], extra: readonly string[] = []) {
  const files = [...extra];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(join(REPO, dir))) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile && entry.name.endsWith(".ts")) files.push(path);
    }
  };
  for (const folder of folders) await walk(folder);
  return files.sort();
}

/** The import graph among `files` (edges to other repository files only), from `deno info`. */
async function importGraph(files: readonly string[]): Promise<Map<string, Set<string>>> {
  // One root that imports every file: the graph then holds each of them and what it imports.
  const dir = await Deno.makeTempDir({ prefix: "rousseau-structure-" });
  try {
    const root = join(dir, "all.ts");
    await Deno.writeTextFile(
      root,
      files.map((f) => `import ${JSON.stringify(new URL(f, `file://${REPO}`).href)};`).join("\n"),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", join(REPO, "deno.json"), root],
      cwd: REPO,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    assertEquals(out.code, 0, decoder.decode(out.stderr));
    const info = JSON.parse(decoder.decode(out.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
      }[];
    };
    const inRepo = (specifier: string | undefined) => {
      if (specifier === undefined || !specifier.startsWith("file://")) return undefined;
      const path = relative(REPO, fileURLToPath(specifier));
      return files.includes(path) ? path : undefined;
    };
    const graph = new Map<string, Set<string>>();
    for (const module of info.modules) {
      const from = inRepo(module.specifier);
      if (from === undefined) continue;
      const to = new Set<string>();
      for (const dep of module.dependencies ?? []) {
        for (const target of [dep.code?.specifier, dep.type?.specifier]) {
          const path = inRepo(target);
          if (path !== undefined) to.add(path);
        }
      }
      graph.set(from, to);
    }
    return graph;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The import circles of `graph` (strongly connected components of more than one file). */
function circles(graph: Map<string, Set<string>>): string[][] {
  // Tarjan's algorithm.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    order.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, order.get(next)!));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!order.has(node)) visit(node);
  return found;
}

/** The product's source: the layer folders and the root entry points. */
const files = await tsFiles(FOLDERS, ["main.ts", "mod.ts"]);
const graph = await importGraph(files);

Deno.test("the source has no import circle", () => {
  assertEquals(circles(graph), []);
});

Deno.test("the layers import one way: cli -> agent -> {providers, approver, tools}", () => {
  const folderOf = (file: string) => file.includes("/") ? file.split("/")[0]! : undefined;
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const source = folderOf(from) as (typeof FOLDERS)[number] | undefined;
    if (source === undefined) continue; // main.ts and mod.ts sit above every layer
    for (const to of targets) {
      const target = folderOf(to);
      if (target === undefined) {
        wrong.push(`${from} -> ${to}`);
      } else if (target !== source && !MAY_IMPORT[source].includes(target)) {
        wrong.push(`${from} -> ${to}`);
      }
    }
  }
  // The tool worker loads the library surface (the root mod.ts) for custom tool modules,
  // which import it; it is a dynamic import run only when modules are configured.
  assertEquals(wrong.filter((edge) => edge !== "tools/worker.ts -> mod.ts"), []);
});

Deno.test("in cli/, only the command table and the entry point import the commands", () => {
  // cli/commands/ sits on top of cli/'s other folders (config, layers, terminal, startup) and
  // its shared set-up; a command used by another place has code to move down.
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    if (from.startsWith("cli/commands/") || from === "cli/mod.ts" || from === "main.ts") continue;
    for (const to of targets) if (to.startsWith("cli/commands/")) wrong.push(`${from} -> ${to}`);
  }
  assertEquals(wrong, []);
});

Deno.test(`no source file is longer than ${MAX_LINES} lines, data tables apart`, async () => {
  const long: string[] = [];
  for (const file of [...files, ...await tsFiles(["scripts"])]) {
    if (file in DATA_TABLES) continue;
    const lines = (await Deno.readTextFile(join(REPO, file))).split("\n").length - 1;
    if (lines > MAX_LINES) long.push(`${file}: ${lines}`);
  }
  assertEquals(long, []);
});

Deno.test("every data table exempt from the line limit exists", async () => {
  for (const file of Object.keys(DATA_TABLES)) {
    assertEquals(await Deno.stat(join(REPO, file)).then((s) => s.isFile, () => false), true, file);
  }
});
