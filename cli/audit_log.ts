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
} from "../approver/mod.ts";
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

/** The state directory's audit log, rotated as configured; `secrets` are never written. */
export function openAuditLog(
  config: Config,
  secrets: readonly string[] = [],
): AuditSink & { readonly path: string } {
  return createAuditFile(auditPath(config), { secrets, ...auditRotation(config) });
}
