/**
 * Runtime rows `live`: grep as the model gets it, one `tools/call` to a long-lived `rousseau
 * mcp` timed by the SDK client, and grep as a whole process, `tool grep` start to exit, each
 * against `rg -j1` as a whole process, on a tree generated from a seed picked at random each run
 * (`--seed N` reproduces one; over 1 GB unless `--quick`) and on `/usr/include`.
 *
 * @module
 */

import { join } from "node:path";
import {
  CLI,
  cliEnv,
  elapsed,
  fastest,
  type Fixture,
  makeRow,
  message,
  missingRow,
  type Section,
  type Settings,
} from "./_common.ts";
import { callText, connect, type Connected } from "./mcp.ts";
import { rgArgs, runRg } from "./_rg.ts";
import { buildSmallTree, cached, GENERATOR_VERSION, RARE, type TreeStats } from "./grep_trees.ts";
import { type Breakdown, log, type Row } from "./table.ts";

/** The live-grep queries: a rare literal, a regex whose required literal is common, a class. */
const LIVE_QUERIES = [
  { key: "rare", name: "rare literal", pattern: RARE, headers: "pthread_mutex_consistent" },
  {
    key: "common_literal",
    name: "regex with a common required literal",
    pattern: String.raw`struct\s+\w+_operations\s*\{\s*int`,
  },
  { key: "class", name: "case-insensitive class", pattern: String.raw`(?i)[a-z]+_handler\d` },
  { key: "alternation", name: "alternation", pattern: "foo_bar|baz_qux|zeta_omega" },
] as const;
type Query = typeof LIVE_QUERIES[number];
const LIVE_TREES = ["tree", "headers"] as const;
const KINDS = ["live", "process"] as const;
type Kind = typeof KINDS[number];
const LIVE_IDS = KINDS.flatMap((k) =>
  LIVE_TREES.flatMap((t) => LIVE_QUERIES.map((q) => `${k}_grep_${t}_${q.key}`))
);

/** A tree counts as large (the whole-process target applies) above this many bytes. */
const GB = 1e9;
/** Files of the generated tree: ~10.5 KiB each, so about 1.15 GB. */
const FULL_FILES = 110_000;
const QUICK_FILES = 300;
/** Free space the full tree needs, with room to spare. */
const FULL_SPACE = 3 * GB;

/** `bytes` for people: GB from 1 GB up, else MB. */
function size(bytes: number): string {
  return bytes >= GB ? `${(bytes / GB).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Bytes free on the file system holding `dir`, from `df`. */
async function freeBytes(dir: string): Promise<number> {
  const out = await new Deno.Command("df", { args: ["-Pk", dir], stdout: "piped" }).output();
  const fields = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!.split(/\s+/);
  const free = Number(fields[3]) * 1024;
  if (!out.success || !Number.isFinite(free)) throw new Error(`df -Pk ${dir} failed`);
  return free;
}

/**
 * The tree of `files` files generated from `seed` in `dir`: reused when it is there (`--seed`),
 * else built after removing the trees of other seeds of its size, so one at most stays cached
 * per size (the quick one and the full one).
 */
async function seededTree(
  dir: string,
  files: number,
  seed: number,
): Promise<{ root: string; stats: TreeStats }> {
  await Deno.mkdir(dir, { recursive: true });
  const name = `live-${files}-s${seed}-v${GENERATOR_VERSION}`;
  const root = join(dir, name);
  const built = await Deno.readTextFile(`${root}.ok`).catch(() => undefined);
  if (built !== undefined) return { root, stats: JSON.parse(built) as TreeStats };
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.startsWith(`live-${files}-`) || entry.name.startsWith(name)) continue;
    log(`bench: removing ${join(dir, entry.name)} (another seed's tree)`);
    await Deno.remove(join(dir, entry.name), { recursive: true });
  }
  const need = files === FULL_FILES ? FULL_SPACE : 0;
  const free = await freeBytes(dir);
  if (free < need) {
    throw new Error(
      `${dir} has ${(free / GB).toFixed(1)} GB free, the generated tree needs ` +
        `${(need / GB).toFixed(1)} GB: free some space or pass --dir DIR elsewhere`,
    );
  }
  log(`bench: generating ${root} (${files} files, seed ${seed})`);
  return { root, stats: await cached(root, (r) => buildSmallTree(r, files, seed)) };
}

