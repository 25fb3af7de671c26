/**
 * Sessions in SQLite (Deno's built-in `node:sqlite`, WAL mode): one row per message, each
 * written as soon as its step is complete, so a killed process loses at most the step in
 * flight. Loading a session repairs the one state a crash can leave behind — an assistant
 * message whose tool calls have no results — with error results, so providers accept it.
 *
 * @module
 */

import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { ContentBlock, Message } from "../providers/types.ts";
import type { ContextRecord } from "./context.ts";
import { contextRecordFromRow, messageFromRow } from "./session_check.ts";

/** A session's summary. */
export interface SessionInfo {
  readonly id: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly workspace: string;
  readonly provider: string;
  readonly model: string;
  /** The first prompt, shortened. */
  readonly title: string;
  readonly messages: number;
  /** Prompts the user sent (messages that are not tool results). */
  readonly turns: number;
}

/** Where sessions live. */
export interface SessionStore extends Disposable {
  /** Starts a session and returns its id. */
  create(meta: { workspace: string; provider: string; model: string }): string;
  /** The session with this id or unique id prefix; undefined when there is none. */
  find(idOrPrefix: string): SessionInfo | undefined;
  /**
   * The stored messages; with `repair` (the default, for resuming) a step that was cut short
   * is answered with error results, and the repair is stored. Throws, naming the row and
   * changing nothing, when a stored row is damaged (`agent/session_check.ts`).
   */
  load(id: string, repair?: boolean): Message[];
  /**
   * Appends one message (one transaction); throws when it cannot be stored. The promise
   * settles once the message is on disk (it rejects when syncing fails): for a reply that
   * asks for tool calls, which must not change anything before then; already settled for
   * any other message, which the next such sync takes to disk too. It never rejects
   * unobserved: a caller that does not need it may drop it.
   */
  append(id: string, message: Message): Promise<void>;
  /**
   * Appends a context record (a compaction, a learned window). The messages themselves are
   * never rewritten: a compaction is stored beside them, so `session show` tells both.
   */
  appendContext(id: string, record: ContextRecord): void;
  /** The session's context records, in order. */
  loadContext(id: string): ContextRecord[];
  /** Every session, newest first. */
  list(): SessionInfo[];
  /** Removes a session; false when there was none. */
  delete(id: string): boolean;
  /**
   * Removes the sessions last updated before `before` (an ISO time) and those past the
   * newest `maxCount` (0: no limit) last updated before `spare`, never `keep`; returns their
   * ids (one transaction).
   */
  expire(
    options: { before?: string; maxCount?: number; keep?: string; spare?: string },
  ): string[];
  /** Gives the space of removed sessions back to the file system; false when busy. */
  vacuum(): boolean;
  close(): void;
}

/**
 * The result text given to tool calls a crash (or a failure that ended the run, such as an
 * audit log on a full disk) left unanswered. Such a call may have run, whole or in part: the
 * model must not be told it did not.
 */
export const INTERRUPTED =
  "interrupted: no result was recorded, and the call may have run in part; check its effects before repeating it";

/** Error results for the tool calls in `message` that `next` does not answer. */
export function repairMessages(messages: readonly Message[]): Message | undefined {
  const last = messages.at(-1);
  if (last?.role !== "assistant") return undefined;
  const calls = last.content.filter((b) => b.type === "tool_use");
  if (calls.length === 0) return undefined;
  return {
    role: "user",
    content: calls.map((call): ContentBlock => ({
      type: "tool_result",
      toolUseId: call.id,
      content: INTERRUPTED,
      isError: true,
    })),
  };
}

/** The error of a stored row that cannot be trusted: which one, why, what to do. */
function damaged(id: string, row: string, error: unknown): Error {
  return new Error(
    `session ${id}: its stored ${row} is damaged (${
      error instanceof Error ? error.message : error
    }); nothing was sent or changed: start a new session, or remove this one with ` +
      `rousseau session delete ${id}`,
    { cause: error },
  );
}

