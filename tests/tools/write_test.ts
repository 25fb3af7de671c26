import { dirname, join } from "node:path";
import type { ToolResult } from "../../mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { whileFlipping } from "../_helpers/flip.ts";
import { callsUnderPermissions } from "../_helpers/host_script.ts";
import { abortOnNewEntry, fail, list, ok } from "../_helpers/results.ts";
import { finished, runCli, spawnCli } from "../_helpers/cli.ts";
import { startFakeAnthropic } from "../_helpers/fake_providers.ts";
import { runHostScript } from "../_helpers/host_script.ts";

/**
 * The process umask, read without changing it: `deno test --parallel` runs test files as
 * threads of one process, so setting the umask here would race with other files' tests.
 */
async function processUmask(): Promise<number> {
  const status = await Deno.readTextFile("/proc/self/status").catch(() => "");
  const line = /^Umask:\s*([0-7]+)$/m.exec(status);
  return line === null ? Deno.umask() : parseInt(line[1]!, 8);
}

/**
 * Runs `write` calls in a fresh Deno subprocess with the workspace `roots`, the Deno
 * permission `flags` and, when given, the umask `mask`; returns each call's result.
 */
async function writeInSubprocess(
  scriptDir: string,
  options: { roots: string[]; calls: unknown[]; flags: string[]; mask?: string },
): Promise<ToolResult[]> {
  return await callsUnderPermissions(scriptDir, "write", {
    ...options,
    flags: () => options.flags,
  });
}

/** Permission bits of `path`, following symlinks. */
async function modeOf(path: string): Promise<number> {
  return (await Deno.stat(path)).mode! & 0o7777;
}

// ---- Contents and the success text ----------------------------------------------------------

Deno.test("write() creates a new file with the content and reports the byte count", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("new.txt");
  assertEquals(
    await ws.call("write", { path, content: "hello\n" }),
    ok(`wrote 6 bytes to ${path}`),
  );
  assertEquals(await Deno.readTextFile(path), "hello\n");
});

Deno.test("write() replaces the whole contents, never appends", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "a much longer original text\n" } });
  const path = ws.path("a.txt");
  assertEquals(await ws.call("write", { path, content: "short" }), ok(`wrote 5 bytes to ${path}`));
  assertEquals(await Deno.readTextFile(path), "short");
});

Deno.test("write() counts UTF-8 bytes and says bytes even for one", async (t) => {
  const rows: [string, string, number][] = [
    ["one ASCII byte", "x", 1],
    ["two-byte character", "é", 2],
    ["three-byte character", "€", 3],
    ["four-byte character", "😀", 4],
    ["CRLF kept", "a\r\nb\r\n", 6],
    ["NUL and control bytes", "\0\x01\x7f", 3],
  ];
  await using ws = await tmpWorkspace();
  for (const [name, content, n] of rows) {
    await t.step(name, async () => {
      const path = ws.path("count.txt");
      assertEquals(await ws.call("write", { path, content }), ok(`wrote ${n} bytes to ${path}`));
      const bytes = await Deno.readFile(path);
      assertEquals(bytes, new TextEncoder().encode(content));
    });
  }
});

Deno.test("write() echoes the path as given", async (t) => {
  await using ws = await tmpWorkspace({ files: { "sub/keep.txt": "" } });
  const rows: [string, string][] = [
    [`${ws.root}/sub/../dotdot.txt`, ws.path("dotdot.txt")],
    [`${ws.root}//double//slash.txt`, ws.path("double", "slash.txt")],
    [`${ws.root}/./sub/./dot.txt`, ws.path("sub", "dot.txt")],
  ];
  for (const [path, real] of rows) {
    await t.step(path, async () => {
      assertEquals(await ws.call("write", { path, content: "ab" }), ok(`wrote 2 bytes to ${path}`));
      assertEquals(await Deno.readTextFile(real), "ab");
    });
  }
});

Deno.test("write() ignores unknown input keys", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("a.txt");
  assertEquals(
    await ws.call("write", { path, content: "x", append: true, mode: 0o777 }),
    ok(`wrote 1 bytes to ${path}`),
  );
  assertEquals(await Deno.readTextFile(path), "x");
});

// ---- Input ----------------------------------------------------------------------------------

Deno.test("write() fails with content is required when content is absent", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "precious" } });
  const path = ws.path("a.txt");
  assertEquals(await ws.call("write", { path }), fail("write: content is required"));
  assertEquals(await Deno.readTextFile(path), "precious");
  const fresh = ws.path("fresh.txt");
  assertEquals(await ws.call("write", { path: fresh }), fail("write: content is required"));
  assertEquals(await list(ws.root), ["a.txt"]);
});

Deno.test("write() writes an empty file for an explicit empty content", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "old" } });
  for (const path of [ws.path("a.txt"), ws.path("new-empty.txt")]) {
    assertEquals(await ws.call("write", { path, content: "" }), ok(`wrote 0 bytes to ${path}`));
    assertEquals(await Deno.readFile(path), new Uint8Array());
  }
});

