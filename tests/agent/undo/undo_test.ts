/**
 * The undo recorder, store and restore on real temp trees: every kind of change (contents,
 * modes, links, directories, kinds swapped), limits (file size, store budget), what is never
 * scanned (.git, protected paths) and the crash paths (a call killed while it ran).
 */

import { join } from "node:path";
import { captureEntry } from "../../../agent/undo/_entry.ts";
import {
  diffMirrors,
  mirrorFromJson,
  mirrorToJson,
  scanTree,
} from "../../../agent/undo/_mirror_fallback.ts";
import {
  createUndoRecorder,
  DROPPED,
  mirrorKey,
  openUndoStore,
  type UndoRecorder,
  type UndoStore,
  undoTurns,
} from "../../../agent/undo/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { snapshotTree } from "../../_helpers/tree_snapshot.ts";
import { sh, undoBench } from "../../_helpers/undo_bench.ts";

/** Runs `work` as one call of `tool` in turn `turn`. */
async function turn(
  recorder: UndoRecorder,
  n: number,
  tool: string,
  input: unknown,
  work: () => Promise<void>,
): Promise<void> {
  recorder.beginTurn(n, `turn ${n}`);
  await recorder.around(tool, input, false, work);
  await recorder.endTurn();
}

async function undo(store: UndoStore, options: { turns?: number; force?: boolean } = {}) {
  using _lock = await store.lock();
  return undoTurns(store, "s1", options);
}

Deno.test("scanTree() gives the same entries with GNU find and with Deno's calls", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await sh(
    ws.root,
    "mkdir -p a/b && echo one > a/b/f && chmod 750 a && ln -s a/b/f link && mkfifo pipe && " +
      "printf 'x\\ty' > 'tab\tname' && echo s > 'space name' && chmod 4755 'space name'",
  );
  const sink = { put: () => true };
  const found = scanTree({ roots: [ws.root], sink });
  const walked = scanTree({ roots: [ws.root], sink, noFind: true });
  const entries = (m: typeof found) => [...m].map(([p, c]) => [p, c.entry, c.type, c.mode]).sort();
  assertEquals(entries(found), entries(walked));
  assertEquals(found.get(ws.path("link"))?.entry, { kind: "symlink", target: "a/b/f" });
  assertEquals(found.get(ws.path("pipe"))?.entry, { kind: "other", mode: 0o644 });
  assertEquals(found.get(ws.path("a"))?.entry, { kind: "dir", mode: 0o750 });
  assertEquals(found.get(ws.path("space name"))?.entry.kind, "file");
  // The mirror survives its file format.
  assertEquals(mirrorFromJson(JSON.parse(JSON.stringify(mirrorToJson(found)))), found);
  assertEquals(diffMirrors(found, scanTree({ roots: [ws.root], sink, previous: found })), []);
  // A file not read (over the size limit) is fingerprinted alike by either walk and by
  // captureEntry, even when its mtime's fraction would round up to the next millisecond.
  await sh(ws.root, "touch -d '2024-01-01 00:00:00.9999999' a/b/f");
  const big = ws.path("a/b/f");
  const small = { roots: [ws.root], sink, maxFileBytes: 2 };
  const unread = captureEntry(big, { maxFileBytes: 2 });
  assertEquals(unread?.kind === "file" && unread.hash.startsWith("meta:"), true);
  assertEquals(scanTree(small).get(big)?.entry, unread);
  assertEquals(scanTree({ ...small, noFind: true }).get(big)?.entry, unread);
});

Deno.test("undo restores links, modes, deleted trees and swapped kinds from a bash call", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await sh(
    ws.root,
    "mkdir -p tree/sub && echo deep > tree/sub/f && chmod 600 tree/sub/f && chmod 700 tree/sub && " +
      "echo x > script.sh && chmod 755 script.sh && ln -s script.sh link && echo f > was-file && " +
      "mkdir was-dir && echo exe > chmodded && chmod 644 chmodded",
  );
  const before = await snapshotTree(ws.root);
  await turn(ws.recorder, 1, "bash", { command: "..." }, () =>
    sh(
      ws.root,
      "rm -rf tree && chmod 700 script.sh && ln -sfn elsewhere link && rm was-file && " +
        "mkdir -p was-file/in && echo n > was-file/in/n && rmdir was-dir && echo d > was-dir && " +
        "chmod +x chmodded && ln -s script.sh newlink",
    ));
  assert(JSON.stringify(await snapshotTree(ws.root)) !== JSON.stringify(before));
  const outcome = await undo(ws.store);
  assertEquals(outcome.conflicts, []);
  assertEquals(outcome.notUndoable, []);
  assertEquals(outcome.removed, [
    ws.path("newlink"),
    ws.path("was-file/in"),
    ws.path("was-file/in/n"),
  ]);
  assertEquals(await snapshotTree(ws.root), before);
});

