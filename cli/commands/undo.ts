/**
 * `rousseau undo [SESSION] [--turns N] [--list] [--force] [--json]`: puts back what the last
 * turn(s) of a session changed in the workspace (cli.md, "`undo`"), and chat's `/undo`.
 * Every undo (and every refusal) is recorded in the audit log as a `tool.done` or
 * `tool.error` event of the tool `undo`.
 *
 * @module
 */

import { type AuditSink, canonicalJson } from "../../approver/mod.ts";
import { openSessionStore } from "../../agent/session_store.ts";
import type { Entry } from "../../agent/undo/mod.ts";
import { hasChanges, settledTurns, type UndoOutcome, undoTurns } from "../../agent/undo/mod.ts";
import { workspaceLocks } from "../../agent/undo/mod.ts";
import {
  openUndoStore,
  type RecordedChange,
  type TurnRecord,
  type UndoStore,
} from "../../agent/undo/mod.ts";
import { sessionsPath } from "../agent_setup.ts";
import { undoMaxBytes } from "../config/state_dir.ts";
import { openAuditLog } from "../config/audit_log.ts";
import { type Config, loadConfig } from "../config/config.ts";
import { EXIT, UsageError } from "../errors.ts";
import { type GlobalFlags, workspaceFrom } from "../config/options.ts";
import { writeStderr, writeStdout } from "../terminal/output.ts";
import { visible } from "../../approver/visible.ts";

/** Flags of `undo`. */
export interface UndoFlags extends GlobalFlags {
  /** `--turns N`: the last N turns. */
  readonly turns?: string;
  /** `--list`: the session's turns and the files each changed. */
  readonly list?: boolean;
  /** `--force`: restore over later changes. */
  readonly force?: boolean;
  /** `--json`. */
  readonly json?: boolean;
}

