import { dirname, join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { whileFlipping } from "../_helpers/flip.ts";
import { abortOnNewEntry, fail, list, ok } from "../_helpers/results.ts";
import { runCli } from "../_helpers/cli.ts";
import { callsUnderPermissions, runHostScript } from "../_helpers/host_script.ts";

const ENCODER = new TextEncoder();

/** Bytes from a mix of strings (UTF-8) and raw byte values. */
function bytesOf(...parts: (string | ArrayLike<number>)[]): Uint8Array {
  const chunks = parts.map((part) => typeof part === "string" ? ENCODER.encode(part) : part);
  const out = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

// ---- Success --------------------------------------------------------------------------------

Deno.test("edit() replaces the one occurrence and reports it", async () => {
  await using ws = await tmpWorkspace({ files: { "a.ts": "const x = 1;\nconst y = 2;\n" } });
  const path = ws.path("a.ts");
  assertEquals(
    await ws.call("edit", { path, old_string: "y = 2", new_string: "y = 3" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(path), "const x = 1;\nconst y = 3;\n");
});

Deno.test("edit() replaces a multi-line, non-ASCII span", async () => {
  await using ws = await tmpWorkspace({ files: { "a.md": "# Tïtle\n\nöld\nlines 😀\nend\n" } });
  const path = ws.path("a.md");
  assertEquals(
    await ws.call("edit", { path, old_string: "öld\nlines 😀\n", new_string: "nëw\n" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(path), "# Tïtle\n\nnëw\nend\n");
});

Deno.test("edit() deletes old_string when new_string is empty", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "keep DELETE-ME keep" } });
  const path = ws.path("a.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: " DELETE-ME", new_string: "" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(path), "keep keep");
});

Deno.test("edit() accepts a new_string that contains old_string", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "x-b-y" } });
  const path = ws.path("a.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "b", new_string: "bbb" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(path), "x-bbb-y");
});

Deno.test("edit() echoes the path as given", async () => {
  await using ws = await tmpWorkspace({ files: { "sub/a.txt": "one" } });
  const path = `${ws.root}/sub/../sub/./a.txt`;
  assertEquals(
    await ws.call("edit", { path, old_string: "one", new_string: "two" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(ws.path("sub", "a.txt")), "two");
});

Deno.test("edit() ignores unknown input keys", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "a b" } });
  const path = ws.path("a.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "b", new_string: "c", replace_all: true }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(path), "a c");
});

// ---- Literal replacement, byte for byte -----------------------------------------------------

Deno.test("edit() inserts new_string literally, without $-interpolation", async (t) => {
  const rows = ["$&", "$&$&", "$1", "$$", "$`", "$'", "$<name>", "\\1", "\\n"];
  for (const replacement of rows) {
    await t.step(replacement, async () => {
      await using ws = await tmpWorkspace({ files: { "a.txt": "before TARGET after" } });
      const path = ws.path("a.txt");
      assertEquals(
        await ws.call("edit", { path, old_string: "TARGET", new_string: replacement }),
        ok(`edited ${path} (1 replacement)`),
      );
      assertEquals(await Deno.readTextFile(path), `before ${replacement} after`);
    });
  }
});

Deno.test("edit() matches old_string literally, not as a pattern", async (t) => {
  const rows: [string, string, string, string][] = [
    ["dot star", "a.*b and axxb", ".*", "a!b and axxb"],
    ["brackets", "x[0] = x0", "[0]", "x! = x0"],
    ["dollar", "cost $5 or 5", "$5", "cost ! or 5"],
    ["backslash", "C:\\dir and C:dir", "\\dir", "C:! and C:dir"],
  ];
  for (const [name, text, oldString, expected] of rows) {
    await t.step(name, async () => {
      await using ws = await tmpWorkspace({ files: { "a.txt": text } });
      const path = ws.path("a.txt");
      assertEquals(
        await ws.call("edit", { path, old_string: oldString, new_string: "!" }),
        ok(`edited ${path} (1 replacement)`),
      );
      assertEquals(await Deno.readTextFile(path), expected);
    });
  }
});

