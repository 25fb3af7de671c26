/**
 * Attacks on `undo` (run as root, as CI is): a turn's record makes undo write, so everything
 * that can change between the turn and the undo — a directory swapped for a symbolic link, a
 * hard link planted, the workspace moved, the store's files tampered with — must never turn
 * the undo into a write outside the workspace, into rousseau's own files, or into a set-ID
 * file or a device.
 *
 * Sources: checkpoint restores that followed links planted in the workspace
 * (nesquena/hermes-webui#4405, https://github.com/nesquena/hermes-webui/pull/4405; the review
 * of Gitlawb/zero#112, https://github.com/Gitlawb/zero/pull/112; halfline/git-stage-batch#226,
 * https://github.com/halfline/git-stage-batch/pull/226, "writing through existing symlinks can
 * modify their referents"); stored checkpoint names with `../` acted on outside their
 * directory (google-gemini/gemini-cli#29191, https://github.com/google-gemini/gemini-cli/issues/29191,
 * and NousResearch/hermes-agent#2767, https://github.com/NousResearch/hermes-agent/pull/2767);
 * rollback targets trusted without a containment check against symlinked ancestors
 * (Zoo-Code-Org/Zoo-Code#1413, https://github.com/Zoo-Code-Org/Zoo-Code/pull/1413); set-ID bits
 * on restore as a root-run agent (LanternOps/breeze#5519,
 * https://github.com/LanternOps/breeze/pull/5519).
 */

import { join } from "node:path";
import { loadConfig } from "../../../cli/config/config.ts";
import { performUndo } from "../../../cli/commands/undo.ts";
import { captureEntry } from "../../../agent/undo/_entry.ts";
import { scanTree } from "../../../agent/undo/_mirror_fallback.ts";
import {
  createUndoRecorder,
  mirrorKey,
  openUndoStore,
  sha256Hex,
  type TurnRecord,
  type UndoRecorder,
  type UndoStore,
  undoTurns,
} from "../../../agent/undo/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { snapshotTree } from "../../_helpers/tree_snapshot.ts";
import { sh, undoBench } from "../../_helpers/undo_bench.ts";

/** Runs `work` as the one bash call of turn `n`. */
async function turn(recorder: UndoRecorder, n: number, work: () => Promise<void>): Promise<void> {
  recorder.beginTurn(n, `turn ${n}`);
  await recorder.around("bash", {}, false, work);
  await recorder.endTurn();
}

async function undo(
  ws: { store: UndoStore; protectedDir: string },
  options: { turns?: number; force?: boolean; workspace?: string[] } = {},
) {
  using _lock = await ws.store.lock();
  return undoTurns(ws.store, "s1", { ...options, skip: [ws.protectedDir] });
}

function linkWhy(dir: string): string {
  return `${dir} is now a symbolic link; undo writes nothing through one`;
}

Deno.test("undo writes nothing through a directory swapped for a symbolic link after the turn", async () => {
  for (const force of [false, true]) {
    await using ws = await undoBench("rousseau-undo-attack-");
    // The directory outside holds what the turn left in a/ (so, through the link, it looks as
    // the turn left it: no conflict) and nothing where the turn deleted a file.
    await sh(
      ws.root,
      "mkdir -p a/d && echo orig > a/mod && echo payload > a/gone && echo c > a/chm && " +
        "chmod 644 a/chm && chmod 755 a/d",
    );
    await sh(
      ws.outside,
      "mkdir d && chmod 700 d && echo precious > victim && echo outside-mod > mod && " +
        "echo c > chm && chmod 600 chm",
    );
    await turn(ws.recorder, 1, () =>
      sh(
        ws.root,
        "echo precious > a/victim && echo outside-mod > a/mod && rm a/gone && chmod 600 a/chm && " +
          "chmod 700 a/d",
      ));
    // After the turn, before undo: a/ is moved away and a link to the outside put in its place.
    const outsideBefore = await snapshotTree(ws.outside);
    await Deno.rename(ws.path("a"), ws.path("a.moved"));
    await Deno.symlink(ws.outside, ws.path("a"));
    const outcome = await undo(ws, { force });
    assertEquals(
      await snapshotTree(ws.outside),
      outsideBefore,
      `force=${force}: outside untouched`,
    );
    assertEquals(captureEntry(ws.path("a")), { kind: "symlink", target: ws.outside });
    assertEquals([outcome.restored, outcome.removed], [[], []]);
    if (!force) {
      // What is at a/… through the link is not what the turn left: refused, nothing written.
      assertEquals(outcome.conflicts, [ws.path("a/chm"), ws.path("a/d"), ws.path("a/mod")]);
      assertEquals(outcome.notUndoable, []);
    } else {
      assertEquals(
        outcome.notUndoable.sort((x, y) => x.path < y.path ? -1 : 1),
        ["a/chm", "a/d", "a/gone", "a/mod"].map((p) => ({
          path: ws.path(p),
          why: linkWhy(ws.path("a")),
        })),
      );
      // Kept undoable: once the directory is back, the rest comes back.
      assertEquals(outcome.again, true);
      await Deno.remove(ws.path("a"));
      await Deno.rename(ws.path("a.moved"), ws.path("a"));
      const again = await undo(ws);
      assertEquals([again.conflicts, again.notUndoable], [[], []]);
      assertEquals(await snapshotTree(ws.path("a")), {
        chm: "file 644 c\n",
        d: "dir 755",
        gone: "file 644 payload\n",
        mod: "file 644 orig\n",
      });
    }
  }
});

