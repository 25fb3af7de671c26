// deno-lint-ignore-file no-console
/**
 * `deno task bench`: the grep tool against ripgrep, side by side in one run.
 *
 * Trees: (a) a generated tree of small source-like files (100,000 files, ~1 GiB, with
 * skip-list directories that hold decoy matches), (b) a few files just under the 4 MiB limit
 * plus one just over it, (c) the machine's C headers (`/usr/include`) when present. The
 * generated trees are deterministic and cached under `.bench/` (gitignored).
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
import { join, relative } from "node:path";
import { createGrepTool, createWorkspace, DEFAULT_LIMITS, type Workspace } from "../../mod.ts";
import { SKIPPED_DIRS } from "../../tools/grep.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** Bump when the generator changes, so cached trees are rebuilt. */
export const GENERATOR_VERSION = 1;
const KIB = 1024;
const MIB = 1024 * KIB;
/** `fmt.lineWidth` in deno.json: results.md must already be formatted. */
const LINE_WIDTH = 100;

// ---------------------------------------------------------------------------------------------
// Queries

/** Planted in a handful of files; never produced by the generator otherwise. */
export const RARE = "quuxplorinator_7f3a";
/** Appears in roughly one line in twenty: far more than 200 matches. */
const COMMON = "return";
const CLASS = String.raw`(?i)[a-z]+_handler\d`;
const ALTERNATION = "foo_bar|baz_qux|zeta_omega";

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

// ---------------------------------------------------------------------------------------------
// Deterministic generation

/** mulberry32: small, fast, deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// No word may form a planted token: no foo/bar/baz/qux/zeta/omega, nothing digit-like, and
// "return" only comes from its own template.
const WORDS = (
  "alpha beta gamma delta epsilon kappa lambda sigma value result index count buffer handler " +
  "request response config options state context session token cache queue stream socket " +
  "client server router parser lexer node tree graph edge vertex matrix vector record field " +
  "column table query schema model view event signal timer worker thread task job batch chunk " +
  "block frame packet header payload message error status level limit offset length width " +
  "height depth size total sum min max start stop begin end first last next prev left right " +
  "upper lower input output source target origin path file dir name key id type kind mode flag " +
  "mask bits byte word line text char code data info meta user group role scope module update " +
  "create delete insert select filter map reduce sort merge split join parse render format " +
  "encode decode load save read write open close flush reset retry commit rollback"
).split(" ");
const TYPES = ["string", "number", "boolean", "Buffer", "Options", "Record", "Context", "Result"];
const EXTENSIONS = [".ts", ".ts", ".ts", ".js", ".py", ".go", ".c", ".h", ".rs", ".md"];

class Gen {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = rng(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  word(): string {
    return this.pick(WORDS);
  }
  ident(): string {
    const r = this.int(3);
    if (r === 0) return this.word();
    if (r === 1) return `${this.word()}_${this.word()}`;
    const w = this.word();
    return this.word() + w[0]!.toUpperCase() + w.slice(1);
  }
  indent(): string {
    return "  ".repeat(1 + this.int(3));
  }
  line(): string {
    const r = this.int(20);
    const i = this.indent();
    switch (r) {
      case 0:
        return `${i}return ${this.ident()}.${this.word()}(${this.ident()});`;
      case 1:
      case 2:
        return `${i}if (${this.ident()}.${this.word()} > ${this.int(1000)}) {`;
      case 3:
      case 4:
        return `${i}}`;
      case 5:
      case 6:
        return `${i}// ${Array.from({ length: 4 + this.int(8) }, () => this.word()).join(" ")}`;
      case 7:
        return `export function ${this.ident()}(${this.ident()}: ${this.pick(TYPES)}, ` +
          `${this.ident()}: number): ${this.pick(TYPES)} {`;
      case 8:
      case 9:
        return `${i}${this.ident()}.${this.word()} = ${this.ident()}[${this.int(64)}] ?? ` +
          `"${this.word()} ${this.word()}";`;
      case 10:
        return `${i}for (let i = 0; i < ${this.ident()}.length; i++) ` +
          `${this.ident()}.push(${this.ident()}[i]);`;
      case 11:
        return "";
      case 12:
        return `${i}await ${this.ident()}.${this.word()}(${this.ident()}, { ${this.word()}: ` +
          `${this.ident()}, ${this.word()}: ${this.int(100)} });`;
      default:
        return `${i}const ${this.ident()} = ${this.ident()}(${this.ident()}, ${this.int(4096)});`;
    }
  }
}

/** A pool of lines files are assembled from: fast to sample, varied enough. */
function linePool(size: number): string[] {
  const g = new Gen(1);
  return Array.from({ length: size }, () => g.line());
}

function planted(kind: "rare" | "class" | "alt", g: Gen): string {
  if (kind === "rare") return `  const probe = "${RARE}"; // ${g.word()}`;
  if (kind === "class") {
    const handler = g.pick(["handler", "Handler", "HANDLER"]);
    const prefix = g.pick(["click", "Error", "on_close", "KEY", "Resize"]);
    return `  events.on(${prefix}_${handler}${g.int(10)}, ${g.ident()});`;
  }
  return `  use(${g.pick(ALTERNATION.split("|"))}); // ${g.word()}`;
}