Deno.test("edit() preserves CRLF and invalid UTF-8 bytes outside the span", async () => {
  const head = bytesOf([0xef, 0xbb, 0xbf], "line 1\r\n", [0xff, 0xfe, 0x80], "\r\nbad ", [0xc3]);
  const tail = bytesOf("\r\n", [0xed, 0xa0, 0x80], " tail\r\n", [0xe2, 0x82], "\n\r\r\n");
  await using ws = await tmpWorkspace({ files: { "mixed.txt": bytesOf(head, "OLD", tail) } });
  const path = ws.path("mixed.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "OLD", new_string: "néw\r\nvalue" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readFile(path), bytesOf(head, "néw\r\nvalue", tail));
});

Deno.test("edit() matches an old_string that spells out CRLF", async () => {
  await using ws = await tmpWorkspace({ files: { "win.txt": "one\r\ntwo\r\nthree\r\n" } });
  const path = ws.path("win.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "one\r\ntwo", new_string: "1\r\n2" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(path), "1\r\n2\r\nthree\r\n");
});

// ---- Counting -------------------------------------------------------------------------------

Deno.test("edit() reports old_string not found", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hello world\n" } });
  const path = ws.path("a.txt");
  for (const oldString of ["goodbye", "Hello", "world\n\n", "hello  world"]) {
    assertEquals(
      await ws.call("edit", { path, old_string: oldString, new_string: "x" }),
      fail(`edit: old_string not found in ${path}`),
    );
  }
  assertEquals(await Deno.readTextFile(path), "hello world\n");
});

Deno.test("edit() reports old_string not found in an empty file", async () => {
  await using ws = await tmpWorkspace({ files: { "empty.txt": "" } });
  const path = ws.path("empty.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: old_string not found in ${path}`),
  );
});

Deno.test("edit() counts overlapping occurrences and refuses an ambiguous edit", async (t) => {
  const rows: [string, string, number][] = [
    ["aaa", "aa", 2],
    ["aaaa", "aa", 3],
    ["ababa", "aba", 2],
    ["abab", "ab", 2],
    ["x.x.x", "x", 3],
    ["foo\nfoo\n", "foo\n", 2],
    ["éé", "é", 2],
  ];
  for (const [text, oldString, n] of rows) {
    await t.step(`${JSON.stringify(oldString)} in ${JSON.stringify(text)}`, async () => {
      await using ws = await tmpWorkspace({ files: { "a.txt": text } });
      const path = ws.path("a.txt");
      assertEquals(
        await ws.call("edit", { path, old_string: oldString, new_string: "Z" }),
        fail(
          `edit: old_string is not unique in ${path} (found ${n} occurrences); ` +
            "provide more surrounding context",
        ),
      );
      assertEquals(await Deno.readTextFile(path), text);
    });
  }
});

Deno.test("edit() adds the CRLF hint when old_string would match with CRLF line ends", async () => {
  await using ws = await tmpWorkspace({ files: { "win.txt": "one\r\ntwo\r\nthree\r\n" } });
  const path = ws.path("win.txt");
  for (const oldString of ["one\ntwo", "two\n", "one\ntwo\nthree\n"]) {
    assertEquals(
      await ws.call("edit", { path, old_string: oldString, new_string: "x" }),
      fail(`edit: old_string not found in ${path} (the file uses CRLF line endings)`),
    );
  }
  assertEquals(await Deno.readTextFile(path), "one\r\ntwo\r\nthree\r\n");
});

Deno.test("edit() gives no CRLF hint when CRLF would not help", async (t) => {
  const rows: [string, string, string][] = [
    ["no line break in old_string", "one\r\ntwo\r\n", "three"],
    ["CRLF form absent too", "one\r\ntwo\r\n", "one\nthree"],
    ["LF file", "one\ntwo\n", "one\nthree"],
    ["old_string already CRLF", "one\r\ntwo\r\n", "one\r\nthree"],
  ];
  for (const [name, text, oldString] of rows) {
    await t.step(name, async () => {
      await using ws = await tmpWorkspace({ files: { "f.txt": text } });
      const path = ws.path("f.txt");
      assertEquals(
        await ws.call("edit", { path, old_string: oldString, new_string: "x" }),
        fail(`edit: old_string not found in ${path}`),
      );
    });
  }
});

// ---- Binary refusal -------------------------------------------------------------------------

Deno.test("edit() refuses a NUL byte at offset 511", async () => {
  const bytes = bytesOf("TARGET", new Array(505).fill(0x61), [0], "tail");
  assertEquals(bytes[511], 0);
  await using ws = await tmpWorkspace({ files: { "bin": bytes } });
  const path = ws.path("bin");
  assertEquals(
    await ws.call("edit", { path, old_string: "TARGET", new_string: "x" }),
    fail(`edit: ${path} does not look like UTF-8 text`),
  );
  assertEquals(await Deno.readFile(path), bytes);
});

Deno.test("edit() refuses a binary file before counting", async () => {
  await using ws = await tmpWorkspace({ files: { "bin": new Uint8Array([0x61, 0, 0x62]) } });
  const path = ws.path("bin");
  assertEquals(
    await ws.call("edit", { path, old_string: "not there", new_string: "x" }),
    fail(`edit: ${path} does not look like UTF-8 text`),
  );
});

Deno.test("edit() accepts a NUL byte at offset 512 and keeps it", async () => {
  const head = bytesOf("TARGET", new Array(506).fill(0x61));
  const tail = bytesOf([0], "tail");
  assertEquals(head.length, 512);
  await using ws = await tmpWorkspace({ files: { "late-nul": bytesOf(head, tail) } });
  const path = ws.path("late-nul");
  assertEquals(
    await ws.call("edit", { path, old_string: "TARGET", new_string: "T" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(await Deno.readFile(path), bytesOf("T", head.subarray(6), tail));
});

// ---- Validation order -----------------------------------------------------------------------

Deno.test("edit() fails with parse input when the body is not an object", async (t) => {
  const rows: [string, unknown, string][] = [
    ["null", null, "edit: parse input: expected a JSON object, got null"],
    ["array", ["/a", "x", "y"], "edit: parse input: expected a JSON object, got an array"],
    ["string", "/a", "edit: parse input: expected a JSON object, got a string"],
  ];
  await using ws = await tmpWorkspace();
  for (const [name, input, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("edit", input), fail(expected));
    });
  }
});

Deno.test("edit() validates in the order the spec gives, reporting the first failure", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha beta" } });
  const file = ws.path("a.txt");
  const missing = ws.path("missing.txt");
  const outside = join(ws.outside, "x.txt");
  const rows: [string, unknown, string][] = [
    // parse: a wrong type anywhere wins over everything else.
    [
      "parse: path type, rest empty",
      { path: 5, old_string: "" },
      'edit: parse input: field "path" must be a string, got a number',
    ],
    [
      "parse: old_string type",
      { path: "rel", old_string: 1, new_string: "y" },
      'edit: parse input: field "old_string" must be a string, got a number',
    ],
    [
      "parse: new_string type",
      { path: "", old_string: "", new_string: ["y"] },
      'edit: parse input: field "new_string" must be a string, got an array',
    ],
    // path required
    ["path absent, all absent", {}, "edit: path is required"],
    ["path empty, old empty, new absent", { path: "", old_string: "" }, "edit: path is required"],
    // path absolute
    [
      "relative path, old empty",
      { path: "a.txt", old_string: "" },
      `edit: path must be absolute, got "a.txt"; use ${JSON.stringify(ws.path("a.txt"))}`,
    ],
    [
      "relative path, identical",
      { path: "./a.txt", old_string: "x", new_string: "x" },
      `edit: path must be absolute, got "./a.txt"; use ${JSON.stringify(ws.path("a.txt"))}`,
    ],
    [
      "quoted path",
      { path: 'a"\\b', old_string: "x" },
      `edit: path must be absolute, got "a\\"\\\\b"; use ${JSON.stringify(ws.path('a"\\b'))}`,
    ],
    // old_string required
    [
      "old empty, new absent, file missing",
      { path: missing, old_string: "" },
      "edit: old_string is required",
    ],
    [
      "old absent, new given, file missing",
      { path: missing, new_string: "y" },
      "edit: old_string is required",
    ],
    [
      "old empty, new empty",
      { path: file, old_string: "", new_string: "" },
      "edit: old_string is required",
    ],
    // new_string required (absent only)
    [
      "new absent, file missing",
      { path: missing, old_string: "x" },
      "edit: new_string is required",
    ],
    [
      "new absent, file outside",
      { path: outside, old_string: "x" },
      "edit: new_string is required",
    ],
    // identical
    [
      "identical, file missing",
      { path: missing, old_string: "x", new_string: "x" },
      "edit: old_string and new_string are identical",
    ],
    [
      "identical, file outside",
      { path: outside, old_string: "x", new_string: "x" },
      "edit: old_string and new_string are identical",
    ],
    [
      "identical, not in file",
      { path: file, old_string: "zeta", new_string: "zeta" },
      "edit: old_string and new_string are identical",
    ],
    // read
    [
      "missing file",
      { path: missing, old_string: "x", new_string: "y" },
      `edit: read: open ${missing}: no such file or directory`,
    ],
    [
      "outside",
      { path: outside, old_string: "x", new_string: "y" },
      `edit: ${outside} is outside the workspace`,
    ],
    // count
    [
      "not found",
      { path: file, old_string: "gamma", new_string: "y" },
      `edit: old_string not found in ${file}`,
    ],
    [
      "not unique",
      { path: file, old_string: "a", new_string: "y" },
      `edit: old_string is not unique in ${file} (found 3 occurrences); provide more surrounding context`,
    ],
  ];
  for (const [name, input, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("edit", input), fail(expected));
    });
  }
  assertEquals(await Deno.readTextFile(file), "alpha beta");
  assertEquals(await list(ws.root), ["a.txt"]);
  assertEquals(await list(ws.outside), []);
});