Deno.test("undo removes the directories write created, and only those", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await Deno.mkdir(ws.path("existing"));
  const file = ws.path("existing", "new", "deeper", "file.txt");
  await turn(ws.recorder, 1, "write", { path: file, content: "x" }, async () => {
    await Deno.mkdir(ws.path("existing", "new", "deeper"), { recursive: true });
    await Deno.writeTextFile(file, "x");
  });
  const listed = ws.store.readTurn("s1", 1)!;
  assertEquals(Object.keys(listed.changes).sort(), [
    ws.path("existing/new"),
    ws.path("existing/new/deeper"),
    file,
  ]);
  const outcome = await undo(ws.store);
  assertEquals(outcome.removed.length, 3);
  assertEquals(await snapshotTree(ws.root), { existing: "dir 755" });
});

Deno.test("undo keeps a created directory that now holds someone else's file", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await turn(ws.recorder, 1, "bash", {}, () => sh(ws.root, "mkdir out && echo a > out/a"));
  await Deno.writeTextFile(ws.path("out", "mine"), "a person's file");
  const outcome = await undo(ws.store);
  assertEquals(outcome.removed, [ws.path("out/a")]);
  assertEquals(outcome.kept, [ws.path("out")]);
  assertEquals(await snapshotTree(ws.root), {
    out: "dir 755",
    "out/mine": "file 644 a person's file",
  });
});

Deno.test("a file over the size limit is reported as not undoable, the rest restored", async () => {
  await using ws = await undoBench("rousseau-undo-", { maxFileBytes: 64 });
  await Deno.writeTextFile(ws.path("big"), "b".repeat(100));
  await Deno.writeTextFile(ws.path("small"), "s");
  await turn(ws.recorder, 1, "bash", {}, () => sh(ws.root, "rm big && echo t > small"));
  const record = ws.store.readTurn("s1", 1)!;
  assertEquals(record.problems, { [ws.path("big")]: "over the size limit of 64 bytes" });
  const outcome = await undo(ws.store);
  assertEquals(outcome.restored, [ws.path("small")]);
  assertEquals(outcome.notUndoable, [
    { path: ws.path("big"), why: "over the size limit of 64 bytes" },
  ]);
  assertEquals(await snapshotTree(ws.root), { small: "file 644 s" });
});

Deno.test("the store stays within state.undo.max_bytes; the oldest turns go first", async () => {
  const maxBytes = 2500;
  await using ws = await undoBench("rousseau-undo-", { maxBytes });
  for (const name of ["a", "b", "c", "d"]) {
    await Deno.writeTextFile(ws.path(name), name.repeat(1000));
  }
  for (const [n, name] of [[1, "a"], [2, "b"], [3, "c"], [4, "d"]] as const) {
    await turn(ws.recorder, n, "write", { path: ws.path(name) }, async () => {
      await Deno.writeTextFile(ws.path(name), `${n}`.repeat(1000));
    });
    assert(ws.store.totalBytes() <= maxBytes, `after turn ${n}: ${ws.store.totalBytes()}`);
  }
  const records = ws.store.listTurns("s1");
  const left = records.filter((r) => r.dropped === undefined).map((r) => r.turn);
  assert(left.length < 4 && left.at(-1) === 4, `turns left: ${left}`);
  assertEquals(left, Array.from({ length: left.length }, (_, i) => 5 - left.length + i));
  // The dropped turns are still there, empty, saying why (never silently skipped).
  for (const r of records.filter((r) => r.dropped !== undefined)) {
    assertEquals([r.changes, r.problems], [{}, { "*": DROPPED }]);
  }
  // What is left can still be undone, newest first.
  const outcome = await undo(ws.store, { turns: left.length });
  assertEquals(outcome.turns, left);
  assertEquals(outcome.notUndoable, []);
  assertEquals(await Deno.readTextFile(ws.path("d")), "d".repeat(1000));
  // One more turn back is a dropped one: named, nothing written.
  const dropped = await undo(ws.store);
  assertEquals(dropped.turns, [left[0]! - 1]);
  assertEquals(dropped.notUndoable, [{ path: "*", why: DROPPED }]);
  assertEquals(
    await Deno.readTextFile(ws.path(["a", "b", "c", "d"][left[0]! - 2]!)),
    `${left[0]! - 1}`.repeat(1000),
  );
});

