/**
 * The state directory's audit log as the commands open it: rotated at
 * `state.audit.max_bytes`, `state.audit.keep` rotated files kept. Light on purpose (the
 * approver only): `rousseau tool` opens it on its fast path.
 *
 * @module
 */

import { join } from "node:path";
import {
  type AuditSink,
  createAuditFile,
  DEFAULT_AUDIT_KEEP,
  DEFAULT_AUDIT_MAX_BYTES,
} from "../../approver/mod.ts";
import type { Config } from "./config.ts";

/** The audit log of the state directory. */
export function auditPath(config: Config): string {
  return join(config.stateDir, "audit.jsonl");
}

/** `state.audit.max_bytes` and `state.audit.keep`, or their defaults. */
export function auditRotation(config: Config): { maxBytes: number; keep: number } {
  return {
    maxBytes: config.values.state?.audit?.max_bytes ?? DEFAULT_AUDIT_MAX_BYTES,
    keep: config.values.state?.audit?.keep ?? DEFAULT_AUDIT_KEEP,
  };
}

/**
 * The text of an audit write that failed: the call is not run (or its end not recorded), so
 * the operator must learn why and what to do. A full disk is the likely case (the state
 * directory shares a disk with the workspace that bash fills); the log itself is intact, the
 * line having been taken back (`createAuditFile`).
 */
export function auditWriteError(path: string, error: unknown): Error {
  const code = (error as { code?: unknown } | null)?.code;
  const detail = code === "ENOSPC"
    ? "no space left on device; free space on that file system, or move the state directory " +
      "elsewhere with state.dir, then run again (the log itself is intact)"
    : error instanceof Error
    ? error.message
    : String(error);
  return new Error(`audit log ${path}: cannot record the call: ${detail}`, { cause: error });
}

/**
 * The state directory's audit log, rotated as configured; `secrets` are never written.
 * `keepOpen` keeps the log and its head open between lines (a long-running server, which
 * calls `close()` when it stops).
 */
export function openAuditLog(
  config: Config,
  secrets: readonly string[] = [],
  { keepOpen = false }: { keepOpen?: boolean } = {},
): AuditSink & { readonly path: string; close(): void } {
  const file = createAuditFile(auditPath(config), {
    secrets,
    ...auditRotation(config),
    keepOpen,
  });
  return {
    path: file.path,
    close: () => file.close(),
    async record(event) {
      try {
        await file.record(event);
      } catch (error) {
        throw auditWriteError(file.path, error);
      }
    },
  };
}