/** Text of about `bytes` bytes from the pool, with `plants` lines spliced in. */
function fileText(pool: readonly string[], g: Gen, bytes: number, plants: string[]): string {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = pool[g.int(pool.length)]!;
    lines.push(line);
    size += line.length + 1;
  }
  for (const plant of plants) lines.splice(1 + g.int(lines.length - 1), 0, plant);
  return lines.join("\n") + "\n";
}

/** `count` distinct indexes below `n`, chosen by `g`. */
function choose(g: Gen, n: number, count: number): Set<number> {
  const picked = new Set<number>();
  while (picked.size < Math.min(count, n)) picked.add(g.int(n));
  return picked;
}

/** What a generated tree holds. */
export interface TreeStats {
  readonly files: number;
  readonly bytes: number;
  /** Files in skip-list directories (not searched). */
  readonly skippedFiles: number;
}

/** Runs `jobs` with at most `limit` in flight. */
async function pool(jobs: Iterable<() => Promise<void>>, limit: number): Promise<void> {
  const running = new Set<Promise<void>>();
  for (const job of jobs) {
    const p = job().finally(() => running.delete(p));
    running.add(p);
    if (running.size >= limit) await Promise.race(running);
  }
  await Promise.all(running);
}

const ENCODER = new TextEncoder();

async function writeFiles(root: string, files: Map<string, string>): Promise<void> {
  const dirs = new Set<string>();
  for (const rel of files.keys()) dirs.add(join(root, rel, ".."));
  for (const dir of dirs) await Deno.mkdir(dir, { recursive: true });
  await pool(
    (function* () {
      for (const [rel, text] of files) {
        yield () => Deno.writeFile(join(root, rel), ENCODER.encode(text));
      }
    })(),
    32,
  );
}

