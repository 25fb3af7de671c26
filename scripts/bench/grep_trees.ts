/**
 * The grep suite's trees: the generated tree of small source-like files and the tree of large
 * files (deterministic, built once and cached under `.bench/` beside a `<root>.ok` file of
 * their stats), and walks of an existing tree (`/usr/include`) as our grep sees it. The
 * memory and live-grep rows of the runtime suite search the generated tree too.
 *
 * @module
 */

import { join, relative } from "node:path";
import { DEFAULT_LIMITS } from "../../mod.ts";
import { SKIPPED_DIRS } from "../../tools/grep.ts";
import { log } from "./table.ts";
import { prng as rng } from "../../tests/_helpers/prng.ts";

/** Bump when the generator changes, so cached trees are rebuilt. */
export const GENERATOR_VERSION = 1;
const KIB = 1024;

/** Planted in a handful of files; never produced by the generator otherwise. */
export const RARE = "quuxplorinator_7f3a";
/** Its words are planted in a few files, one a line. */
export const ALTERNATION = "foo_bar|baz_qux|zeta_omega";

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
function linePool(size: number, seed = 1): string[] {
  const g = new Gen(seed);
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
 * skip-list directories and a few hidden files; `seed` (default: fixed) picks the lines and
 * where matches go.
 */
export async function buildSmallTree(
  root: string,
  count: number,
  seed?: number,
): Promise<TreeStats> {
  const lines = linePool(20_000, seed ?? 1);
  const g = new Gen(seed ?? count);
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
export async function buildLargeTree(
  root: string,
  count: number,
  size: number,
): Promise<TreeStats> {
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
export async function measureTree(root: string): Promise<TreeStats> {
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
export async function symlinkArgs(root: string): Promise<string[]> {
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

/** The grep suite's largest cached small-file tree, or a fresh one of `files` files. */
export async function grepTree(
  dir: string,
  files: number,
): Promise<{ root: string; stats: TreeStats; generated: boolean }> {
  const suffix = `-v${GENERATOR_VERSION}.ok`;
  let found: { root: string; stats: TreeStats; generated: boolean } | undefined;
  const entries = await Array.fromAsync(Deno.readDir(dir)).catch(() => [] as Deno.DirEntry[]);
  for (const entry of entries) {
    if (!entry.isFile || !entry.name.startsWith("files-") || !entry.name.endsWith(suffix)) continue;
    const stats = JSON.parse(await Deno.readTextFile(join(dir, entry.name))) as TreeStats;
    if (found === undefined || stats.bytes > found.stats.bytes) {
      found = { root: join(dir, entry.name.slice(0, -".ok".length)), stats, generated: false };
    }
  }
  if (found !== undefined) return found;
  await Deno.mkdir(dir, { recursive: true });
  const root = join(dir, `files-${files}-v${GENERATOR_VERSION}`);
  return { root, stats: await cached(root, (r) => buildSmallTree(r, files)), generated: true };
}
