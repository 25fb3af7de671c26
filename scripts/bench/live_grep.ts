/**
 * Runtime rows `live`: grep as the model gets it, one `tools/call` to a long-lived `rousseau
 * mcp` timed by the SDK client, against `rg -j1` as a whole process, on a generated tree and
 * on `/usr/include`.
 *
 * @module
 */

import { join } from "node:path";
import {
  CLI,
  cliEnv,
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
import { grepTree, RARE } from "./grep_trees.ts";
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
const LIVE_TREES = ["tree", "headers"] as const;
const LIVE_IDS = LIVE_TREES.flatMap((t) => LIVE_QUERIES.map((q) => `live_grep_${t}_${q.key}`));

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const runs = settings.quick ? 1 : settings.runs;
  const rg = "rg";
  const generated = settings.quick
    ? await grepTree(join(settings.dir, "live-quick"), 300)
    : await grepTree(settings.dir, 10_000);
  const trees = [
    { key: "tree", root: generated.root, what: `generated tree (${generated.stats.files} files)` },
    { key: "headers", root: "/usr/include", what: "/usr/include" },
  ];
  const rows: Row[] = [];
  const env = cliEnv(fx);
  for (const tree of trees) {
    const fields = (q: typeof LIVE_QUERIES[number]) => ({
      id: `live_grep_${tree.key}_${q.key}`,
      group: "live" as const,
      name: `live \`rousseau mcp\` grep, ${tree.what}, ${q.name}`,
      unit: "ms",
      "comparison_name": "`rg -j1` as a whole process",
      target: "<= 2x (goal 1.5x)",
    });
    const present = await Deno.stat(tree.root).then((s) => s.isDirectory, () => false);
    if (!present) {
      rows.push(...LIVE_QUERIES.map((q) => missingRow(fields(q), `${tree.root} is missing`)));
      continue;
    }
    let server: Connected | undefined;
    try {
      server = await connect([...CLI, "--workspace", tree.root, "mcp"], env);
      for (const q of LIVE_QUERIES) {
        const pattern = tree.key === "headers" && "headers" in q ? q.headers : q.pattern;
        const ours = async () => {
          const started = performance.now();
          const result = await server!.client.callTool({
            name: "grep",
            arguments: { pattern, path: tree.root },
          });
          const ms = performance.now() - started;
          callText(result);
          return ms;
        };
        const theirs = async () => (await runRg(rg, tree.root, rgArgs(1, [], pattern))).ms;
        const [o, r] = await fastest(`live grep ${tree.key} ${q.key}`, runs, [ours, theirs]);
        rows.push(makeRow(
          {
            ...fields(q),
            note: `\`${pattern}\` over ${tree.root}, best of ${runs}; ours is one \`tools/call\` ` +
              "to a long-lived `rousseau mcp` (approver, tool worker, audit file) timed by the " +
              "SDK client, its grep on two threads once the prefilter worker its first large " +
              "walk starts is up; rg is `rg -j1 -n --no-ignore --hidden --max-filesize` with " +
              "the same skipped directories, start to exit",
          },
          o!,
          r!,
          (_, ratio) => ratio === null ? null : ratio <= 2,
        ));
      }
    } catch (error) {
      const why = `live grep over ${tree.root} failed: ${message(error)}`;
      log(`bench: ${why}`);
      const done = new Set(rows.map((r) => r.id));
      rows.push(
        ...LIVE_QUERIES.filter((q) => !done.has(fields(q).id)).map((q) =>
          missingRow(fields(q), why)
        ),
      );
    } finally {
      await server?.close().catch(() => {});
    }
  }
  return [rows, []];
}

/** The live-grep rows. */
export const liveGrep: Section = {
  group: "live",
  ids: LIVE_IDS,
  run: measure,
};
