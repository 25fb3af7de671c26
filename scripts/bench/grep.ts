// deno-lint-ignore-file no-console
/**
 * `deno task bench`: the grep tool against ripgrep, side by side in one run.
 *
 * Trees: (a) a generated tree of small source-like files (100,000 files, ~1 GiB, with
 * skip-list directories that hold decoy matches), (b) a few files just under the 4 MiB limit
 * plus one just over it, (c) the machine's C headers (`/usr/include`) when present. The
 * generated trees are deterministic and cached under `.bench/` (gitignored); they are built
 * in `grep_trees.ts`, and rg is run by `_rg.ts`.
 *
 * For each tree and query, our grep runs in-process (parse + execute, as a host calls it; run
 * through `deno task bench`, the process has the V8 flags the CLI has, see `main.ts`)
 * and `rg` runs as a process with the same skip list and size limit, once single-threaded
 * (`-j1`) and once with its default threads. Each figure is the minimum of `--runs` runs
 * after one warm-up run; the three are interleaved so machine noise hits them alike. The
 * number of matching lines is compared (ours stops at 200, so it must equal min(rg, 200)).
 *
 * Writes a markdown table to stdout and `bench/results.md`, and `bench/results.json`.
 *
 * Options: `--quick` (2,000 files, 2 large files, 2 runs), `--tree-files N`, `--large-files N`,
 * `--runs N`, `--dir DIR` (tree cache, default `.bench/`), `--out DIR` (default `bench/`),
 * `--headers DIR|none` (default `/usr/include`), `--rg PATH` (default `rg`).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { createGrepTool, createWorkspace, DEFAULT_LIMITS, type Workspace } from "../../mod.ts";
import { rgArgs, rgVersion, runRg, type Sample } from "./_rg.ts";
import {
  ALTERNATION,
  buildLargeTree,
  buildSmallTree,
  cached,
  GENERATOR_VERSION,
  measureTree,
  RARE,
  symlinkArgs,
} from "./grep_trees.ts";
import { log, round, table, wrap } from "./table.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const KIB = 1024;
const MIB = 1024 * KIB;

/** Appears in roughly one line in twenty: far more than 200 matches. */
const COMMON = "return";
const CLASS = String.raw`(?i)[a-z]+_handler\d`;

interface Query {
  readonly name: string;
  readonly pattern: string;
  /** Our grep stops at the cap; rg reads everything. Not a like-for-like ratio. */
  readonly capped: boolean;
}

function queriesFor(rare: string): Query[] {
  return [
    { name: "rare literal", pattern: rare, capped: false },
    { name: "common word", pattern: COMMON, capped: true },
    { name: "case-insensitive class", pattern: CLASS, capped: false },
    { name: "alternation", pattern: ALTERNATION, capped: false },
  ];
}

const TOOL = createGrepTool();

async function runOurs(root: string, workspace: Workspace, pattern: string): Promise<Sample> {
  const context = {
    workspace,
    limits: DEFAULT_LIMITS,
    signal: new AbortController().signal,
    env: {},
  };
  const started = performance.now();
  const out = await TOOL.execute(TOOL.parseInput({ pattern, path: root }), context);
  const ms = performance.now() - started;
  if (out === "no matches") return { ms, lines: 0 };
  let lines = 0;
  for (let i = out.indexOf("\n"); i !== -1; i = out.indexOf("\n", i + 1)) lines++;
  if (/\n\(truncated at \d+ matches\)\n$/.test(out)) lines--;
  return { ms, lines };
}

interface Row {
  readonly name: string;
  readonly tree: string;
  readonly query: string;
  readonly pattern: string;
  readonly capped: boolean;
  readonly "ours_ms": number;
  readonly "rg_j1_ms": number | null;
  readonly "rg_ms": number | null;
  /** ours / rg -j1. */
  readonly ratio: number | null;
  /** ours / rg (default threads). */
  readonly "ratio_rg": number | null;
  readonly "ours_lines": number;
  readonly "rg_lines": number | null;
  /** ours_lines === min(rg_lines, cap); null without rg. */
  readonly agree: boolean | null;
  /** Target met: ≤ 1.5× rg -j1, or under 50 ms for the capped row. */
  readonly target: boolean | null;
}

interface Tree {
  readonly name: string;
  readonly root: string;
  readonly description: string;
  readonly rare: string;
  readonly rgExtra: readonly string[];
}

