/**
 * grep with its prefilter worker (tools/_grep_pool.ts, tools/_grep_chunks.ts): the worker
 * rules out files without a needle on a second thread, and grep must report exactly the rows,
 * in exactly the order, that a line-by-line RE2 test of every file reports, and that grep
 * reports without the worker. Real trees on disk, a real worker.
 */

import { join } from "node:path";
import { RE2JS } from "re2js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { prng } from "../_helpers/prng.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkerHost,
  createWorkspace,
  DEFAULT_LIMITS,
  type Limits,
  Registry,
  type Workspace,
} from "../../mod.ts";
import { holdsNeedle, NeedleFinder, needlesOf } from "../../tools/_grep_needles.ts";
import { CHUNK_FILES, ChunkedWalk } from "../../tools/_grep_chunks.ts";
import { startPrefilterPool, stopPrefilterPool } from "../../tools/_grep_pool.ts";
import { referenceGrep } from "../_helpers/reference_grep.ts";
import { CLI_ARGS } from "../_helpers/cli.ts";

const ENCODER = new TextEncoder();

/** Latin-1 view of bytes, as the finder and the worker see file contents. */
function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return out;
}

// Lines with what the needles must get right: case folding (Kelvin sign and long s fold to
// k and s), UTF-8 of two, three and four bytes (ő is C5 91: a byte Windows-1252 would decode
// to a curly quote, not U+0091), alternations sharing a prefix, and near misses.
const LINES = [
  "plain words here",
  "click_handler1 and Error_Handler7, KEY_HANDLER0",
  "on_close_handler; resize_handlerX",
  "foo_bar foo_baz foo_qux zeta_omega",
  "foobar foo-baz",
  "mask MASK Mask MAS\u212a ma\u017fk",
  "caf\u00e9 CAF\u00c9 Caf\u00e9foo",
  "\u0151r\u00fcl\u0151 \u0150R\u00dcL\u0150",
  "\u03c3\u03c2\u03a3 sigma",
  "x\u00e9y \u{1f600} \u{1f600}x \u20ac5",
  "struct file_operations { int (*open)(void);",
  "struct  net_operations {",
  "ab1234cd 99",
  "",
];

const PATTERNS: ReadonlyArray<readonly [string, boolean]> = [
  ["handler\\d", false],
  ["(?i)[a-z]+_handler\\d", false],
  ["[A-Z]+_HANDLER\\d", false],
  ["foo_bar|foo_baz|foo_qux", false],
  ["foo_(bar|baz)|foo-baz", false],
  ["foo_ba[rz]|zeta_omega", false],
  ["(?i)mask", false],
  ["mask", true],
  ["(?i)caf\u00e9", false],
  ["CAF\u00c9", false],
  ["\u0151r\u00fcl\u0151", false],
  ["(?i)\u0150R\u00dcL\u0150", false],
  ["\u{1f600}x|\u20ac\\d", false],
  ["(?i)\u03c3", false],
  ["struct\\s+\\w+_operations\\s*\\{\\s*int", false],
  ["\\bfoo\\b", false],
  ["ab\\d+cd", false],
  ["quux_absent", false],
];

interface Tree {
  readonly base: string;
  readonly root: string;
  readonly workspace: Workspace;
  /** Files grep may report, by relative path in walk order, with their bytes. */
  readonly files: ReadonlyArray<readonly [string, Uint8Array]>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A tree of `count` files in 24 directories (names that sort the same as paths, so the walk
 * order is the sorted order), from seeded lines, with the odd ones out: CRLF, a BOM, invalid
 * UTF-8, a NUL, needles at a file's first and last byte, files around the 256 KiB first read
 * and over `maxBytes`, an ignored file, a
 * symlink out of the workspace and a protected directory, both holding every needle.
 */
async function makeTree(count: number, seed: number, maxBytes: number): Promise<Tree> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-pool-" }));
  try {
    return await makeTreeIn(base, count, seed, maxBytes);
  } catch (error) {
    await Deno.remove(base, { recursive: true });
    throw error;
  }
}