Deno.test("write() fails with parse input when the body is not an object", async (t) => {
  const rows: [string, unknown, string][] = [
    ["null", null, "write: parse input: expected a JSON object, got null"],
    ["array", [], "write: parse input: expected a JSON object, got an array"],
    ["string", "{}", "write: parse input: expected a JSON object, got a string"],
    ["number", 0, "write: parse input: expected a JSON object, got a number"],
  ];
  await using ws = await tmpWorkspace();
  for (const [name, input, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("write", input), fail(expected));
    });
  }
});

Deno.test("write() fails with parse input naming a field of the wrong type", async (t) => {
  await using ws = await tmpWorkspace();
  const path = ws.path("a.txt");
  const rows: [string, unknown, string][] = [
    [
      "path number",
      { path: 1, content: "x" },
      'write: parse input: field "path" must be a string, got a number',
    ],
    [
      "content number",
      { path, content: 42 },
      'write: parse input: field "content" must be a string, got a number',
    ],
    [
      "content array",
      { path, content: ["a", "b"] },
      'write: parse input: field "content" must be a string, got an array',
    ],
    [
      "content object",
      { path, content: { text: "x" } },
      'write: parse input: field "content" must be a string, got a object',
    ],
    [
      "content boolean",
      { path, content: false },
      'write: parse input: field "content" must be a string, got a boolean',
    ],
    // A type error wins over a missing field.
    [
      "bad content, no path",
      { content: 1 },
      'write: parse input: field "content" must be a string, got a number',
    ],
  ];
  for (const [name, input, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("write", input), fail(expected));
    });
  }
  assertEquals(await list(ws.root), []);
});

Deno.test("write() checks path before content", async (t) => {
  await using ws = await tmpWorkspace();
  const rows: [string, unknown, string][] = [
    ["path absent", {}, "write: path is required"],
    ["path empty", { path: "" }, "write: path is required"],
    ["path empty, content given", { path: "", content: "x" }, "write: path is required"],
    [
      "path relative, content absent",
      { path: "a.txt" },
      `write: path must be absolute, got "a.txt"; use ${JSON.stringify(ws.path("a.txt"))}`,
    ],
    [
      "path relative, content given",
      { path: "d/a.txt", content: "x" },
      `write: path must be absolute, got "d/a.txt"; use ${JSON.stringify(ws.path("d/a.txt"))}`,
    ],
    [
      "quoted",
      { path: 'a "b"\\c', content: "x" },
      `write: path must be absolute, got "a \\"b\\"\\\\c"; use ${
        JSON.stringify(ws.path('a "b"\\c'))
      }`,
    ],
  ];
  for (const [name, input, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("write", input), fail(expected));
    });
  }
  assertEquals(await list(ws.root), []);
});

// ---- Modes ----------------------------------------------------------------------------------

Deno.test("write() creates missing parent directories with mode 0755 and the file with 0644", async () => {
  const mask = await processUmask();
  await using ws = await tmpWorkspace();
  const path = ws.path("a", "b", "c", "new.txt");
  assertEquals(await ws.call("write", { path, content: "deep" }), ok(`wrote 4 bytes to ${path}`));
  assertEquals(await Deno.readTextFile(path), "deep");
  for (const dir of [ws.path("a"), ws.path("a", "b"), ws.path("a", "b", "c")]) {
    assertEquals((await modeOf(dir)).toString(8), (0o755 & ~mask).toString(8), dir);
  }
  assertEquals((await modeOf(path)).toString(8), (0o644 & ~mask).toString(8));
});

Deno.test("write() applies the umask to new directories and files", async (t) => {
  await using ws = await tmpWorkspace();
  const rows: [string, string, string][] = [["022", "755", "644"], ["077", "700", "600"], [
    "027",
    "750",
    "640",
  ], ["000", "755", "644"]];
  for (const [mask, dirMode, fileMode] of rows) {
    await t.step(`umask ${mask}`, async () => {
      const path = ws.path(`u${mask}`, "sub", "new.txt");
      const results = await writeInSubprocess(ws.outside, {
        roots: [ws.root],
        calls: [{ path, content: "" }],
        flags: [`--allow-read=${ws.root}`, `--allow-write=${ws.root}`],
        mask,
      });
      assertEquals(results, [ok(`wrote 0 bytes to ${path}`)]);
      assertEquals((await modeOf(ws.path(`u${mask}`))).toString(8), dirMode);
      assertEquals((await modeOf(ws.path(`u${mask}`, "sub"))).toString(8), dirMode);
      assertEquals((await modeOf(path)).toString(8), fileMode);
    });
  }
});

