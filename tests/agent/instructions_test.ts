/**
 * Project instructions (cli.md "Project instructions"): which files are read, in which order,
 * the 32 KiB cap with its exact note, CLAUDE.md only where there is no AGENTS.md, and the
 * files that are not read (a symlink out of the repository, a FIFO). Real temp trees.
 */

import { join } from "node:path";
import {
  INSTRUCTIONS_MAX_BYTES,
  instructionsPrompt,
  loadInstructions,
  withInstructions,
} from "../../agent/instructions.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";

interface Tree extends AsyncDisposable {
  readonly root: string;
}

async function tree(files: Record<string, string>): Promise<Tree> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-instr-" }));
  for (const [rel, text] of Object.entries(files)) {
    const path = join(root, rel);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    if (rel.endsWith("/")) await Deno.mkdir(path, { recursive: true });
    else await Deno.writeTextFile(path, text);
  }
  return { root, [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }) };
}

Deno.test("loadInstructions() reads the user's file, then repository root down to the workspace", async () => {
  await using t = await tree({
    "config/rousseau/AGENTS.md": "user: answer in English",
    "repo/.git/": "",
    "repo/AGENTS.md": "root: use deno fmt",
    "repo/CLAUDE.md": "root claude: never read",
    "repo/pkg/CLAUDE.md": "pkg: claude fallback",
    "repo/pkg/app/AGENTS.md": "app: run the app tests",
    "repo/pkg/app/sub/AGENTS.md": "below the workspace: not read up front",
    "repo/pkg/sibling/AGENTS.md": "sibling: not read",
  });
  const root = t.root;
  const found = await loadInstructions({
    workspace: join(root, "repo/pkg/app"),
    userDir: join(root, "config/rousseau"),
  });
  assertEquals(found.files.map((f) => [f.path.slice(root.length + 1), f.scope, f.text]), [
    ["config/rousseau/AGENTS.md", "user", "user: answer in English"],
    ["repo/AGENTS.md", "project", "root: use deno fmt"],
    ["repo/pkg/CLAUDE.md", "project", "pkg: claude fallback"],
    ["repo/pkg/app/AGENTS.md", "project", "app: run the app tests"],
  ]);
  assertEquals(found.skipped, []);
});

Deno.test("loadInstructions() without a repository reads only the workspace directory", async () => {
  await using t = await tree({
    "outer/AGENTS.md": "outer: not read (no .git anywhere up)",
    "outer/ws/CLAUDE.md": "ws: read",
  });
  const root = t.root;
  const found = await loadInstructions({ workspace: join(root, "outer/ws") });
  assertEquals(found.files.map((f) => f.text), ["ws: read"]);
});

Deno.test("loadInstructions() finds a worktree's .git file as the repository root", async () => {
  await using t = await tree({
    "wt/.git": "gitdir: /elsewhere/.git/worktrees/wt\n",
    "wt/AGENTS.md": "worktree root",
    "wt/src/AGENTS.md": "src",
  });
  const root = t.root;
  const found = await loadInstructions({ workspace: join(root, "wt/src") });
  assertEquals(found.files.map((f) => f.text), ["worktree root", "src"]);
});

Deno.test("loadInstructions() cuts a file over 32 KiB with the spec's note", async () => {
  const big = "x".repeat(100) + "\n";
  const text = big.repeat(Math.ceil((INSTRUCTIONS_MAX_BYTES * 2) / big.length));
  await using t = await tree({ "ws/AGENTS.md": text });
  const root = t.root;
  const path = join(root, "ws/AGENTS.md");
  const [file] = (await loadInstructions({ workspace: join(root, "ws") })).files;
  assertEquals(file!.bytes, text.length);
  const note = `[cut: ${path} is ${text.length} bytes]`;
  assert(file!.text.endsWith(`\n${note}`), file!.text.slice(-200));
  const kept = file!.text.slice(0, -note.length);
  assert(kept.length <= INSTRUCTIONS_MAX_BYTES, `kept ${kept.length} bytes`);
  assert(kept.length > INSTRUCTIONS_MAX_BYTES - big.length - 1, `kept only ${kept.length} bytes`);
  assertEquals(kept, text.slice(0, kept.length), "the kept part is the file's start, whole lines");
});

Deno.test("loadInstructions() never reads a file that resolves outside the repository, nor a FIFO", async () => {
  await using t = await tree({
    "secret.txt": "TOKEN=do-not-send",
    "repo/.git/": "",
    "repo/ws/": "",
    "repo/ws/CLAUDE.md": "not read: AGENTS.md exists here",
  });
  const root = t.root;
  await Deno.symlink(join(root, "secret.txt"), join(root, "repo/AGENTS.md"));
  const fifo = join(root, "repo/ws/AGENTS.md");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert(made.success, "mkfifo failed");
  const found = await loadInstructions({ workspace: join(root, "repo/ws") });
  assertEquals(found.files, []);
  assertEquals(found.skipped.map((s) => [s.path, s.reason]), [
    [
      join(root, "repo/AGENTS.md"),
      `it resolves to ${join(root, "secret.txt")}, outside the repository ${join(root, "repo")}`,
    ],
    [fifo, "not a regular file"],
  ]);
});

Deno.test("withInstructions() appends the files after the agent's own text, latest last", () => {
  const files = [
    { path: "/home/u/.config/rousseau/AGENTS.md", scope: "user" as const, bytes: 3, text: "one" },
    { path: "/repo/AGENTS.md", scope: "project" as const, bytes: 3, text: "two\n" },
  ];
  const system = withInstructions("You are rousseau.", files);
  assert(system.startsWith("You are rousseau.\n\n# Project instructions\n"), system);
  assertStringIncludes(
    system,
    "## /home/u/.config/rousseau/AGENTS.md (the user's instructions)\n\none\n\n## /repo/AGENTS.md\n\ntwo",
  );
  assert(system.indexOf("one") < system.indexOf("two"));
  assertEquals(withInstructions("base", []), "base");
  assertEquals(instructionsPrompt([]), "");
});