/** {@linkcode makeTree} in the temp dir `base`, which its dispose removes. */
async function makeTreeIn(
  base: string,
  count: number,
  seed: number,
  maxBytes: number,
): Promise<Tree> {
  const root = join(base, "ws");
  const outside = join(base, "outside");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  const random = prng(seed);
  const everything = ENCODER.encode(LINES.join("\n") + "\n");
  const files: Array<[string, Uint8Array]> = [];
  const skipped: Array<[string, Uint8Array]> = [];
  for (let i = 0; i < count; i++) {
    const name = `d${String(i % 24).padStart(2, "0")}/f${String(i).padStart(4, "0")}.txt`;
    const kind = i % 97;
    let text: Uint8Array;
    if (kind === 1) text = ENCODER.encode(LINES.join("\r\n"));
    else if (kind === 2) text = ENCODER.encode("\ufeff" + LINES.join("\n"));
    else if (kind === 3) text = Uint8Array.from([0xff, 0xc5, ...everything, 0xe2, 0x82]);
    else if (kind === 4) text = Uint8Array.from([...everything, 0]);
    else if (kind === 5) {
      // Over the first read: needles on both sides of the 256 KiB boundary.
      const filler = "x".repeat(99) + "\n";
      text = ENCODER.encode(
        filler.repeat(2620) + LINES.join("\n") + "\n" + filler.repeat(30) + "foo_baz end\n",
      );
    } else if (kind === 7 || kind === 8) {
      // One line, no newline: a needle at the very first byte, or ending at the last.
      text = ENCODER.encode(kind === 7 ? "foo_bar zeta_omega handler1" : "x mask foo_baz");
    } else if (kind === 6) {
      text = ENCODER.encode("y".repeat(maxBytes) + "\nfoo_bar over the limit\n");
    } else {
      // Mostly plain lines: a few files in each chunk hold a needle.
      const lines: string[] = [];
      const n = 1 + Math.floor(random() * 30);
      for (let j = 0; j < n; j++) {
        lines.push(random() < 0.02 ? LINES[Math.floor(random() * LINES.length)]! : "plain");
      }
      text = ENCODER.encode(lines.join("\n") + (random() < 0.5 ? "\n" : ""));
    }
    (text.length > maxBytes ? skipped : files).push([name, text]);
  }
  for (const [name, bytes] of [...files, ...skipped]) {
    await Deno.mkdir(join(root, name, ".."), { recursive: true });
    await Deno.writeFile(join(root, name), bytes);
  }
  // Walked, never reported: ignored, a link leading out, rousseau's own files.
  await Deno.writeTextFile(join(root, ".gitignore"), "*.ignored\n");
  await Deno.writeFile(join(root, "d03", "zz.ignored"), everything);
  await Deno.writeFile(join(outside, "secret.txt"), everything);
  await Deno.symlink(join(outside, "secret.txt"), join(root, "d04", "zz_out.txt"));
  await Deno.mkdir(join(root, "d05", "zz_state"));
  await Deno.writeFile(join(root, "d05", "zz_state", "own.txt"), everything);
  // A link to a file inside is searched by the caller itself, under the link's name.
  await Deno.symlink(join(root, "d00", "f0024.txt"), join(root, "d06", "zz_in.txt"));
  const inside = files.find(([name]) => name === "d00/f0024.txt")!;
  files.push([".gitignore", ENCODER.encode("*.ignored\n")], ["d06/zz_in.txt", inside[1]]);
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const workspace = await createWorkspace([root], [join(root, "d05", "zz_state")]);
  return {
    base,
    root,
    workspace,
    files,
    [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }),
  };
}

async function grepTree(
  tree: Tree,
  pattern: string,
  ignoreCase: boolean,
  limits: Partial<Limits>,
): Promise<string> {
  const host = createInProcessHost(new Registry(createBuiltinTools()), {
    workspace: tree.workspace,
    limits: { ...DEFAULT_LIMITS, grepMaxMatches: 1_000_000, ...limits },
    env: {},
  });
  const input = ignoreCase ? { pattern, path: tree.root, ignore_case: true } : {
    pattern,
    path: tree.root,
  };
  const result = await host.call("grep", input, new AbortController().signal);
  assertEquals(result.isError, false, result.output);
  return result.output;
}