Deno.test("undo through a link the turn itself made puts the directory back", async () => {
  // The legitimate twin of the attack above: the turn replaced a/ by a link. Undo removes the
  // link first, then the directory and its file are made anew (no conflict, nothing refused).
  await using ws = await undoBench("rousseau-undo-attack-");
  await sh(ws.root, "mkdir -p a b && echo x > a/x && echo other > b/x");
  const before = await snapshotTree(ws.root);
  await turn(ws.recorder, 1, () => sh(ws.root, "rm -r a && ln -s b a"));
  const outcome = await undo(ws);
  assertEquals([outcome.conflicts, outcome.notUndoable], [[], []]);
  assertEquals(outcome.restored, [ws.path("a"), ws.path("a/x")]);
  assertEquals(await snapshotTree(ws.root), before);
});

Deno.test("undo replaces a link or hard link planted at the file itself, never writes through it", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await sh(ws.root, "echo mine > f && echo h > h && chmod 644 h");
  await sh(ws.outside, "echo theirs > f && echo h > h && chmod 600 h");
  await turn(ws.recorder, 1, () => sh(ws.root, "echo changed > f && chmod 600 h"));
  // f becomes a link to the outside; h a hard link to an outside file that looks as the turn
  // left h (same content, same mode), so only its mode is to be put back.
  await Deno.remove(ws.path("f"));
  await Deno.symlink(ws.out("f"), ws.path("f"));
  await Deno.remove(ws.path("h"));
  await Deno.link(ws.out("h"), ws.path("h"));
  const outsideBefore = await snapshotTree(ws.outside);
  const refused = await undo(ws);
  assertEquals(refused.conflicts, [ws.path("f")]);
  const outcome = await undo(ws, { force: true });
  assertEquals(outcome.notUndoable, []);
  assertEquals(outcome.restored, [ws.path("f"), ws.path("h")]);
  assertEquals(await snapshotTree(ws.outside), outsideBefore);
  assertEquals(await snapshotTree(ws.root), { f: "file 644 mine\n", h: "file 644 h\n" });
  assertEquals((await Deno.lstat(ws.path("h"))).nlink, 1, "h is its own file again");
});

Deno.test("undo never makes a set-ID file; it says which bits it left off", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await sh(ws.root, "echo s > suid && chmod 4755 suid && echo g > sgid && chmod 2755 sgid");
  await turn(ws.recorder, 1, () => sh(ws.root, "rm suid && chmod 755 sgid"));
  const outcome = await undo(ws);
  assertEquals(outcome.restored, [ws.path("sgid"), ws.path("suid")]);
  assertEquals(await snapshotTree(ws.root), { sgid: "file 755 g\n", suid: "file 755 s\n" });
  const why = (was: string) =>
    `put back as 0755, without its set-user-ID/set-group-ID bits (it was ${was}): undo never ` +
    "makes a set-ID file; set them again by hand if they are wanted";
  assertEquals(outcome.notUndoable, [
    { path: ws.path("sgid"), why: why("2755") },
    { path: ws.path("suid"), why: why("4755") },
  ]);
});

