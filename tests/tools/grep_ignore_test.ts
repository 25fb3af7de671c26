/**
 * grep skips what the repository ignores (spec tools.md grep, "(beyond) Also skip what the
 * repository ignores"; issue 17 item 5): `.gitignore` files (root, parents up to the
 * repository root, nested, negation) and `.git/info/exclude`, with real git as the oracle;
 * a path named directly is searched even if ignored; the bounds `_grep_ignore.ts` decides
 * (nothing read outside the workspace, nested repositories, symlinked ignore files).
 *
 * Semantics checked against git's documentation (https://git-scm.com/docs/gitignore) and
 * ripgrep's behaviour for explicitly given paths (BurntSushi/ripgrep GUIDE.md, "Automatic
 * filtering": "explicitly given paths are always searched").
 */

import { join } from "node:path";
import { levelsAt, loadIgnore } from "../../tools/_grep_ignore.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { runCli } from "../_helpers/cli.ts";
import { type Files, type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const NEEDLE = "NEEDLE_4e1f";

/** Files that all hold the needle, and the ignore files, which do not. */
function tree(paths: readonly string[], ignores: Files): Files {
  return { ...Object.fromEntries(paths.map((p) => [p, `${NEEDLE} ${p}\n`])), ...ignores };
}

/** The files grep returns rows from under `path`, relative to the workspace root. */
async function found(ws: TmpWorkspace, path = ws.root): Promise<string[]> {
  const result = await ws.call("grep", { pattern: NEEDLE, path });
  assertEquals(result.isError, false, result.output);
  if (result.output === "no matches") return [];
  return result.output.trimEnd().split("\n").map((row) =>
    row.slice(0, row.indexOf(":1: ")).slice(ws.root.length + 1)
  ).sort();
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

const PATHS = [
  "a.log",
  "keep.log",
  "top.txt",
  "ok.txt",
  "gen/a.txt",
  "cache/in-dir.txt",
  "src/cache", // a file named like the dir-only pattern `cache/`: not ignored
  "src/top.txt", // `/top.txt` is anchored at the root
  "src/b.log", // re-included by src/.gitignore
  "src/local.txt",
  "src/sub/local.txt",
  "src/sub/excluded.txt",
  "src/sub/deeper/excluded.txt", // re-included by src/sub/deeper/.gitignore
  "src/x.tmp",
  "src/keep.tmp",
  "docs/guide.md", // `docs/*.md`: a middle slash anchors it
  "docs/api/ref.md",
  "#hash.txt", // `\#hash.txt` escapes the comment sign: ignored
  "trail.txt",
  "weird name.txt",
  "UPPER.LOG", // git matches case-sensitively (core.ignoreCase is false here): not ignored
];

const IGNORES: Files = {
  ".gitignore": [
    "# a comment line",
    "gen/",
    "*.log",
    "!keep.log",
    "/top.txt",
    "cache/",
    "*.tmp",
    "!keep.tmp",
    "docs/*.md",
    "\\#hash.txt",
    "trail.txt   ",
    "weird\\ name.txt",
    "",
  ].join("\n"),
  "src/.gitignore": "!*.log\nlocal.txt\n",
  "src/sub/deeper/.gitignore": "!excluded.txt\n",
};

Deno.test("grep ignore: the files grep searches are the ones git does not ignore", async () => {
  await using ws = await tmpWorkspace({ files: tree(PATHS, IGNORES) });
  await git(ws.root, "init", "-q", ".");
  await Deno.writeTextFile(ws.path(".git/info/exclude"), "excluded.txt\n");
  const expected = [
    "UPPER.LOG",
    "docs/api/ref.md",
    "keep.log",
    "ok.txt",
    "src/b.log",
    "src/cache",
    "src/keep.tmp",
    "src/sub/deeper/excluded.txt",
    "src/top.txt",
  ];
  // git's own answer: untracked files that are not ignored (minus the ignore files).
  const oracle = (await git(ws.root, "ls-files", "--others", "--exclude-standard", "-z"))
    .split("\0").filter((p) => p !== "" && !p.endsWith(".gitignore")).sort();
  assertEquals(oracle, expected);
  assertEquals(await found(ws), expected);
});

Deno.test("grep ignore: the rules above a search root below the repository root apply", async () => {
  await using ws = await tmpWorkspace({ files: tree(PATHS, IGNORES) });
  await Deno.mkdir(ws.path(".git/info"), { recursive: true });
  await Deno.writeTextFile(ws.path(".git/info/exclude"), "excluded.txt\n");
  assertEquals(await found(ws, ws.path("src")), [
    "src/b.log",
    "src/cache",
    "src/keep.tmp",
    "src/sub/deeper/excluded.txt",
    "src/top.txt",
  ]);
  assertEquals(await found(ws, ws.path("src/sub")), ["src/sub/deeper/excluded.txt"]);
});

Deno.test("grep ignore: a path named directly is searched even if ignored", async (t) => {
  await using ws = await tmpWorkspace({
    files: tree(["gen/a.txt", "gen/inner/b.txt", "gen/skip.me", "a.log"], {
      ".gitignore": "gen/\n*.log\n",
      "gen/.gitignore": "*.me\n",
    }),
  });
  await Deno.mkdir(ws.path(".git"));
  assertEquals(await found(ws), []);
  await t.step("an ignored file", async () => {
    assertEquals(await found(ws, ws.path("a.log")), ["a.log"]);
  });
  await t.step("an ignored directory: searched, with the rules inside it", async () => {
    assertEquals(await found(ws, ws.path("gen")), ["gen/a.txt", "gen/inner/b.txt"]);
  });
  await t.step("a directory below an ignored one", async () => {
    assertEquals(await found(ws, ws.path("gen/inner")), ["gen/inner/b.txt"]);
  });
});

Deno.test("grep ignore: without a .git, the workspace's .gitignore files still count", async () => {
  await using ws = await tmpWorkspace({
    files: tree(["a.txt", "out/b.txt", "sub/c.log"], { ".gitignore": "out/\n*.log\n" }),
  });
  assertEquals(await found(ws), ["a.txt"]);
  assertEquals(await found(ws, ws.path("sub")), []);
});

Deno.test("grep ignore: nothing outside the workspace is read, even the repository's root", async () => {
  // The repository root is above the workspace: its .gitignore is not read (the tool never
  // reads outside the workspace), so only the workspace's own ignore files count.
  await using ws = await tmpWorkspace({
    files: tree(["a.log", "b.txt", "c.tmp"], { ".gitignore": "*.tmp\n" }),
  });
  const repo = join(ws.root, "..");
  await Deno.mkdir(join(repo, ".git"));
  await Deno.writeTextFile(join(repo, ".gitignore"), "*.log\nws/b.txt\n");
  assertEquals(await found(ws), ["a.log", "b.txt"]);
});

Deno.test("grep ignore: a nested repository starts its own rules", async () => {
  await using ws = await tmpWorkspace({
    files: tree(["a.log", "inner/b.log", "inner/c.tmp"], {
      ".gitignore": "*.log\n",
      "inner/.gitignore": "*.tmp\n",
    }),
  });
  await Deno.mkdir(ws.path(".git"));
  await Deno.mkdir(ws.path("inner/.git"));
  assertEquals(await found(ws), ["inner/b.log"]);
  assertEquals(await found(ws, ws.path("inner")), ["inner/b.log"]);
});

Deno.test("grep ignore: a symlinked .gitignore is not followed", async () => {
  await using ws = await tmpWorkspace({
    files: tree(["a.txt", "b.log"], {}),
    outside: { "patterns": "*.txt\n*.log\n" },
  });
  await Deno.symlink(join(ws.outside, "patterns"), ws.path(".gitignore"));
  assertEquals(await found(ws), ["a.txt", "b.log"]);
});

Deno.test("grep ignore: honoured inside the tool worker (deno task cli tool grep)", async () => {
  await using ws = await tmpWorkspace({
    files: tree(["a.txt", "gen/b.txt"], { ".gitignore": "gen/\n" }),
  });
  const out = await runCli([
    "--workspace",
    ws.root,
    "--allow",
    "grep",
    "tool",
    "grep",
    JSON.stringify({ pattern: NEEDLE, path: ws.root }),
  ]);
  assertEquals([out.code, out.stdout], [0, `${ws.path("a.txt")}:1: ${NEEDLE} a.txt\n`], out.stderr);
});

Deno.test("grep ignore: the walk's judge answers as ignore's own test for a path alone", async () => {
  // The judge skips ignore's parent walk and prefilters with the union of the rules'
  // regexes (see judgeOf): for paths without parents both must agree exactly.
  const dir = await Deno.makeTempDir({ prefix: "rousseau-ignore-" });
  try {
    await Deno.writeTextFile(
      join(dir, ".gitignore"),
      "*.log\n!keep.log\n/out\nbuild/\n**/*.bak\n[Tt]emp*\n?.o\n\\!bang\n*.LOG\n",
    );
    await loadIgnore();
    const [level] = levelsAt([], dir, { git: false, gitignore: true });
    assert(level !== undefined);
    const names = [
      "a.log",
      "keep.log",
      "out",
      "out/",
      "build",
      "build/",
      "x.bak",
      "Temp1",
      "temp",
      "a.o",
      "ab.o",
      "!bang",
      "A.LOG",
      "a.Log",
      "plain.txt",
      "sub/a.log",
      "sub/build/",
      "sub/build",
      "sub/keep.log",
      "sub/out",
      "deep/er/x.bak",
      "sub/Temp1",
      "sub/out/",
      "sub/a.o",
      "log",
      ".log",
    ];
    for (const name of names) {
      const { ignored, unignored } = level.rules.test(name);
      const judged = level.judge(name);
      assertEquals(
        { ignored: judged.ignored, unignored: judged.unignored },
        { ignored, unignored },
        name,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