Deno.test("write() keeps the mode of an existing file", async (t) => {
  await using ws = await tmpWorkspace();
  for (const mode of [0o600, 0o640, 0o755, 0o777, 0o700, 0o604]) {
    await t.step(mode.toString(8), async () => {
      const path = ws.path(`mode-${mode.toString(8)}.txt`);
      await Deno.writeTextFile(path, "old contents");
      await Deno.chmod(path, mode);
      assertEquals(
        await ws.call("write", { path, content: "new" }),
        ok(`wrote 3 bytes to ${path}`),
      );
      assertEquals(await Deno.readTextFile(path), "new");
      assertEquals((await modeOf(path)).toString(8), mode.toString(8));
    });
  }
});

Deno.test("write() leaves the mode of existing parent directories alone", async () => {
  const mask = await processUmask();
  await using ws = await tmpWorkspace();
  await Deno.mkdir(ws.path("private"));
  await Deno.chmod(ws.path("private"), 0o700);
  const path = ws.path("private", "new", "f.txt");
  assertEquals(await ws.call("write", { path, content: "x" }), ok(`wrote 1 bytes to ${path}`));
  assertEquals((await modeOf(ws.path("private"))).toString(8), "700");
  assertEquals((await modeOf(ws.path("private", "new"))).toString(8), (0o755 & ~mask).toString(8));
});

// ---- Failures -------------------------------------------------------------------------------

Deno.test("write() names a parent that is a regular file", async (t) => {
  await using ws = await tmpWorkspace({ files: { "file.txt": "i am a file", "d/inner": "x" } });
  const file = ws.path("file.txt");
  const rows: [string, string, string][] = [
    ["direct parent", ws.path("file.txt", "new.txt"), file],
    ["grandparent", ws.path("file.txt", "sub", "new.txt"), file],
    ["deeper", ws.path("file.txt", "a", "b", "c", "new.txt"), file],
    ["inside a directory", ws.path("d", "inner", "x", "y.txt"), ws.path("d", "inner")],
  ];
  for (const [name, path, parent] of rows) {
    await t.step(name, async () => {
      assertEquals(
        await ws.call("write", { path, content: "x" }),
        fail(`write: mkdir: mkdir ${parent}: not a directory`),
      );
    });
  }
  assertEquals(await Deno.readTextFile(file), "i am a file");
  assertEquals(await list(ws.root), ["d", "file.txt"]);
  assertEquals(await list(ws.path("d")), ["inner"]);
});

Deno.test("write() refuses a directory as the target", async (t) => {
  await using ws = await tmpWorkspace({ files: { "dir/keep.txt": "keep" } });
  await Deno.symlink(ws.path("dir"), ws.path("dir-link"));
  for (const path of [ws.path("dir"), ws.path("dir-link"), ws.root]) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("write", { path, content: "x" }),
        fail(`write: open ${path}: is a directory`),
      );
    });
  }
  assertEquals(await list(ws.path("dir")), ["keep.txt"]);
  assertEquals(await list(ws.root), ["dir", "dir-link"]);
  assert((await Deno.lstat(ws.path("dir-link"))).isSymlink);
});

Deno.test("write() reports other OS errors as write: <os error>", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(ws.path("loop-b"), ws.path("loop-a"));
  await Deno.symlink(ws.path("loop-a"), ws.path("loop-b"));
  const path = ws.path("loop-a");
  assertEquals(
    await ws.call("write", { path, content: "x" }),
    fail(`write: open ${path}: too many levels of symbolic links`),
  );
  assertEquals(await list(ws.root), ["loop-a", "loop-b"]);
});

Deno.test("write() reports a read-only file as permission denied", {
  ignore: Deno.uid() === 0,
}, async () => {
  await using ws = await tmpWorkspace({ files: { "ro.txt": "locked" } });
  const path = ws.path("ro.txt");
  await Deno.chmod(path, 0o444);
  assertEquals(
    await ws.call("write", { path, content: "x" }),
    fail(`write: open ${path}: permission denied`),
  );
  assertEquals(await Deno.readTextFile(path), "locked");
});

Deno.test("write() maps a refusal by Deno's permissions to permission denied (outside the runtime permissions)", async () => {
  await using ws = await tmpWorkspace({ outside: { "existing.txt": "keep" } });
  const base = dirname(ws.root);
  const fresh = join(ws.outside, "fresh.txt");
  const existing = join(ws.outside, "existing.txt");
  const inside = ws.path("ok.txt");
  // The whole base is the workspace and may be read; only ws/ may be written.
  const results = await writeInSubprocess(ws.outside, {
    roots: [base],
    calls: [inside, fresh, existing].map((path) => ({ path, content: "new" })),
    flags: [`--allow-read=${base}`, `--allow-write=${ws.root}`],
  });
  assertEquals(results, [
    ok(`wrote 3 bytes to ${inside}`),
    fail(`write: open ${fresh}: permission denied (outside the runtime permissions)`),
    fail(`write: open ${existing}: permission denied (outside the runtime permissions)`),
  ]);
  assertEquals(await Deno.readTextFile(existing), "keep");
  assertEquals(await list(ws.outside), ["existing.txt"]);
});