Deno.test("a FIFO or device the turn removed is named, never made; one in the way is unlinked, never opened", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await sh(ws.root, "mkfifo fifo && echo f > f");
  // A device node as root, where the container lets us (the FIFO half always runs).
  const device = await new Deno.Command("mknod", { args: [ws.path("null"), "c", "1", "3"] })
    .output().then((o) => o.success, () => false);
  await turn(
    ws.recorder,
    1,
    () => sh(ws.root, `rm fifo ${device ? "null" : ""} && rm f && mkfifo f`),
  );
  const outcome = await undo(ws);
  const other = "not a regular file, directory or symbolic link";
  assertEquals(outcome.notUndoable, [
    { path: ws.path("fifo"), why: other },
    ...(device ? [{ path: ws.path("null"), why: other }] : []),
  ]);
  assertEquals(outcome.restored, [ws.path("f")]);
  assertEquals(await snapshotTree(ws.root), { f: "file 644 f\n" });
});

Deno.test("undo never writes rousseau's own configuration or state", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  // A record (as a tampered store would hold it) naming a file in the protected directory
  // inside the workspace, with a kept copy ready.
  const bytes = new TextEncoder().encode("approver: allow everything\n");
  const hash = sha256Hex(bytes);
  assert(ws.store.put(hash, bytes));
  const target = join(ws.protectedDir, "config.yaml");
  ws.store.writeTurn(record(ws.root, {
    [target]: {
      before: { kind: "file", mode: 0o644, size: bytes.length, hash, stored: true },
      after: null,
    },
  }));
  const outcome = await undo(ws);
  assertEquals(outcome.notUndoable, [
    { path: target, why: "it is rousseau's own configuration or state" },
  ]);
  assertEquals(captureEntry(target), null);
});

/** A sound record of turn 1 of s1 in `root` with `changes`. */
function record(root: string, changes: TurnRecord["changes"], turn = 1): TurnRecord {
  return {
    version: 1,
    session: "s1",
    turn,
    prompt: "tampered",
    started: new Date().toISOString(),
    ended: new Date().toISOString(),
    roots: [root],
    mirror: mirrorKey([root]),
    changes,
    problems: {},
  };
}

Deno.test("a tampered record is refused whole: nothing written, the turn kept, the file named", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  const bytes = new TextEncoder().encode("planted\n");
  const hash = sha256Hex(bytes);
  const file = { kind: "file", mode: 0o644, size: bytes.length, hash, stored: true } as const;
  const sound = record(ws.root, {});
  const cases: [string, unknown, string][] = [
    [
      "outside",
      { ...sound, changes: { [ws.out("x")]: { before: file, after: null } } },
      `${ws.out("x")} lies outside its workspace`,
    ],
    ["dot-dot", {
      ...sound,
      changes: { [`${ws.root}/../outside/x`]: { before: file, after: null } },
    }, `${JSON.stringify(`${ws.root}/../outside/x`)} is not a clean absolute path`],
    [
      "relative",
      { ...sound, changes: { "outside/x": { before: file, after: null } } },
      `"outside/x" is not a clean absolute path`,
    ],
    ["NUL", {
      ...sound,
      changes: { [`${ws.root}/x\0/../../outside/x`]: { before: file, after: null } },
    }, `${JSON.stringify(`${ws.root}/x\0/../../outside/x`)} is not a clean absolute path`],
    ["roots", { ...sound, roots: ["/"] }, "its mirror key does not match its roots"],
    ["session", { ...sound, session: "../../../outside" }, "it names another session"],
    ["turn", { ...sound, turn: "1/../../../../outside/x" }, "it names another turn"],
    ["entry", {
      ...sound,
      changes: { [ws.path("x")]: { before: { ...file, mode: "4755" }, after: null } },
    }, `the change of ${ws.path("x")} holds a malformed entry`],
    ["hash", {
      ...sound,
      changes: { [ws.path("x")]: { before: { ...file, hash: "../../x" }, after: null } },
    }, `the change of ${ws.path("x")} holds a malformed entry`],
    ["types", { ...sound, changes: [] }, "its changes are not an object"],
  ];
  assert(ws.store.put(hash, bytes));
  const file1 = join(ws.state, "undo", "sessions", "s1", "1.json");
  for (const [name, value, why] of cases) {
    await Deno.mkdir(join(ws.state, "undo", "sessions", "s1"), { recursive: true });
    await Deno.writeTextFile(file1, JSON.stringify(value));
    const outcome = await undo(ws, { force: true });
    assertEquals(
      outcome.refusal,
      `turn 1: its undo record ${file1} is damaged (${why}); remove it to undo the turns before it`,
      name,
    );
    assertEquals([outcome.restored, outcome.removed], [[], []], name);
    assertEquals(await snapshotTree(ws.outside), {}, name);
    assertEquals(await snapshotTree(ws.root), {}, name);
    assertEquals(await Deno.readTextFile(file1), JSON.stringify(value), `${name}: kept as it was`);
  }
  // Not JSON at all.
  await Deno.writeTextFile(file1, "{not json");
  const broken = await undo(ws);
  assert(broken.refusal?.startsWith(`turn 1: its undo record ${file1} is damaged (`));
  assertEquals(await Deno.readTextFile(file1), "{not json");
});