// ---- Read errors ----------------------------------------------------------------------------

Deno.test("edit() never creates a file", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("new.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: read: open ${path}: no such file or directory`),
  );
  const deep = ws.path("no", "such", "dir.txt");
  assertEquals(
    await ws.call("edit", { path: deep, old_string: "x", new_string: "y" }),
    fail(`edit: read: open ${deep}: no such file or directory`),
  );
  assertEquals(await list(ws.root), []);
});

Deno.test("edit() reports a dangling link as missing and does not create its target", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink("target.txt", ws.path("link"));
  const path = ws.path("link");
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: read: open ${path}: no such file or directory`),
  );
  assertEquals(await list(ws.root), ["link"]);
  assert((await Deno.lstat(path)).isSymlink);
});

Deno.test("edit() reports a directory as edit: read: read <path>: is a directory", async () => {
  await using ws = await tmpWorkspace({ files: { "dir/a.txt": "x" } });
  const path = ws.path("dir");
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: read: read ${path}: is a directory`),
  );
  assertEquals(await list(path), ["a.txt"]);
});

Deno.test("edit() reports a file used as a directory as not a directory", async () => {
  await using ws = await tmpWorkspace({ files: { "f.txt": "x" } });
  const path = ws.path("f.txt", "inner.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: read: open ${path}: not a directory`),
  );
});

