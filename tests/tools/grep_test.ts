/**
 * The grep tool against tools.md ("Common rules" and "grep"): every rule has a test that
 * fails when the rule breaks. Outputs and error texts are compared exactly.
 */

import { assert, assertEquals } from "../_helpers/assert.ts";
import { type Files, type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import type { Limits } from "../../mod.ts";

const IS_ROOT = Deno.uid() === 0;
const ENCODER = new TextEncoder();

type GrepArgs = Record<string, unknown>;

/** Runs grep and asserts it succeeded; returns the output. */
async function ok(ws: TmpWorkspace, input: GrepArgs, limits?: Partial<Limits>): Promise<string> {
  const result = await ws.call("grep", input, limits === undefined ? {} : { limits });
  assertEquals(result.isError, false, `expected success, got ${JSON.stringify(result.output)}`);
  return result.output;
}

/** Runs grep and asserts it failed; returns the error text. */
async function fails(ws: TmpWorkspace, input: unknown): Promise<string> {
  const result = await ws.call("grep", input);
  assertEquals(result.isError, true, `expected failure, got ${JSON.stringify(result.output)}`);
  return result.output;
}

/** `<path>:<line>: <text>\n` rows. */
function rows(...entries: Array<readonly [string, number, string]>): string {
  return entries.map(([path, line, text]) => `${path}:${line}: ${text}\n`).join("");
}

function bytes(...parts: Array<string | number[]>): Uint8Array {
  const chunks = parts.map((p) => typeof p === "string" ? ENCODER.encode(p) : Uint8Array.from(p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

async function mkfifo(path: string): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("mkfifo", { args: [path], stdout: "null" })
      .output();
    return success;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Common rules: input decoding and its order

Deno.test("grep: a body that is not a JSON object fails with grep: parse input", async () => {
  await using ws = await tmpWorkspace();
  for (const body of [null, [], "pattern", 42, true]) {
    const text = await fails(ws, body);
    assert(text.startsWith("grep: parse input: "), text);
  }
});

Deno.test("grep: a field of the wrong type fails with grep: parse input naming the field", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "a\n" } });
  const cases: Array<[string, GrepArgs]> = [
    ["pattern", { pattern: 1, path: ws.root }],
    ["path", { pattern: "a", path: ["/x"] }],
    ["include", { pattern: "a", path: ws.root, include: 3 }],
    ["ignore_case", { pattern: "a", path: ws.root, ignore_case: "true" }],
    ["ignore_case", { pattern: "a", path: ws.root, ignore_case: 1 }],
  ];
  for (const [field, input] of cases) {
    const text = await fails(ws, input);
    assert(text.startsWith("grep: parse input: "), text);
    assert(text.includes(field), `${text} should name ${field}`);
  }
});

Deno.test("grep: unknown keys are ignored and null optional fields are absent", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n" } });
  assertEquals(
    await ok(ws, {
      pattern: "alpha",
      path: ws.root,
      include: null,
      ignore_case: null,
      extra: { x: 1 },
      context: 3,
    }),
    rows([ws.path("a.txt"), 1, "alpha"]),
  );
});

Deno.test("grep: required fields", async (t) => {
  await using ws = await tmpWorkspace();
  await t.step("pattern absent", async () => {
    assertEquals(await fails(ws, { path: ws.root }), "grep: pattern is required");
  });
  await t.step("pattern empty", async () => {
    assertEquals(await fails(ws, { pattern: "", path: ws.root }), "grep: pattern is required");
  });
  await t.step("path absent", async () => {
    assertEquals(await fails(ws, { pattern: "a" }), "grep: path is required");
  });
  await t.step("path empty", async () => {
    assertEquals(await fails(ws, { pattern: "a", path: "" }), "grep: path is required");
  });
  await t.step("both absent: pattern first", async () => {
    assertEquals(await fails(ws, {}), "grep: pattern is required");
  });
});

Deno.test("grep: a relative path fails with the path JSON-quoted and the absolute path meant", async () => {
  await using ws = await tmpWorkspace();
  assertEquals(
    await fails(ws, { pattern: "a", path: "src" }),
    `grep: path must be absolute, got "src"; use ${JSON.stringify(ws.path("src"))}`,
  );
  assertEquals(
    await fails(ws, { pattern: "a", path: './a "b"' }),
    `grep: path must be absolute, got "./a \\"b\\""; use ${JSON.stringify(ws.path('a "b"'))}`,
  );
});