Deno.test("holdsNeedle() answers as the finder does, also after crossing to another isolate", () => {
  const random = prng(7);
  const texts = [
    ...LINES.map((line) => latin1(ENCODER.encode(line))),
    latin1(ENCODER.encode(LINES.join("\n"))),
    "",
  ];
  const alphabet = [..."_aAbBhH019 \n", ...latin1(ENCODER.encode("\u0151\u00e9\u{1f600}"))];
  for (let i = 0; i < 300; i++) {
    const length = Math.floor(random() * 80);
    texts.push(
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join(""),
    );
  }
  let checked = 0;
  for (const [pattern, ignoreCase] of PATTERNS) {
    const flags = RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
    const needles = needlesOf(RE2JS.compile(pattern, flags), RE2JS);
    if (needles === undefined) continue;
    const finder = new NeedleFinder(needles);
    const plan = structuredClone(finder.plan());
    for (const text of texts) {
      finder.reset(text);
      assertEquals(holdsNeedle(text, plan), finder.find(0) !== -1, `${pattern} in ${text}`);
      checked++;
    }
  }
  assert(checked > 1000, `only ${checked} cases checked`);
});

Deno.test("grep with the prefilter worker reports the rows of a line-by-line RE2 test", async (t) => {
  const maxBytes = 300_000;
  await using tree = await makeTree(900, 1, maxBytes);
  const alone: string[] = [];
  for (const [pattern, ignoreCase] of PATTERNS) {
    alone.push(await grepTree(tree, pattern, ignoreCase, { grepMaxFileBytes: maxBytes }));
  }
  const pool = await startPrefilterPool(tree.workspace.roots);
  try {
    assert(pool !== undefined, "the prefilter worker did not start");
    for (const [index, [pattern, ignoreCase]] of PATTERNS.entries()) {
      await t.step(`${pattern}${ignoreCase ? " (ignore_case)" : ""}`, async () => {
        const expected = referenceGrep(tree.files, tree.root, pattern, ignoreCase, maxBytes);
        const sent = pool.sentFiles;
        const got = await grepTree(tree, pattern, ignoreCase, { grepMaxFileBytes: maxBytes });
        assertEquals(got, expected);
        assertEquals(alone[index], expected);
        // Without needles (`(?i)σ` folds beyond ASCII) every file is searched whole: no worker.
        const flags = RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
        if (needlesOf(RE2JS.compile(pattern, flags), RE2JS) !== undefined) {
          assert(pool.sentFiles > sent, "the worker was not asked about any file");
        }
      });
    }
    await t.step("files a per-file path rule refuses stay out, as without the worker", async () => {
      const host = createInProcessHost(new Registry(createBuiltinTools()), {
        workspace: tree.workspace,
        limits: { ...DEFAULT_LIMITS, grepMaxMatches: 1_000_000, grepMaxFileBytes: maxBytes },
        env: {},
      });
      const refused = (path: string) => /\/d0[27]\//.test(path);
      const asked: string[] = [];
      const mayReturn = (path: string) => {
        asked.push(path);
        return Promise.resolve(!refused(path));
      };
      const pattern = "handler\\d|foo_ba[rz]";
      const sent = pool.sentFiles;
      const result = await host.call(
        "grep",
        { pattern, path: tree.root },
        new AbortController().signal,
        { mayReturn },
      );
      assert(pool.sentFiles > sent, "the worker was not asked about any file");
      const allowed = tree.files.filter(([name]) => !refused(`${tree.root}/${name}`));
      assertEquals(result.output, referenceGrep(allowed, tree.root, pattern, false, maxBytes));
      assert(asked.some(refused), "no refused file was asked about");
    });
    await t.step("the cap cuts the rows where it cuts them without the worker", async () => {
      for (const max of [1, 7, 60]) {
        const limits = { grepMaxFileBytes: maxBytes, grepMaxMatches: max };
        const got = await grepTree(tree, "handler\\d|foo_ba[rz]", false, limits);
        stopPrefilterPool();
        const solo = await grepTree(tree, "handler\\d|foo_ba[rz]", false, limits);
        assertEquals(got, solo);
        assert(got.endsWith(`(truncated at ${max} matches)\n`), got.slice(-80));
        assert((await startPrefilterPool(tree.workspace.roots)) !== undefined);
      }
    });
  } finally {
    stopPrefilterPool();
  }
});