Deno.test("changes under .git and protected paths are not recorded", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await sh(ws.root, "mkdir -p .git protected && echo ref > .git/HEAD");
  await turn(
    ws.recorder,
    1,
    "bash",
    {},
    () => sh(ws.root, "echo new > .git/HEAD && echo p > protected/state && echo w > work"),
  );
  assertEquals(Object.keys(ws.store.readTurn("s1", 1)!.changes), [ws.path("work")]);
});

Deno.test("a temporary file made and removed in one turn leaves nothing to undo", async () => {
  await using ws = await undoBench("rousseau-undo-");
  ws.recorder.beginTurn(1, "tmp");
  await ws.recorder.around("bash", {}, false, () => sh(ws.root, "echo t > tmp"));
  await ws.recorder.around("bash", {}, false, () => sh(ws.root, "rm tmp"));
  await ws.recorder.endTurn();
  assertEquals(ws.store.readTurn("s1", 1)!.changes, {});
  assertEquals((await undo(ws.store)).turns, []);
});

Deno.test("undo refuses over a later change, names it, writes nothing; force restores", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await Deno.writeTextFile(ws.path("f"), "one");
  await Deno.writeTextFile(ws.path("g"), "one");
  await turn(ws.recorder, 1, "bash", {}, () => sh(ws.root, "echo two > f && echo two > g"));
  await Deno.writeTextFile(ws.path("g"), "three");
  const changed = await snapshotTree(ws.root);
  const refused = await undo(ws.store);
  assertEquals(refused.conflicts, [ws.path("g")]);
  assertEquals([refused.restored, refused.removed], [[], []]);
  assertEquals(await snapshotTree(ws.root), changed);
  const forced = await undo(ws.store, { force: true });
  assertEquals(forced.restored, [ws.path("f"), ws.path("g")]);
  assertEquals(await snapshotTree(ws.root), { f: "file 644 one", g: "file 644 one" });
});

Deno.test("a write's record is final once its turn ends: undo refuses over a later change", async () => {
  // The record of what a write/edit left is written while its result goes on (recordAfter):
  // the next call and the end of the turn wait for it, so nothing is left `pending`.
  await using ws = await undoBench("rousseau-undo-");
  const f = ws.path("f");
  await Deno.writeTextFile(f, "one");
  ws.recorder.beginTurn(1, "write twice");
  await ws.recorder.around("write", { path: f }, false, () => Deno.writeTextFile(f, "two"));
  await ws.recorder.around("edit", { path: f }, false, () => Deno.writeTextFile(f, "three"));
  await ws.recorder.endTurn();
  const after = ws.store.readTurn("s1", 1)!.changes[f]!.after;
  assert(after !== "pending" && after?.kind === "file", `after: ${JSON.stringify(after)}`);
  await Deno.writeTextFile(f, "four");
  const refused = await undo(ws.store);
  assertEquals(refused.conflicts, [f]);
  assertEquals(await Deno.readTextFile(f), "four");
  const forced = await undo(ws.store, { force: true });
  assertEquals(forced.restored, [f]);
  assertEquals(await Deno.readTextFile(f), "one");
});

Deno.test("a write or edit without an absolute path scans nothing (the tool refuses it untouched)", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await Deno.writeTextFile(ws.path("f"), "one");
  const inputs = [{ path: "f", content: "x" }, { content: "x" }, {
    path: "f",
    "old_string": "one",
    "new_string": "two",
  }];
  for (const [i, input] of inputs.entries()) {
    const tool = "old_string" in input ? "edit" : "write";
    await turn(ws.recorder, i + 1, tool, input, () => Promise.resolve());
  }
  // No walk of the workspace was kept, and no turn has a record (nothing was kept).
  assertEquals(ws.store.readMirror(mirrorKey([ws.root])), undefined);
  assertEquals(ws.store.listTurns("s1"), []);
});

