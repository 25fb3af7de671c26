/**
 * Retention of the state directory through the real CLI (issue 27 item 3): sessions expire by
 * count and age as a `run` starts, with their undo data (and undo data whose session is gone),
 * never the session being resumed; `sessions.db` shrinks afterwards; the audit log rotates
 * and `audit verify` checks the rotated files as one chain; `doctor` says what the state
 * directory holds. Each test has a state directory of its own, seeded with real files.
 *
 * From other agents: sessions that pile up make resuming slow (openai/codex#19483: 821
 * session files, a resume picker at 8–60 s) and stores grow without any retention
 * (mksglu/context-mode#949); a silent 30-day sweep was then taken for a bug that deleted
 * history (phuryn/grok-build-vscode#153, on Claude Code's `cleanupPeriodDays`), so removal is
 * said on stderr and `doctor` names the keys.
 */

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openSessionStore } from "../../../agent/session_store.ts";
import { mirrorKey, openUndoStore, sha256Hex, type TurnRecord } from "../../../agent/undo/mod.ts";
import { rotatedFiles, sha256 } from "../../../approver/mod.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

/** A state directory of its own under a temp home. */
async function home() {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-retention-" }));
  return {
    dir,
    state: join(dir, "data", "rousseau"),
    env: { XDG_DATA_HOME: join(dir, "data"), XDG_CONFIG_HOME: join(dir, "config") },
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const DAY = 86_400_000;

/**
 * Seeds `names` sessions (each with a 100 KB message, so vacuuming shows), last updated
 * `ages[i]` ms ago, each with one turn of undo data holding a file copy of its own; returns
 * their ids by name.
 */
async function seed(
  state: string,
  root: string,
  names: readonly string[],
  ages: readonly number[],
): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  {
    using store = openSessionStore(join(state, "sessions.db"));
    for (const name of names) {
      const id = store.create({ workspace: root, provider: "anthropic", model: "m" });
      store.append(id, { role: "user", content: [{ type: "text", text: name.repeat(100_000) }] });
      ids[name] = id;
    }
  }
  const db = new DatabaseSync(join(state, "sessions.db"));
  names.forEach((name, i) => {
    db.prepare("UPDATE sessions SET updated_at = ? WHERE id = ?").run(
      new Date(Date.now() - ages[i]!).toISOString(),
      ids[name]!,
    );
  });
  db.close();
  const undo = openUndoStore(state);
  using _lock = await undo.lock();
  for (const [name, id] of [...Object.entries(ids), ["orphan", "0rphan-0000"]] as const) {
    const bytes = new TextEncoder().encode(`${name} before`);
    const hash = sha256Hex(bytes);
    undo.put(hash, bytes);
    const record: TurnRecord = {
      version: 1,
      session: id,
      turn: 1,
      prompt: name,
      started: new Date().toISOString(),
      ended: new Date().toISOString(),
      roots: [root],
      mirror: mirrorKey([root]),
      changes: {
        [join(root, `${name}.txt`)]: {
          before: { kind: "file", mode: 0o644, size: bytes.length, hash, stored: true },
          after: null,
        },
      },
      problems: {},
    };
    undo.writeTurn(record);
  }
  return ids;
}

function dbBytes(state: string): number {
  return ["sessions.db", "sessions.db-wal"].reduce((sum, name) => {
    try {
      return sum + Deno.statSync(join(state, name)).size;
    } catch {
      return sum;
    }
  }, 0);
}

function sessionIds(state: string): string[] {
  using store = openSessionStore(join(state, "sessions.db"));
  return store.list().map((s) => s.id).sort();
}

function undoSessions(state: string): string[] {
  try {
    return [...Deno.readDirSync(join(state, "undo", "sessions"))].map((e) => e.name).sort();
  } catch {
    return [];
  }
}

function objectCount(state: string): number {
  let n = 0;
  for (const prefix of Deno.readDirSync(join(state, "undo", "objects"))) {
    n += [...Deno.readDirSync(join(state, "undo", "objects", prefix.name))].length;
  }
  return n;
}

/** The stderr of the last {@linkcode run}. */
let stderr = "";

async function run(
  root: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<string> {
  await using server = startFakeAnthropic([{ text: "Done." }]);
  const out = await runCli(
    ["--workspace", root, "run", "--output", "json", ...args, "hello"],
    { env: { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" } },
  );
  assertEquals(out.code, 0, out.stderr);
  stderr = out.stderr;
  return JSON.parse(out.stdout).session_id;
}

Deno.test("retention: a run keeps the newest state.sessions.max_count sessions and the one it resumes, with their undo data", async () => {
  await using h = await home();
  await using ws = await tmpWorkspace();
  // s0 is the oldest of all (older than max_age too) and the one resumed: it stays.
  const ids = await seed(h.state, ws.root, ["s0", "s1", "s2", "s3", "s4", "s5"], [
    40 * DAY,
    5 * DAY,
    4 * DAY,
    3 * DAY,
    2 * DAY,
    1 * DAY,
  ]);
  assertEquals(objectCount(h.state), 7);
  const before = dbBytes(h.state);
  const env = { ...h.env, ROUSSEAU_STATE_SESSIONS_MAX_COUNT: "3" };
  const resumed = await run(ws.root, env, "--session", ids.s0!);
  assertEquals(resumed, ids.s0);
  assertStringIncludes(
    stderr,
    "rousseau: removed 3 sessions unused for 30d (state.sessions.max_age) or past the newest 3 " +
      "(state.sessions.max_count), with their undo data\n",
  );
  const kept = [ids.s0!, ids.s4!, ids.s5!].sort();
  assertEquals(sessionIds(h.state), kept);
  // Their undo data went too, with the orphan's (a session sessions.db does not hold).
  assertEquals(undoSessions(h.state), kept);
  assertEquals(objectCount(h.state), 3);
  const after = dbBytes(h.state);
  assert(after < before - 250_000, `sessions.db (with its WAL) ${before} → ${after} bytes`);
  // The undo data that stays still undoes: s5's turn restores its file.
  const undone = await runCli(["undo", ids.s5!], { env });
  assertEquals(undone.code, 0, undone.stderr);
  assertEquals(await Deno.readTextFile(ws.path("s5.txt")), "s5 before");
});

Deno.test("retention: sessions unused for state.sessions.max_age go as a run starts; 0 keeps them", async () => {
  await using h = await home();
  await using ws = await tmpWorkspace();
  const ids = await seed(h.state, ws.root, ["old", "new"], [31 * DAY, 29 * DAY]);
  const keepAll = await run(ws.root, { ...h.env, ROUSSEAU_STATE_SESSIONS_MAX_AGE: "0" });
  assertEquals(sessionIds(h.state), [ids.old!, ids.new!, keepAll].sort());
  const next = await run(ws.root, h.env); // the default: 30d
  assertEquals(sessionIds(h.state), [ids.new!, keepAll, next].sort());
  assertEquals(undoSessions(h.state), [ids.new!].sort());
  // -q: removed all the same, and nothing said.
  const week = await run(ws.root, { ...h.env, ROUSSEAU_STATE_SESSIONS_MAX_AGE: "1d12h" }, "-q");
  assertEquals(sessionIds(h.state), [keepAll, next, week].sort());
  assertEquals(undoSessions(h.state), []);
  assertEquals(stderr, "");
});

Deno.test("retention: a bad state.sessions.max_age stops start-up with the key and the form wanted", async () => {
  await using h = await home();
  const out = await runCli(["session", "list"], {
    env: { ...h.env, ROUSSEAU_STATE_SESSIONS_MAX_AGE: "a month" },
  });
  assertEquals([out.code, out.stderr], [
    2,
    'rousseau: environment: ROUSSEAU_STATE_SESSIONS_MAX_AGE: invalid age "a month" (want a ' +
    "number with a unit, e.g. 30d, 12h, 90m)\n",
  ]);
});

Deno.test("retention: the audit log rotates at state.audit.max_bytes; audit verify checks every file; doctor says what the state directory holds", async () => {
  await using h = await home();
  await using ws = await tmpWorkspace({ files: { "a.txt": "x\n" } });
  const env = {
    ...h.env,
    ROUSSEAU_STATE_AUDIT_MAX_BYTES: "1500",
    ROUSSEAU_STATE_AUDIT_KEEP: "3",
  };
  for (let i = 0; i < 8; i++) {
    const out = await runCli(
      ["--workspace", ws.root, "tool", "read", JSON.stringify({ path: ws.path("a.txt") })],
      { env },
    );
    assertEquals(out.code, 0, out.stderr);
  }
  const log = join(h.state, "audit.jsonl");
  const rotated = rotatedFiles(log);
  assertEquals(rotated.length, 3);
  const texts = await Promise.all([...rotated, log].map((f) => Deno.readTextFile(f)));
  const lines = texts.flatMap((t) => t.trimEnd().split("\n"));
  const seqs = lines.map((l) => JSON.parse(l).seq);
  // 16 lines were written; the oldest file went, and the rest are one run of entries.
  assertEquals(seqs, Array.from({ length: seqs.length }, (_, i) => 17 - seqs.length + i));
  const verified = await runCli(["audit", "verify"], { env });
  assertEquals([verified.code, verified.stdout], [
    0,
    `audit verify: ${log}: intact, ${lines.length} lines in 4 files (the oldest ` +
    `${rotated[0]!.slice(h.state.length + 1)}), head ${await sha256(lines.at(-1)!)}\n`,
  ]);

  const doctor = await runCli(["--workspace", ws.root, "doctor"], {
    env: { ...env, ANTHROPIC_API_KEY: "k" },
  });
  const auditBytes = texts.reduce((sum, t) => sum + new TextEncoder().encode(t).length, 0);
  const kib = (auditBytes / 1024).toFixed(1);
  assertMatch(
    doctor.stdout,
    new RegExp(
      `\\nok +state +${h.state}: 0 sessions \\(sessions.db 0 B\\) · undo 0 B of 256 MiB · ` +
        `audit ${kib} KiB in 4 files · overlay scratch 0 B\\n`,
    ),
  );
  assertMatch(
    doctor.stdout,
    /\nok +retention +sessions for 30d since their last use, the newest 1000 \(state\.sessions\.max_age, max_count\) · the audit log rotated at 1\.5 KiB, 3 rotated files kept \(state\.audit\.max_bytes, keep\)\n/,
  );

  // A rotated file edited: verification fails and names that file and line.
  const middle = rotated[1]!;
  const original = await Deno.readTextFile(middle);
  const [first, ...rest] = original.split("\n");
  const edited = JSON.stringify({ ...JSON.parse(first!), time: "2000-01-01T00:00:00.000Z" });
  await Deno.writeTextFile(middle, [edited, ...rest].join("\n"));
  const tampered = await runCli(["audit", "verify"], { env });
  assertEquals([tampered.code, tampered.stdout], [
    1,
    `audit verify: ${middle}: line 1: line 1 was edited: line 2 holds the hash of a different line 1\n`,
  ]);
});