Deno.test("grep: order of checks, several wrong things at once show the first", async (t) => {
  await using ws = await tmpWorkspace();
  const missing = ws.path("missing");
  await t.step("parse before pattern required", async () => {
    const text = await fails(ws, { pattern: "", path: 7 });
    assert(text.startsWith("grep: parse input: "), text);
  });
  await t.step("parse before everything else", async () => {
    const text = await fails(ws, { pattern: "(", path: "rel", include: "[", ignore_case: "x" });
    assert(text.startsWith("grep: parse input: "), text);
  });
  await t.step("pattern required before path required", async () => {
    assertEquals(await fails(ws, { pattern: "", path: "" }), "grep: pattern is required");
  });
  await t.step("pattern required before path absolute", async () => {
    assertEquals(await fails(ws, { pattern: "", path: "rel" }), "grep: pattern is required");
  });
  await t.step("path required before compile", async () => {
    assertEquals(await fails(ws, { pattern: "(", include: "[" }), "grep: path is required");
  });
  await t.step("path absolute before compile", async () => {
    assertEquals(
      await fails(ws, { pattern: "(", path: "rel", include: "[" }),
      `grep: path must be absolute, got "rel"; use ${JSON.stringify(ws.path("rel"))}`,
    );
  });
  await t.step("compile before include glob", async () => {
    const text = await fails(ws, { pattern: "(", path: missing, include: "[" });
    assert(text.startsWith("grep: compile pattern: "), text);
  });
  await t.step("include glob before stat of the root", async () => {
    assertEquals(
      await fails(ws, { pattern: "a", path: missing, include: "[" }),
      'grep: bad include glob "[": syntax error in pattern',
    );
  });
  await t.step("compile before workspace confinement", async () => {
    const text = await fails(ws, { pattern: "(", path: ws.outside });
    assert(text.startsWith("grep: compile pattern: "), text);
  });
  await t.step("include glob before workspace confinement", async () => {
    assertEquals(
      await fails(ws, { pattern: "a", path: ws.outside, include: "{a,b" }),
      'grep: bad include glob "{a,b": syntax error in pattern',
    );
  });
  await t.step("then the walk: missing root", async () => {
    assertEquals(
      await fails(ws, { pattern: "a", path: missing, include: "*.txt" }),
      `grep: stat ${missing}: no such file or directory`,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Common rules: workspace confinement, OS errors, cancellation

Deno.test("grep: workspace confinement", async (t) => {
  await using ws = await tmpWorkspace({
    files: { "in.txt": "secret inside\n" },
    outside: { "secret.txt": "secret outside\n" },
  });
  await t.step("a root outside the workspace", async () => {
    assertEquals(
      await fails(ws, { pattern: "secret", path: ws.outside }),
      `grep: ${ws.outside} is outside the workspace`,
    );
  });
  await t.step("a file outside the workspace", async () => {
    const path = `${ws.outside}/secret.txt`;
    assertEquals(
      await fails(ws, { pattern: "secret", path }),
      `grep: ${path} is outside the workspace`,
    );
  });
  await t.step("escaping with .. (path echoed as given)", async () => {
    const path = `${ws.root}/../outside`;
    assertEquals(
      await fails(ws, { pattern: "secret", path }),
      `grep: ${path} is outside the workspace`,
    );
  });
  await t.step("a missing path outside the workspace is refused, not stat'ed", async () => {
    const path = `${ws.outside}/nope`;
    assertEquals(
      await fails(ws, { pattern: "secret", path }),
      `grep: ${path} is outside the workspace`,
    );
  });
  await t.step("a root that is a symlink pointing outside", async () => {
    const link = ws.path("out-link");
    await Deno.symlink(ws.outside, link);
    assertEquals(
      await fails(ws, { pattern: "secret", path: link }),
      `grep: ${link} is outside the workspace`,
    );
    const fileLink = ws.path("out-file-link");
    await Deno.symlink(`${ws.outside}/secret.txt`, fileLink);
    assertEquals(
      await fails(ws, { pattern: "secret", path: fileLink }),
      `grep: ${fileLink} is outside the workspace`,
    );
    await Deno.remove(link);
    await Deno.remove(fileLink);
  });
});

Deno.test("grep: OS errors read like Go's os package", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "a\n", "d/x.txt": "x\n" } });
  await t.step("missing root", async () => {
    const path = ws.path("nope");
    assertEquals(
      await fails(ws, { pattern: "a", path }),
      `grep: stat ${path}: no such file or directory`,
    );
  });
  await t.step("missing root below a missing directory", async () => {
    const path = ws.path("no", "such", "dir");
    assertEquals(
      await fails(ws, { pattern: "a", path }),
      `grep: stat ${path}: no such file or directory`,
    );
  });
  await t.step("missing root echoed as given, not cleaned", async () => {
    const path = `${ws.root}/./nope/`;
    assertEquals(
      await fails(ws, { pattern: "a", path }),
      `grep: stat ${path}: no such file or directory`,
    );
  });
  await t.step("dangling symlink root", async () => {
    const link = ws.path("dangling");
    await Deno.symlink(ws.path("gone"), link);
    assertEquals(
      await fails(ws, { pattern: "a", path: link }),
      `grep: stat ${link}: no such file or directory`,
    );
    await Deno.remove(link);
  });
  await t.step("a root below a regular file", async () => {
    const path = ws.path("a.txt", "x");
    assertEquals(
      await fails(ws, { pattern: "a", path }),
      `grep: stat ${path}: not a directory`,
    );
  });
  await t.step(
    `a root below an unreadable directory${IS_ROOT ? " (skipped: running as root)" : ""}`,
    async () => {
      if (IS_ROOT) return;
      await Deno.chmod(ws.path("d"), 0o000);
      try {
        const path = ws.path("d", "x.txt");
        assertEquals(
          await fails(ws, { pattern: "x", path }),
          `grep: stat ${path}: permission denied`,
        );
      } finally {
        await Deno.chmod(ws.path("d"), 0o755);
      }
    },
  );
});

Deno.test("grep: cancellation fails with grep: cancelled", async (t) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 50; i++) files[`f${String(i).padStart(2, "0")}.txt`] = "needle\n";
  await using ws = await tmpWorkspace({ files });
  await t.step("already cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    assertEquals(
      await ws.call("grep", { pattern: "needle", path: ws.root }, { signal: controller.signal }),
      { output: "grep: cancelled", isError: true },
    );
  });
  await t.step("cancelled while running", async () => {
    const controller = new AbortController();
    const pending = ws.call("grep", { pattern: "needle", path: ws.root }, {
      signal: controller.signal,
    });
    controller.abort();
    assertEquals(await pending, { output: "grep: cancelled", isError: true });
  });
  await t.step(
    "cancelled by a timer while reading (the walk yields to the event loop)",
    async () => {
      // No needle in the pattern: every file goes through RE2, slowly enough to be caught.
      const big = "abcdefghijklmnopqrstuvwxy\n".repeat(5_000);
      const files: Record<string, string> = {};
      for (let i = 0; i < 40; i++) files[`big/f${i}.txt`] = big;
      await using slow = await tmpWorkspace({ files });
      const controller = new AbortController();
      // The walk's clock runs a millisecond a look, so the walk is well under way after a few
      // looks and owes the event loop a turn a few looks later, however fast the machine reads
      // (a real 5 ms timer lost that race here). The abort is a timer set mid-walk: only a walk
      // that yields lets it run, and then the next file's check ends the call.
      const realNow = performance.now;
      let looks = 0;
      let timer: ReturnType<typeof setTimeout> | undefined;
      performance.now = () => {
        if (++looks === 20) timer = setTimeout(() => controller.abort(), 0);
        return realNow.call(performance) + looks;
      };
      let result;
      try {
        result = await slow.call("grep", { pattern: "[a-y]{26}", path: slow.root }, {
          signal: controller.signal,
        });
      } finally {
        performance.now = realNow;
        clearTimeout(timer);
      }
      assert(looks > 20, `the walk looked at its clock ${looks} times`);
      assertEquals(result, { output: "grep: cancelled", isError: true });
    },
  );
  await t.step("a cancelled call does not break the next one", async () => {
    const out = await ok(ws, { pattern: "needle", path: ws.root });
    assertEquals(out.split("\n").length - 1, 50);
  });
});

// ---------------------------------------------------------------------------------------------
// Pattern: RE2 syntax

