/**
 * The state directory's files and how long they are kept: sessions (`state.sessions.*`),
 * undo data (`state.undo.max_bytes`) and the audit log (`cli/config/audit_log.ts`); what `doctor`
 * says it holds.
 *
 * @module
 */

import { join } from "node:path";
import { rotatedFiles } from "../../approver/mod.ts";
import {
  DEFAULT_SESSIONS_MAX_AGE_MS,
  DEFAULT_SESSIONS_MAX_COUNT,
  type SessionRetention,
} from "../../agent/retention.ts";
import { DEFAULT_UNDO_MAX_BYTES, openUndoStore } from "../../agent/undo/mod.ts";
import type { Config } from "./config.ts";
import { auditPath, auditRotation } from "./audit_log.ts";

/** `state.sessions.max_age` and `state.sessions.max_count`, or their defaults. */
export function sessionRetention(config: Config): SessionRetention {
  return {
    maxAgeMs: config.values.state?.sessions?.max_age ?? DEFAULT_SESSIONS_MAX_AGE_MS,
    maxCount: config.values.state?.sessions?.max_count ?? DEFAULT_SESSIONS_MAX_COUNT,
  };
}

/** `state.undo.max_bytes`, or its default. */
export function undoMaxBytes(config: Config): number {
  return config.values.state?.undo?.max_bytes ?? DEFAULT_UNDO_MAX_BYTES;
}

/** What retention says when it removed `count` sessions as a run or chat started. */
export function retentionNote(count: number, config: Config): string {
  const { maxAgeMs, maxCount } = sessionRetention(config);
  const why = [
    ...(maxAgeMs > 0 ? [`unused for ${ageText(maxAgeMs)} (state.sessions.max_age)`] : []),
    ...(maxCount > 0 ? [`past the newest ${maxCount} (state.sessions.max_count)`] : []),
  ].join(" or ");
  return `removed ${count} session${count === 1 ? "" : "s"} ${why}, with their undo data`;
}

/** `1.2 MB`-style sizes (powers of 1024, as the caps are written). */
export function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = Number.isInteger(value) || value >= 100 ? value.toFixed(0) : value.toFixed(1);
  return `${shown} ${units[unit]}`;
}

/** `30d`, `12h`, `90m`, `45s`: an age in its largest whole unit. */
export function ageText(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

function sizeOf(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** Bytes of the files under `dir` (links not followed); 0 when it does not exist. */
function bytesUnder(dir: string): number {
  let sum = 0;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) sum += bytesUnder(path);
    else if (entry.isFile) sum += sizeOf(path);
  }
  return sum;
}

/** What the state directory holds, counted (for `doctor`). */
export interface StateUsage {
  readonly sessions: number;
  /** `sessions.db` with its write-ahead log. */
  readonly sessionsBytes: number;
  readonly undoBytes: number;
  readonly auditBytes: number;
  readonly auditFiles: number;
  /** Upper directories a killed bash call left under `overlay/` (removed at the next start). */
  readonly overlayBytes: number;
}

/** Counts what the state directory holds; `sessions` is the number of stored sessions. */
export function stateUsage(config: Config, sessions: number): StateUsage {
  const dir = config.stateDir;
  const log = auditPath(config);
  const logs = [...rotatedFiles(log), log];
  const undo = openUndoStore(dir, { maxBytes: undoMaxBytes(config) });
  return {
    sessions,
    sessionsBytes: ["sessions.db", "sessions.db-wal", "sessions.db-shm"]
      .reduce((sum, name) => sum + sizeOf(join(dir, name)), 0),
    undoBytes: undo.totalBytes(),
    auditBytes: logs.reduce((sum, path) => sum + sizeOf(path), 0),
    auditFiles: logs.filter((path) => sizeOf(path) > 0).length,
    overlayBytes: bytesUnder(join(dir, "overlay")),
  };
}

/** `doctor`'s two lines on the state directory: what it holds, and how long it is kept. */
export function stateLines(config: Config, usage: StateUsage): [string, string] {
  const undoCap = undoMaxBytes(config);
  const rotation = auditRotation(config);
  const retention = sessionRetention(config);
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  const held = [
    `${config.stateDir}: ${plural(usage.sessions, "session")} (sessions.db ${
      bytesText(usage.sessionsBytes)
    })`,
    undoCap === 0
      ? `undo off (${bytesText(usage.undoBytes)} left)`
      : `undo ${bytesText(usage.undoBytes)} of ${bytesText(undoCap)}`,
    `audit ${bytesText(usage.auditBytes)} in ${plural(usage.auditFiles, "file")}`,
    `overlay scratch ${bytesText(usage.overlayBytes)}`,
  ].join(" · ");
  const kept = [
    `sessions for ${
      retention.maxAgeMs === 0 ? "ever" : ageText(retention.maxAgeMs)
    } since their last use, ${
      retention.maxCount === 0 ? "any number" : `the newest ${retention.maxCount}`
    } (state.sessions.max_age, max_count)`,
    rotation.maxBytes === 0
      ? "the audit log never rotated (state.audit.max_bytes: 0)"
      : `the audit log rotated at ${bytesText(rotation.maxBytes)}, ${
        rotation.keep === 0 ? "every rotated file" : plural(rotation.keep, "rotated file")
      } kept (state.audit.max_bytes, keep)`,
  ].join(" · ");
  return [held, kept];
}