/** What one undo produced, ready to print. */
export interface UndoReport {
  readonly code: number;
  /** For stdout. */
  readonly stdout: string;
  /** For stderr, one message a line (without the `rousseau: ` prefix). */
  readonly stderr: string[];
  readonly outcome: UndoOutcome;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function turnsText(turns: readonly number[]): string {
  return turns.length === 1 ? `turn ${turns[0]}` : `turns ${turns[0]}–${turns.at(-1)}`;
}

/** A path and why it cannot be put back; `*` (the whole call or turn) shows the reason only. */
function notUndoableLine(path: string, why: string): string {
  return path === "*" ? why : `${path}: ${why}`;
}

/** One word for how a path changed. */
export function changeWord(change: RecordedChange): string {
  const { before, after } = change;
  if (after === "pending") return "changed";
  if (before === null) return "created";
  if (after === null) return "deleted";
  const same = (a: Entry, b: Entry) => a.kind === "file" && b.kind === "file" && a.hash === b.hash;
  return same(before, after) ? "mode" : "modified";
}

/**
 * The locks of the workspaces the session's turns changed: a call still running there (in
 * another process) is waited for, so its pending marker is not taken for a dead one's.
 */
function lockWorkspacesOf(store: UndoStore, sessionId: string): Promise<Disposable> {
  const records = store.listTurns(sessionId).filter((r) => r.damaged === undefined);
  return store.lockWorkspaces(records.flatMap((r) => workspaceLocks(r.roots)));
}

/**
 * Undoes the last `turns` turns of `sessionId` under the store's lock, records it in the audit
 * log, and says what happened.
 */
export async function performUndo(
  config: Config,
  sessionId: string,
  options: {
    turns?: number;
    force?: boolean;
    source: string;
    audit?: AuditSink;
    /** The caller's roots: turns that changed another workspace are refused (chat's /undo). */
    workspace?: readonly string[];
  },
): Promise<UndoReport> {
  const store = openUndoStore(config.stateDir, { maxBytes: undoMaxBytes(config) });
  let outcome: UndoOutcome;
  {
    using _workspaces = await lockWorkspacesOf(store, sessionId);
    using _lock = await store.lock();
    outcome = undoTurns(store, sessionId, {
      turns: options.turns ?? 1,
      force: options.force === true,
      skip: config.protectedPaths,
      ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
    });
  }
  if (outcome.turns.length === 0) {
    return {
      code: EXIT.ok,
      stdout: `nothing to undo in session ${sessionId}\n`,
      stderr: [],
      outcome,
    };
  }
  const audit = options.audit ?? openAuditLog(config);
  const which = turnsText(outcome.turns);
  const refused = outcome.refusal !== undefined ||
    (outcome.conflicts.length > 0 && options.force !== true);
  const failed = outcome.notUndoable.length > 0;
  const stderr: string[] = [];
  if (outcome.refusal !== undefined) {
    stderr.push(`undo: nothing was written: ${outcome.refusal}`);
  } else if (refused) {
    stderr.push(
      `undo: nothing was written: ${
        plural(outcome.conflicts.length, "path")
      } changed after ${which} (pass --force to restore anyway):\n` +
        outcome.conflicts.map((p) => `  ${p}`).join("\n"),
    );
  }
  if (failed) {
    stderr.push(
      `undo: not everything ${which} changed could be put back:\n` +
        outcome.notUndoable.map((n) => `  ${notUndoableLine(n.path, n.why)}`).join("\n"),
    );
  }
  if (outcome.again === true) {
    stderr.push(
      `undo: ${which} ${
        outcome.turns.length === 1 ? "stays" : "stay"
      } undoable: undo again once the paths above can be written`,
    );
  }
  if (outcome.kept.length > 0) {
    stderr.push(
      `undo: kept ${
        plural(outcome.kept.length, "directory", "directories")
      } the turn created that now hold other files:\n` +
        outcome.kept.map((p) => `  ${p}`).join("\n"),
    );
  }
  await audit.record({
    event: refused || failed ? "tool.error" : "tool.done",
    tool: "undo",
    input: canonicalJson({
      turns: outcome.turns,
      force: options.force === true,
      restored: outcome.restored,
      removed: outcome.removed,
      conflicts: outcome.conflicts,
    }),
    source: options.source,
    "session_id": sessionId,
    ...(refused || failed ? { reason: stderr.join("\n") } : {}),
  }).catch(() => {}); // the audit sink must not fail the command (approver/audit/ contract)
  const stdout = refused
    ? ""
    : `undid ${which} of session ${sessionId}: ${
      plural(outcome.restored.length, "path")
    } restored, ${plural(outcome.removed.length, "path")} removed\n` +
      outcome.restored.map((p) => `restored ${p}\n`).join("") +
      outcome.removed.map((p) => `removed ${p}\n`).join("");
  return { code: refused || failed ? EXIT.failure : EXIT.ok, stdout, stderr, outcome };
}

/** The `--list` text of a session's records. */
export function listText(sessionId: string, records: readonly TurnRecord[]): string {
  if (records.length === 0) return `session ${sessionId}: no turn changed any file\n`;
  const lines = [`session ${sessionId}`];
  for (const r of records) {
    const state = r.undone !== undefined
      ? `  (undone ${r.undone})`
      : r.dropped !== undefined
      ? `  (undo data dropped ${r.dropped})`
      : r.ended === undefined
      ? "  (interrupted)"
      : "";
    lines.push(`turn ${r.turn}  ${r.started}  ${JSON.stringify(r.prompt)}${state}`);
    for (const path of Object.keys(r.changes).sort()) {
      lines.push(`  ${changeWord(r.changes[path]!).padEnd(8)} ${path}`);
    }
    for (const [path, why] of Object.entries(r.problems).sort()) {
      lines.push(`  not undoable ${notUndoableLine(path, why)}`);
    }
  }
  return lines.join("\n") + "\n";
}

function listJson(sessionId: string, records: readonly TurnRecord[]): string {
  return JSON.stringify({
    "session_id": sessionId,
    turns: records.map((r) => ({
      turn: r.turn,
      prompt: r.prompt,
      started: r.started,
      ended: r.ended ?? null,
      undone: r.undone ?? null,
      changes: Object.keys(r.changes).sort().map((path) => ({
        path,
        change: changeWord(r.changes[path]!),
      })),
      "not_undoable": Object.entries(r.problems).sort().map(([path, why]) => ({ path, why })),
    })),
  }) + "\n";
}

function parseTurns(text: string | undefined): number {
  if (text === undefined) return 1;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--turns: want a whole number of at least 1, got ${JSON.stringify(text)}`);
  }
  return n;
}

/** Runs `undo` and returns its exit code. */
export async function undoCommand(session: string | undefined, flags: UndoFlags): Promise<number> {
  const turns = parseTurns(flags.turns);
  if (flags.list && (flags.turns !== undefined || flags.force)) {
    throw new UsageError("undo: --list takes neither --turns nor --force");
  }
  const config = await loadConfig(flags.config);
  let sessionId: string;
  /** Without SESSION, this workspace's: its turns elsewhere are refused, not undone there. */
  let workspace: readonly string[] | undefined;
  {
    using sessions = openSessionStore(sessionsPath(config));
    if (session !== undefined) {
      const found = sessions.find(session);
      if (found === undefined) {
        throw new Error(`undo: no session ${JSON.stringify(session)} (see rousseau session list)`);
      }
      sessionId = found.id;
    } else {
      workspace = (await workspaceFrom(flags, config)).roots;
      const root = workspace[0]!;
      const found = sessions.list().find((s) => s.workspace === root);
      if (found === undefined) {
        const text = `nothing to undo: no session in ${root}\n`;
        await writeStdout(
          flags.json
            ? JSON.stringify(
              flags.list
                ? { "session_id": null, turns: [] }
                : { "session_id": null, turns: [], restored: [], removed: [], conflicts: [] },
            ) + "\n"
            : text,
        );
        return EXIT.ok;
      }
      sessionId = found.id;
    }
  }
  if (flags.list) {
    const store = openUndoStore(config.stateDir, { maxBytes: undoMaxBytes(config) });
    let records: TurnRecord[];
    {
      using _workspaces = await lockWorkspacesOf(store, sessionId);
      using _lock = await store.lock();
      records = settledTurns(store, sessionId, config.protectedPaths).filter(hasChanges);
    }
    await writeStdout(
      flags.json ? listJson(sessionId, records) : visible(listText(sessionId, records)),
    );
    return EXIT.ok;
  }
  const report = await performUndo(config, sessionId, {
    turns,
    ...(workspace === undefined ? {} : { workspace }),
    ...(flags.force ? { force: true } : {}),
    source: "cli",
  });
  if (flags.json) {
    const { outcome } = report;
    await writeStdout(
      JSON.stringify({
        "session_id": sessionId,
        turns: outcome.turns,
        restored: outcome.restored,
        removed: outcome.removed,
        conflicts: outcome.conflicts,
      }) + "\n",
    );
  } else if (report.stdout !== "") await writeStdout(visible(report.stdout));
  // Paths below come from the workspace, whose names the model's commands chose.
  for (const message of report.stderr) await writeStderr(`rousseau: ${visible(message)}`);
  return report.code;
}

/**
 * Chat's `/undo [--force]`: the last turn of this session, in chat's `workspace` only (a
 * resumed session's turn in another workspace is refused and named); the results go to `out`.
 */
export async function undoInChat(
  config: Config,
  sessionId: string,
  line: string,
  out: (text: string) => void,
  color: boolean,
  workspace: readonly string[],
): Promise<void> {
  const args = line.trim().split(/\s+/).slice(1);
  const unknown = args.filter((a) => a !== "--force");
  if (unknown.length > 0) {
    out(`/undo: unknown argument ${JSON.stringify(unknown[0])} (want /undo or /undo --force)\n`);
    return;
  }
  try {
    const report = await performUndo(config, sessionId, {
      turns: 1,
      ...(args.includes("--force") ? { force: true } : {}),
      source: "chat",
      workspace,
    });
    out(visible(report.stdout));
    for (const message of report.stderr) {
      out((color ? `\x1b[31m${visible(message)}\x1b[0m` : visible(message)) + "\n");
    }
  } catch (error) {
    out(visible(`undo: ${error instanceof Error ? error.message : String(error)}`) + "\n");
  }
}