Deno.test("grep: RE2 syntax", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "a.txt": [
        "Hello World", // 1
        "hello world", // 2
        "héllo wörld", // 3
        "h3llo", // 4
        "abc123", // 5
        "αβγ", // 6
        "key=value", // 7
        "ab", // 8
        "xyz", // 9
      ].join("\n") + "\n",
    },
  });
  const a = ws.path("a.txt");
  await t.step("(?i) flag", async () => {
    assertEquals(
      await ok(ws, { pattern: "(?i)HELLO", path: a }),
      rows([a, 1, "Hello World"], [a, 2, "hello world"]),
    );
  });
  await t.step("case-sensitive by default", async () => {
    assertEquals(await ok(ws, { pattern: "Hello", path: a }), rows([a, 1, "Hello World"]));
  });
  await t.step("POSIX class [[:alpha:]] (ASCII only, as in Go)", async () => {
    assertEquals(
      await ok(ws, { pattern: "^[[:alpha:]]+$", path: a }),
      rows([a, 8, "ab"], [a, 9, "xyz"]),
    );
    assertEquals(
      await ok(ws, { pattern: "^[[:alpha:]]+[[:digit:]]+$", path: a }),
      rows([a, 5, "abc123"]),
    );
  });
  await t.step("Unicode classes \\pL and \\p{Greek}", async () => {
    assertEquals(
      await ok(ws, { pattern: "^\\pL+ \\pL+$", path: a }),
      rows([a, 1, "Hello World"], [a, 2, "hello world"], [a, 3, "héllo wörld"]),
    );
    assertEquals(await ok(ws, { pattern: "\\p{Greek}{3}", path: a }), rows([a, 6, "αβγ"]));
  });
  await t.step("named groups (?P<n>..) and (?<n>..)", async () => {
    assertEquals(
      await ok(ws, { pattern: "(?P<key>\\w+)=(?P<value>\\w+)", path: a }),
      rows([a, 7, "key=value"]),
    );
    assertEquals(await ok(ws, { pattern: "(?<k>key)=", path: a }), rows([a, 7, "key=value"]));
  });
  await t.step("\\d, \\w, \\b, repetition counts, non-greedy", async () => {
    assertEquals(await ok(ws, { pattern: "\\b\\d{3}\\b", path: a }), "no matches");
    assertEquals(await ok(ws, { pattern: "[a-z]+\\d{3}$", path: a }), rows([a, 5, "abc123"]));
    assertEquals(await ok(ws, { pattern: "^x.*?z$", path: a }), rows([a, 9, "xyz"]));
  });
});

Deno.test("grep: patterns RE2 rejects fail with grep: compile pattern", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "aa ab\n" } });
  const cases: Array<[string, string]> = [
    ["(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"],
    ["a(?=b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
    ["a(?!b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"],
    ["(?<=a)b", "error parsing regexp: invalid named capture: `(?<=a)b`"],
    ["(?<!a)b", "error parsing regexp: invalid named capture: `(?<!a)b`"],
    ["\\Z", "error parsing regexp: invalid escape sequence: `\\Z`"],
    ["a**", "error parsing regexp: invalid nested repetition operator: `**`"],
    ["x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"],
    ["[a", "error parsing regexp: missing closing ]: `[a`"],
    // The detail quotes the pattern as the model wrote it, without flags added internally.
    ["(", "error parsing regexp: missing closing ): `(`"],
    ["a(b", "error parsing regexp: missing closing ): `a(b`"],
  ];
  for (const [pattern, detail] of cases) {
    await t.step(pattern, async () => {
      assertEquals(
        await fails(ws, { pattern, path: ws.root }),
        `grep: compile pattern: ${detail}`,
      );
      assertEquals(
        await fails(ws, { pattern, path: ws.root, ignore_case: true }),
        `grep: compile pattern: ${detail}`,
      );
    });
  }
});

Deno.test("grep: ignore_case", async (t) => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "TODO one\ntodo two\nToDo three\nÉTÉ\nété\nnothing\n" },
  });
  const a = ws.path("a.txt");
  await t.step("true matches case-insensitively", async () => {
    assertEquals(
      await ok(ws, { pattern: "todo", path: a, ignore_case: true }),
      rows([a, 1, "TODO one"], [a, 2, "todo two"], [a, 3, "ToDo three"]),
    );
  });
  await t.step("true folds non-ASCII letters too", async () => {
    assertEquals(
      await ok(ws, { pattern: "^été$", path: a, ignore_case: true }),
      rows([a, 4, "ÉTÉ"], [a, 5, "été"]),
    );
  });
  await t.step("false and absent are case-sensitive", async () => {
    const expected = rows([a, 2, "todo two"]);
    assertEquals(await ok(ws, { pattern: "todo", path: a, ignore_case: false }), expected);
    assertEquals(await ok(ws, { pattern: "todo", path: a }), expected);
  });
  await t.step("applies to character classes", async () => {
    assertEquals(
      await ok(ws, { pattern: "^[t][o]do", path: a, ignore_case: true }),
      rows([a, 1, "TODO one"], [a, 2, "todo two"], [a, 3, "ToDo three"]),
    );
  });
  await t.step("(?-i) inside the pattern still wins locally", async () => {
    assertEquals(
      await ok(ws, { pattern: "(?-i:T)odo", path: a, ignore_case: true }),
      rows([a, 1, "TODO one"], [a, 3, "ToDo three"]),
    );
  });
});

Deno.test("grep: a pathological pattern completes (linear-time matching)", async () => {
  const line = "a".repeat(100_000);
  await using ws = await tmpWorkspace({ files: { "a.txt": `${line}\n${line}c\n` } });
  assertEquals(await ok(ws, { pattern: "(a*)*b", path: ws.root }), "no matches");
  assertEquals(
    await ok(ws, { pattern: "^(a|aa)+$", path: ws.root }),
    rows([
      ws.path("a.txt"),
      1,
      "a".repeat(2000) + "…",
    ]),
  );
  assertEquals(
    await ok(ws, { pattern: "(x+x+)+y|(a+a+)+c$", path: ws.root }),
    rows([
      ws.path("a.txt"),
      2,
      "a".repeat(2000) + "…",
    ]),
  );
});

// ---------------------------------------------------------------------------------------------
// The root

Deno.test("grep: the root", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "dir/a.txt": "match a\n",
      "dir/sub/b.txt": "match b\n",
      "one.txt": "match one\nno\n",
    },
  });
  await t.step("a directory is walked recursively", async () => {
    assertEquals(
      await ok(ws, { pattern: "match", path: ws.path("dir") }),
      rows([ws.path("dir/a.txt"), 1, "match a"], [ws.path("dir/sub/b.txt"), 1, "match b"]),
    );
  });
  await t.step("a single file", async () => {
    assertEquals(
      await ok(ws, { pattern: "match", path: ws.path("one.txt") }),
      rows([ws.path("one.txt"), 1, "match one"]),
    );
  });
  await t.step("a symlinked directory root is followed, paths shown under the link", async () => {
    const link = ws.path("dir-link");
    await Deno.symlink(ws.path("dir"), link);
    assertEquals(
      await ok(ws, { pattern: "match", path: link }),
      rows([`${link}/a.txt`, 1, "match a"], [`${link}/sub/b.txt`, 1, "match b"]),
    );
    await Deno.remove(link);
  });
  await t.step("a relative symlink root to a file is followed", async () => {
    const link = ws.path("one-link.md");
    await Deno.symlink("one.txt", link);
    assertEquals(
      await ok(ws, { pattern: "match", path: link }),
      rows([link, 1, "match one"]),
    );
    await Deno.remove(link);
  });
  await t.step("root path is cleaned: trailing slash, /./, //, ..", async () => {
    const expected = rows([ws.path("dir/a.txt"), 1, "match a"]);
    for (
      const path of [
        `${ws.root}/dir/`,
        `${ws.root}/./dir`,
        `${ws.root}/dir/.`,
        `${ws.root}//dir//`,
        `${ws.root}/dir/sub/..`,
        `${ws.root}/./dir/./`,
      ]
    ) {
      assertEquals(await ok(ws, { pattern: "match a", path }), expected, path);
    }
  });
  await t.step("a single file path is cleaned too", async () => {
    assertEquals(
      await ok(ws, { pattern: "match", path: `${ws.root}/./dir/../one.txt` }),
      rows([ws.path("one.txt"), 1, "match one"]),
    );
  });
  await t.step("the workspace root itself", async () => {
    assertEquals(
      await ok(ws, { pattern: "match one", path: `${ws.root}/` }),
      rows([ws.path("one.txt"), 1, "match one"]),
    );
  });
  await t.step("an empty directory", async () => {
    await Deno.mkdir(ws.path("empty"));
    assertEquals(await ok(ws, { pattern: "x", path: ws.path("empty") }), "no matches");
  });
});