/** Builds the tree at `root` once; a `<root>.ok` file holds its stats. */
export async function cached(
  root: string,
  build: (root: string) => Promise<TreeStats>,
): Promise<TreeStats> {
  const marker = `${root}.ok`;
  try {
    return JSON.parse(await Deno.readTextFile(marker)) as TreeStats;
  } catch {
    // not built yet, or interrupted
  }
  await Deno.remove(root, { recursive: true }).catch(() => {});
  await Deno.mkdir(root, { recursive: true });
  const started = performance.now();
  const stats = await build(root);
  await Deno.writeTextFile(marker, JSON.stringify(stats));
  log(`generated ${root} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return stats;
}

/**
 * (a) `count` files of ~10 KiB in leaf directories of 100, grouped by 100, plus decoys in
 * skip-list directories and a few hidden files.
 */
export async function buildSmallTree(root: string, count: number): Promise<TreeStats> {
  const lines = linePool(20_000);
  const g = new Gen(count);
  const rare = choose(g, count, 5);
  const cls = choose(g, count, Math.max(1, Math.round(count * 0.0006)));
  const alt = choose(g, count, Math.max(1, Math.round(count * 0.0006)));
  let bytes = 0;
  const batch = new Map<string, string>();
  const flush = async () => {
    await writeFiles(root, batch);
    batch.clear();
  };
  for (let i = 0; i < count; i++) {
    const leaf = Math.floor(i / 100);
    const dir = `src/g${String(Math.floor(leaf / 100)).padStart(2, "0")}/m${
      String(leaf % 100).padStart(2, "0")
    }`;
    const hidden = i % 997 === 0;
    const name = `${hidden ? "." : ""}f${String(i % 100).padStart(2, "0")}${g.pick(EXTENSIONS)}`;
    const plants: string[] = [];
    if (rare.has(i)) plants.push(planted("rare", g));
    if (cls.has(i)) plants.push(planted("class", g));
    if (alt.has(i)) plants.push(planted("alt", g));
    const text = fileText(lines, g, 7 * KIB + g.int(7 * KIB), plants);
    bytes += text.length;
    batch.set(`${dir}/${name}`, text);
    if (batch.size === 2000) {
      await flush();
      log(`  ${i + 1}/${count} files`);
    }
  }
  // Decoys: every kind of match, in every skipped directory, at the top and deeper down.
  const skipped = Math.max(2, Math.floor(count / 200));
  let skippedFiles = 0;
  for (const name of SKIPPED_DIRS) {
    for (let j = 0; j < skipped; j++) {
      const base = j % 2 === 0 ? name : `src/g00/m00/${name}`;
      const plants = j < 2 ? [planted("rare", g), planted("class", g), planted("alt", g)] : [];
      batch.set(`${base}/p${j % 10}/d${j}.js`, fileText(lines, g, 10 * KIB, plants));
      skippedFiles++;
    }
  }
  await flush();
  return { files: count, bytes, skippedFiles };
}

/** (b) `count` files just under the grep limit, and one just over it (skipped by both). */
async function buildLargeTree(root: string, count: number, size: number): Promise<TreeStats> {
  const lines = linePool(20_000);
  const g = new Gen(7);
  const files = new Map<string, string>();
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const plants = [planted("class", g), planted("alt", g)];
    if (i === count - 1) plants.push(planted("rare", g));
    // Leave room for the plants so the file stays under the limit.
    let text = fileText(lines, g, size - 512, plants);
    if (text.length > size) text = text.slice(0, text.lastIndexOf("\n", size - 1) + 1);
    files.set(`large${i}.ts`, text);
    bytes += text.length;
  }
  const over = DEFAULT_LIMITS.grepMaxFileBytes + 1024;
  files.set("too_large.ts", fileText(lines, g, over, [planted("rare", g), planted("alt", g)]));
  await writeFiles(root, files);
  return { files: count, bytes, skippedFiles: 1 };
}

/** Files and bytes of an existing tree, as our grep walks it. */
async function measureTree(root: string): Promise<TreeStats> {
  let files = 0;
  let bytes = 0;
  async function visit(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) {
        if (!SKIPPED_DIRS.has(entry.name)) await visit(path);
      } else if (entry.isFile) {
        files++;
        bytes += (await Deno.lstat(path)).size;
      }
    }
  }
  await visit(root);
  return { files, bytes, skippedFiles: 0 };
}

/**
 * rg arguments that make it see the files our grep sees when the tree has symlinks: ours
 * searches symlinked files whose target is inside the workspace and never descends symlinked
 * directories; rg -L follows both, so symlinked directories and outside targets are excluded.
 */
async function symlinkArgs(root: string): Promise<string[]> {
  const excludes: string[] = [];
  let files = 0;
  async function visit(dir: string): Promise<void> {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) {
        if (!SKIPPED_DIRS.has(entry.name)) await visit(path);
      } else if (entry.isSymlink) {
        const rel = relative(root, path);
        const target = await Deno.realPath(path).catch(() => undefined);
        const info = target === undefined ? undefined : await Deno.stat(target).catch(() => {});
        if (info?.isDirectory) excludes.push("-g", `!/${rel}/`);
        else if (target === undefined || !target.startsWith(root + "/")) {
          excludes.push("-g", `!/${rel}`);
        } else files++;
      }
    }
  }
  await visit(root);
  return files === 0 ? [] : ["-L", ...excludes];
}

// ---------------------------------------------------------------------------------------------
// Measurement

interface Sample {
  readonly ms: number;
  readonly lines: number;
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

export function rgArgs(
  threads: number | undefined,
  extra: readonly string[],
  pattern: string,
): string[] {
  const args = ["--no-config", "-n", "--no-heading", "--color", "never"];
  if (threads !== undefined) args.push(`-j${threads}`);
  args.push("--no-ignore", "--hidden", "--max-filesize", `${DEFAULT_LIMITS.grepMaxFileBytes}`);
  for (const name of SKIPPED_DIRS) args.push("-g", `!${name}/`);
  args.push(...extra, "-e", pattern, ".");
  return args;
}

/** Runs rg in `root` (anchored globs are relative to the working directory). */
export async function runRg(rg: string, root: string, args: string[]): Promise<Sample> {
  const started = performance.now();
  const child = new Deno.Command(rg, {
    args,
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let lines = 0;
  for await (const chunk of child.stdout) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  }
  const status = await child.status;
  const ms = performance.now() - started;
  const errors = await stderr;
  if (status.code > 1 || errors !== "") {
    throw new Error(`rg ${args.join(" ")} exited ${status.code}: ${errors.slice(0, 500)}`);
  }
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

/** `n` rounded to `digits` decimals. */
export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

// ---------------------------------------------------------------------------------------------
// Report

function fmt(n: number | null, suffix = ""): string {
  return n === null ? "-" : `${n.toFixed(suffix === "x" ? 2 : 1)}${suffix}`;
}

/** A markdown table already aligned the way `deno fmt` aligns it. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
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

/** Greedy wrap at the project's line width, as `deno fmt` wraps prose (code spans whole). */
export function wrap(text: string, indent = ""): string {
  const words = text.match(/(?:`[^`]*`|[^\s`])+/g) ?? [];
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    const next = line === "" ? word : `${line} ${word}`;
    if (line !== "" && (lines.length === 0 ? "" : indent).length + next.length > LINE_WIDTH) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line !== "") lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : indent + l)).join("\n");
}

function log(message: string): void {
  console.error(message);
}

function gib(bytes: number): string {
  return bytes >= 100 * MIB
    ? `${(bytes / 1024 / MIB).toFixed(2)} GiB`
    : `${(bytes / MIB).toFixed(1)} MiB`;
}

async function rgVersion(rg: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(rg, { args: ["--version"], stdout: "piped" }).output();
    return new TextDecoder().decode(out.stdout).split("\n")[0];
  } catch {
    return undefined;
  }
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