/** `tool grep` of `pattern` over `root` as its own process, start to exit. */
async function toolGrep(root: string, pattern: string, env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...CLI, "--workspace", root, "tool", "grep", JSON.stringify({ pattern, path: root })],
    cwd: root,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(
      `tool grep exited ${out.code}: ${new TextDecoder().decode(out.stderr).slice(0, 300)}`,
    );
  }
}

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const runs = settings.quick ? 1 : settings.runs;
  const seed = settings.seed;
  const rows: Row[] = [];
  const env = cliEnv(fx);
  const files = settings.quick ? QUICK_FILES : FULL_FILES;
  const seedNote = `seed ${seed} (\`--seed ${seed}\` reproduces the tree)`;
  let generated: { root: string; stats: TreeStats } | undefined;
  let why: string | undefined;
  try {
    generated = await seededTree(settings.dir, files, seed);
  } catch (error) {
    why = `the generated tree could not be built: ${message(error)}`;
    log(`bench: ${why}`);
  }
  const trees = [
    {
      key: "tree",
      root: generated?.root,
      bytes: generated?.stats.bytes ?? 0,
      what: `generated tree (${files} files${
        generated === undefined ? "" : `, ${size(generated.stats.bytes)}`
      })`,
    },
    { key: "headers", root: "/usr/include", bytes: 0, what: "/usr/include" },
  ];
  for (const tree of trees) {
    const large = tree.bytes > GB;
    const fields = (kind: Kind, q: Query) => ({
      id: `${kind}_grep_${tree.key}_${q.key}`,
      group: "live" as const,
      name: kind === "live"
        ? `live \`rousseau mcp\` grep, ${tree.what}, ${q.name}`
        : `whole-process \`tool grep\`, ${tree.what}, ${q.name}`,
      unit: "ms",
      "comparison_name": "`rg -j1` as a whole process",
      target: kind === "live" ? "<= 1.5x" : large ? "<= 2x" : "- (trees over 1 GB: <= 2x)",
    });
    const missing = (reason: string) => {
      const done = new Set(rows.map((r) => r.id));
      for (const kind of KINDS) {
        for (const q of LIVE_QUERIES) {
          if (!done.has(fields(kind, q).id)) rows.push(missingRow(fields(kind, q), reason));
        }
      }
    };
    if (tree.root === undefined) {
      missing(why!);
      continue;
    }
    const root = tree.root;
    if (!await Deno.stat(root).then((s) => s.isDirectory, () => false)) {
      missing(`${root} is missing`);
      continue;
    }
    let server: Connected | undefined;
    try {
      server = await connect([...CLI, "--workspace", root, "mcp"], env);
      for (const q of LIVE_QUERIES) {
        const pattern = tree.key === "headers" && "headers" in q ? q.headers : q.pattern;
        const live = async () => {
          const started = performance.now();
          const result = await server!.client.callTool({
            name: "grep",
            arguments: { pattern, path: root },
          });
          const ms = performance.now() - started;
          callText(result);
          return ms;
        };
        const whole = () => elapsed(() => toolGrep(root, pattern, env));
        const rg = async () => (await runRg("rg", root, rgArgs(1, [], pattern))).ms;
        const [l, p, r] = await fastest(`grep ${tree.key} ${q.key}`, runs, [live, whole, rg]);
        const common = `\`${pattern}\` over ${tree.key === "tree" ? "the tree" : root}, best of ` +
          `${runs}${tree.key === "tree" ? `, ${seedNote}` : ""}; rg is ` +
          "`rg -j1 -n --no-ignore --hidden --max-filesize` with the same skipped directories, " +
          "start to exit";
        rows.push(makeRow(
          {
            ...fields("live", q),
            note: `${common}; ours is one \`tools/call\` to a long-lived \`rousseau mcp\` ` +
              "(approver, tool worker, audit file) timed by the SDK client",
          },
          l!,
          r!,
          (_, ratio) => ratio === null ? null : ratio <= 1.5,
        ));
        rows.push(makeRow(
          {
            ...fields("process", q),
            note: `${common}; ours is \`deno run\` of main.ts as \`deno task cli\` runs it, ` +
              "`--workspace DIR tool grep`, start to exit",
          },
          p!,
          r!,
          (_, ratio) => ratio === null || !large ? null : ratio <= 2,
        ));
      }
    } catch (error) {
      const reason = `grep over ${root} failed: ${message(error)}`;
      log(`bench: ${reason}`);
      missing(reason);
    } finally {
      await server?.close().catch(() => {});
    }
  }
  // The report's row order: every live row, then every whole-process row.
  rows.sort((a, b) => LIVE_IDS.indexOf(a.id) - LIVE_IDS.indexOf(b.id));
  return [rows, []];
}

/** The grep rows: live and whole-process. */
export const liveGrep: Section = {
  group: "live",
  ids: LIVE_IDS,
  run: measure,
};