// ---------------------------------------------------------------------------------------------
// The walk

Deno.test("grep: walk order is lexical byte order of names, depth first", async () => {
  await using ws = await tmpWorkspace({
    files: {
      "a.txt": "hit\n",
      "B.txt": "hit\n",
      ".hidden": "hit\n",
      "_x": "hit\n",
      "a/x.txt": "hit\n",
      "a/Z/deep.txt": "hit\n",
      "a/b.txt": "hit\n",
      "a-b.txt": "hit\n",
      "a0.txt": "hit\n",
      "Z/z.txt": "hit\n",
      "é.txt": "hit\n",
      "z.txt": "hit\n",
      // U+FF21 (EF BC A1) sorts before U+1F600 (F0 9F 98 80) in bytes, after it in UTF-16.
      "\uff21.txt": "hit\n",
      "😀.txt": "hit\n",
      "10.txt": "hit\n",
      "9.txt": "hit\n",
    },
  });
  const order = [
    ".hidden",
    "10.txt",
    "9.txt",
    "B.txt",
    "Z/z.txt",
    "_x",
    "a/Z/deep.txt",
    "a/b.txt",
    "a/x.txt",
    "a-b.txt",
    "a.txt",
    "a0.txt",
    "z.txt",
    "é.txt",
    "\uff21.txt",
    "😀.txt",
  ];
  assertEquals(
    await ok(ws, { pattern: "hit", path: ws.root }),
    rows(...order.map((p) => [ws.path(p), 1, "hit"] as const)),
  );
});

Deno.test("grep: results come in walk order whatever the file sizes (concurrent reads)", async () => {
  const files: Record<string, string> = {};
  const expected: Array<[string, number, string]> = [];
  for (let i = 0; i < 60; i++) {
    const name = `d${i % 3}/f${String(i).padStart(3, "0")}.txt`;
    // Large and small files alternate, so later small reads finish before earlier large ones.
    const filler = i % 2 === 0 ? "filler line\n".repeat(20_000) : "";
    files[name] = `${filler}needle ${i}\n`;
  }
  for (const name of Object.keys(files).sort()) {
    const i = Number(name.slice(4, 7));
    const line = i % 2 === 0 ? 20_001 : 1;
    expected.push([name, line, `needle ${i}`]);
  }
  await using ws = await tmpWorkspace({ files });
  assertEquals(
    await ok(ws, { pattern: "needle", path: ws.root }),
    rows(...expected.map(([n, l, t]) => [ws.path(n), l, t] as const)),
  );
});

Deno.test("grep: skipped directories", async (t) => {
  const skipped = [".git", "node_modules", "vendor", ".venv", "__pycache__", "dist", "build"];
  const files: Record<string, string> = { "src/keep.txt": "hit\n" };
  for (const name of skipped) {
    files[`${name}/x.txt`] = "hit\n";
    files[`src/${name}/deep/x.txt`] = "hit\n";
  }
  Object.assign(files, {
    "Build/x.txt": "hit\n", // case-sensitive names
    "builds/x.txt": "hit\n",
    ".github/x.txt": "hit\n",
    "dist.txt": "hit\n",
    "other/build": "hit\n", // a file named build is searched
    "build/build/x.txt": "hit\n",
    "build/ok.txt": "hit\n",
  });
  await using ws = await tmpWorkspace({ files });
  await t.step("skipped below the root, at any depth; only exact names", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.root }),
      rows(
        [ws.path(".github/x.txt"), 1, "hit"],
        [ws.path("Build/x.txt"), 1, "hit"],
        [ws.path("builds/x.txt"), 1, "hit"],
        [ws.path("dist.txt"), 1, "hit"],
        [ws.path("other/build"), 1, "hit"],
        [ws.path("src/keep.txt"), 1, "hit"],
      ),
    );
  });
  for (const name of skipped) {
    await t.step(`a root named ${name} is itself searched`, async () => {
      const expected = name === "build"
        ? rows([ws.path("build/ok.txt"), 1, "hit"], [ws.path("build/x.txt"), 1, "hit"])
        : rows([ws.path(name, "x.txt"), 1, "hit"]);
      assertEquals(await ok(ws, { pattern: "hit", path: ws.path(name) }), expected);
    });
  }
  await t.step("a root inside a skipped directory is searched, its skip dirs are not", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.path("src/node_modules") }),
      rows([ws.path("src/node_modules/deep/x.txt"), 1, "hit"]),
    );
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.path("build/build") }),
      rows([ws.path("build/build/x.txt"), 1, "hit"]),
    );
  });
  await t.step("a symlinked root named build is searched", async () => {
    await Deno.mkdir(ws.path("links"));
    const link = ws.path("links", "build");
    await Deno.symlink(ws.path("src"), link);
    assertEquals(
      await ok(ws, { pattern: "hit", path: link }),
      rows([`${link}/keep.txt`, 1, "hit"]),
    );
  });
});

Deno.test("grep: symlinks inside the tree", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "tree/a.txt": "hit a\n",
      "target/t.txt": "hit target\n",
      "elsewhere.txt": "hit elsewhere\n",
    },
    outside: { "secret.txt": "hit secret\n", "dir/s.txt": "hit secret dir\n" },
  });
  await Deno.symlink(ws.path("target"), ws.path("tree/dir-link"));
  await Deno.symlink("../target", ws.path("tree/rel-dir-link"));
  await Deno.symlink(ws.path("elsewhere.txt"), ws.path("tree/file-link.txt"));
  await Deno.symlink("../target/t.txt", ws.path("tree/rel-file-link.txt"));
  await Deno.symlink(`${ws.outside}/secret.txt`, ws.path("tree/out-link.txt"));
  await Deno.symlink(`${ws.outside}/dir`, ws.path("tree/out-dir-link"));
  await Deno.symlink(ws.path("nowhere"), ws.path("tree/dangling.txt"));
  await Deno.symlink("loop", ws.path("tree/loop"));
  await Deno.symlink(ws.path("tree"), ws.path("tree/self"));
  await t.step(
    "symlinked dirs not descended; inside files searched; outside and dangling skipped",
    async () => {
      assertEquals(
        await ok(ws, { pattern: "hit", path: ws.path("tree") }),
        rows(
          [ws.path("tree/a.txt"), 1, "hit a"],
          [ws.path("tree/file-link.txt"), 1, "hit elsewhere"],
          [ws.path("tree/rel-file-link.txt"), 1, "hit target"],
        ),
      );
    },
  );
  await t.step("include applies to the link's name, not its target's", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.path("tree"), include: "*link.txt" }),
      rows(
        [ws.path("tree/file-link.txt"), 1, "hit elsewhere"],
        [ws.path("tree/rel-file-link.txt"), 1, "hit target"],
      ),
    );
  });
});

