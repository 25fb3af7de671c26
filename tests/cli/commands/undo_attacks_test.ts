/**
 * `rousseau undo` end to end against a model that plays the attacker: real `run`s against the
 * loopback fake Anthropic server, a real sandboxed bash, real files, as root.
 *
 * - A session's turn copies a file from outside into a directory of the workspace; a later
 *   session (or any process) swaps that directory for a link to the outside; `undo` of the
 *   first session must then write nothing outside (before the fix it deleted the outside file
 *   and made the one the turn had deleted there). Reports of the class: nesquena/hermes-webui#4405
 *   (https://github.com/nesquena/hermes-webui/pull/4405, a checkpoint restore following a
 *   workspace symlink), the review of Gitlawb/zero#112 (https://github.com/Gitlawb/zero/pull/112).
 * - A session continued in another workspace: `undo` without SESSION in its first workspace
 *   must not undo, there or here, a turn that changed the other one; it says where to undo it
 *   (Claude Code answers a resume from another directory with "This conversation is from a
 *   different directory. To resume, run: cd … && claude --resume <id>",
 *   anthropics/claude-code#74953, https://github.com/anthropics/claude-code/issues/74953).
 */

import { join } from "node:path";
import { assertEquals } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { type FakeServer, startFakeAnthropic, type Step } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

function env(server: FakeServer, home: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "test-key",
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
  };
}

const ALLOW = ["--allow", "write", "--allow", "bash"];

/** One `run` in `root` with `steps`; returns its session id. */
async function run(root: string, home: string, steps: Step[], extra: string[] = []) {
  await using server = startFakeAnthropic(steps);
  const out = await runCli(
    ["--workspace", root, ...ALLOW, "run", ...extra, "--output", "json", "go"],
    { env: env(server, home) },
  );
  assertEquals(out.code, 0, out.stderr);
  return { id: JSON.parse(out.stdout).session_id as string, stderr: out.stderr };
}

function bash(command: string): Step {
  return { tools: [{ name: "bash", input: { command } }] };
}

Deno.test("undo of an earlier session writes nothing through a directory a later one swapped for a link", async () => {
  await using ws = await tmpWorkspace({
    files: { "a/gone": "the turn deletes this\n", "a/keep": "k\n" },
    outside: { victim: "precious\n" },
  });
  const home = await Deno.makeTempDir({ prefix: "rousseau-undo-attack-home-" });
  try {
    const first = await run(ws.root, home, [
      { tools: [{ name: "write", input: { path: ws.path("a/victim"), content: "precious\n" } }] },
      bash("rm a/gone"),
      { text: "done" },
    ]);
    await run(ws.root, home, [
      bash(`mv a a.moved && ln -s ${ws.outside} a`),
      { text: "done" },
    ]);
    for (const force of [[], ["--force"]]) {
      await using server = startFakeAnthropic([]);
      const out = await runCli(["undo", first.id, ...force], { env: env(server, home) });
      // Without --force, a/victim is not the turn's any more (nothing is at it but a link's
      // target): the path the turn deleted is named; with it, the same.
      assertEquals(out.code, 1, out.stdout);
      assertEquals(
        out.stderr,
        `rousseau: undo: not everything turn 1 changed could be put back:\n` +
          `  ${ws.path("a/gone")}: ${ws.path("a")} is now a symbolic link; undo writes nothing ` +
          "through one\n" +
          "rousseau: undo: turn 1 stays undoable: undo again once the paths above can be written\n",
      );
      assertEquals(await Deno.readTextFile(join(ws.outside, "victim")), "precious\n");
      assertEquals(
        (await Array.fromAsync(Deno.readDir(ws.outside))).map((e) => e.name),
        ["victim"],
      );
      assertEquals(
        out.stdout,
        `undid turn 1 of session ${first.id}: 0 paths restored, 0 paths removed\n`,
      );
    }
    // The link taken away and the directory moved back: the turn comes undone.
    await Deno.remove(ws.path("a"));
    await Deno.rename(ws.path("a.moved"), ws.path("a"));
    await using server = startFakeAnthropic([]);
    const out = await runCli(["undo", first.id], { env: env(server, home) });
    assertEquals([out.code, out.stderr], [0, ""]);
    assertEquals(
      out.stdout,
      `undid turn 1 of session ${first.id}: 1 path restored, 1 path removed\n` +
        `restored ${ws.path("a/gone")}\nremoved ${ws.path("a/victim")}\n`,
    );
    assertEquals(await Deno.readTextFile(ws.path("a/gone")), "the turn deletes this\n");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("undo without SESSION never undoes a turn the session made in another workspace", async () => {
  await using a = await tmpWorkspace({ files: { "f.txt": "a\n" } });
  await using b = await tmpWorkspace({ files: { "g.txt": "b\n" } });
  const home = await Deno.makeTempDir({ prefix: "rousseau-undo-attack-home-" });
  try {
    const started = await run(a.root, home, [bash("echo changed > f.txt"), { text: "done" }]);
    // Continued in b: said on stderr; the tools work in b, and the turn is recorded there.
    const continued = await run(b.root, home, [bash("echo changed > g.txt"), { text: "ok" }], [
      "--session",
      started.id,
    ]);
    assertEquals(continued.id, started.id);
    assertEquals(
      continued.stderr.split("\n")[0],
      `rousseau: session ${started.id} was started in ${a.root}; continuing it in ${b.root} ` +
        `(pass --workspace ${a.root} to work there)`,
    );
    await using server = startFakeAnthropic([]);
    const out = await runCli(["--workspace", a.root, "undo"], { env: env(server, home) });
    assertEquals([out.code, out.stdout], [1, ""]);
    assertEquals(
      out.stderr,
      `rousseau: undo: nothing was written: turn 2 of session ${started.id} changed files in ` +
        `${b.root}, not in this workspace (${a.root}); to undo it there, run: rousseau undo ` +
        `${started.id}\n`,
    );
    assertEquals(await Deno.readTextFile(b.path("g.txt")), "changed\n");
    assertEquals(await Deno.readTextFile(a.path("f.txt")), "changed\n");
    // As it says: with SESSION, the turn is undone where it was made.
    const there = await runCli(["undo", started.id], { env: env(server, home) });
    assertEquals(there.code, 0, there.stderr);
    assertEquals(await Deno.readTextFile(b.path("g.txt")), "b\n");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