// ---- Cancellation ---------------------------------------------------------------------------

Deno.test("write() fails with write: cancelled when the signal is already aborted", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "old" } });
  const controller = new AbortController();
  controller.abort();
  for (const path of [ws.path("a.txt"), ws.path("new.txt"), ws.path("dir", "new.txt")]) {
    assertEquals(
      await ws.call("write", { path, content: "new" }, { signal: controller.signal }),
      fail("write: cancelled"),
    );
  }
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "old");
  assertEquals(await list(ws.root), ["a.txt"]);
});

Deno.test("write() fails with write: cancelled when aborted while in flight", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "old" } });
  const controller = new AbortController();
  const path = ws.path("a.txt");
  const call = ws.call("write", { path, content: "new" }, { signal: controller.signal });
  controller.abort();
  assertEquals(await call, fail("write: cancelled"));
  assertEquals(await Deno.readTextFile(path), "old");
  assertEquals(await list(ws.root), ["a.txt"]);
});

// ---- Atomicity ------------------------------------------------------------------------------

Deno.test("write() leaves no temporary file behind after success", async () => {
  await using ws = await tmpWorkspace({ files: { "dir/a.txt": "old", "dir/b.txt": "b" } });
  const dir = ws.path("dir");
  for (const name of ["a.txt", "c.txt", "a.txt"]) {
    const path = join(dir, name);
    assertEquals(await ws.call("write", { path, content: "xyz" }), ok(`wrote 3 bytes to ${path}`));
  }
  assertEquals(await list(dir), ["a.txt", "b.txt", "c.txt"]);
  assertEquals(await list(ws.root), ["dir"]);
});

Deno.test("write() stages the temporary file beside the target and removes it on failure", async () => {
  await using ws = await tmpWorkspace({ files: { "dir/a.txt": "old" } });
  const dir = ws.path("dir");
  const path = join(dir, "a.txt");
  // Cancel once anything new shows up in the target's directory: that is the staged file.
  const signal = abortOnNewEntry(dir, ["a.txt"]);
  assertEquals(
    await ws.call("write", { path, content: "new" }, { signal }),
    fail("write: cancelled"),
  );
  assertEquals(await Deno.readTextFile(path), "old");
  assertEquals(await list(dir), ["a.txt"]);
});

Deno.test("write() leaves no temporary file behind after a new file's write fails", async () => {
  await using ws = await tmpWorkspace({ files: { "dir/keep": "" } });
  const dir = ws.path("dir");
  const path = join(dir, "new.txt");
  const signal = abortOnNewEntry(dir, ["keep"]);
  assertEquals(
    await ws.call("write", { path, content: "new" }, { signal }),
    fail("write: cancelled"),
  );
  assertEquals(await list(dir), ["keep"]);
});

Deno.test("write() never lets a reader see a half-written file", async () => {
  const small = "a".repeat(1 << 20);
  const large = "b".repeat(3 << 20);
  await using ws = await tmpWorkspace({ files: { "big.txt": small } });
  const path = ws.path("big.txt");
  let writing = true;
  async function writeMany(): Promise<void> {
    try {
      for (let i = 0; i < 16; i++) {
        const content = i % 2 === 0 ? large : small;
        const result = await ws.call("write", { path, content });
        assertEquals(result, ok(`wrote ${content.length} bytes to ${path}`));
      }
    } finally {
      writing = false;
    }
  }
  let reads = 0;
  async function readMany(): Promise<void> {
    while (writing || reads === 0) {
      const text = await Deno.readTextFile(path);
      assert(text === small || text === large, `saw ${text.length} bytes`);
      reads++;
    }
  }
  await Promise.all([writeMany(), readMany()]);
  assert(reads > 0);
  assertEquals(await list(ws.root), ["big.txt"]);
});

// ---- Workspace confinement ------------------------------------------------------------------

Deno.test("write() refuses an absolute path outside the workspace and touches nothing", async (t) => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  for (
    const path of [
      join(ws.outside, "secret.txt"),
      join(ws.outside, "new.txt"),
      join(ws.outside, "new-dir", "deep", "new.txt"),
      `${ws.root}-sibling/new.txt`,
    ]
  ) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("write", { path, content: "pwned" }),
        fail(`write: ${path} is outside the workspace`),
      );
    });
  }
  assertEquals(await Deno.readTextFile(join(ws.outside, "secret.txt")), "secret");
  assertEquals(await list(ws.outside), ["secret.txt"]);
  assertEquals(await list(dirname(ws.root)), ["outside", "ws"]);
});