Deno.test("grep: a link to a FIFO does not hang the walk", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hit\n", "z.txt": "hit z\n" } });
  if (!await mkfifo(ws.path("fifo"))) {
    await t.step("mkfifo unavailable (skipped)", () => {});
    return;
  }
  await Deno.symlink(ws.path("fifo"), ws.path("m-link"));
  // A FIFO outside the workspace, reached through a link: skipped, never waited on.
  if (await mkfifo(`${ws.outside}/fifo`)) {
    await Deno.symlink(`${ws.outside}/fifo`, ws.path("n-link"));
  }
  await t.step("walked", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.root }),
      rows([ws.path("a.txt"), 1, "hit"], [ws.path("z.txt"), 1, "hit z"]),
    );
  });
  await t.step("as the root", async () => {
    assertEquals(await ok(ws, { pattern: "hit", path: ws.path("fifo") }), "no matches");
    assertEquals(await ok(ws, { pattern: "hit", path: ws.path("m-link") }), "no matches");
  });
});

Deno.test("grep: max_file_bytes", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "a-exact.txt": "hit 67890\n", // 10 bytes
      "b-over.txt": "hit 678901\n", // 11 bytes
      "c-under.txt": "hit\n",
    },
  });
  await t.step("a file of exactly the limit is searched, one byte more is skipped", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.root }, { grepMaxFileBytes: 10 }),
      rows([ws.path("a-exact.txt"), 1, "hit 67890"], [ws.path("c-under.txt"), 1, "hit"]),
    );
  });
  await t.step("applies to a single-file root", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.path("b-over.txt") }, { grepMaxFileBytes: 10 }),
      "no matches",
    );
  });
  await t.step("applies through a symlink (the target's size)", async () => {
    await Deno.symlink(ws.path("b-over.txt"), ws.path("d-link.txt"));
    assertEquals(
      await ok(ws, { pattern: "678901", path: ws.root }, { grepMaxFileBytes: 10 }),
      "no matches",
    );
    await Deno.remove(ws.path("d-link.txt"));
  });
});

Deno.test("grep: default max_file_bytes is 4 MiB inclusive", async () => {
  const size = 4 * 1024 * 1024;
  const exact = new Uint8Array(size).fill(0x78); // "x"
  exact.set(ENCODER.encode("hit\n"), 0);
  exact[size - 1] = 0x0a;
  const over = new Uint8Array(size + 1).fill(0x78);
  over.set(ENCODER.encode("hit\n"), 0);
  over[size] = 0x0a;
  await using ws = await tmpWorkspace({ files: { "exact.txt": exact, "over.txt": over } });
  assertEquals(
    await ok(ws, { pattern: "^hit$", path: ws.root }),
    rows([ws.path("exact.txt"), 1, "hit"]),
  );
});

Deno.test("grep: a NUL byte anywhere skips the whole file", async () => {
  const late = new Uint8Array(5000).fill(0x61);
  late.set(ENCODER.encode("hit\n"), 0);
  late[4000] = 0;
  await using ws = await tmpWorkspace({
    files: {
      "a-first.txt": bytes([0], "hit\n"),
      "b-in-512.txt": bytes("hit\n", [0x61, 0, 0x0a]),
      "c-late.txt": late,
      "d-last.txt": bytes("hit\nmore\n", [0]),
      "e-text.txt": "hit\n",
    },
  });
  assertEquals(
    await ok(ws, { pattern: "hit", path: ws.root }),
    rows([ws.path("e-text.txt"), 1, "hit"]),
  );
  assertEquals(await ok(ws, { pattern: "hit", path: ws.path("c-late.txt") }), "no matches");
});

Deno.test(
  `grep: unreadable files and directories are skipped silently${
    IS_ROOT ? " (skipped: running as root, chmod does not block reads)" : ""
  }`,
  async () => {
    if (IS_ROOT) return;
    await using ws = await tmpWorkspace({
      files: {
        "a.txt": "hit a\n",
        "b.txt": "hit b\n",
        "locked/c.txt": "hit c\n",
        "z.txt": "hit z\n",
      },
    });
    await Deno.chmod(ws.path("b.txt"), 0o000);
    await Deno.chmod(ws.path("locked"), 0o000);
    try {
      assertEquals(
        await ok(ws, { pattern: "hit", path: ws.root }),
        rows([ws.path("a.txt"), 1, "hit a"], [ws.path("z.txt"), 1, "hit z"]),
      );
      assertEquals(await ok(ws, { pattern: "hit", path: ws.path("b.txt") }), "no matches");
    } finally {
      await Deno.chmod(ws.path("b.txt"), 0o644);
      await Deno.chmod(ws.path("locked"), 0o755);
    }
  },
);

// ---------------------------------------------------------------------------------------------
// include