Deno.test("a call whose process died is settled from the mirror by the next holder", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await Deno.writeTextFile(ws.path("f"), "one");
  await Deno.writeTextFile(ws.path("gone"), "kept");
  // What the recorder leaves on disk just before a call: the record, the scan, the marker.
  const key = mirrorKey([ws.root]);
  ws.store.writeTurn({
    version: 1,
    session: "s1",
    turn: 1,
    prompt: "killed",
    started: new Date().toISOString(),
    roots: [ws.root],
    mirror: key,
    changes: {},
    problems: {},
  });
  ws.store.writeMirror(key, [ws.root], scanTree({ roots: [ws.root], sink: ws.store }));
  ws.store.writePending(key, { session: "s1", turn: 1, tool: "bash" });
  // The call ran, then its process died before the scan after it.
  await sh(ws.root, "echo two > f && echo n > new && rm gone");
  const outcome = await undo(ws.store);
  assertEquals(outcome.turns, [1]);
  assertEquals(outcome.removed, [ws.path("new")]);
  assertEquals(outcome.restored, [ws.path("f"), ws.path("gone")]);
  assertEquals(await snapshotTree(ws.root), { f: "file 644 one", gone: "file 644 kept" });
  assertEquals(ws.store.readPending(key), undefined);
});

Deno.test("a pending call without its mirror is reported, never read as 'everything created'", async () => {
  await using ws = await undoBench("rousseau-undo-");
  await Deno.writeTextFile(ws.path("f"), "one");
  const key = mirrorKey([ws.root]);
  ws.recorder.beginTurn(1, "killed");
  await ws.recorder.around("bash", {}, false, () => sh(ws.root, "echo two > f"));
  ws.store.writePending(key, { session: "s1", turn: 1, tool: "bash" });
  await Deno.remove(join(ws.state, "undo", "mirrors", `${key}.json`));
  const outcome = await undo(ws.store);
  assertEquals(outcome.notUndoable, [
    { path: "*", why: "bash: interrupted, and the state before it is lost" },
  ]);
  // What was recorded before the loss is still put back; nothing else is removed.
  assertEquals(outcome.restored, [ws.path("f")]);
  assertEquals(outcome.removed, []);
  assertEquals(captureEntry(ws.path("f"))?.kind, "file");
});

Deno.test("a long call in one workspace holds its workspace only, never the whole store", async () => {
  await using a = await undoBench("rousseau-undo-");
  // A second process's view: its own store object (its own descriptors) on the same state dir.
  const otherRoot = join(a.root, "..", "other");
  await Deno.mkdir(otherRoot);
  const other = createUndoRecorder({
    store: openUndoStore(a.state),
    sessionId: "s2",
    roots: [otherRoot],
  });
  a.recorder.beginTurn(1, "long");
  let finish!: () => void;
  const held = new Promise<void>((resolve) => finish = resolve);
  let started!: () => void;
  const running = new Promise<void>((resolve) => started = resolve);
  const long = a.recorder.around("bash", {}, false, async () => {
    await Deno.writeTextFile(a.path("slow.txt"), "slow\n");
    started();
    await held;
  });
  await running;
  // The other workspace's calls go through while the long call runs.
  other.beginTurn(1, "quick");
  await other.around("bash", {}, false, () => Deno.writeTextFile(join(otherRoot, "q"), "q\n"));
  await other.endTurn();
  // An undo of the long call's workspace waits for the call to end.
  const otherStore = openUndoStore(a.state);
  let undone = false;
  const waiting = (async () => {
    using _ws = await otherStore.lockWorkspaces([mirrorKey([a.root])]);
    undone = true;
  })();
  await new Promise((resolve) => setTimeout(resolve, 200));
  assertEquals(undone, false);
  finish();
  await long;
  await a.recorder.endTurn();
  await waiting;
  assertEquals(undone, true);
  const outcome = await undo(a.store);
  assertEquals(outcome.removed, [a.path("slow.txt")]);
});

Deno.test("a tree larger than the budget is not read again at every scan", async () => {
  await using ws = await undoBench("rousseau-undo-");
  for (const name of ["a", "b", "c"]) await Deno.writeTextFile(ws.path(name), name.repeat(100));
  let puts = 0;
  let room = false;
  const full = {
    put: () => {
      puts++;
      return false;
    },
    room: () => room,
  };
  // Seen well after the files' ctime, so the racy-git rule does not force a re-read.
  const later = () => Date.now() + 10_000;
  const first = scanTree({ roots: [ws.root], sink: full, now: later });
  assertEquals(puts, 3);
  const entry = first.get(ws.path("a"))?.entry;
  assertEquals(
    entry?.kind === "file" && entry.why,
    "the undo store is full (state.undo.max_bytes)",
  );
  const second = scanTree({ roots: [ws.root], sink: full, previous: first, now: later });
  assertEquals(puts, 3, "not read again while there is no room");
  assertEquals(diffMirrors(first, second), []);
  room = true;
  scanTree({ roots: [ws.root], sink: full, previous: second, now: later });
  assertEquals(puts, 6, "tried again once there is room");
});