Deno.test("write() refuses .. escapes out of the workspace", async (t) => {
  await using ws = await tmpWorkspace({ files: { "sub/a.txt": "a" } });
  for (
    const path of [
      `${ws.root}/../outside/x.txt`,
      `${ws.root}/sub/../../outside/x.txt`,
      `${ws.root}/new/../../outside/x.txt`,
      `${ws.root}/new/deeper/../../../outside/made/x.txt`,
    ]
  ) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("write", { path, content: "x" }),
        fail(`write: ${path} is outside the workspace`),
      );
    });
  }
  assertEquals(await list(ws.outside), []);
  assertEquals(await list(ws.root), ["sub"]);
});

Deno.test("write() refuses a file symlink that points out of the workspace", async (t) => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  const secret = join(ws.outside, "secret.txt");
  await Deno.symlink(secret, ws.path("abs-link"));
  await Deno.symlink("../outside/secret.txt", ws.path("rel-link"));
  await Deno.symlink(ws.path("abs-link"), ws.path("chain-link"));
  for (const name of ["abs-link", "rel-link", "chain-link"]) {
    await t.step(name, async () => {
      const path = ws.path(name);
      assertEquals(
        await ws.call("write", { path, content: "pwned" }),
        fail(`write: ${path} is outside the workspace`),
      );
      assert((await Deno.lstat(path)).isSymlink);
    });
  }
  assertEquals(await Deno.readTextFile(secret), "secret");
  assertEquals(await list(ws.outside), ["secret.txt"]);
});

Deno.test("write() refuses a dangling symlink that points out of the workspace", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(join(ws.outside, "planted.txt"), ws.path("link"));
  await Deno.symlink(join(ws.outside, "new-dir", "planted.txt"), ws.path("deep-link"));
  for (const path of [ws.path("link"), ws.path("deep-link")]) {
    assertEquals(
      await ws.call("write", { path, content: "pwned" }),
      fail(`write: ${path} is outside the workspace`),
    );
  }
  assertEquals(await list(ws.outside), []);
});

Deno.test("write() refuses a missing file under a directory symlink that points out of the workspace", async (t) => {
  await using ws = await tmpWorkspace({ outside: { "existing.txt": "keep" } });
  await Deno.symlink(ws.outside, ws.path("out-dir"));
  await Deno.symlink("../outside", ws.path("rel-out-dir"));
  for (
    const path of [
      ws.path("out-dir", "new.txt"),
      ws.path("out-dir", "existing.txt"),
      ws.path("out-dir", "a", "b", "new.txt"),
      ws.path("rel-out-dir", "new.txt"),
    ]
  ) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("write", { path, content: "pwned" }),
        fail(`write: ${path} is outside the workspace`),
      );
    });
  }
  assertEquals(await list(ws.outside), ["existing.txt"]);
  assertEquals(await Deno.readTextFile(join(ws.outside, "existing.txt")), "keep");
});

Deno.test("write() resolves .. after a symlink the way the kernel does", async () => {
  await using ws = await tmpWorkspace({ outside: { "sub/keep": "" } });
  await Deno.symlink(join(ws.outside, "sub"), ws.path("out-sub"));
  // Spelled inside (ws/new.txt once cleaned), but the kernel lands in outside/new.txt.
  const escape = `${ws.root}/out-sub/../new.txt`;
  assertEquals(
    await ws.call("write", { path: escape, content: "pwned" }),
    fail(`write: ${escape} is outside the workspace`),
  );
  assertEquals(await list(ws.outside), ["sub"]);
  assertEquals(await list(ws.root), ["out-sub"]);
  // Spelled outside (ws/ws/back.txt once cleaned), but the kernel lands in ws/back.txt.
  const back = `${ws.root}/out-sub/../../ws/back.txt`;
  assertEquals(
    await ws.call("write", { path: back, content: "ok" }),
    ok(`wrote 2 bytes to ${back}`),
  );
  assertEquals(await Deno.readTextFile(ws.path("back.txt")), "ok");
});

Deno.test("write() writes through an in-workspace symlink and keeps the link", async (t) => {
  await using ws = await tmpWorkspace({
    files: { "real/target.txt": "old", "real/other.txt": "o" },
  });
  const target = ws.path("real", "target.txt");
  await Deno.symlink(target, ws.path("abs-link"));
  await Deno.symlink("real/target.txt", ws.path("rel-link"));
  await Deno.mkdir(ws.path("links"));
  await Deno.symlink("../real/other.txt", ws.path("links", "up-link"));
  const rows: [string, string][] = [
    [ws.path("abs-link"), target],
    [ws.path("rel-link"), target],
    [ws.path("links", "up-link"), ws.path("real", "other.txt")],
  ];
  for (const [path, real] of rows) {
    await t.step(path, async () => {
      const content = `via ${path}`;
      assertEquals(
        await ws.call("write", { path, content }),
        ok(`wrote ${content.length} bytes to ${path}`),
      );
      assert((await Deno.lstat(path)).isSymlink, "the link was replaced");
      assertEquals(await Deno.readTextFile(real), content);
    });
  }
  assertEquals(await Deno.readLink(ws.path("rel-link")), "real/target.txt");
  assertEquals(await list(ws.path("real")), ["other.txt", "target.txt"]);
  assertEquals(await list(ws.root), ["abs-link", "links", "real", "rel-link"]);
});