Deno.test("grep: include globs on base names", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      ".env.txt": "hit\n",
      "a.txt": "hit\n",
      "ab.txt": "hit\n",
      "b.txt": "hit\n",
      "c.md": "hit\n",
      "d.TXT": "hit\n",
      "*.txt": "hit\n",
      "x{a}.txt": "hit\n",
      "[a].txt": "hit\n",
      "src/e.txt": "hit\n",
      "src/e.md": "hit\n",
      "txt/f.ts": "hit\n",
    },
  });
  const cases: Array<[string, string[]]> = [
    ["*.txt", [
      "*.txt",
      ".env.txt",
      "[a].txt",
      "a.txt",
      "ab.txt",
      "b.txt",
      "src/e.txt",
      "x{a}.txt",
    ]],
    ["*", [
      "*.txt",
      ".env.txt",
      "[a].txt",
      "a.txt",
      "ab.txt",
      "b.txt",
      "c.md",
      "d.TXT",
      "src/e.md",
      "src/e.txt",
      "txt/f.ts",
      "x{a}.txt",
    ]],
    ["?.txt", ["*.txt", "a.txt", "b.txt", "src/e.txt"]],
    ["[a-c].*", ["a.txt", "b.txt", "c.md"]],
    ["[a-c]*", ["a.txt", "ab.txt", "b.txt", "c.md"]],
    ["[^a]*.txt", ["*.txt", ".env.txt", "[a].txt", "b.txt", "src/e.txt", "x{a}.txt"]],
    ["[ab].txt", ["a.txt", "b.txt"]],
    ["{a,b}.txt", ["a.txt", "b.txt"]],
    ["*.{md,TXT}", ["c.md", "d.TXT", "src/e.md"]],
    ["{a{,b},c.{md,txt}}*", ["a.txt", "ab.txt", "c.md"]],
    ["\\*.txt", ["*.txt"]],
    ["\\[a\\].txt", ["[a].txt"]],
    ["x\\{a\\}.txt", ["x{a}.txt"]],
    ["[[]a].txt", ["[a].txt"]],
    ["*.TXT", ["d.TXT"]],
    ["A.txt", []],
    ["*.ts", ["txt/f.ts"]], // include never filters directories
    ["e.*", ["src/e.md", "src/e.txt"]],
    ["src", []], // ...and is not matched against directory names
  ];
  for (const [include, expected] of cases) {
    await t.step(include, async () => {
      const want = expected.length === 0
        ? "no matches"
        : rows(...expected.map((p) => [ws.path(p), 1, "hit"] as const));
      assertEquals(await ok(ws, { pattern: "hit", path: ws.root, include }), want);
    });
  }
  await t.step("an empty include is no filter", async () => {
    assertEquals(
      (await ok(ws, { pattern: "hit", path: ws.root, include: "" })).split("\n").length - 1,
      12,
    );
  });
  await t.step("applies to a single-file root, by the name given", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.path("c.md"), include: "*.txt" }),
      "no matches",
    );
    assertEquals(
      await ok(ws, { pattern: "hit", path: ws.path("c.md"), include: "*.md" }),
      rows([ws.path("c.md"), 1, "hit"]),
    );
    const link = ws.path("link.md");
    await Deno.symlink(ws.path("a.txt"), link);
    assertEquals(
      await ok(ws, { pattern: "hit", path: link, include: "*.md" }),
      rows([link, 1, "hit"]),
    );
    assertEquals(await ok(ws, { pattern: "hit", path: link, include: "*.txt" }), "no matches");
    await Deno.remove(link);
  });
});

Deno.test("grep: a bad include glob fails before any walking", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hit\n" } });
  for (
    const glob of ["[abc", "{a,b", "a\\", "[]", "[]a]", "[a-]", "[-a]", "[^", "a}", "*.{ts,[}"]
  ) {
    await t.step(glob, async () => {
      const expected = `grep: bad include glob ${JSON.stringify(glob)}: syntax error in pattern`;
      assertEquals(await fails(ws, { pattern: "hit", path: ws.root, include: glob }), expected);
      // Not even the root is looked at: a missing root still reports the glob.
      assertEquals(
        await fails(ws, { pattern: "hit", path: ws.path("missing"), include: glob }),
        expected,
      );
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Lines and rows

Deno.test("grep: line numbering, line ends and anchors", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "lf.txt": "alpha\nbeta\n\ngamma\n",
      "crlf.txt": "alpha\r\nbeta\r\n\r\ngamma\r\n",
      "no-eol.txt": "first\nlast",
      "empty.txt": "",
      "nl.txt": "\n",
      "two-nl.txt": "x\n\n",
      "no-empty.txt": "x\ny\n",
      "cr-mid.txt": "a\rb\n",
      "cr-last.txt": "end\r",
    },
  });
  const p = (name: string) => ws.path(name);
  await t.step("lines are numbered from 1", async () => {
    assertEquals(
      await ok(ws, { pattern: "a", path: p("lf.txt") }),
      rows([p("lf.txt"), 1, "alpha"], [p("lf.txt"), 2, "beta"], [p("lf.txt"), 4, "gamma"]),
    );
  });
  await t.step("a trailing \\r is dropped", async () => {
    assertEquals(
      await ok(ws, { pattern: "a", path: p("crlf.txt") }),
      rows([p("crlf.txt"), 1, "alpha"], [p("crlf.txt"), 2, "beta"], [p("crlf.txt"), 4, "gamma"]),
    );
    assertEquals(
      await ok(ws, { pattern: "end", path: p("cr-last.txt") }),
      rows([p("cr-last.txt"), 1, "end"]),
    );
  });
  await t.step("only a trailing \\r: one inside the line stays", async () => {
    assertEquals(
      await ok(ws, { pattern: "a\rb", path: p("cr-mid.txt") }),
      rows([p("cr-mid.txt"), 1, "a\rb"]),
    );
  });
  await t.step("^ and $ anchor at line bounds, LF and CRLF alike", async () => {
    for (const name of ["lf.txt", "crlf.txt"]) {
      assertEquals(
        await ok(ws, { pattern: "^beta$", path: p(name) }),
        rows([p(name), 2, "beta"]),
        name,
      );
      assertEquals(
        await ok(ws, { pattern: "a$", path: p(name) }),
        rows([p(name), 1, "alpha"], [p(name), 2, "beta"], [p(name), 4, "gamma"]),
        name,
      );
      assertEquals(
        await ok(ws, { pattern: "^g", path: p(name) }),
        rows([p(name), 4, "gamma"]),
        name,
      );
      assertEquals(await ok(ws, { pattern: "\\r", path: p(name) }), "no matches", name);
    }
  });
  await t.step("^$ finds empty lines; a final newline adds no empty line", async () => {
    assertEquals(await ok(ws, { pattern: "^$", path: p("lf.txt") }), rows([p("lf.txt"), 3, ""]));
    assertEquals(
      await ok(ws, { pattern: "^$", path: p("crlf.txt") }),
      rows([p("crlf.txt"), 3, ""]),
    );
    assertEquals(await ok(ws, { pattern: "^$", path: p("nl.txt") }), rows([p("nl.txt"), 1, ""]));
    assertEquals(
      await ok(ws, { pattern: "^$", path: p("two-nl.txt") }),
      rows([p("two-nl.txt"), 2, ""]),
    );
    assertEquals(await ok(ws, { pattern: "^$", path: p("no-empty.txt") }), "no matches");
    assertEquals(await ok(ws, { pattern: "^$", path: p("no-eol.txt") }), "no matches");
    assertEquals(
      await ok(ws, { pattern: "^", path: p("two-nl.txt") }),
      rows(
        [p("two-nl.txt"), 1, "x"],
        [p("two-nl.txt"), 2, ""],
      ),
    );
  });
  await t.step("an empty file has no lines", async () => {
    for (const pattern of ["^$", "^", "x*", "$"]) {
      assertEquals(await ok(ws, { pattern, path: p("empty.txt") }), "no matches", pattern);
    }
  });
  await t.step("a file without a trailing newline: the last line counts", async () => {
    assertEquals(
      await ok(ws, { pattern: "^last$", path: p("no-eol.txt") }),
      rows([p("no-eol.txt"), 2, "last"]),
    );
    assertEquals(
      await ok(ws, { pattern: "t$", path: p("no-eol.txt") }),
      rows([p("no-eol.txt"), 1, "first"], [p("no-eol.txt"), 2, "last"]),
    );
  });
  await t.step("a pattern matching the empty string matches every line", async () => {
    assertEquals(
      await ok(ws, { pattern: "z*", path: p("lf.txt") }),
      rows(
        [p("lf.txt"), 1, "alpha"],
        [p("lf.txt"), 2, "beta"],
        [p("lf.txt"), 3, ""],
        [p("lf.txt"), 4, "gamma"],
      ),
    );
  });
});