Deno.test("a damaged last record is never skipped for an older turn", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await Deno.writeTextFile(ws.path("f"), "one");
  await turn(ws.recorder, 1, () => Deno.writeTextFile(ws.path("f"), "two"));
  const file2 = join(ws.state, "undo", "sessions", "s1", "2.json");
  await Deno.writeTextFile(file2, JSON.stringify({ version: 1, turn: 2, session: "s1" }));
  const outcome = await undo(ws);
  assertEquals(outcome.turns, [2]);
  assertEquals(
    outcome.refusal,
    `turn 2: its undo record ${file2} is damaged (its prompt is not a string); remove it to ` +
      "undo the turns before it",
  );
  assertEquals(await Deno.readTextFile(ws.path("f")), "two");
  // Removed, as the message says: the turn before it comes back.
  await Deno.remove(file2);
  assertEquals((await undo(ws)).restored, [ws.path("f")]);
  assertEquals(await Deno.readTextFile(ws.path("f")), "one");
});

Deno.test("a tampered mirror or pending marker never becomes a write outside the workspace", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  const key = mirrorKey([ws.root]);
  ws.store.writeTurn(record(ws.root, {}));
  // A mirror whose rows claim a file outside the workspace existed before a killed call.
  const bytes = new TextEncoder().encode("planted\n");
  const hash = sha256Hex(bytes);
  assert(ws.store.put(hash, bytes));
  const row = [
    ws.out("planted"),
    { kind: "file", mode: 0o644, size: bytes.length, hash, stored: true },
    "f",
    bytes.length,
    1,
    1,
    1,
    0o644,
    1,
  ];
  await Deno.mkdir(join(ws.state, "undo", "mirrors"), { recursive: true });
  await Deno.writeTextFile(
    join(ws.state, "undo", "mirrors", `${key}.json`),
    JSON.stringify({ version: 2, roots: [ws.root], rows: [row] }),
  );
  ws.store.writePending(key, { session: "s1", turn: 1, tool: "bash" });
  const outcome = await undo(ws, { force: true });
  assertEquals(outcome.notUndoable, [
    { path: "*", why: "bash: interrupted, and the state before it is lost" },
  ]);
  assertEquals(await snapshotTree(ws.outside), {});
  // A marker naming a session outside the store: settled as a call of no turn.
  ws.store.writeMirror(key, [ws.root], scanTree({ roots: [ws.root], sink: ws.store }));
  await Deno.writeTextFile(
    join(ws.state, "undo", "mirrors", `${key}.pending.json`),
    JSON.stringify({ session: "../../../outside", turn: 1, tool: "bash" }),
  );
  await Deno.writeTextFile(ws.path("new"), "n");
  ws.store.writeTurn(record(ws.root, { [ws.path("x")]: { before: null, after: null } }, 2));
  await undo(ws);
  assertEquals(await snapshotTree(ws.outside), {});
  assertEquals(ws.store.readPending(key), undefined);
});

Deno.test("undo in a workspace moved after the turn writes nothing and keeps the turn", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await Deno.writeTextFile(ws.path("f"), "one");
  await Deno.mkdir(ws.path("sub"));
  await turn(ws.recorder, 1, () => sh(ws.root, "echo two > f && echo n > sub/new"));
  const moved = join(ws.base, "moved");
  await Deno.rename(ws.root, moved);
  for (const force of [false, true]) {
    const outcome = await undo(ws, { force });
    assertEquals(
      outcome.refusal,
      `the workspace ${ws.root} is not there any more (moved or renamed?); turn 1 changed ` +
        "files there: move it back, then undo",
    );
    assertEquals(await Deno.lstat(ws.root).then(() => "there", () => "gone"), "gone");
  }
  // Linked back from its new place: still refused (the records name the old real paths).
  await Deno.symlink(moved, ws.root);
  assertEquals(
    (await undo(ws, { force: true })).refusal,
    `the workspace ${ws.root} now leads to ${moved} through a symbolic link (moved?); turn 1 ` +
      "changed files there: move it back, then undo",
  );
  assertEquals(await Deno.readTextFile(join(moved, "f")), "two\n");
  // Moved back: the turn was kept, and comes undone.
  await Deno.remove(ws.root);
  await Deno.rename(moved, ws.root);
  const outcome = await undo(ws);
  assertEquals([outcome.restored, outcome.removed], [[ws.path("f")], [ws.path("sub/new")]]);
  assertEquals(await snapshotTree(ws.root), { f: "file 644 one", sub: "dir 755" });
});

