/**
 * `rousseau undo` end to end: real `run`s against the loopback fake Anthropic server change
 * real workspaces (with and without git) through write, edit and bash; `undo` must put the
 * tree back byte for byte and mode for mode, refuse over later edits, and survive a SIGKILL.
 *
 * The scenarios follow what users of other agents reported losing: Claude Code's checkpoints
 * do not cover bash (https://docs.anthropic.com/en/docs/claude-code/checkpointing, "Bash
 * command changes not tracked"); opencode's /undo and gemini-cli's /restore snapshot the
 * tree with git (sst/opencode packages/opencode/src/snapshot/index.ts,
 * google-gemini/gemini-cli docs/cli/checkpointing.md).
 */

import { dirname, join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli, spawnCli, TEST_HOME } from "../../_helpers/cli.ts";
import { type FakeServer, startFakeAnthropic, type Step } from "../../_helpers/fake_providers.ts";
import { waitForProcess } from "../../_helpers/processes.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { snapshotTree } from "../../_helpers/tree_snapshot.ts";
import { until } from "../../_helpers/until.ts";

/** Every path under `root` (without `.git`): kind, mode and content. */
function tree(root: string): Promise<Record<string, string>> {
  return snapshotTree(root, { skip: [".git"], content: "json" });
}

function env(server: FakeServer): Record<string, string> {
  return { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" };
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

const FILES = {
  "keep.txt": "untouched\n",
  "over.txt": "old contents\n",
  "src/edit.txt": "alpha = 1\nbeta = 2\n",
  "secret.txt": "private\n",
  "sed.txt": "a cat sat\n",
};

/** A workspace with FILES, secret.txt at 0600, optionally a git repository with them committed. */
async function workspace(withGit: boolean) {
  const ws = await tmpWorkspace({ files: FILES });
  await Deno.chmod(ws.path("secret.txt"), 0o600);
  await Deno.chmod(ws.path("sed.txt"), 0o640);
  if (withGit) {
    await git(ws.root, "init", "-q");
    await git(ws.root, "add", "-A");
    await git(ws.root, "commit", "-q", "-m", "start");
  }
  return ws;
}

/** The done-when turn: write new, overwrite, edit; bash rm of a 0600 file, sed -i, mkdir. */
function turnSteps(root: string): Step[] {
  return [
    { tools: [{ name: "write", input: { path: join(root, "new.txt"), content: "brand new\n" } }] },
    { tools: [{ name: "write", input: { path: join(root, "over.txt"), content: "replaced\n" } }] },
    {
      tools: [{
        name: "edit",
        input: {
          path: join(root, "src/edit.txt"),
          "old_string": "beta = 2",
          "new_string": "beta = 3",
        },
      }],
    },
    {
      tools: [{
        name: "bash",
        input: {
          command: "rm secret.txt && sed -i 's/cat/dog/' sed.txt && mkdir -p gen/deep && " +
            "echo made > gen/deep/out.txt",
        },
      }],
    },
    { text: "Done." },
  ];
}

const ALLOW = ["--allow", "write", "--allow", "edit", "--allow", "bash"];

async function runTurn(
  root: string,
  steps: Step[],
  extraEnv: Record<string, string> = {},
): Promise<string> {
  await using server = startFakeAnthropic(steps);
  const out = await runCli(
    ["--workspace", root, ...ALLOW, "run", "--output", "json", "change things"],
    { env: { ...env(server), ...extraEnv } },
  );
  assertEquals(out.code, 0, out.stderr);
  return JSON.parse(out.stdout).session_id;
}

for (const withGit of [false, true]) {
  const where = withGit ? "in a git repository" : "outside git";

  Deno.test(`undo puts the tree back byte for byte and mode for mode (${where})`, async () => {
    await using ws = await workspace(withGit);
    const before = await tree(ws.root);
    const session = await runTurn(ws.root, turnSteps(ws.root));
    const changed = await tree(ws.root);
    assertEquals(changed["new.txt"], 'file 644 "brand new\\n"');
    assertEquals(changed["sed.txt"], 'file 640 "a dog sat\\n"');
    assertEquals(changed["secret.txt"], undefined);
    assertEquals(changed["gen/deep/out.txt"], 'file 644 "made\\n"');

    const listed = await runCli(["undo", session, "--list"]);
    assertEquals(listed.code, 0, listed.stderr);
    for (
      const line of [
        `  created  ${ws.path("new.txt")}`,
        `  modified ${ws.path("over.txt")}`,
        `  modified ${ws.path("src/edit.txt")}`,
        `  deleted  ${ws.path("secret.txt")}`,
        `  modified ${ws.path("sed.txt")}`,
        `  created  ${ws.path("gen")}`,
        `  created  ${ws.path("gen/deep/out.txt")}`,
      ]
    ) assertStringIncludes(listed.stdout, line + "\n");
    assertStringIncludes(listed.stdout, "turn 1  ");

    const out = await runCli(["undo", session, "--json"]);
    assertEquals(out.code, 0, out.stderr);
    assertEquals(JSON.parse(out.stdout), {
      "session_id": session,
      turns: [1],
      restored: [
        ws.path("over.txt"),
        ws.path("secret.txt"),
        ws.path("sed.txt"),
        ws.path("src/edit.txt"),
      ],
      removed: [
        ws.path("gen"),
        ws.path("gen/deep"),
        ws.path("gen/deep/out.txt"),
        ws.path("new.txt"),
      ],
      conflicts: [],
    });
    assertEquals(await tree(ws.root), before);

    // The turn is undone: a second undo has nothing left to do, and says so.
    const again = await runCli(["undo", session]);
    assertEquals(again.code, 0, again.stderr);
    assertEquals(again.stdout, `nothing to undo in session ${session}\n`);
  });

  Deno.test(`undo keeps a person's later edit of an unrelated file (${where})`, async () => {
    await using ws = await workspace(withGit);
    const before = await tree(ws.root);
    await runTurn(ws.root, turnSteps(ws.root));
    await Deno.writeTextFile(ws.path("keep.txt"), "edited by a person\n");
    // No session named: the latest session of this workspace.
    const out = await runCli(["--workspace", ws.root, "undo"]);
    assertEquals(out.code, 0, out.stderr);
    assertStringIncludes(out.stdout, `restored ${ws.path("secret.txt")}\n`);
    assertEquals(await tree(ws.root), {
      ...before,
      "keep.txt": 'file 644 "edited by a person\\n"',
    });
  });

  Deno.test(`undo refuses over a person's later edit of a file the agent wrote (${where})`, async () => {
    await using ws = await workspace(withGit);
    const before = await tree(ws.root);
    const session = await runTurn(ws.root, turnSteps(ws.root));
    await Deno.writeTextFile(ws.path("over.txt"), "the person's version\n");
    const changed = await tree(ws.root);
    const out = await runCli(["undo", session]);
    assertEquals(out.code, 1);
    assertEquals(out.stdout, "");
    assertEquals(
      out.stderr,
      "rousseau: undo: nothing was written: 1 path changed after turn 1 (pass --force to " +
        `restore anyway):\n  ${ws.path("over.txt")}\n`,
    );
    assertEquals(await tree(ws.root), changed);
    const audit = (await Deno.readTextFile(join(TEST_HOME, "data", "rousseau", "audit.jsonl")))
      .trim().split("\n").map((line) => JSON.parse(line));
    const refusal = audit.findLast((e) => e.tool === "undo" && e.session_id === session);
    assertEquals([refusal.event, refusal.source], ["tool.error", "cli"]);
    assertStringIncludes(refusal.reason, ws.path("over.txt"));

    const json = await runCli(["undo", session, "--json"]);
    assertEquals(json.code, 1);
    assertEquals(JSON.parse(json.stdout), {
      "session_id": session,
      turns: [1],
      restored: [],
      removed: [],
      conflicts: [ws.path("over.txt")],
    });
    assertEquals(await tree(ws.root), changed);

    // --force: everything back as before the turn, the person's edit of over.txt included.
    const forced = await runCli(["undo", session, "--force"]);
    assertEquals(forced.code, 0, forced.stderr);
    assertEquals(await tree(ws.root), before);
  });
}

Deno.test("undo --turns 2 undoes two turns; one undo undoes the last only", async () => {
  await using ws = await workspace(false);
  const original = await tree(ws.root);
  await using server = startFakeAnthropic([
    { tools: [{ name: "write", input: { path: ws.path("keep.txt"), content: "one\n" } }] },
    { text: "first" },
    { tools: [{ name: "bash", input: { command: "echo two > keep.txt && chmod 600 keep.txt" } }] },
    { text: "second" },
  ]);
  const first = await runCli(
    ["--workspace", ws.root, ...ALLOW, "run", "--output", "json", "one"],
    { env: env(server) },
  );
  assertEquals(first.code, 0, first.stderr);
  const session = JSON.parse(first.stdout).session_id;
  const afterFirst = await tree(ws.root);
  const second = await runCli(
    ["--workspace", ws.root, ...ALLOW, "run", "--session", session, "--output", "json", "two"],
    { env: env(server) },
  );
  assertEquals(second.code, 0, second.stderr);
  assertEquals((await tree(ws.root))["keep.txt"], 'file 600 "two\\n"');

  const one = await runCli(["undo", session, "--json"]);
  assertEquals(one.code, 0, one.stderr);
  assertEquals(JSON.parse(one.stdout).turns, [2]);
  assertEquals(await tree(ws.root), afterFirst);
  const rest = await runCli(["undo", session, "--turns", "2", "--json"]);
  assertEquals(rest.code, 0, rest.stderr);
  assertEquals(JSON.parse(rest.stdout).turns, [1]);
  assertEquals(await tree(ws.root), original);
});

/** A config file turning the overlay off: bash binds the roots and undo scans (the fallback). */
async function overlayOff(dir: string): Promise<string> {
  const path = join(dir, "overlay-off.yaml");
  await Deno.writeTextFile(path, 'tools:\n  bash:\n    overlay: "off"\n');
  return path;
}

/** The scratch directories of bash calls under the overlay (in the test HOME's state dir). */
async function scratchDirs(): Promise<string[]> {
  const base = join(TEST_HOME, "data", "rousseau", "overlay");
  const out: string[] = [];
  try {
    for await (const entry of Deno.readDir(base)) out.push(join(base, entry.name));
  } catch { /* none yet */ }
  return out;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/** The pids of processes whose command line holds `marker`. */
async function processesWith(marker: string): Promise<string[]> {
  const found = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" })
    .output();
  return new TextDecoder().decode(found.stdout).split("\n").filter(Boolean);
}

for (const overlay of [false, true]) {
  Deno.test(
    `undo: a turn killed mid-way (SIGKILL) is still undoable for what it did (${
      overlay
        ? "overlay: the command's changes never land"
        : "overlay off: the scan's pending marker"
    })`,
    async () => {
      await using ws = await workspace(true);
      const before = await tree(ws.root);
      const marker = `undo-killed-${crypto.randomUUID()}`;
      await using server = startFakeAnthropic([
        { tools: [{ name: "write", input: { path: ws.path("over.txt"), content: "replaced\n" } }] },
        {
          tools: [{
            name: "bash",
            input: { command: `rm secret.txt && echo half > half.txt && sleep 60 # ${marker}` },
          }],
        },
        { text: "never reached" },
      ]);
      const config = overlay ? [] : ["--config", await overlayOff(dirname(ws.root))];
      const child = spawnCli(
        [...config, "--workspace", ws.root, ...ALLOW, "run", "--output", "stream-json", "go"],
        { env: env(server) },
      );
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      const init = JSON.parse(((await reader.read()).value ?? "").split("\n")[0]!);
      await waitForProcess(marker, 60_000);
      // The command line shows up before its first commands ran: wait for what it does first
      // (under the overlay, in the call's upper layer).
      const written = async () => {
        if (!overlay) return await exists(ws.path("half.txt"));
        for (const dir of await scratchDirs()) {
          if (await exists(join(dir, "0", "u", "half.txt"))) return true;
        }
        return false;
      };
      await until("the command's first write (half.txt)", written);
      child.kill("SIGKILL");
      await child.status;
      await reader.cancel();
      await child.stderr.cancel();
      if (overlay) {
        // The namespace's shell has a parent-death signal and bwrap dies with it: nothing of
        // the command outlives rousseau, and nothing of what it did reached the workspace.
        await until(
          `no process with ${marker} left`,
          async () => (await processesWith(marker)).length === 0,
          { limitMs: 10_000, state: async () => `left: ${await processesWith(marker)}` },
        );
        assertEquals(await exists(ws.path("half.txt")), false);
        assertEquals(await Deno.readTextFile(ws.path("secret.txt")), "private\n");
      } else {
        // Without the overlay's walls nothing reaps a SIGKILLed parent's children: end the
        // test's own command (found by its unique marker) by its process id.
        for (const pid of await processesWith(marker)) {
          try {
            Deno.kill(Number(pid), "SIGKILL");
          } catch { /* already gone */ }
        }
        assertEquals(await Deno.readTextFile(ws.path("half.txt")), "half\n");
      }

      const listed = await runCli(["undo", init.session_id, "--list"]);
      assertEquals(listed.code, 0, listed.stderr);
      assertStringIncludes(listed.stdout, `  modified ${ws.path("over.txt")}\n`);
      if (!overlay) assertStringIncludes(listed.stdout, `  deleted  ${ws.path("secret.txt")}\n`);
      const out = await runCli(["undo", init.session_id, "--json"]);
      assertEquals(out.code, 0, out.stderr);
      assertEquals(JSON.parse(out.stdout).removed, overlay ? [] : [ws.path("half.txt")]);
      assertEquals(await tree(ws.root), before);
      if (overlay) {
        // The killed call's scratch directory is removed by the next start that probes.
        assert((await scratchDirs()).length > 0, "the killed call left no scratch directory");
        const next = await runCli([
          "--workspace",
          ws.root,
          "--allow",
          "bash",
          "tool",
          "bash",
          '{"command":"true"}',
        ]);
        assertEquals(next.code, 0, next.stderr);
        assertEquals(await scratchDirs(), []);
      }
    },
  );
}

Deno.test("undo: usage errors exit 2; an unknown session exits 1", async () => {
  const bad = await runCli(["undo", "--turns", "0"]);
  assertEquals(bad.code, 2);
  assertEquals(
    bad.stderr,
    'rousseau: --turns: want a whole number of at least 1, got "0"\n',
  );
  const both = await runCli(["undo", "--list", "--force"]);
  assertEquals(both.code, 2);
  const unknown = await runCli(["undo", "ffffffff-0000"]);
  assertEquals(unknown.code, 1);
  assertEquals(
    unknown.stderr,
    'rousseau: undo: no session "ffffffff-0000" (see rousseau session list)\n',
  );
});

Deno.test("undo is recorded in the audit log; session delete removes the undo data", async () => {
  await using ws = await workspace(false);
  const session = await runTurn(ws.root, turnSteps(ws.root));
  const records = join(TEST_HOME, "data", "rousseau", "undo", "sessions", session);
  assert((await Deno.stat(records)).isDirectory);
  const out = await runCli(["undo", session]);
  assertEquals(out.code, 0, out.stderr);
  const audit = (await Deno.readTextFile(join(TEST_HOME, "data", "rousseau", "audit.jsonl")))
    .trim().split("\n").map((line) => JSON.parse(line));
  const last = audit.at(-1);
  assertEquals([last.event, last.tool, last.source, last.session_id], [
    "tool.done",
    "undo",
    "cli",
    session,
  ]);
  assertStringIncludes(last.input, ws.path("secret.txt"));
  const verify = await runCli(["audit", "verify"]);
  assertEquals(verify.code, 0, verify.stderr);

  const deleted = await runCli(["session", "delete", session]);
  assertEquals(deleted.code, 0, deleted.stderr);
  const gone = await Deno.stat(records).then(() => false, () => true);
  assert(gone, "the session's undo records are deleted with it");
});

Deno.test("undo: a workspace without a session has nothing to undo, and says so", async () => {
  await using ws = await tmpWorkspace();
  const out = await runCli(["--workspace", ws.root, "undo"]);
  assertEquals(out, { code: 0, stdout: `nothing to undo: no session in ${ws.root}\n`, stderr: "" });
  const json = await runCli(["--workspace", ws.root, "undo", "--json"]);
  assertEquals(json.code, 0, json.stderr);
  assertEquals(JSON.parse(json.stdout), {
    "session_id": null,
    turns: [],
    restored: [],
    removed: [],
    conflicts: [],
  });
});

Deno.test("undo: a file over the size limit is named as not undoable; the rest comes back", async () => {
  await using ws = await tmpWorkspace({ files: { "small.txt": "small\n" } });
  const size = 16 * 1024 * 1024 + 1;
  await Deno.writeFile(ws.path("big.bin"), new Uint8Array(size).fill(0x61));
  const session = await runTurn(ws.root, [
    { tools: [{ name: "bash", input: { command: "printf b >> big.bin && echo x > small.txt" } }] },
    { text: "Done." },
  ]);
  const why = "over the size limit of 16777216 bytes";
  const listed = await runCli(["undo", session, "--list"]);
  assertEquals(listed.code, 0, listed.stderr);
  assertStringIncludes(listed.stdout, `  not undoable ${ws.path("big.bin")}: ${why}\n`);
  const out = await runCli(["undo", session]);
  assertEquals(out.code, 1);
  assertEquals(
    out.stdout,
    `undid turn 1 of session ${session}: 1 path restored, 0 paths removed\n` +
      `restored ${ws.path("small.txt")}\n`,
  );
  assertEquals(
    out.stderr,
    "rousseau: undo: not everything turn 1 changed could be put back:\n" +
      `  ${ws.path("big.bin")}: ${why}\n`,
  );
  assertEquals(await Deno.readTextFile(ws.path("small.txt")), "small\n");
  assertEquals((await Deno.stat(ws.path("big.bin"))).size, size + 1);
});

Deno.test("undo: state.undo.max_bytes drops the oldest turns, and undo says so", async () => {
  // A state directory of its own: the small budget must not drop other tests' turns.
  const home = await Deno.makeTempDir({ prefix: "rousseau-undo-budget-" });
  try {
    const budget = { XDG_DATA_HOME: home, ROUSSEAU_STATE_UNDO_MAX_BYTES: "10000" };
    await using ws = await tmpWorkspace({
      files: { "a.txt": "a".repeat(6000), "b.txt": "b".repeat(6000) },
    });
    const write = (name: string, text: string): Step[] => [
      { tools: [{ name: "write", input: { path: ws.path(name), content: text } }] },
      { text: "Done." },
    ];
    const first = await runTurn(ws.root, write("a.txt", "1".repeat(6000)), budget);
    const second = await runTurn(ws.root, write("b.txt", "2".repeat(6000)), budget);
    let stored = 0;
    for await (const prefix of Deno.readDir(join(home, "rousseau", "undo", "objects"))) {
      for await (
        const file of Deno.readDir(join(home, "rousseau", "undo", "objects", prefix.name))
      ) {
        stored +=
          (await Deno.stat(join(home, "rousseau", "undo", "objects", prefix.name, file.name))).size;
      }
    }
    assert(stored <= 10000, `objects take ${stored} bytes`);

    const dropped =
      "its undo data was dropped to keep the store within state.undo.max_bytes (oldest turns first)";
    const listed = await runCli(["undo", first, "--list"], { env: budget });
    assertStringIncludes(listed.stdout, `  not undoable ${dropped}\n`);
    // The turn's line says when its data went.
    assertMatch(
      listed.stdout,
      /\nturn 1 {2}\S+ {2}"change things" {2}\(undo data dropped \d{4}-\S+Z\)\n/,
    );
    const out = await runCli(["undo", first], { env: budget });
    assertEquals(out.code, 1);
    assertEquals(
      out.stderr,
      `rousseau: undo: not everything turn 1 changed could be put back:\n  ${dropped}\n`,
    );
    assertEquals(await Deno.readTextFile(ws.path("a.txt")), "1".repeat(6000));
    const kept = await runCli(["undo", second], { env: budget });
    assertEquals(kept.code, 0, kept.stderr);
    assertEquals(await Deno.readTextFile(ws.path("b.txt")), "b".repeat(6000));
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("undo: state.undo.max_bytes = 0 turns undo off: nothing kept, nothing to undo", async () => {
  const home = await Deno.makeTempDir({ prefix: "rousseau-undo-off-" });
  try {
    const off = { XDG_DATA_HOME: home, ROUSSEAU_STATE_UNDO_MAX_BYTES: "0" };
    await using ws = await tmpWorkspace({ files: { "a.txt": "a\n" } });
    const session = await runTurn(ws.root, [
      { tools: [{ name: "bash", input: { command: "echo b > a.txt" } }] },
      { text: "Done." },
    ], off);
    const gone = await Deno.stat(join(home, "rousseau", "undo")).then(() => false, () => true);
    assert(gone, "no undo data is written");
    const out = await runCli(["undo", session], { env: off });
    assertEquals(out, { code: 0, stdout: `nothing to undo in session ${session}\n`, stderr: "" });
    assertEquals(await Deno.readTextFile(ws.path("a.txt")), "b\n");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("undo: without SESSION, the most recent session of this workspace", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "a\n", "b.txt": "b\n" } });
  await using elsewhere = await tmpWorkspace({ files: { "c.txt": "c\n" } });
  const write = (path: string): Step[] => [
    { tools: [{ name: "write", input: { path, content: "agent\n" } }] },
    { text: "Done." },
  ];
  await runTurn(ws.root, write(ws.path("a.txt")));
  const latest = await runTurn(ws.root, write(ws.path("b.txt")));
  await runTurn(elsewhere.root, write(elsewhere.path("c.txt")));
  const out = await runCli(["--workspace", ws.root, "undo", "--json"]);
  assertEquals(out.code, 0, out.stderr);
  assertEquals(JSON.parse(out.stdout), {
    "session_id": latest,
    turns: [1],
    restored: [ws.path("b.txt")],
    removed: [],
    conflicts: [],
  });
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "agent\n");
  assertEquals(await Deno.readTextFile(elsewhere.path("c.txt")), "agent\n");
});

// The classic loss: an agent "cleans up" with git and a person's uncommitted work is gone:
// https://github.com/anthropics/claude-code/issues/16098 (`git checkout -- .` lost a day of
// work), https://github.com/anthropics/claude-code/issues/62710 (`git checkout` of one file).
Deno.test("undo: uncommitted work that a git checkout and git clean threw away comes back", async () => {
  await using ws = await workspace(true);
  await Deno.writeTextFile(ws.path("over.txt"), "uncommitted work\n");
  await Deno.writeTextFile(ws.path("untracked.txt"), "never committed\n");
  const before = await tree(ws.root);
  const session = await runTurn(ws.root, [
    { tools: [{ name: "bash", input: { command: "git checkout -- over.txt && git clean -fq" } }] },
    { text: "Cleaned." },
  ]);
  assertEquals(await Deno.readTextFile(ws.path("over.txt")), "old contents\n");
  assertEquals((await tree(ws.root))["untracked.txt"], undefined);
  const out = await runCli(["undo", session, "--json"]);
  assertEquals(out.code, 0, out.stderr);
  assertEquals(JSON.parse(out.stdout).restored, [ws.path("over.txt"), ws.path("untracked.txt")]);
  assertEquals(await tree(ws.root), before);
});