Deno.test("write() keeps the link target's mode when writing through a symlink", async () => {
  await using ws = await tmpWorkspace({ files: { "target.sh": "#!/bin/sh\n" } });
  await Deno.chmod(ws.path("target.sh"), 0o750);
  await Deno.symlink("target.sh", ws.path("link.sh"));
  const path = ws.path("link.sh");
  assertEquals(await ws.call("write", { path, content: "echo\n" }), ok(`wrote 5 bytes to ${path}`));
  assertEquals((await modeOf(ws.path("target.sh"))).toString(8), "750");
  assert((await Deno.lstat(path)).isSymlink);
});

Deno.test("write() creates the target of a dangling in-workspace symlink and keeps the link", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink("later/target.txt", ws.path("link"));
  const path = ws.path("link");
  assertEquals(await ws.call("write", { path, content: "made" }), ok(`wrote 4 bytes to ${path}`));
  assert((await Deno.lstat(path)).isSymlink);
  assertEquals(await Deno.readTextFile(ws.path("later", "target.txt")), "made");
});

Deno.test("write() creates missing directories below an in-workspace directory symlink", async () => {
  await using ws = await tmpWorkspace({ files: { "real/keep": "" } });
  await Deno.symlink("real", ws.path("dir-link"));
  const path = ws.path("dir-link", "x", "y.txt");
  assertEquals(await ws.call("write", { path, content: "y" }), ok(`wrote 1 bytes to ${path}`));
  assertEquals(await Deno.readTextFile(ws.path("real", "x", "y.txt")), "y");
  assert((await Deno.lstat(ws.path("dir-link"))).isSymlink);
});

Deno.test("write() never writes outside when the target flips to an outside link", async () => {
  const secret = "TOP SECRET\n";
  await using ws = await tmpWorkspace({
    files: { "target.txt": "inside\n" },
    outside: { "secret.txt": secret },
  });
  const target = ws.path("target.txt");
  const secretPath = join(ws.outside, "secret.txt");
  async function writeMany(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const result = await ws.call("write", { path: target, content: "pwned\n" });
      if (!result.isError) assertEquals(result.output, `wrote 6 bytes to ${target}`);
      else assert(result.output.startsWith("write: "), result.output);
    }
  }
  await whileFlipping(
    ws,
    target,
    secretPath,
    "inside\n",
    () => Promise.all([writeMany(), writeMany()]),
  );
  assertEquals(await Deno.readTextFile(secretPath), secret);
  assertEquals(await list(ws.outside), ["secret.txt"]);
  assertEquals((await list(ws.root)).filter((name) => name.endsWith(".tmp")), []);
});

// ---- Only regular files, never blocking (issue 15, item 4) ---------------------------------

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assertEquals(made.code, 0, new TextDecoder().decode(made.stderr));
}

Deno.test("write() refuses a FIFO at once, with or without a reader, and through a symlink", async () => {
  await using ws = await tmpWorkspace();
  const fifo = ws.path("f");
  await mkfifo(fifo);
  await Deno.symlink(fifo, ws.path("link"));
  for (const path of [fifo, ws.path("link")]) {
    assertEquals(
      await ws.call("write", { path, content: "x" }),
      fail(`write: ${path} is not a regular file`),
    );
  }
  // A reader waiting on the FIFO gets nothing, and the write does not wait for it either.
  const reader = new Deno.Command("/bin/sh", {
    args: ["-c", `exec 3<"$0"; cat <&3`, fifo],
    stdout: "piped",
  }).spawn();
  assertEquals(
    await ws.call("write", { path: fifo, content: "x" }),
    fail(`write: ${fifo} is not a regular file`),
  );
  // Unblock the reader (open for writing, write nothing) and check it saw nothing.
  const w = await Deno.open(fifo, { write: true });
  w.close();
  const { stdout } = await reader.output();
  assertEquals(stdout.length, 0);
  assert((await Deno.lstat(fifo)).isFifo);
  assertEquals(await list(ws.root), ["f", "link"]);
});

Deno.test("write() refuses a unix socket and a device node", async () => {
  await using ws = await tmpWorkspace();
  const socket = ws.path("s.sock");
  using _listener = Deno.listen({ transport: "unix", path: socket });
  assertEquals(
    await ws.call("write", { path: socket, content: "x" }),
    fail(`write: ${socket} is not a regular file`),
  );
  if (Deno.uid() === 0) {
    const dev = ws.path("null-dev");
    const made = await new Deno.Command("mknod", { args: [dev, "c", "1", "3"] }).output();
    if (made.code === 0) {
      assertEquals(
        await ws.call("write", { path: dev, content: "x" }),
        fail(`write: ${dev} is not a regular file`),
      );
      assert((await Deno.lstat(dev)).isCharDevice);
    }
  }
});