Deno.test("a prefilter worker that stops mid-walk costs time, not files", async () => {
  await using tree = await makeTree(700, 2, DEFAULT_LIMITS.grepMaxFileBytes);
  const needles = needlesOf(RE2JS.compile("foo_ba[rz]", RE2JS.MULTILINE), RE2JS)!;
  const finder = new NeedleFinder(needles);
  const paths = tree.files.map(([name]) => join(tree.root, name));
  const mayHold = (path: string) => {
    const text = latin1(Deno.readFileSync(path));
    finder.reset(text);
    return finder.find(0) !== -1 && !text.includes("\0") ? 1 : 0;
  };
  const pool = await startPrefilterPool(tree.workspace.roots);
  try {
    assert(pool !== undefined, "the prefilter worker did not start");
    pool.setPlan(finder.plan(), DEFAULT_LIMITS.grepMaxFileBytes);
    const walk = new ChunkedWalk(paths.entries(), {
      pool: () => pool,
      pathOf: ([, path]) => path,
      answer: mayHold,
    });
    const seen: number[] = [];
    for (let batch = await walk.next(); batch !== undefined; batch = await walk.next()) {
      seen.push(...batch.map(([index]) => index));
      // Stopped with chunks in its hands: those never come back, and the caller takes them.
      if (pool.sentFiles > 0 && pool.usable) pool.close();
    }
    assert(!pool.usable);
    assertEquals(walk.taken, paths.length);
    for (let i = 1; i < seen.length; i++) assert(seen[i - 1]! < seen[i]!, "out of walk order");
    const needed = paths.flatMap((path, index) => mayHold(path) === 1 ? [index] : []);
    assert(needed.length > 10, `only ${needed.length} files hold a needle`);
    const given = new Set(seen);
    assertEquals(needed.filter((index) => !given.has(index)), []);
  } finally {
    stopPrefilterPool();
  }
});

Deno.test("the chunked walk hands back every chunk, also one with nothing to search", async () => {
  // The caller checks for cancellation and yields between chunks: a run of chunks without a
  // needle must not be skipped through in one call.
  await using tree = await makeTree(1000, 5, DEFAULT_LIMITS.grepMaxFileBytes);
  const finder = new NeedleFinder(needlesOf(RE2JS.compile("quux_absent"), RE2JS)!);
  const pool = await startPrefilterPool(tree.workspace.roots);
  try {
    assert(pool !== undefined, "the prefilter worker did not start");
    pool.setPlan(finder.plan(), DEFAULT_LIMITS.grepMaxFileBytes);
    const paths = tree.files.map(([name]) => join(tree.root, name));
    const walk = new ChunkedWalk(paths[Symbol.iterator](), {
      pool: () => pool,
      pathOf: (path) => path,
      answer: () => 0,
    });
    let batches = 0;
    let empty = 0;
    for (let batch = await walk.next(); batch !== undefined; batch = await walk.next()) {
      batches++;
      if (batch.length === 0) empty++;
    }
    assertEquals(batches, Math.ceil(paths.length / CHUNK_FILES));
    assert(empty > 0 && pool.sentFiles > 0, `${empty} empty batches, ${pool.sentFiles} sent`);
  } finally {
    stopPrefilterPool();
  }
});

