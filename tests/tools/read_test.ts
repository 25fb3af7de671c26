import { dirname, join } from "node:path";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkspace,
  DEFAULT_LIMITS,
  DEFAULT_READ_MAX_BYTES,
  Registry,
  type ToolResult,
} from "../../mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { fail, ok } from "../_helpers/results.ts";
import { callsUnderPermissions, runHostScript } from "../_helpers/host_script.ts";

/** `size` bytes of `fill` with a NUL at `offset`. */
function nulAt(offset: number, size: number, fill = 0x61): Uint8Array {
  const bytes = new Uint8Array(size).fill(fill);
  bytes[offset] = 0;
  return bytes;
}

/** The truncation note read appends. */
function note(shown: number, total: number, last: number, lines: number, first = 1): string {
  return `[truncated: showed ${shown} of ${total} bytes; lines ${first}-${last} of ${lines}; ` +
    `call read with offset ${last + 1} to continue]`;
}

/**
 * Runs read in a subprocess whose Deno permissions allow reading only `allowed`, with the
 * whole temp base as the workspace; returns the result of reading each of `paths`.
 */
async function readUnderPermissions(
  base: string,
  allowed: string,
  paths: string[],
): Promise<ToolResult[]> {
  return await callsUnderPermissions(base, "read", {
    roots: [base],
    calls: paths.map((path) => ({ path })),
    flags: (script) => [`--allow-read=${allowed},${script}`],
  });
}

// ---- Common rules ---------------------------------------------------------------------------

Deno.test("read() returns a file's contents exactly", async () => {
  const text = "line one\r\n\ttabbed  \n\nünïcødé 😀\nno newline at end";
  await using ws = await tmpWorkspace({ files: { "a.txt": text } });
  assertEquals(await ws.call("read", { path: ws.path("a.txt") }), ok(text));
});

Deno.test("read() returns an empty file as an empty string", async () => {
  await using ws = await tmpWorkspace({ files: { "empty.txt": "" } });
  assertEquals(await ws.call("read", { path: ws.path("empty.txt") }), ok(""));
});

Deno.test("read() keeps a byte order mark", async () => {
  await using ws = await tmpWorkspace({
    files: { "bom.txt": new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]) },
  });
  assertEquals(await ws.call("read", { path: ws.path("bom.txt") }), ok("\uFEFFhi"));
});

Deno.test("read() decodes invalid UTF-8 with the replacement character", async (t) => {
  const rows: [string, number[], string][] = [
    ["lone 0xff", [0x61, 0xff, 0x62], "a\uFFFDb"],
    [
      "0xff 0xfe and a bad continuation",
      [0x68, 0x69, 0xff, 0xfe, 0x0a, 0xc3, 0x28],
      "hi\uFFFD\uFFFD\n\uFFFD(",
    ],
    ["truncated sequence at the end", [0x6f, 0x6b, 0xe2, 0x82], "ok\uFFFD"],
    ["encoded surrogate", [0xed, 0xa0, 0x80], "\uFFFD\uFFFD\uFFFD"],
  ];
  for (const [name, bytes, expected] of rows) {
    await t.step(name, async () => {
      await using ws = await tmpWorkspace({ files: { "bad.txt": new Uint8Array(bytes) } });
      assertEquals(await ws.call("read", { path: ws.path("bad.txt") }), ok(expected));
    });
  }
});

Deno.test("read() ignores unknown input keys", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hi" } });
  assertEquals(
    await ws.call("read", { path: ws.path("a.txt"), start: 10, lines: "x", extra: null }),
    ok("hi"),
  );
});

Deno.test("read() fails with parse input when the body is not an object", async (t) => {
  const rows: [string, unknown, string][] = [
    ["null", null, "read: parse input: expected a JSON object, got null"],
    ["array", [{ path: "/x" }], "read: parse input: expected a JSON object, got an array"],
    ["string", "/etc/passwd", "read: parse input: expected a JSON object, got a string"],
    ["number", 42, "read: parse input: expected a JSON object, got a number"],
    ["boolean", true, "read: parse input: expected a JSON object, got a boolean"],
    ["undefined", undefined, "read: parse input: expected a JSON object, got a undefined"],
  ];
  await using ws = await tmpWorkspace();
  for (const [name, input, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("read", input), fail(expected));
    });
  }
});