async function measureRow(
  tree: Tree,
  query: Query,
  workspace: Workspace,
  rg: string | undefined,
  runs: number,
): Promise<Row> {
  const ours: Sample[] = [];
  const j1: Sample[] = [];
  const multi: Sample[] = [];
  for (let run = 0; run <= runs; run++) {
    log(`  ${tree.name} / ${query.name}: ${run === 0 ? "warm-up" : `run ${run}/${runs}`}`);
    // Interleaved so machine noise hits all three alike; run 0 is the warm-up.
    const o = await runOurs(tree.root, workspace, query.pattern);
    const a = rg === undefined
      ? undefined
      : await runRg(rg, tree.root, rgArgs(1, tree.rgExtra, query.pattern));
    const b = rg === undefined
      ? undefined
      : await runRg(rg, tree.root, rgArgs(undefined, tree.rgExtra, query.pattern));
    if (run === 0) continue;
    ours.push(o);
    if (a !== undefined) j1.push(a);
    if (b !== undefined) multi.push(b);
  }
  const min = (samples: Sample[]) =>
    samples.length === 0 ? null : Math.min(...samples.map((s) => s.ms));
  const oursMs = min(ours)!;
  const j1Ms = min(j1);
  const rgMs = min(multi);
  const oursLines = ours[0]!.lines;
  const rgLines = j1[0]?.lines ?? null;
  const ratio = j1Ms === null ? null : oursMs / j1Ms;
  return {
    name: `${tree.name} / ${query.name}`,
    tree: tree.name,
    query: query.name,
    pattern: query.pattern,
    capped: query.capped,
    ours_ms: round(oursMs),
    rg_j1_ms: j1Ms === null ? null : round(j1Ms),
    rg_ms: rgMs === null ? null : round(rgMs),
    ratio: ratio === null ? null : round(ratio, 2),
    ratio_rg: rgMs === null ? null : round(oursMs / rgMs, 2),
    ours_lines: oursLines,
    rg_lines: rgLines,
    agree: rgLines === null ? null : oursLines === Math.min(rgLines, DEFAULT_LIMITS.grepMaxMatches),
    target: query.capped ? oursMs < 50 : ratio === null ? null : ratio <= 1.5,
  };
}

function fmt(n: number | null, suffix = ""): string {
  return n === null ? "-" : `${n.toFixed(suffix === "x" ? 2 : 1)}${suffix}`;
}

function report(rows: Row[], trees: Tree[], meta: Record<string, string | number>): string {
  const body: string[][] = [];
  for (const r of rows) {
    const target = r.target === null
      ? "-"
      : `${r.target ? "ok" : "MISS"} (${r.capped ? "< 50 ms" : "<= 1.5x"})`;
    body.push([
      r.tree,
      r.query,
      "`" + r.pattern.replaceAll("|", "\\|") + "`",
      fmt(r.ours_ms),
      fmt(r.rg_j1_ms),
      fmt(r.rg_ms),
      fmt(r.ratio, "x") + (r.capped ? " (a)" : ""),
      fmt(r.ratio_rg, "x"),
      `${r.ours_lines}`,
      r.rg_lines === null ? "-" : `${r.rg_lines}`,
      target,
    ]);
    if (r.agree === false) {
      body.push([
        "WARNING",
        r.query,
        `results differ: ours ${r.ours_lines} lines, expected min(rg ${r.rg_lines}, ` +
        `${DEFAULT_LIMITS.grepMaxMatches})`,
        ...Array<string>(8).fill(""),
      ]);
    }
  }
  const header = [
    "tree",
    "query",
    "pattern",
    "ours ms",
    "rg -j1 ms",
    "rg ms",
    "ours / rg -j1",
    "ours / rg",
    "lines ours",
    "lines rg",
    "target",
  ];
  return [
    "# grep benchmark",
    "",
    wrap(
      `Produced by \`${meta.command}\` on ${meta.date}: ${meta.deno}, ${meta.rg}, ${meta.cpus} CPUs. ` +
        `Each figure is the minimum of ${meta.runs} run(s) after a warm-up, interleaved; ours runs ` +
        "in-process (parse + execute), rg as a process with the same skip list, `--no-ignore " +
        `--hidden --max-filesize ${DEFAULT_LIMITS.grepMaxFileBytes}\`.`,
    ),
    "",
    ...trees.map((t) => wrap(`- **${t.name}**: ${t.description}`, "  ")),
    "",
    table(header, body),
    "",
    wrap(
      "(a) Ours stops at 200 matches; rg reports every match. Not a like-for-like ratio: the " +
        "target for this row is an absolute < 50 ms.",
    ),
    "",
  ].join("\n");
}