Deno.test("grep: \\A, \\z and (?-m) apply to each line", async (t) => {
  for (const eol of ["\n", "\r\n"]) {
    const label = eol === "\n" ? "LF" : "CRLF";
    await t.step(label, async () => {
      await using ws = await tmpWorkspace({
        files: { "a.txt": ["ab", "ba", "b"].join(eol) + eol },
      });
      const a = ws.path("a.txt");
      assertEquals(
        await ok(ws, { pattern: "\\Ab", path: a }),
        rows([a, 2, "ba"], [a, 3, "b"]),
      );
      assertEquals(await ok(ws, { pattern: "a\\z", path: a }), rows([a, 2, "ba"]));
      assertEquals(await ok(ws, { pattern: "\\Ab\\z", path: a }), rows([a, 3, "b"]));
      assertEquals(
        await ok(ws, { pattern: "(?-m)^b", path: a }),
        rows([a, 2, "ba"], [a, 3, "b"]),
      );
      assertEquals(
        await ok(ws, { pattern: "(?-m:b$)", path: a }),
        rows([a, 1, "ab"], [a, 3, "b"]),
      );
      assertEquals(await ok(ws, { pattern: "(?s-m)^a.*b$", path: a }), rows([a, 1, "ab"]));
    });
  }
});

Deno.test("grep: matching never spans lines", async (t) => {
  for (const eol of ["\n", "\r\n"]) {
    await t.step(eol === "\n" ? "LF" : "CRLF", async () => {
      await using ws = await tmpWorkspace({
        files: { "a.txt": ["x a", "b y", "a b"].join(eol) + eol },
      });
      const a = ws.path("a.txt");
      for (
        const pattern of ["a\\sb", "a\\s+b", "a[^z]+b", "(?s)a.+b", "a\\Wb", "a[[:space:]]b"]
      ) {
        assertEquals(await ok(ws, { pattern, path: a }), rows([a, 3, "a b"]), pattern);
      }
      for (const pattern of ["a\\nb", "a$\\s^b", "a\\n", "\\n", "y\\s+a", "^\\s*$"]) {
        assertEquals(await ok(ws, { pattern, path: a }), "no matches", pattern);
      }
    });
  }
});

Deno.test("grep: row format and text", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "dir/a.txt": "  indented: keep\ttabs  \nother\n",
      "dir/b c.txt": "name with space\n",
      "dir/emoji.txt": "😀😀😀\nx😀\n😀\nx\n",
    },
  });
  await t.step("<path>:<line>: <text>, text verbatim", async () => {
    assertEquals(
      await ok(ws, { pattern: "keep", path: ws.path("dir") }),
      `${ws.path("dir/a.txt")}:1:   indented: keep\ttabs  \n`,
    );
    assertEquals(
      await ok(ws, { pattern: "space", path: ws.path("dir") }),
      `${ws.path("dir/b c.txt")}:1: name with space\n`,
    );
  });
  await t.step("every occurrence in a line gives one row", async () => {
    assertEquals(
      await ok(ws, { pattern: "e", path: ws.path("dir/a.txt") }),
      rows([ws.path("dir/a.txt"), 1, "  indented: keep\ttabs  "], [
        ws.path("dir/a.txt"),
        2,
        "other",
      ]),
    );
  });
  await t.step("line numbers are right after multi-byte text", async () => {
    const e = ws.path("dir/emoji.txt");
    assertEquals(await ok(ws, { pattern: "x", path: e }), rows([e, 2, "x😀"], [e, 4, "x"]));
    assertEquals(await ok(ws, { pattern: "^😀$", path: e }), rows([e, 3, "😀"]));
    assertEquals(await ok(ws, { pattern: "^.$", path: e }), rows([e, 3, "😀"], [e, 4, "x"]));
  });
});

Deno.test("grep: row text is cut at 2000 characters with …", async (t) => {
  const ascii2000 = "x".repeat(2000);
  const ascii2001 = "x".repeat(2001);
  const e2001 = "é".repeat(2001);
  const emoji2000 = "😀".repeat(2000);
  const emoji2001 = "😀".repeat(2001);
  await using ws = await tmpWorkspace({
    files: {
      "a.txt": `${ascii2000}\n`,
      "b.txt": `${ascii2001}\n`,
      "c.txt": `${e2001}\n`,
      "d.txt": `${emoji2000}\n`,
      "e.txt": `${emoji2001}\n`,
      "f.txt": `${ascii2001}\r\n`,
      "g.txt": `${"x".repeat(1999)}\r\n`,
      "h.txt": `${"x".repeat(5000)}needle\n`,
    },
  });
  const p = (name: string) => ws.path(name);
  await t.step("2000 characters are kept whole", async () => {
    assertEquals(
      await ok(ws, { pattern: "x", path: p("a.txt") }),
      rows([p("a.txt"), 1, ascii2000]),
    );
  });
  await t.step("2001 characters are cut to 2000 plus …", async () => {
    assertEquals(
      await ok(ws, { pattern: "x", path: p("b.txt") }),
      rows([p("b.txt"), 1, ascii2000 + "…"]),
    );
  });
  await t.step("characters, not bytes: two-byte é", async () => {
    assertEquals(
      await ok(ws, { pattern: "é", path: p("c.txt") }),
      rows([p("c.txt"), 1, "é".repeat(2000) + "…"]),
    );
  });
  await t.step("characters, not UTF-16 units: astral emoji, never split", async () => {
    assertEquals(
      await ok(ws, { pattern: "😀", path: p("d.txt") }),
      rows([p("d.txt"), 1, emoji2000]),
    );
    assertEquals(
      await ok(ws, { pattern: "😀", path: p("e.txt") }),
      rows([p("e.txt"), 1, emoji2000 + "…"]),
    );
  });
  await t.step("the dropped \\r does not count", async () => {
    assertEquals(
      await ok(ws, { pattern: "x", path: p("f.txt") }),
      rows([p("f.txt"), 1, ascii2000 + "…"]),
    );
    assertEquals(
      await ok(ws, { pattern: "x", path: p("g.txt") }),
      rows([p("g.txt"), 1, "x".repeat(1999)]),
    );
  });
  await t.step("a match beyond the cut still gives a (cut) row", async () => {
    assertEquals(
      await ok(ws, { pattern: "needle", path: p("h.txt") }),
      rows([p("h.txt"), 1, ascii2000 + "…"]),
    );
  });
});