Deno.test("read() fails with parse input naming a field of the wrong type", async (t) => {
  const rows: [string, unknown, string][] = [
    ["number", 7, 'read: parse input: field "path" must be a string, got a number'],
    ["boolean", false, 'read: parse input: field "path" must be a string, got a boolean'],
    ["array", ["/a"], 'read: parse input: field "path" must be a string, got an array'],
    ["object", { p: "/a" }, 'read: parse input: field "path" must be a string, got a object'],
  ];
  await using ws = await tmpWorkspace();
  for (const [name, path, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("read", { path }), fail(expected));
    });
  }
});

Deno.test("read() requires path", async (t) => {
  await using ws = await tmpWorkspace();
  for (const [name, input] of [["absent", {}], ["empty", { path: "" }]] as const) {
    await t.step(name, async () => {
      assertEquals(await ws.call("read", input), fail("read: path is required"));
    });
  }
});

Deno.test("read() refuses a relative path, JSON-quoting it and naming the absolute path meant", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hi" } });
  const use = (path: string) => `; use ${JSON.stringify(path)}`;
  const rows: [string, string][] = [
    ["a.txt", `read: path must be absolute, got "a.txt"${use(ws.path("a.txt"))}`],
    ["./a.txt", `read: path must be absolute, got "./a.txt"${use(ws.path("a.txt"))}`],
    [
      "../ws/a.txt",
      `read: path must be absolute, got "../ws/a.txt"${use(join(dirname(ws.root), "ws/a.txt"))}`,
    ],
    // A home the tools do not know: no suggestion.
    ["~/a.txt", 'read: path must be absolute, got "~/a.txt"'],
    [
      'say "hi"\\now',
      `read: path must be absolute, got "say \\"hi\\"\\\\now"${use(ws.path('say "hi"\\now'))}`,
    ],
    [
      "tab\there\nnewline",
      `read: path must be absolute, got "tab\\there\\nnewline"${
        use(ws.path("tab\there\nnewline"))
      }`,
    ],
    [
      " /leading-space",
      `read: path must be absolute, got " /leading-space"${use("/leading-space")}`,
    ],
  ];
  for (const [path, expected] of rows) {
    await t.step(JSON.stringify(path), async () => {
      assertEquals(await ws.call("read", { path }), fail(expected));
    });
  }
});

Deno.test("read() reports a missing file like Go's os package", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("missing.txt");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: open ${path}: no such file or directory`),
  );
});

Deno.test("read() reports a missing file under a missing directory", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("no", "such", "dir", "f.txt");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: open ${path}: no such file or directory`),
  );
});

Deno.test("read() reports a dangling link as no such file or directory", async (t) => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(ws.path("gone.txt"), ws.path("abs-link"));
  await Deno.symlink("gone.txt", ws.path("rel-link"));
  for (const name of ["abs-link", "rel-link"]) {
    await t.step(name, async () => {
      const path = ws.path(name);
      assertEquals(
        await ws.call("read", { path }),
        fail(`read: open ${path}: no such file or directory`),
      );
    });
  }
});

Deno.test("read() reports a directory as is a directory", async (t) => {
  await using ws = await tmpWorkspace({ files: { "dir/inner.txt": "x" } });
  await Deno.symlink(ws.path("dir"), ws.path("dir-link"));
  for (const path of [ws.path("dir"), ws.path("dir-link"), ws.root, ws.path("dir") + "/"]) {
    await t.step(path, async () => {
      assertEquals(await ws.call("read", { path }), fail(`read: read ${path}: is a directory`));
    });
  }
});

Deno.test("read() reports a file used as a directory as not a directory", async () => {
  await using ws = await tmpWorkspace({ files: { "f.txt": "x" } });
  const path = ws.path("f.txt", "child.txt");
  assertEquals(await ws.call("read", { path }), fail(`read: open ${path}: not a directory`));
});