function gib(bytes: number): string {
  return bytes >= 100 * MIB
    ? `${(bytes / 1024 / MIB).toFixed(2)} GiB`
    : `${(bytes / MIB).toFixed(1)} MiB`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      quick: { type: "boolean", default: false },
      "tree-files": { type: "string" },
      "large-files": { type: "string" },
      runs: { type: "string" },
      dir: { type: "string", default: join(REPO, ".bench") },
      out: { type: "string", default: join(REPO, "bench") },
      headers: { type: "string", default: "/usr/include" },
      rg: { type: "string", default: "rg" },
    },
  });
  const number = (text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`bench: not a positive integer: ${text}`);
    return n;
  };
  const treeFiles = number(values["tree-files"], values.quick ? 2000 : 100_000);
  const largeFiles = number(values["large-files"], values.quick ? 2 : 4);
  const runs = number(values.runs, values.quick ? 2 : 5);
  // Just under the limit at full scale; smaller when the small tree is shrunk.
  const largeSize = Math.min(
    DEFAULT_LIMITS.grepMaxFileBytes - KIB,
    Math.max(64 * KIB, Math.floor(treeFiles * 10 * KIB / largeFiles)),
  );
  const rgLine = await rgVersion(values.rg);
  if (rgLine === undefined) log(`bench: ${values.rg} not found; reporting our figures only`);
  const rg = rgLine === undefined ? undefined : values.rg;

  await Deno.mkdir(values.dir, { recursive: true });
  const dir = await Deno.realPath(values.dir);
  const trees: Tree[] = [];
  const small = join(dir, `files-${treeFiles}-v${GENERATOR_VERSION}`);
  const smallStats = await cached(small, (root) => buildSmallTree(root, treeFiles));
  trees.push({
    name: `files-${treeFiles}`,
    root: small,
    description: `${smallStats.files} generated source files, ${
      gib(smallStats.bytes)
    }, ~100 per directory; ${smallStats.skippedFiles} more in skip-list directories`,
    rare: RARE,
    rgExtra: [],
  });
  const large = join(dir, `large-${largeFiles}x${largeSize}-v${GENERATOR_VERSION}`);
  const largeStats = await cached(large, (root) => buildLargeTree(root, largeFiles, largeSize));
  trees.push({
    name: `large-${largeFiles}`,
    root: large,
    description: `${largeStats.files} files of ${gib(largeStats.bytes / largeStats.files)} (limit ${
      gib(DEFAULT_LIMITS.grepMaxFileBytes)
    }), plus one over the limit that both skip`,
    rare: RARE,
    rgExtra: [],
  });
  if (values.headers !== "none") {
    const root = await Deno.realPath(values.headers).catch(() => undefined);
    if (root === undefined) log(`bench: ${values.headers} not found; skipping the headers tree`);
    else {
      const stats = await measureTree(root);
      const extra = await symlinkArgs(root);
      trees.push({
        name: "headers",
        root,
        description: `${root}, ${stats.files} files, ${gib(stats.bytes)}` +
          (extra.length === 0
            ? ""
            : "; rg gets `-L` with symlinked directories excluded, so both see the same files"),
        rare: "pthread_mutex_consistent",
        rgExtra: extra,
      });
    }
  }

  const rows: Row[] = [];
  for (const tree of trees) {
    const workspace = await createWorkspace([tree.root]);
    for (const query of queriesFor(tree.rare)) {
      rows.push(await measureRow(tree, query, workspace, rg, runs));
    }
  }

  const meta = {
    command: ["deno task bench", ...Deno.args].join(" "),
    date: new Date().toISOString().slice(0, 10),
    deno: `deno ${Deno.version.deno}`,
    rg: rgLine ?? "rg not found",
    cpus: navigator.hardwareConcurrency,
    runs,
  };
  const markdown = report(rows, trees, meta);
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(join(values.out, "results.md"), markdown);
  await Deno.writeTextFile(
    join(values.out, "results.json"),
    JSON.stringify({ ...meta, trees, rows }, null, 2) + "\n",
  );
  console.log(markdown);
  const bad = rows.filter((r) => r.agree === false);
  if (bad.length > 0) log(`bench: ${bad.length} row(s) disagree with rg; see WARNING rows`);
}

if (import.meta.main) await main();