Deno.test("grep: invalid UTF-8 lines", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "lf.txt": bytes("ok ", [0xff, 0xfe], " here\n", [0xe2, 0x82], "\nplain\n"),
      "crlf.txt": bytes("ok ", [0xff, 0xfe], " here\r\n", [0xe2, 0x82], "\r\nplain\r\n"),
    },
  });
  for (const name of ["lf.txt", "crlf.txt"]) {
    const path = ws.path(name);
    await t.step(`${name}: searched, shown with the replacement character`, async () => {
      assertEquals(
        await ok(ws, { pattern: "here", path }),
        rows([path, 1, "ok \ufffd\ufffd here"]),
      );
      assertEquals(await ok(ws, { pattern: "plain", path }), rows([path, 3, "plain"]));
    });
    await t.step(`${name}: matched as shown, whatever the line ends`, async () => {
      assertEquals(await ok(ws, { pattern: "^\\x{FFFD}$", path }), rows([path, 2, "\ufffd"]));
      assertEquals(
        await ok(ws, { pattern: "\\x{FFFD}{2}", path }),
        rows([path, 1, "ok \ufffd\ufffd here"]),
      );
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Caps

function manyLines(n: number, word = "hit"): string {
  let out = "";
  for (let i = 1; i <= n; i++) out += `${word} ${i}\n`;
  return out;
}

function expectedRows(path: string, from: number, to: number): string {
  let out = "";
  for (let i = from; i <= to; i++) out += `${path}:${i}: hit ${i}\n`;
  return out;
}

Deno.test("grep: max_matches", async (t) => {
  await using ws = await tmpWorkspace({
    files: {
      "199.txt": manyLines(199),
      "200.txt": manyLines(200),
      "201.txt": manyLines(201),
      "many.txt": manyLines(1000),
      "spread/a.txt": manyLines(150),
      "spread/b.txt": manyLines(50),
      "spread/c.txt": "miss\n",
      "spread2/a.txt": manyLines(150),
      "spread2/b.txt": manyLines(50),
      "spread2/c.txt": "miss\nhit 1\n",
    },
  });
  const p = (name: string) => ws.path(name);
  await t.step("199 matches: all, no note", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("199.txt") }),
      expectedRows(p("199.txt"), 1, 199),
    );
  });
  await t.step("exactly 200 matches: all, no note", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("200.txt") }),
      expectedRows(p("200.txt"), 1, 200),
    );
  });
  await t.step("201 matches: 200 rows and the note", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("201.txt") }),
      expectedRows(p("201.txt"), 1, 200) + "(truncated at 200 matches)\n",
    );
  });
  await t.step("1000 matches: 200 rows and the note", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("many.txt") }),
      expectedRows(p("many.txt"), 1, 200) + "(truncated at 200 matches)\n",
    );
  });
  await t.step("exactly 200 spread across files: no note", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("spread") }),
      expectedRows(p("spread/a.txt"), 1, 150) + expectedRows(p("spread/b.txt"), 1, 50),
    );
  });
  await t.step("the 201st in a later file: note", async () => {
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("spread2") }),
      expectedRows(p("spread2/a.txt"), 1, 150) + expectedRows(p("spread2/b.txt"), 1, 50) +
        "(truncated at 200 matches)\n",
    );
  });
  await t.step("a smaller limit: exactly the limit, and one more", async () => {
    const limits = { grepMaxMatches: 3 };
    assertEquals(
      await ok(ws, { pattern: "^hit [1-3]$", path: p("many.txt") }, limits),
      expectedRows(p("many.txt"), 1, 3),
    );
    assertEquals(
      await ok(ws, { pattern: "^hit [1-4]$", path: p("many.txt") }, limits),
      expectedRows(p("many.txt"), 1, 3) + "(truncated at 3 matches)\n",
    );
    assertEquals(
      await ok(ws, { pattern: "hit", path: p("spread") }, limits),
      expectedRows(p("spread/a.txt"), 1, 3) + "(truncated at 3 matches)\n",
    );
  });
  await t.step("a limit of 1 across files", async () => {
    assertEquals(
      await ok(ws, { pattern: "^hit 150$", path: p("spread") }, { grepMaxMatches: 1 }),
      expectedRows(p("spread/a.txt"), 150, 150),
    );
    assertEquals(
      await ok(ws, { pattern: "^hit (50|150)$", path: p("spread") }, { grepMaxMatches: 1 }),
      expectedRows(p("spread/a.txt"), 50, 50) + "(truncated at 1 matches)\n",
    );
  });
});

Deno.test("grep: no match at all is exactly `no matches`", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n", "sub/b.txt": "beta\n" } });
  await t.step("directory", async () => {
    assertEquals(await ws.call("grep", { pattern: "zeta", path: ws.root }), {
      output: "no matches",
      isError: false,
    });
  });
  await t.step("single file", async () => {
    assertEquals(await ok(ws, { pattern: "zeta", path: ws.path("a.txt") }), "no matches");
  });
  await t.step("all files filtered out by include", async () => {
    assertEquals(await ok(ws, { pattern: "a", path: ws.root, include: "*.md" }), "no matches");
  });
});

Deno.test("grep: files written by the helper with mixed content", async () => {
  const files: Files = {
    "a.ts": "export const x = 1; // TODO tidy\n",
    "b.md": "# TODO list\r\n- item\r\n",
    "c.bin": bytes("TODO", [0], "x"),
    "node_modules/m/index.js": "// TODO upstream\n",
  };
  await using ws = await tmpWorkspace({ files });
  assertEquals(
    await ok(ws, { pattern: "TODO", path: ws.root }),
    rows([ws.path("a.ts"), 1, "export const x = 1; // TODO tidy"], [
      ws.path("b.md"),
      1,
      "# TODO list",
    ]),
  );
});

Deno.test("grep: a literal alternation finds every alternative, and ignore_case still applies", async () => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "x foo_bar y\n", "b.txt": "nothing\n", "c.txt": "ZETA\nzeta here\n" },
  });
  assertEquals(await ws.call("grep", { pattern: "foo_bar|zeta", path: ws.root }), {
    output: `${ws.path("a.txt")}:1: x foo_bar y\n${ws.path("c.txt")}:2: zeta here\n`,
    isError: false,
  });
  assertEquals(
    await ws.call("grep", { pattern: "foo_bar|zeta", path: ws.root, ignore_case: true }),
    {
      output: `${ws.path("a.txt")}:1: x foo_bar y\n${ws.path("c.txt")}:1: ZETA\n${
        ws.path("c.txt")
      }:2: zeta here\n`,
      isError: false,
    },
  );
});