Deno.test("read() reports a symlink loop as too many levels of symbolic links", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(ws.path("loop-b"), ws.path("loop-a"));
  await Deno.symlink(ws.path("loop-a"), ws.path("loop-b"));
  const path = ws.path("loop-a");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: open ${path}: too many levels of symbolic links`),
  );
});

Deno.test("read() reports an unreadable file as permission denied", {
  ignore: Deno.uid() === 0,
}, async () => {
  await using ws = await tmpWorkspace({ files: { "secret.txt": "x" } });
  const path = ws.path("secret.txt");
  await Deno.chmod(path, 0o000);
  assertEquals(await ws.call("read", { path }), fail(`read: open ${path}: permission denied`));
});

Deno.test("read() maps a refusal by Deno's permissions to permission denied (outside the runtime permissions)", async () => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "inside" },
    outside: { "secret.txt": "secret" },
  });
  const base = dirname(ws.root);
  const secret = join(ws.outside, "secret.txt");
  const results = await readUnderPermissions(base, ws.root, [ws.path("a.txt"), secret]);
  assertEquals(results, [
    ok("inside"),
    fail(`read: open ${secret}: permission denied (outside the runtime permissions)`),
  ]);
});

Deno.test("read() fails with read: cancelled when the signal is already aborted", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hi" } });
  const controller = new AbortController();
  controller.abort();
  assertEquals(
    await ws.call("read", { path: ws.path("a.txt") }, { signal: controller.signal }),
    fail("read: cancelled"),
  );
});

Deno.test("read() fails with read: cancelled when aborted while in flight", async () => {
  await using ws = await tmpWorkspace({ files: { "big.txt": "x\n".repeat(100_000) } });
  const controller = new AbortController();
  const call = ws.call("read", { path: ws.path("big.txt") }, { signal: controller.signal });
  controller.abort(new Error("user pressed ctrl-c"));
  assertEquals(await call, fail("read: cancelled"));
});

// ---- Workspace confinement ------------------------------------------------------------------

Deno.test("read() refuses an absolute path outside the workspace", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  const path = join(ws.outside, "secret.txt");
  assertEquals(await ws.call("read", { path }), fail(`read: ${path} is outside the workspace`));
});

Deno.test("read() refuses a missing path outside the workspace as outside", async () => {
  await using ws = await tmpWorkspace();
  const path = join(ws.outside, "nothing-here.txt");
  assertEquals(await ws.call("read", { path }), fail(`read: ${path} is outside the workspace`));
});

Deno.test("read() refuses .. escapes out of the workspace", async (t) => {
  await using ws = await tmpWorkspace({
    files: { "sub/a.txt": "inside" },
    outside: { "secret.txt": "secret" },
  });
  for (
    const path of [
      `${ws.root}/../outside/secret.txt`,
      `${ws.root}/sub/../../outside/secret.txt`,
      `${ws.root}/missing/../../outside/secret.txt`,
      `${ws.root}/..`,
    ]
  ) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("read", { path }),
        fail(`read: ${path} is outside the workspace`),
      );
    });
  }
});

Deno.test("read() accepts a .. path that stays inside the workspace, echoing it", async () => {
  await using ws = await tmpWorkspace({ files: { "sub/a.txt": "inside", "b.txt": "bee" } });
  assertEquals(await ws.call("read", { path: `${ws.root}/sub/../b.txt` }), ok("bee"));
  const missing = `${ws.root}/sub/../nope.txt`;
  assertEquals(
    await ws.call("read", { path: missing }),
    fail(`read: open ${missing}: no such file or directory`),
  );
});

Deno.test("read() refuses a file symlink that points out of the workspace", async (t) => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  const secret = join(ws.outside, "secret.txt");
  await Deno.symlink(secret, ws.path("abs-link"));
  await Deno.symlink("../outside/secret.txt", ws.path("rel-link"));
  // A chain: inside link -> inside link -> outside file.
  await Deno.symlink(ws.path("abs-link"), ws.path("chain-link"));
  for (const name of ["abs-link", "rel-link", "chain-link"]) {
    await t.step(name, async () => {
      const path = ws.path(name);
      assertEquals(
        await ws.call("read", { path }),
        fail(`read: ${path} is outside the workspace`),
      );
    });
  }
});

Deno.test("read() refuses a dangling symlink that points out of the workspace", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(join(ws.outside, "not-yet.txt"), ws.path("link"));
  const path = ws.path("link");
  assertEquals(await ws.call("read", { path }), fail(`read: ${path} is outside the workspace`));
});

Deno.test("read() refuses a file under a directory symlink that points out of the workspace", async (t) => {
  await using ws = await tmpWorkspace({
    outside: { "secret.txt": "secret", "deep/inner.txt": "inner secret" },
  });
  await Deno.symlink(ws.outside, ws.path("out-dir"));
  for (
    const path of [
      ws.path("out-dir", "secret.txt"),
      ws.path("out-dir", "deep", "inner.txt"),
      ws.path("out-dir", "missing.txt"),
      ws.path("out-dir"),
    ]
  ) {
    await t.step(path, async () => {
      assertEquals(
        await ws.call("read", { path }),
        fail(`read: ${path} is outside the workspace`),
      );
    });
  }
});

Deno.test("read() resolves .. after a symlink the way the kernel does", async () => {
  // ws/link -> outside/sub, so ws/link/../secret.txt is outside/secret.txt, not ws/secret.txt.
  await using ws = await tmpWorkspace({
    files: { "secret.txt": "inside decoy" },
    outside: { "sub/x.txt": "x", "secret.txt": "secret" },
  });
  await Deno.symlink(join(ws.outside, "sub"), ws.path("link"));
  const path = `${ws.root}/link/../secret.txt`;
  assertEquals(await ws.call("read", { path }), fail(`read: ${path} is outside the workspace`));
});

Deno.test("read() refuses a sibling directory whose name extends the root's", async () => {
  await using ws = await tmpWorkspace();
  const sibling = `${ws.root}-evil`;
  await Deno.mkdir(sibling);
  await Deno.writeTextFile(join(sibling, "secret.txt"), "secret");
  const direct = join(sibling, "secret.txt");
  assertEquals(
    await ws.call("read", { path: direct }),
    fail(`read: ${direct} is outside the workspace`),
  );
  await Deno.symlink(direct, ws.path("link"));
  assertEquals(
    await ws.call("read", { path: ws.path("link") }),
    fail(`read: ${ws.path("link")} is outside the workspace`),
  );
});

Deno.test("read() follows a symlink whose target is inside the workspace", async (t) => {
  await using ws = await tmpWorkspace({ files: { "real/a.txt": "target" } });
  await Deno.symlink(ws.path("real", "a.txt"), ws.path("file-link"));
  await Deno.symlink("real", ws.path("dir-link"));
  for (const path of [ws.path("file-link"), ws.path("dir-link", "a.txt")]) {
    await t.step(path, async () => {
      assertEquals(await ws.call("read", { path }), ok("target"));
    });
  }
});

Deno.test("read() accepts every workspace root and refuses what is outside all of them", async () => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "first root" },
    outside: { "b.txt": "second root" },
  });
  const third = join(dirname(ws.root), "third");
  await Deno.mkdir(third);
  await Deno.writeTextFile(join(third, "c.txt"), "not a root");
  const host = createInProcessHost(new Registry(createBuiltinTools()), {
    workspace: await createWorkspace([ws.root, ws.outside]),
    limits: DEFAULT_LIMITS,
    env: {},
  });
  const signal = new AbortController().signal;
  assertEquals(await host.call("read", { path: ws.path("a.txt") }, signal), ok("first root"));
  assertEquals(
    await host.call("read", { path: join(ws.outside, "b.txt") }, signal),
    ok("second root"),
  );
  const c = join(third, "c.txt");
  assertEquals(
    await host.call("read", { path: c }, signal),
    fail(`read: ${c} is outside the workspace`),
  );
});

Deno.test("read() never returns an outside file swapped in between check and open", async () => {
  const inside = "inside content\n";
  const secret = "TOP SECRET outside content\n";
  await using ws = await tmpWorkspace({
    files: { "target.txt": inside },
    outside: { "secret.txt": secret },
  });
  const target = ws.path("target.txt");
  const secretPath = join(ws.outside, "secret.txt");
  let running = true;
  // Atomically flip target.txt between a regular file and a link to the outside secret.
  async function flip(): Promise<number> {
    let flips = 0;
    while (running) {
      const link = ws.path(".flip-link");
      await Deno.symlink(secretPath, link);
      await Deno.rename(link, target);
      const file = ws.path(".flip-file");
      await Deno.writeTextFile(file, inside);
      await Deno.rename(file, target);
      flips += 2;
    }
    return flips;
  }
  const seen = { inside: 0, refused: 0 };
  async function readMany(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const result = await ws.call("read", { path: target });
      assert(!result.output.includes("SECRET"), `leaked: ${result.output}`);
      if (result.isError) {
        assert(result.output.startsWith("read: "), result.output);
        seen.refused++;
      } else {
        assertEquals(result.output, inside);
        seen.inside++;
      }
    }
  }
  const flipping = flip();
  try {
    await Promise.all([readMany(100), readMany(100), readMany(100), readMany(100)]);
  } finally {
    running = false;
  }
  assert((await flipping) > 0);
  assertEquals(seen.inside + seen.refused, 400);
  assertEquals(await Deno.readTextFile(secretPath), secret);
});

// ---- Binary sniff ---------------------------------------------------------------------------

Deno.test("read() refuses a NUL byte at offset 0", async () => {
  await using ws = await tmpWorkspace({ files: { "bin": nulAt(0, 100) } });
  const path = ws.path("bin");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: ${path} does not look like UTF-8 text`),
  );
});