Deno.test("edit() reports a symlink loop as a read error", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(ws.path("loop-b"), ws.path("loop-a"));
  await Deno.symlink(ws.path("loop-a"), ws.path("loop-b"));
  const path = ws.path("loop-a");
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: read: open ${path}: too many levels of symbolic links`),
  );
});

Deno.test("edit() reports an unreadable file as permission denied", {
  ignore: Deno.uid() === 0,
}, async () => {
  await using ws = await tmpWorkspace({ files: { "secret.txt": "x" } });
  const path = ws.path("secret.txt");
  await Deno.chmod(path, 0o000);
  assertEquals(
    await ws.call("edit", { path, old_string: "x", new_string: "y" }),
    fail(`edit: read: open ${path}: permission denied`),
  );
});

Deno.test("edit() maps a refusal by Deno's permissions to permission denied (outside the runtime permissions)", async () => {
  await using ws = await tmpWorkspace({
    files: { "ok.txt": "one", "readonly/r.txt": "one" },
    outside: { "x.txt": "one" },
  });
  const base = dirname(ws.root);
  const inside = ws.path("ok.txt");
  const unreadable = join(ws.outside, "x.txt");
  const unwritable = ws.path("readonly", "r.txt");
  // The workspace may be read and written, except that readonly/ may not be written.
  const results = await callsUnderPermissions(ws.outside, "edit", {
    roots: [base],
    calls: [inside, unreadable, unwritable].map((path) => ({
      path,
      old_string: "one",
      new_string: "two",
    })),
    flags: (script) => [
      `--allow-read=${ws.root},${script}`,
      `--allow-write=${ws.root}`,
      `--deny-write=${ws.path("readonly")}`,
    ],
  });
  assertEquals(results, [
    ok(`edited ${inside} (1 replacement)`),
    fail(`edit: read: open ${unreadable}: permission denied (outside the runtime permissions)`),
    fail(`edit: open ${unwritable}: permission denied (outside the runtime permissions)`),
  ]);
  assertEquals(await Deno.readTextFile(unreadable), "one");
  assertEquals(await Deno.readTextFile(unwritable), "one");
});

// ---- Modes, links, confinement --------------------------------------------------------------

Deno.test("edit() keeps the file's mode", async (t) => {
  await using ws = await tmpWorkspace();
  for (const mode of [0o600, 0o640, 0o755, 0o777, 0o700]) {
    await t.step(mode.toString(8), async () => {
      const path = ws.path(`m${mode.toString(8)}.sh`);
      await Deno.writeTextFile(path, "echo old\n");
      await Deno.chmod(path, mode);
      assertEquals(
        await ws.call("edit", { path, old_string: "old", new_string: "new" }),
        ok(`edited ${path} (1 replacement)`),
      );
      assertEquals(await Deno.readTextFile(path), "echo new\n");
      assertEquals(((await Deno.stat(path)).mode! & 0o7777).toString(8), mode.toString(8));
    });
  }
});

Deno.test("edit() edits through an in-workspace symlink and keeps the link", async (t) => {
  await using ws = await tmpWorkspace({ files: { "real/a.txt": "v1" } });
  await Deno.symlink(ws.path("real", "a.txt"), ws.path("abs-link"));
  await Deno.symlink("real", ws.path("dir-link"));
  const rows: [string, string, string][] = [
    [ws.path("abs-link"), "v1", "v2"],
    [ws.path("dir-link", "a.txt"), "v2", "v3"],
  ];
  for (const [path, from, to] of rows) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("edit", { path, old_string: from, new_string: to }),
        ok(`edited ${path} (1 replacement)`),
      );
      assertEquals(await Deno.readTextFile(ws.path("real", "a.txt")), to);
    });
  }
  assert((await Deno.lstat(ws.path("abs-link"))).isSymlink);
  assert((await Deno.lstat(ws.path("dir-link"))).isSymlink);
  assertEquals(await list(ws.path("real")), ["a.txt"]);
});

Deno.test("edit() refuses paths that resolve outside the workspace and touches nothing", async (t) => {
  await using ws = await tmpWorkspace({
    files: { "secret.txt": "decoy SECRET" },
    outside: { "secret.txt": "SECRET", "sub/keep": "" },
  });
  const secret = join(ws.outside, "secret.txt");
  await Deno.symlink(secret, ws.path("file-link"));
  await Deno.symlink("../outside/secret.txt", ws.path("rel-link"));
  await Deno.symlink(ws.outside, ws.path("dir-link"));
  await Deno.symlink(join(ws.outside, "sub"), ws.path("sub-link"));
  for (
    const path of [
      secret,
      ws.path("file-link"),
      ws.path("rel-link"),
      ws.path("dir-link", "secret.txt"),
      `${ws.root}/../outside/secret.txt`,
      // Cleaned, this spells ws/secret.txt; the kernel reads outside/secret.txt.
      `${ws.root}/sub-link/../secret.txt`,
    ]
  ) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("edit", { path, old_string: "SECRET", new_string: "pwned" }),
        fail(`edit: ${path} is outside the workspace`),
      );
    });
  }
  assertEquals(await Deno.readTextFile(secret), "SECRET");
  assertEquals(await Deno.readTextFile(ws.path("secret.txt")), "decoy SECRET");
  assertEquals(await list(ws.outside), ["secret.txt", "sub"]);
  assert((await Deno.lstat(ws.path("file-link"))).isSymlink);
});

Deno.test("edit() never edits an outside file swapped in between check and open", async () => {
  const secret = "TOP SECRET = 1\n";
  await using ws = await tmpWorkspace({
    files: { "target.txt": "value = 1\n" },
    outside: { "secret.txt": secret },
  });
  const target = ws.path("target.txt");
  const secretPath = join(ws.outside, "secret.txt");
  async function editMany(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const result = await ws.call("edit", { path: target, old_string: "1", new_string: "2" });
      assert(!result.output.includes("SECRET"), result.output);
      if (!result.isError) assertEquals(result.output, `edited ${target} (1 replacement)`);
      else assert(result.output.startsWith("edit: "), result.output);
    }
  }
  await whileFlipping(
    ws,
    target,
    secretPath,
    "value = 1\n",
    () => Promise.all([editMany(), editMany()]),
  );
  assertEquals(await Deno.readTextFile(secretPath), secret);
  assertEquals(await list(ws.outside), ["secret.txt"]);
  assertEquals((await list(ws.root)).filter((name) => name.endsWith(".tmp")), []);
});

// ---- Cancellation and atomicity -------------------------------------------------------------

Deno.test("edit() fails with edit: cancelled when the signal is already aborted", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "old" } });
  const controller = new AbortController();
  controller.abort();
  const path = ws.path("a.txt");
  assertEquals(
    await ws.call("edit", { path, old_string: "old", new_string: "new" }, {
      signal: controller.signal,
    }),
    fail("edit: cancelled"),
  );
  assertEquals(await Deno.readTextFile(path), "old");
});

Deno.test("edit() fails with edit: cancelled when aborted while in flight", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "old" } });
  const controller = new AbortController();
  const path = ws.path("a.txt");
  const call = ws.call("edit", { path, old_string: "old", new_string: "new" }, {
    signal: controller.signal,
  });
  controller.abort();
  assertEquals(await call, fail("edit: cancelled"));
  assertEquals(await Deno.readTextFile(path), "old");
  assertEquals(await list(ws.root), ["a.txt"]);
});

Deno.test("edit() leaves no temporary file behind after success", async () => {
  await using ws = await tmpWorkspace({ files: { "d/a.txt": "1 2 3", "d/b.txt": "b" } });
  const path = ws.path("d", "a.txt");
  for (const [from, to] of [["1", "one"], ["2", "two"], ["3", "three"]]) {
    assertEquals(
      await ws.call("edit", { path, old_string: from, new_string: to }),
      ok(`edited ${path} (1 replacement)`),
    );
  }
  assertEquals(await Deno.readTextFile(path), "one two three");
  assertEquals(await list(ws.path("d")), ["a.txt", "b.txt"]);
});

Deno.test("edit() stages the temporary file beside the target and removes it on failure", async () => {
  await using ws = await tmpWorkspace({ files: { "d/a.txt": "old text" } });
  const dir = ws.path("d");
  const path = join(dir, "a.txt");
  const signal = abortOnNewEntry(dir, ["a.txt"]);
  assertEquals(
    await ws.call("edit", { path, old_string: "old", new_string: "new" }, { signal }),
    fail("edit: cancelled"),
  );
  assertEquals(await Deno.readTextFile(path), "old text");
  assertEquals(await list(dir), ["a.txt"]);
});

// ---- Bounded memory (issue 15, item 5) -------------------------------------------------------

Deno.test("edit() refuses a file over tools.edit.max_bytes before reading it; one at the limit is edited", async () => {
  await using ws = await tmpWorkspace({
    files: { "at.txt": "0123456789", "over.txt": "0123456789a" },
  });
  const limits = { editMaxBytes: 10 };
  const input = (path: string) => ({ path, old_string: "0", new_string: "X" });
  assertEquals(
    await ws.call("edit", input(ws.path("at.txt")), { limits }),
    ok(`edited ${ws.path("at.txt")} (1 replacement)`),
  );
  assertEquals(await Deno.readTextFile(ws.path("at.txt")), "X123456789");
  assertEquals(
    await ws.call("edit", input(ws.path("over.txt")), { limits }),
    fail(`edit: ${ws.path("over.txt")} is too large to edit (11 bytes; the limit is 10)`),
  );
  assertEquals(await Deno.readTextFile(ws.path("over.txt")), "0123456789a");
});

Deno.test("edit() of a 1.5 GB sparse file fails fast with bounded memory and leaves it untouched", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("huge.txt");
  const size = 1_500_000_000;
  await Deno.writeTextFile(path, "needle\n");
  await Deno.truncate(path, size);
  const before = await Deno.stat(path);
  // In a process of its own, so its peak resident memory (VmHWM) is this edit's alone.
  const script = join(ws.outside, "edit_huge.ts");
  const { code, stdout, stderr } = await runHostScript(
    script,
    ws.root,
    `const input = { path: ${JSON.stringify(path)}, old_string: "needle", new_string: "pin" };
const result = await host.call("edit", input, new AbortController().signal);
const hwm = /^VmHWM:\\s*(\\d+) kB/m.exec(Deno.readTextFileSync("/proc/self/status"))[1];
console.log(JSON.stringify({ result, peakKiB: Number(hwm) }));
`,
  );
  const decoder = new TextDecoder();
  assertEquals(code, 0, decoder.decode(stderr));
  const { result, peakKiB } = JSON.parse(decoder.decode(stdout));
  assertEquals(
    result,
    fail(`edit: ${path} is too large to edit (${size} bytes; the limit is ${16 * 1024 * 1024})`),
  );
  // Reading it would take 1.5 GB (the unbounded edit took 3 GB); a Deno process idles near 100 MB.
  assert(peakKiB < 400 * 1024, `peak RSS ${peakKiB} KiB`);
  const after = await Deno.stat(path);
  assertEquals([after.size, after.blocks, after.mtime], [before.size, before.blocks, before.mtime]);
  assertEquals(await list(ws.root), ["huge.txt"]);
});

Deno.test("edit(): tools.edit.max_bytes in the config sets the limit (through `rousseau tool edit`)", async () => {
  await using ws = await tmpWorkspace({ files: { "six.txt": "abcdef" } });
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, "tools:\n  edit:\n    max_bytes: 5\n");
  const path = ws.path("six.txt");
  const run = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "edit",
    JSON.stringify({ path, old_string: "a", new_string: "b" }),
  ]);
  assertEquals(run, {
    code: 1,
    stdout: "",
    stderr: `edit: ${path} is too large to edit (6 bytes; the limit is 5)\n`,
  });
  assertEquals(await Deno.readTextFile(path), "abcdef");
});