Deno.test("write() never blocks while a FIFO and a file are swapped under it", async () => {
  await using ws = await tmpWorkspace({ files: { "plain": "p" } });
  await mkfifo(ws.path("fifo"));
  const target = ws.path("t");
  // Another process swaps a FIFO and a regular file into `t` as fast as it can.
  const swapper = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'cd "$0" && while [ ! -e stop ]; do ln -f fifo t.new && mv -f t.new t; ' +
      "ln -f plain t.new && mv -f t.new t; done",
      ws.root,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const result = await ws.call("write", { path: target, content: "x" });
      // Either the write landed, or it saw a FIFO and refused; never a hang.
      if (result.isError) {
        assertEquals(result, fail(`write: ${target} is not a regular file`));
        seen.add("refused");
      } else {
        assertEquals(result, ok(`wrote 1 bytes to ${target}`));
        seen.add("wrote");
      }
    }
    assert(seen.size > 0);
  } finally {
    await Deno.writeTextFile(ws.path("stop"), "");
    await swapper.status;
  }
  assert((await Deno.lstat(ws.path("fifo"))).isFifo);
  assertEquals(await Deno.readTextFile(ws.path("plain")), "p");
});

Deno.test("write() to a FIFO through `rousseau tool write` exits at once with the error", async () => {
  await using ws = await tmpWorkspace();
  const fifo = ws.path("f");
  await mkfifo(fifo);
  const child = spawnCli([
    "--workspace",
    ws.root,
    "tool",
    "write",
    JSON.stringify({
      path: fifo,
      content: "x",
    }),
  ]);
  // A hang would be killed here and fail the test on its exit code and text.
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const run = await finished(child);
  clearTimeout(guard);
  assertEquals(run, { code: 1, stdout: "", stderr: `write: ${fifo} is not a regular file\n` });
});

/**
 * A config whose custom tool `stuck` blocks its thread for good and ignores cancellation: the
 * worst case a tool can be.
 */
async function stuckToolConfig(dir: string): Promise<string> {
  const module = join(dir, "stuck.ts");
  await Deno.writeTextFile(
    module,
    `export default {
  name: "stuck",
  description: "Blocks forever.",
  inputSchema: { type: "object", properties: {} },
  readOnly: true,
  parseInput: (raw) => raw,
  execute() {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    return Promise.resolve("never");
  },
};
`,
  );
  const config = join(dir, "config.yaml");
  await Deno.writeTextFile(config, `tools:\n  modules: [${JSON.stringify(module)}]\n`);
  return config;
}

Deno.test("a tool call that never returns does not keep `rousseau tool` alive after SIGTERM or SIGINT", async (t) => {
  await using ws = await tmpWorkspace();
  const config = await stuckToolConfig(ws.outside);
  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
    await t.step(signal, async () => {
      const child = spawnCli(["--config", config, "--workspace", ws.root, "tool", "stuck", "{}"]);
      // Wait until the worker runs the call (its ready marker: the process is up for a moment).
      await waitForWorker(child.pid);
      child.kill(signal);
      const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
      const run = await finished(child);
      clearTimeout(guard);
      assertEquals(run.code, code, run.stderr);
      assertEquals(run.stderr, "stuck: cancelled\n");
    });
  }
});

Deno.test("a tool call that never returns does not outlive `run --deadline`", async () => {
  await using ws = await tmpWorkspace();
  const config = await stuckToolConfig(ws.outside);
  await using server = startFakeAnthropic([
    { text: "Calling it.", tools: [{ name: "stuck", input: {} }] },
    { text: "unreachable" },
  ]);
  const child = spawnCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "--allow",
    "stuck",
    "run",
    "--deadline",
    "2s",
    "--output",
    "json",
    "go",
  ], { env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" } });
  const guard = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const run = await finished(child);
  clearTimeout(guard);
  assertEquals(run.code, 5, run.stderr);
  assertEquals(JSON.parse(run.stdout).subtype, "error_deadline");
});