Deno.test("read() refuses a NUL byte at offset 511", async () => {
  await using ws = await tmpWorkspace({ files: { "bin": nulAt(511, 2000) } });
  const path = ws.path("bin");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: ${path} does not look like UTF-8 text`),
  );
});

Deno.test("read() refuses a file of 512 bytes whose last byte is NUL", async () => {
  await using ws = await tmpWorkspace({ files: { "bin": nulAt(511, 512) } });
  const path = ws.path("bin");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: ${path} does not look like UTF-8 text`),
  );
});

Deno.test("read() accepts a NUL byte at offset 512 and returns it", async () => {
  const bytes = nulAt(512, 600);
  await using ws = await tmpWorkspace({ files: { "late-nul": bytes } });
  assertEquals(
    await ws.call("read", { path: ws.path("late-nul") }),
    ok("a".repeat(512) + "\0" + "a".repeat(87)),
  );
});

Deno.test("read() names the path unquoted in the binary refusal", async () => {
  await using ws = await tmpWorkspace({ files: { 'odd "name" here.bin': nulAt(3, 10) } });
  const path = ws.path('odd "name" here.bin');
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: ${path} does not look like UTF-8 text`),
  );
});

Deno.test("read() sniffs the first 512 bytes even when the read cap is smaller", async (t) => {
  await using ws = await tmpWorkspace({ files: { "bin": nulAt(300, 1000) } });
  const path = ws.path("bin");
  for (const cap of [1, 16, 299, 300, 511, 512]) {
    await t.step(`readMaxBytes ${cap}`, async () => {
      assertEquals(
        await ws.call("read", { path }, { limits: { readMaxBytes: cap } }),
        fail(`read: ${path} does not look like UTF-8 text`),
      );
    });
  }
});

// ---- Output cap -----------------------------------------------------------------------------

Deno.test("read() uses a default cap of 262144 bytes", () => {
  assertEquals(DEFAULT_READ_MAX_BYTES, 262144);
  assertEquals(DEFAULT_LIMITS.readMaxBytes, 262144);
});

Deno.test("read() returns a file of exactly the default cap verbatim", async () => {
  // 2621 lines of 100 bytes, then 44 bytes without a line break: 262144 bytes.
  const text = ("x".repeat(99) + "\n").repeat(2621) + "y".repeat(44);
  assertEquals(new TextEncoder().encode(text).length, 262144);
  await using ws = await tmpWorkspace({ files: { "cap.txt": text } });
  assertEquals(await ws.call("read", { path: ws.path("cap.txt") }), ok(text));
});

Deno.test("read() truncates a file one byte over the default cap at the last line break", async () => {
  const lines = ("x".repeat(99) + "\n").repeat(2621);
  const text = lines + "y".repeat(45);
  assertEquals(text.length, 262145);
  await using ws = await tmpWorkspace({ files: { "over.txt": text } });
  assertEquals(
    await ws.call("read", { path: ws.path("over.txt") }),
    ok(lines + note(262100, 262145, 2621, 2622)),
  );
});

Deno.test("read() truncates a much larger file and reports its total size", async () => {
  const line = "0123456789abcdef\n";
  const text = line.repeat(100_000);
  await using ws = await tmpWorkspace({ files: { "huge.txt": text } });
  const cut = Math.floor(262144 / line.length) * line.length;
  assertEquals(
    await ws.call("read", { path: ws.path("huge.txt") }),
    ok(text.slice(0, cut) + note(cut, text.length, cut / line.length, 100_000)),
  );
});

Deno.test("read() honours a small readMaxBytes at the exact boundary", async (t) => {
  const rows: [string, string, number, string][] = [
    ["exactly the cap", "aaaa\nbbbb\n", 10, "aaaa\nbbbb\n"],
    ["under the cap", "aaaa\nbb", 10, "aaaa\nbb"],
    ["cap + 1, break at the cap", "aaaa\nbbbb\nc", 10, "aaaa\nbbbb\n" + note(10, 11, 2, 3)],
    ["cap + 1, earlier break", "aaaa\nbbbbbb", 10, "aaaa\n" + note(5, 11, 1, 2)],
    ["break just past the cap is not used", "abcd\nefgh\n", 9, "abcd\n" + note(5, 10, 1, 2)],
    ["break at offset 0", "\nabcdefghijk", 5, "\n" + note(1, 12, 1, 2)],
    ["CRLF lines", "ab\r\ncd\r\nef\r\n", 9, "ab\r\ncd\r\n" + note(8, 12, 2, 3)],
    [
      "file larger than the sniffed prefix",
      "aaaa\n".repeat(200),
      10,
      "aaaa\naaaa\n" + note(10, 1000, 2, 200),
    ],
  ];
  for (const [name, text, cap, expected] of rows) {
    await t.step(name, async () => {
      await using ws = await tmpWorkspace({ files: { "f.txt": text } });
      assertEquals(
        await ws.call("read", { path: ws.path("f.txt") }, { limits: { readMaxBytes: cap } }),
        ok(expected),
      );
    });
  }
});

Deno.test("read() cuts a file without a line break at the cap, on a character boundary", async (t) => {
  const rows: [string, string, number, string][] = [
    ["ASCII", "abcdefghijkl", 5, "abcde\n" + note(5, 12, 1, 1)],
    ["two-byte characters", "ééééé", 5, "éé\n" + note(4, 10, 1, 1)],
    ["four-byte characters", "😀😀😀", 7, "😀\n" + note(4, 12, 1, 1)],
    ["ends exactly on a boundary", "ééééé", 6, "ééé\n" + note(6, 10, 1, 1)],
  ];
  for (const [name, text, cap, expected] of rows) {
    await t.step(name, async () => {
      await using ws = await tmpWorkspace({ files: { "f.txt": text } });
      const result = await ws.call("read", { path: ws.path("f.txt") }, {
        limits: { readMaxBytes: cap },
      });
      assertEquals(result, ok(expected));
      assert(!result.output.includes("\uFFFD"));
    });
  }
});

Deno.test("read() counts the cap in bytes, not characters", async () => {
  // "é\n" is 3 bytes; 4 of them are 12 bytes.
  await using ws = await tmpWorkspace({ files: { "f.txt": "é\né\né\né\n" } });
  const path = ws.path("f.txt");
  assertEquals(
    await ws.call("read", { path }, { limits: { readMaxBytes: 12 } }),
    ok("é\né\né\né\n"),
  );
  assertEquals(
    await ws.call("read", { path }, { limits: { readMaxBytes: 11 } }),
    ok("é\né\né\n" + note(9, 12, 3, 4)),
  );
});

Deno.test("read() refuses a FIFO in the workspace instead of blocking on it", async () => {
  await using ws = await tmpWorkspace();
  const fifo = ws.path("pipe");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assertEquals(made.code, 0);
  assertEquals(await ws.call("read", { path: fifo }), {
    output: `read: read ${fifo}: not a regular file`,
    isError: true,
  });
  assertEquals(await ws.call("edit", { path: fifo, old_string: "a", new_string: "b" }), {
    output: `edit: read: read ${fifo}: not a regular file`,
    isError: true,
  });
});

// ---- Trailing slashes (issue 15, item 10) ----------------------------------------------------

Deno.test("read(), write() and edit() of `file/` fail as the OS does and touch nothing", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "text", "d/keep": "" } });
  await Deno.symlink(ws.path("a.txt"), ws.path("link"));
  for (const name of ["a.txt/", "link/"]) {
    const path = ws.path(name) + (ws.path(name).endsWith("/") ? "" : "/");
    assertEquals(await ws.call("read", { path }), fail(`read: open ${path}: not a directory`));
    assertEquals(
      await ws.call("write", { path, content: "x" }),
      fail(`write: open ${path}: not a directory`),
    );
    assertEquals(
      await ws.call("edit", { path, old_string: "text", new_string: "x" }),
      fail(`edit: read: open ${path}: not a directory`),
    );
  }
  const dir = ws.path("d") + "/";
  assertEquals(await ws.call("read", { path: dir }), fail(`read: read ${dir}: is a directory`));
  const fresh = ws.path("new") + "/";
  assertEquals(
    await ws.call("write", { path: fresh, content: "x" }),
    fail(`write: open ${fresh}: is a directory`),
  );
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "text");
  assertEquals((await Array.fromAsync(Deno.readDir(ws.root))).map((e) => e.name).sort(), [
    "a.txt",
    "d",
    "link",
  ]);
});

// ---- Paging: offset and limit (issue 17) ------------------------------------------------------

Deno.test("read() with offset and limit returns exactly those lines, verbatim", async (t) => {
  await using ws = await tmpWorkspace({ files: { "f.txt": "l1\nl2\r\nl3\nl4\nl5" } });
  const path = ws.path("f.txt");
  const rows: [string, Record<string, number>, string][] = [
    ["offset and limit", { offset: 2, limit: 2 }, "l2\r\nl3\n"],
    ["offset to the end", { offset: 4 }, "l4\nl5"],
    ["limit from the start", { limit: 1 }, "l1\n"],
    ["limit past the end", { offset: 5, limit: 10 }, "l5"],
    ["offset 1, the whole file", { offset: 1 }, "l1\nl2\r\nl3\nl4\nl5"],
  ];
  for (const [name, page, expected] of rows) {
    await t.step(name, async () => {
      assertEquals(await ws.call("read", { path, ...page }), ok(expected));
    });
  }
});

Deno.test("read() with an offset past the end names the file's line count", async () => {
  await using ws = await tmpWorkspace({
    files: { "f.txt": "a\nb\n", "g.txt": "a\nb", "e.txt": "" },
  });
  for (
    const [name, offset, lines] of [["f.txt", 3, 2], ["g.txt", 3, 2], ["e.txt", 1, 0]] as const
  ) {
    const path = ws.path(name);
    assertEquals(
      await ws.call("read", { path, offset }),
      fail(`read: offset ${offset} is past the end of ${path} (${lines} lines)`),
    );
  }
});

Deno.test("read() refuses an offset or limit that is not a whole number of at least 1", async (t) => {
  await using ws = await tmpWorkspace({ files: { "f.txt": "a\n" } });
  const rows: [string, unknown, string][] = [
    ["offset 0", { offset: 0 }, 'field "offset" must be a whole number of at least 1, got 0'],
    ["negative limit", { limit: -2 }, 'field "limit" must be a whole number of at least 1, got -2'],
    ["fraction", { offset: 1.5 }, 'field "offset" must be a whole number of at least 1, got 1.5'],
    ["string", { limit: "3" }, 'field "limit" must be a number, got a string'],
  ];
  for (const [name, page, detail] of rows) {
    await t.step(name, async () => {
      assertEquals(
        await ws.call("read", { path: ws.path("f.txt"), ...(page as object) }),
        fail(`read: parse input: ${detail}`),
      );
    });
  }
});

Deno.test("read() pages stay under the byte cap and the note names the next offset", async () => {
  await using ws = await tmpWorkspace({ files: { "f.txt": "aaaa\n".repeat(10) } });
  const path = ws.path("f.txt");
  const limits = { readMaxBytes: 10 };
  assertEquals(
    await ws.call("read", { path, offset: 3 }, { limits }),
    ok("aaaa\naaaa\n" + note(10, 50, 4, 10, 3)),
  );
  // Following the note's offset reaches the rest, page by page, and the last page has no note.
  assertEquals(
    await ws.call("read", { path, offset: 5, limit: 2 }, { limits }),
    ok("aaaa\naaaa\n"),
  );
  assertEquals(await ws.call("read", { path, offset: 9 }, { limits }), ok("aaaa\naaaa\n"));
});

Deno.test("read() pages through a 1.5 GB sparse file by streaming it, with bounded memory", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("huge.txt");
  const size = 1_500_000_000;
  const head = Array.from({ length: 100 }, (_, i) => `line ${i + 1}\n`).join("");
  {
    using file = await Deno.open(path, { write: true, create: true });
    await file.write(new TextEncoder().encode(head));
    await file.truncate(size - 12);
    await file.seek(size - 12, Deno.SeekMode.Start);
    await file.write(new TextEncoder().encode("tail1\ntail2\n"));
  }
  // Line 101 is the 1.5 GB run of zeros ending in "tail1"; line 102 is "tail2".
  const script = join(ws.outside, "read_huge.ts");
  const { code, stdout, stderr } = await runHostScript(
    script,
    ws.root,
    `const signal = new AbortController().signal;
const path = ${JSON.stringify(path)};
const results = [
  await host.call("read", { path, offset: 102 }, signal),
  await host.call("read", { path, offset: 99, limit: 2 }, signal),
  await host.call("read", { path }, signal),
];
const hwm = /^VmHWM:\\s*(\\d+) kB/m.exec(Deno.readTextFileSync("/proc/self/status"))[1];
console.log(JSON.stringify({ results, peakKiB: Number(hwm) }));
`,
    "{ ...DEFAULT_LIMITS, readMaxBytes: 4096 }",
  );
  const decoder = new TextDecoder();
  assertEquals(code, 0, decoder.decode(stderr));
  const { results, peakKiB } = JSON.parse(decoder.decode(stdout));
  assertEquals(results, [
    ok("tail2\n"),
    ok("line 99\nline 100\n"),
    ok(head + note(head.length, size, 100, 102)),
  ]);
  assert(peakKiB < 400 * 1024, `peak RSS ${peakKiB} KiB`);
});

Deno.test("read() of a huge file stops at a cancellation", async () => {
  await using ws = await tmpWorkspace();
  const path = ws.path("huge.txt");
  await Deno.writeTextFile(path, "a\n".repeat(300));
  await Deno.truncate(path, 1_000_000_000);
  const controller = new AbortController();
  // Fires at the read's first yield to the event loop, long before a gigabyte is scanned.
  setTimeout(() => controller.abort(), 0);
  assertEquals(
    await ws.call("read", { path, offset: 3 }, { signal: controller.signal }),
    fail("read: cancelled"),
  );
});