Deno.test("undo for a caller in another workspace refuses the turn and says where to undo it", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await turn(ws.recorder, 1, () => Deno.writeTextFile(ws.path("f"), "x"));
  const outcome = await undo(ws, { workspace: [ws.outside] });
  assertEquals(
    outcome.refusal,
    `turn 1 of session s1 changed files in ${ws.root}, not in this workspace (${ws.outside}); ` +
      "to undo it there, run: rousseau undo s1",
  );
  assertEquals(await Deno.readTextFile(ws.path("f")), "x");
  // Chat's /undo passes its roots: the same refusal, as the CLI says it.
  const config = await loadConfig(undefined, {
    HOME: ws.base,
    XDG_CONFIG_HOME: join(ws.base, "config"),
    ROUSSEAU_STATE_DIR: ws.state,
  });
  const report = await performUndo(config, "s1", { source: "chat", workspace: [ws.outside] });
  assertEquals([report.code, report.stdout], [1, ""]);
  assertEquals(report.stderr, [`undo: nothing was written: ${outcome.refusal}`]);
  // The caller's own workspace (or one holding it) is fine.
  assertEquals((await undo(ws, { workspace: [ws.base] })).removed, [ws.path("f")]);
});

Deno.test("a call killed in a workspace since moved is settled only once it is back", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await Deno.writeTextFile(ws.path("f"), "one");
  await Deno.writeTextFile(ws.path("g"), "kept");
  const key = mirrorKey([ws.root]);
  ws.store.writeTurn(record(ws.root, {}));
  ws.store.writeMirror(key, [ws.root], scanTree({ roots: [ws.root], sink: ws.store }));
  ws.store.writePending(key, { session: "s1", turn: 1, tool: "bash" });
  await Deno.writeTextFile(ws.path("f"), "two"); // what the killed call did
  const moved = join(ws.base, "moved");
  await Deno.rename(ws.root, moved);
  // Nothing known yet of what the call did: nothing to undo, and not read as "every file
  // deleted" while the workspace is away.
  assertEquals((await undo(ws)).turns, []);
  assertEquals(ws.store.readTurn("s1", 1)!.changes, {});
  assertEquals(ws.store.readPending(key), { session: "s1", turn: 1, tool: "bash" });
  await Deno.rename(moved, ws.root);
  const outcome = await undo(ws);
  assertEquals([outcome.restored, outcome.removed], [[ws.path("f")], []]);
  assertEquals(await snapshotTree(ws.root), { f: "file 644 one", g: "file 644 kept" });
});

Deno.test("undo waits for a call of another session whose roots share one of its roots", async () => {
  await using ws = await undoBench("rousseau-undo-attack-");
  await Deno.writeTextFile(ws.path("f"), "one");
  await turn(ws.recorder, 1, () => Deno.writeTextFile(ws.path("f"), "two"));
  // Another process's session in the same root plus another one (--add-dir): another root set.
  const config = await loadConfig(undefined, {
    HOME: ws.base,
    XDG_DATA_HOME: ws.base,
    XDG_CONFIG_HOME: join(ws.base, "config"),
    ROUSSEAU_STATE_DIR: ws.state,
  });
  assertEquals(config.stateDir, ws.state);
  const other = createUndoRecorder({
    store: openUndoStore(ws.state),
    sessionId: "s2",
    roots: [ws.root, ws.outside],
  });
  other.beginTurn(1, "long");
  let finish!: () => void;
  const held = new Promise<void>((resolve) => finish = resolve);
  let started!: () => void;
  const running = new Promise<void>((resolve) => started = resolve);
  const long = other.around("bash", {}, false, async () => {
    started();
    await held;
    await Deno.writeTextFile(ws.path("late"), "written by the long call\n");
  });
  await running;
  let undone = false;
  const waiting = performUndo(config, "s1", { source: "test" }).then((report) => {
    undone = true;
    return report;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  assertEquals(undone, false, "undo waited for the call in the shared root");
  finish();
  await long;
  await other.endTurn();
  const report = await waiting;
  assertEquals(report.outcome.restored, [ws.path("f")]);
  // The long call's file is its own turn's, not swept into the undo nor into its record.
  assertEquals(Object.keys(openUndoStore(ws.state).readTurn("s2", 1)!.changes), [ws.path("late")]);
});