/** Waits until process `pid` runs more than one thread (the tool worker has started). */
async function waitForWorker(pid: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
    const cpu = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
    // Busy start-up is over when the process sleeps with the worker loaded.
    if (/^Threads:\s*(\d+)/m.exec(status) && cpu.split(" ")[2] === "S") {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- Ownership (issue 15, item 8) ------------------------------------------------------------

Deno.test("write() and edit() as root keep the owner and group and clear setuid/setgid", {
  ignore: Deno.uid() !== 0,
}, async (t) => {
  await using ws = await tmpWorkspace({ files: { "w.sh": "#!/bin/sh\n", "e.sh": "#!/bin/sh\n" } });
  const cases: [string, number, unknown][] = [
    ["w.sh", 0o4755, { path: ws.path("w.sh"), content: "#!/bin/sh\nid\n" }],
    ["e.sh", 0o6750, { path: ws.path("e.sh"), old_string: "sh\n", new_string: "sh\nid\n" }],
  ];
  for (const [name, mode, input] of cases) {
    await t.step(`${name} ${mode.toString(8)}`, async () => {
      const path = ws.path(name);
      await Deno.chown(path, 65534, 65533);
      await Deno.chmod(path, mode);
      const tool = "content" in (input as object) ? "write" : "edit";
      const result = await ws.call(tool, input);
      assertEquals(result.isError, false, result.output);
      const info = await Deno.stat(path);
      assertEquals([info.uid, info.gid], [65534, 65533]);
      assertEquals(info.mode! & 0o7777, mode & 0o1777);
      assertEquals(await Deno.readTextFile(path), "#!/bin/sh\nid\n");
    });
  }
  assertEquals(await list(ws.root), ["e.sh", "w.sh"]);
});

// ---- A parent that is a file; leftovers of a killed write (issue 15, item 10) ----------------

Deno.test("write() under a regular file names that file through `rousseau tool write` too", async () => {
  await using ws = await tmpWorkspace({ files: { "blocker": "i am a file" } });
  const path = ws.path("blocker", "sub", "out.txt");
  const run = await runCli([
    "--workspace",
    ws.root,
    "tool",
    "write",
    JSON.stringify({ path, content: "x" }),
  ]);
  assertEquals(run, {
    code: 1,
    stdout: "",
    stderr: `write: mkdir: mkdir ${ws.path("blocker")}: not a directory\n`,
  });
  assertEquals(await Deno.readTextFile(ws.path("blocker")), "i am a file");
});

Deno.test("write() killed with SIGKILL mid-write leaves one temp file of ours; the next write removes it once stale", async () => {
  await using ws = await tmpWorkspace({ files: { "dir/a.txt": "old" } });
  const dir = ws.path("dir");
  const script = join(ws.outside, "killed.ts");
  // The process kills itself with SIGKILL at the first signal check after the temporary file
  // exists: a real kill -9 in the middle of the write.
  const { signal } = await runHostScript(
    script,
    ws.root,
    `const controller = new AbortController();
const signal = new Proxy(controller.signal, {
  get(target, key) {
    if (key === "throwIfAborted" && [...Deno.readDirSync(${JSON.stringify(dir)})].length > 1) {
      Deno.kill(Deno.pid, "SIGKILL");
    }
    const value = Reflect.get(target, key, target);
    return typeof value === "function" ? value.bind(target) : value;
  },
});
await host.call("write", { path: ${
      JSON.stringify(join(dir, "a.txt"))
    }, content: "new".repeat(1000) }, signal);
`,
  );
  assertEquals(signal, "SIGKILL");
  const left = (await list(dir)).filter((name) => name !== "a.txt");
  assertEquals(left.length, 1);
  assert(/^\.a\.txt\.[0-9a-z]+\.rousseau\.tmp$/.test(left[0]!), left[0]);
  assertEquals(await Deno.readTextFile(join(dir, "a.txt")), "old");
  // Others' files and fresh temp files (a write in progress elsewhere) are left alone.
  await Deno.writeTextFile(join(dir, ".b.txt.zz9.rousseau.tmp"), "in progress");
  await Deno.writeTextFile(join(dir, ".c.txt.1.tmp"), "not ours");
  const old = new Date(Date.now() - 2 * 60_000);
  await Deno.utime(join(dir, ".c.txt.1.tmp"), old, old);
  // A fresh leftover stays (it may be a write in progress); once older than a minute it goes.
  await ws.call("write", { path: join(dir, "b.txt"), content: "b" });
  assertEquals((await list(dir)).includes(left[0]!), true);
  await Deno.utime(join(dir, left[0]!), old, old);
  const path = join(dir, "b.txt");
  assertEquals(await ws.call("write", { path, content: "b" }), ok(`wrote 1 bytes to ${path}`));
  assertEquals(await list(dir), [".b.txt.zz9.rousseau.tmp", ".c.txt.1.tmp", "a.txt", "b.txt"]);
});

Deno.test("an in-process call whose tool ignores its signal still returns after a cancellation", async () => {
  const { createInProcessHost, createWorkspace, defineTool, DEFAULT_LIMITS, Registry } =
    await import("../../mod.ts");
  await using ws = await tmpWorkspace();
  const deaf = defineTool({
    name: "deaf",
    description: "Waits for an answer that never comes and never looks at its signal.",
    inputSchema: { type: "object", properties: {} },
    readOnly: true,
    parseInput: (raw: unknown) => raw,
    execute: () => new Promise<string>(() => {}),
  });
  const host = createInProcessHost(new Registry([deaf]), {
    workspace: await createWorkspace([ws.root]),
    limits: DEFAULT_LIMITS,
    env: {},
  });
  const controller = new AbortController();
  const call = host.call("deaf", {}, controller.signal);
  controller.abort();
  assertEquals(await call, fail("deaf: cancelled"));
});
