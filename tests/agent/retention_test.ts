/**
 * agent/retention.ts on real files: which sessions expire (age by last update, count by the
 * newest, the resumed one never), `sessions.db` shrinking when they go, and a pass with
 * nothing to do touching nothing (no lock taken, no undo directory made).
 */

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { expireSessions, pruneUndo } from "../../agent/retention.ts";
import { openSessionStore } from "../../agent/session_store.ts";
import { openUndoStore } from "../../agent/undo/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";

async function stateDir() {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-retain-" }));
  return { dir, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

const NOW = Date.parse("2025-06-01T00:00:00.000Z");
const DAY = 86_400_000;

/** Sessions last updated `ages` days before NOW, in order; their ids. */
function sessionsAged(path: string, ages: readonly number[], text = "hi"): string[] {
  const ids: string[] = [];
  {
    using store = openSessionStore(path);
    for (const _ of ages) {
      const id = store.create({ workspace: "/w", provider: "p", model: "m" });
      store.append(id, { role: "user", content: [{ type: "text", text }] });
      ids.push(id);
    }
  }
  const db = new DatabaseSync(path);
  ages.forEach((age, i) => {
    db.prepare("UPDATE sessions SET updated_at = ? WHERE id = ?")
      .run(new Date(NOW - age * DAY).toISOString(), ids[i]!);
  });
  db.close();
  return ids;
}

Deno.test("expireSessions() removes by age and by count, never the kept session", async (t) => {
  const table: {
    name: string;
    ages: number[];
    maxAgeDays: number;
    maxCount: number;
    keep?: number;
    left: number[];
  }[] = [
    {
      name: "nothing past either limit",
      ages: [1, 2, 3],
      maxAgeDays: 30,
      maxCount: 5,
      left: [0, 1, 2],
    },
    { name: "by age", ages: [1, 31, 45], maxAgeDays: 30, maxCount: 0, left: [0] },
    { name: "by count, newest kept", ages: [3, 1, 2, 4], maxAgeDays: 0, maxCount: 2, left: [1, 2] },
    {
      name: "the kept one counts among the newest",
      ages: [1, 2, 9],
      maxAgeDays: 0,
      maxCount: 2,
      keep: 2,
      left: [0, 2],
    },
    {
      name: "the kept one outlives max_age",
      ages: [1, 60],
      maxAgeDays: 30,
      maxCount: 0,
      keep: 1,
      left: [0, 1],
    },
    {
      name: "sessions used in the last day are spared by the count",
      ages: [0.5, 0.2, 3],
      maxAgeDays: 0,
      maxCount: 1,
      left: [0, 1],
    },
    { name: "both limits off", ages: [1, 500], maxAgeDays: 0, maxCount: 0, left: [0, 1] },
  ];
  for (const row of table) {
    await t.step(row.name, async () => {
      await using tmp = await stateDir();
      const path = join(tmp.dir, "sessions.db");
      const ids = sessionsAged(path, row.ages);
      using store = openSessionStore(path);
      const out = expireSessions(store, {
        maxAgeMs: row.maxAgeDays * DAY,
        maxCount: row.maxCount,
      }, { now: NOW, ...(row.keep === undefined ? {} : { keep: ids[row.keep]! }) });
      const left = row.left.map((i) => ids[i]!).sort();
      assertEquals(store.list().map((s) => s.id).sort(), left);
      assertEquals(out.sessions.length, ids.length - left.length);
      assertEquals(out.vacuumed, out.sessions.length > 0);
      // The messages went with them (foreign keys cascade).
      for (const id of out.sessions) assertEquals(store.load(id, false), []);
    });
  }
});

Deno.test("expireSessions() vacuums: the database file shrinks when sessions go", async () => {
  await using tmp = await stateDir();
  const path = join(tmp.dir, "sessions.db");
  sessionsAged(path, [40, 41, 42, 1], "x".repeat(200_000));
  const size = () =>
    [path, `${path}-wal`].reduce((sum, p) => {
      try {
        return sum + Deno.statSync(p).size;
      } catch {
        return sum;
      }
    }, 0);
  const before = size();
  using store = openSessionStore(path);
  const out = expireSessions(store, { maxAgeMs: 30 * DAY, maxCount: 0 }, { now: NOW });
  assertEquals(out.sessions.length, 3);
  assert(size() < before - 500_000, `${before} → ${size()} bytes`);
});

Deno.test("pruneUndo() with nothing to do takes no lock and makes no directory", async () => {
  await using tmp = await stateDir();
  using sessions = openSessionStore(join(tmp.dir, "sessions.db"));
  const undo = openUndoStore(tmp.dir, { maxBytes: 1000 });
  assertEquals(await pruneUndo(undo, sessions, { budget: true }), []);
  assertEquals(await Deno.stat(join(tmp.dir, "undo")).then(() => true, () => false), false);
});