function titleOf(message: Message): string {
  const text = message.content.filter((b) => b.type === "text").map((b) => b.text).join(" ")
    .replace(/\s+/g, " ").trim();
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** What {@linkcode SessionStore.append} gives for a message that needs no sync of its own. */
const STORED: Promise<void> = Promise.resolve();

/** The error of a failed sync of the write-ahead log at `path`. */
function syncError(path: string, error: unknown): Error {
  return new Error(
    `session: the model's reply could not be synced to disk (${path}): ${
      error instanceof Error ? error.message : String(error)
    }`,
    { cause: error },
  );
}

/** Opens (creating when needed) the database at `path`. */
export function openSessionStore(path: string): SessionStore {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(path);
  // A file system without shared memory support keeps the rollback journal (`delete`).
  const journal = (db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode?: unknown })
    ?.journal_mode;
  /** The write-ahead log; undefined when the database has none. */
  const wal = journal === "wal" ? `${path}-wal` : undefined;
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec(`
    CREATE TABLE IF NOT EXISTS sessions (
      id TEXT PRIMARY KEY,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      workspace TEXT NOT NULL,
      provider TEXT NOT NULL,
      model TEXT NOT NULL,
      title TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE IF NOT EXISTS messages (
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      role TEXT NOT NULL,
      content TEXT NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE IF NOT EXISTS context_records (
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      record TEXT NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
  `);
  const summary = `SELECT s.id, s.created_at AS createdAt, s.updated_at AS updatedAt,
      s.workspace, s.provider, s.model, s.title,
      (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS messages,
      (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id AND m.role = 'user'
        AND m.content NOT LIKE '[{"type":"tool_result"%') AS turns
    FROM sessions s`;
  const toInfo = (row: Record<string, unknown>): SessionInfo => ({
    id: String(row.id),
    createdAt: String(row.createdAt),
    updatedAt: String(row.updatedAt),
    workspace: String(row.workspace),
    provider: String(row.provider),
    model: String(row.model),
    title: String(row.title),
    messages: Number(row.messages),
    turns: Number(row.turns),
  });
  // SQLite has already rolled back on some errors (a full disk, I/O): a ROLLBACK then throws
  // "no transaction is active" in place of the error that says what went wrong.
  const rollback = () => {
    if (db.isTransaction) db.exec("ROLLBACK");
  };
  /** Statements of the per-message path, compiled once (a prepare costs more than the run). */
  const statements = new Map<string, StatementSync>();
  const prepared = (sql: string): StatementSync => {
    let statement = statements.get(sql);
    if (statement === undefined) statements.set(sql, statement = db.prepare(sql));
    return statement;
  };
  /**
   * Durability (WAL): every commit survives the process being killed (`synchronous =
   * NORMAL`). A reply that asks for tool calls must also survive a power loss before the
   * calls change anything: the session must still know they were asked for, so that its
   * repair tells the model they may have run. Its commit is followed by a sync of the log,
   * done off this thread: the gate (`agent/tool_host.ts`) waits for it only before a call
   * that may change something runs, so it overlaps the approval, the audit line and undo's
   * record (`synchronous = FULL` would hold this thread for it, about a millisecond on
   * ext4). Other messages may be lost by a power loss, never leaving a hole (the log is
   * replayed in order, and the next sync takes them too); a lost tool result is repaired as
   * one a crash left unanswered. Without a log (a file system that refused WAL) a reply
   * that asks for calls is committed with `FULL` instead.
   */
  const needsSync = (message: Message) => message.content.some((b) => b.type === "tool_use");
  let synchronous = "";
  /** The write-ahead log, opened at the first sync; closed with the store. */
  let log: Deno.FsFile | undefined;
  const append = (id: string, message: Message): Promise<void> => {
    const now = new Date().toISOString();
    const sync = needsSync(message);
    const wanted = sync && wal === undefined ? "FULL" : "NORMAL";
    if (wanted !== synchronous) {
      db.exec(`PRAGMA synchronous = ${wanted}`);
      synchronous = wanted;
    }
    db.exec("BEGIN IMMEDIATE");
    try {
      const row = prepared(
        "SELECT COALESCE(MAX(seq), 0) AS seq FROM messages WHERE session_id = ?",
      )
        .get(id) as { seq: number };
      prepared(
        "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
      ).run(id, row.seq + 1, message.role, JSON.stringify(message.content), now);
      const title = row.seq === 0 && message.role === "user" ? titleOf(message) : undefined;
      if (title === undefined) {
        prepared("UPDATE sessions SET updated_at = ? WHERE id = ?").run(now, id);
      } else {
        prepared("UPDATE sessions SET updated_at = ?, title = ? WHERE id = ?").run(
          now,
          title,
          id,
        );
      }
      db.exec("COMMIT");
    } catch (error) {
      rollback();
      throw error;
    }
    if (!sync || wal === undefined) return STORED;
    let synced: Promise<void>;
    try {
      // Opened once (the data of a file is synced whoever wrote it): SQLite keeps the log's
      // file while a connection, this one, is open, and reuses it from the start after a
      // checkpoint, which syncs what it copies first.
      log ??= Deno.openSync(wal, { read: true });
      synced = log.syncData().catch((error) => Promise.reject(syncError(wal, error)));
    } catch (error) {
      synced = Promise.reject(syncError(wal, error));
    }
    synced.catch(() => {}); // observed by whoever awaits it; never an unhandled rejection
    return synced;
  };
  const store: SessionStore = {
    create(meta) {
      const id = crypto.randomUUID();
      const now = new Date().toISOString();
      db.prepare(
        "INSERT INTO sessions (id, created_at, updated_at, workspace, provider, model) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(id, now, now, meta.workspace, meta.provider, meta.model);
      return id;
    },
    find(idOrPrefix) {
      const exact = db.prepare(`${summary} WHERE s.id = ?`).get(idOrPrefix);
      if (exact) return toInfo(exact);
      if (idOrPrefix.length < 4 || /[%_]/.test(idOrPrefix)) return undefined;
      const rows = db.prepare(`${summary} WHERE s.id LIKE ? LIMIT 2`).all(`${idOrPrefix}%`);
      return rows.length === 1 ? toInfo(rows[0]!) : undefined;
    },
    load(id, repair = true) {
      const rows = db.prepare(
        "SELECT seq, role, content FROM messages WHERE session_id = ? ORDER BY seq",
      )
        .all(id) as { seq: number; role: unknown; content: unknown }[];
      const messages: Message[] = rows.map((row) => {
        try {
          return messageFromRow(row.role, row.content);
        } catch (error) {
          throw damaged(id, `message ${row.seq}`, error);
        }
      });
      const fix = repair ? repairMessages(messages) : undefined;
      if (fix !== undefined) {
        append(id, fix);
        messages.push(fix);
      }
      return messages;
    },
    append,
    appendContext(id, record) {
      db.prepare(
        `INSERT INTO context_records (session_id, seq, record, created_at)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM context_records WHERE session_id = ?), ?, ?)`,
      ).run(id, id, JSON.stringify(record), new Date().toISOString());
    },
    loadContext(id) {
      const rows = db.prepare(
        "SELECT seq, record FROM context_records WHERE session_id = ? ORDER BY seq",
      ).all(id) as { seq: number; record: unknown }[];
      return rows.map((row) => {
        try {
          return contextRecordFromRow(row.record);
        } catch (error) {
          throw damaged(id, `context record ${row.seq}`, error);
        }
      });
    },
    list() {
      return db.prepare(`${summary} ORDER BY s.updated_at DESC`).all().map(toInfo);
    },
    delete(id) {
      return Number(db.prepare("DELETE FROM sessions WHERE id = ?").run(id).changes) > 0;
    },
    expire({ before, maxCount = 0, keep = "", spare = "" }) {
      const old = before === undefined ? "" : "updated_at < ?";
      // Past the newest `maxCount` (counting `keep` among them whatever its age), and not
      // used since `spare` (another process may still be in such a session).
      const many = maxCount > 0
        ? "(updated_at < ? AND id NOT IN (SELECT id FROM sessions " +
          "ORDER BY (id = ?) DESC, updated_at DESC, id DESC LIMIT ?))"
        : "";
      const where = [old, many].filter(Boolean).join(" OR ");
      if (where === "") return [];
      const params = [
        keep,
        ...(before === undefined ? [] : [before]),
        ...(maxCount > 0 ? [spare === "" ? "9999" : spare, keep, maxCount] : []),
      ];
      const select = db.prepare(`SELECT id FROM sessions WHERE id != ? AND (${where})`);
      const expired = () => (select.all(...params) as { id: string }[]).map((row) => row.id);
      // A look first, without the write lock: the usual answer is nothing.
      if (expired().length === 0) return [];
      db.exec("BEGIN IMMEDIATE");
      try {
        const ids = expired();
        const remove = db.prepare("DELETE FROM sessions WHERE id = ?");
        for (const id of ids) remove.run(id);
        db.exec("COMMIT");
        return ids;
      } catch (error) {
        rollback();
        throw error;
      }
    },
    vacuum() {
      try {
        db.exec("VACUUM");
        // WAL mode: the rebuilt pages are in the log until a checkpoint; truncate it too.
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        return true;
      } catch {
        return false; // another connection is writing: the next retention pass tries again
      }
    },
    close() {
      // A sync still under way (a reply whose calls were all read-only, which do not wait for
      // it) may fail once its file is closed: nothing waits for it any more.
      log?.close();
      log = undefined;
      if (db.isOpen) db.close();
    },
    [Symbol.dispose]() {
      store.close();
    },
  };
  return store;
}