Deno.test("grep in the tool worker, which starts its own prefilter worker, keeps every row", async () => {
  await using tree = await makeTree(1300, 3, DEFAULT_LIMITS.grepMaxFileBytes);
  await using host = await createWorkerHost({
    workspace: tree.workspace,
    limits: { ...DEFAULT_LIMITS, grepMaxMatches: 1_000_000 },
    env: {},
  });
  const max = DEFAULT_LIMITS.grepMaxFileBytes;
  const call = async (pattern: string) => {
    const result = await host.call(
      "grep",
      { pattern, path: tree.root },
      new AbortController().signal,
    );
    assertEquals(result.isError, false, result.output);
    assertEquals(result.output, referenceGrep(tree.files, tree.root, pattern, false, max));
  };
  // The first large walk has the worker started; it is used once ready, half a second or so
  // later. The rows are the same either way: these calls cover both.
  await call("foo_bar|zeta_omega");
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (const [pattern] of PATTERNS.slice(0, 6)) await call(pattern);
});

Deno.test("grep with the prefilter worker still yields and cancels where no file holds a needle", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-pool-" }));
  try {
    for (let d = 0; d < 30; d++) {
      const dir = join(base, `d${String(d).padStart(2, "0")}`);
      await Deno.mkdir(dir);
      for (let f = 0; f < 100; f++) {
        await Deno.writeTextFile(join(dir, `f${String(f).padStart(3, "0")}.txt`), "plain\n");
      }
    }
    const workspace = await createWorkspace([base]);
    const pool = await startPrefilterPool(workspace.roots);
    assert(pool !== undefined, "the prefilter worker did not start");
    const host = createInProcessHost(new Registry(createBuiltinTools()), {
      workspace,
      limits: DEFAULT_LIMITS,
      env: {},
    });
    // Chunk after chunk is ruled out whole, so no file is searched: the walk must still give
    // the event loop its turns, and this check sees the worker at work and cancels.
    const controller = new AbortController();
    const check = setInterval(() => {
      if (pool.sentFiles > 0) controller.abort();
    }, 1);
    try {
      const result = await host.call(
        "grep",
        { pattern: "quux_absent", path: base },
        controller.signal,
      );
      assertEquals(result, { output: "grep: cancelled", isError: true });
    } finally {
      clearInterval(check);
    }
  } finally {
    stopPrefilterPool();
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("a one-shot grep of a large tree gets its prefilter worker within the same call", async () => {
  // `rousseau tool grep` runs one call and exits: the prefilter worker only helps if grep asks
  // for it mid-walk and the host starts it at once. strace shows which threads opened the
  // tree's files: the tool worker's and the prefilter worker's, or the tool worker's alone.
  await using tree = await makeTree(6000, 4, DEFAULT_LIMITS.grepMaxFileBytes);
  const trace = join(tree.root, "..", "outside", "trace");
  const out = await new Deno.Command("strace", {
    args: [
      "-f",
      "-e",
      "trace=openat",
      "-e",
      "signal=none",
      "-o",
      trace,
      Deno.execPath(),
      ...CLI_ARGS,
      "--workspace",
      tree.root,
      "tool",
      "grep",
      JSON.stringify({ pattern: "zeta_omega handler1", path: tree.root }),
    ],
    env: { XDG_CONFIG_HOME: join(tree.root, "..", "outside"), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert(out.success, new TextDecoder().decode(out.stderr).slice(-2000));
  const max = DEFAULT_LIMITS.grepMaxFileBytes;
  assertEquals(stdout, referenceGrep(tree.files, tree.root, "zeta_omega handler1", false, max));
  const threads = new Map<string, number>();
  for (const line of (await Deno.readTextFile(trace)).split("\n")) {
    const match = /^(\d+)\s+openat\(AT_FDCWD, "([^"]+)"/.exec(line);
    if (match === null || !match[2]!.startsWith(`${tree.root}/d`)) continue;
    threads.set(match[1]!, (threads.get(match[1]!) ?? 0) + 1);
  }
  const counts = [...threads.values()].sort((a, b) => b - a);
  assert(counts.length >= 2 && counts[1]! > 500, `opens per thread: ${counts.join(", ")}`);
});
