/**
 * The SQLite session store on a real file: messages survive reopening, a cut step is
 * repaired (once), prefixes resolve, deletes cascade.
 */

import { join } from "node:path";
import { INTERRUPTED, openSessionStore } from "../../agent/session_store.ts";
import type { Message } from "../../providers/types.ts";
import { callsBetweenMarks } from "../_helpers/strace_marks.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { fill, smallDisk } from "../_helpers/small_disk.ts";

/** Temporary directories made here; removed when the module ends, passed or failed. */
const made: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of made) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // already gone
    }
  }
});

async function tmpDb(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rousseau-sessions-" });
  made.push(dir);
  return join(dir, "state", "sessions.db");
}

const meta = { workspace: "/ws", provider: "anthropic", model: "m" };
const prompt: Message = { role: "user", content: [{ type: "text", text: "fix  the\nbug" }] };
const call: Message = {
  role: "assistant",
  content: [
    { type: "text", text: "Looking." },
    { type: "tool_use", id: "t1", name: "read", input: { path: "/ws/a" } },
    { type: "tool_use", id: "t2", name: "bash", input: { command: "ls" } },
  ],
};

Deno.test("session store: messages survive a reopen, in order, in WAL mode", async () => {
  const path = await tmpDb();
  let id: string;
  {
    using store = openSessionStore(path);
    id = store.create(meta);
    store.append(id, prompt);
    store.append(id, { role: "assistant", content: [{ type: "text", text: "done" }] });
  }
  using store = openSessionStore(path);
  assertEquals(store.load(id).map((m) => m.role), ["user", "assistant"]);
  const info = store.find(id)!;
  assertEquals(info.title, "fix the bug");
  assertEquals(info.messages, 2);
  assertEquals(store.list().map((s) => s.id), [id]);
  const wal = await Deno.stat(path + "-wal").then(() => true, () => false);
  assert(wal, "the database runs in WAL mode");
});

Deno.test("session store: unanswered tool calls are repaired once, with error results", async () => {
  const path = await tmpDb();
  using store = openSessionStore(path);
  const id = store.create(meta);
  store.append(id, prompt);
  store.append(id, call);
  const shown = store.load(id, false);
  assertEquals(shown.length, 2, "show does not repair");
  const loaded = store.load(id);
  assertEquals(loaded.at(-1), {
    role: "user",
    content: [
      { type: "tool_result", toolUseId: "t1", content: INTERRUPTED, isError: true },
      { type: "tool_result", toolUseId: "t2", content: INTERRUPTED, isError: true },
    ],
  });
  assertEquals(
    INTERRUPTED,
    "interrupted: no result was recorded, and the call may have run in part; check its effects before repeating it",
  );
  assertEquals(store.load(id).length, 3, "the repair is stored, not repeated");
});

Deno.test("session store: unique prefixes resolve, ambiguous or short ones do not", async () => {
  using store = openSessionStore(await tmpDb());
  const id = store.create(meta);
  assertEquals(store.find(id.slice(0, 8))?.id, id);
  assertEquals(store.find(id.slice(0, 3)), undefined);
  assertEquals(store.find("%%%%"), undefined);
  assertEquals(store.find("nope-nope"), undefined);
});

Deno.test("session store: delete removes the session and its messages", async () => {
  using store = openSessionStore(await tmpDb());
  const id = store.create(meta);
  store.append(id, prompt);
  assertEquals(store.delete(id), true);
  assertEquals(store.delete(id), false);
  assertEquals(store.find(id), undefined);
  assertEquals(store.load(id), []);
});

Deno.test("a message that finds the disk full fails with SQLite's reason, and the session reopens", async () => {
  // SQLite rolls the transaction back itself on SQLITE_FULL; a second ROLLBACK used to throw
  // "cannot rollback - no transaction is active" in place of the reason.
  await using disk = await smallDisk("1m");
  const path = join(disk.dir, "sessions.db");
  let id: string;
  {
    using store = openSessionStore(path);
    id = store.create({ workspace: "/ws", provider: "anthropic", model: "m" });
    store.append(id, { role: "user", content: [{ type: "text", text: "hello" }] });
    await fill(disk.dir);
    const big: Message = {
      role: "assistant",
      content: [{ type: "text", text: "x".repeat(1 << 20) }],
    };
    let failure: Error | undefined;
    try {
      store.append(id, big);
    } catch (error) {
      failure = error as Error;
    }
    assert(failure !== undefined, "the append succeeded on a full disk");
    assert(/full/i.test(failure.message), failure.message);
    assert(!failure.message.includes("no transaction"), failure.message);
  }
  await Deno.remove(join(disk.dir, "fill"));
  using again = openSessionStore(path);
  assertEquals(again.load(id).map((m) => m.role), ["user"]);
});

/** The store appending `messages` in a child process traced by strace: syncs per append. */
async function syncsPerAppend(messages: readonly Message[]): Promise<number[]> {
  const path = await tmpDb();
  const script = `
    import { openSessionStore } from ${
    JSON.stringify(new URL("../../agent/session_store.ts", import.meta.url).href)
  };
    const messages = ${JSON.stringify(messages)};
    const store = openSessionStore(${JSON.stringify(path)});
    const id = store.create({ workspace: "/ws", provider: "anthropic", model: "m" });
    for (const message of messages) {
      Deno.stderr.writeSync(new TextEncoder().encode("MARK\\n"));
      await store.append(id, message);
    }
    Deno.stderr.writeSync(new TextEncoder().encode("MARK\\n"));
    store.close();
  `;
  // One fsync or fdatasync per append that must reach the disk.
  return await callsBetweenMarks(script, /\bf(data)?sync\(/);
}

Deno.test("session store: a reply asking for tool calls is on disk before the calls run; other messages wait for the next sync", async () => {
  const result: Message = {
    role: "user",
    content: [{ type: "tool_result", toolUseId: "t1", content: "ok", isError: false }],
  };
  const answer: Message = { role: "assistant", content: [{ type: "text", text: "done" }] };
  const counts = await syncsPerAppend([prompt, call, result, call, result, answer]);
  assertEquals(counts.map((n) => n > 0), [false, true, false, true, false, false]);
});
