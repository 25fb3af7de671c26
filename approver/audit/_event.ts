/**
 * What the audit log records of a call: the event and sink shapes, and the input fields of a
 * line (secrets redacted, cut to 1 KiB, pinned down by the hash and length of the whole).
 *
 * @module
 */

import { sha256Hex } from "./_sha256.ts";

/** The kinds of audit events. */
export type AuditEventName = "tool.execute" | "tool.denied" | "tool.error" | "tool.done";

/** One event, before `time` and `prev` are added. */
export interface AuditEvent {
  /** What happened. */
  readonly event: AuditEventName;
  /** Tool name. */
  readonly tool: string;
  /** Canonical JSON of the input (cut and redacted on write). */
  readonly input: string;
  /** Deciding rule. */
  readonly rule?: string;
  /** Denial reason or error text. */
  readonly reason?: string;
  /** Call duration (tool.done, tool.error). */
  readonly "duration_ms"?: number;
  /** Session id. */
  readonly "session_id"?: string;
  /** Who made the call: cli, model, mcp. */
  readonly source?: string;
  /**
   * What a bash call under the overlay changed (tool.done, tool.error): `A`/`M`/`D`, a space,
   * the path, in path order.
   */
  readonly changes?: readonly string[];
  /** Whether the gate allowed `changes` (applying them can still fail: then tool.error). */
  readonly "changes_allowed"?: boolean;
}

/** Where events go. */
export interface AuditSink {
  /**
   * Records one event. Rejects when it cannot (a full disk): callers let that end the call,
   * so nothing runs unrecorded; the file sink leaves the log as it was (no partial line).
   */
  record(event: AuditEvent): Promise<void>;
}

const MAX_INPUT = 1024;
const GENERIC_SECRETS: readonly RegExp[] = [
  /sk-[A-Za-z0-9_-]{16,}/g, // Anthropic and OpenAI keys
  /gh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub tokens
  /github_pat_[A-Za-z0-9_]{20,}/g,
  /AKIA[0-9A-Z]{16}/g, // AWS access key ids
  /xox[abposr]-[A-Za-z0-9-]{10,}/g, // Slack tokens
  /(?<=[Bb]earer\s+)[A-Za-z0-9._~+/=-]{12,}/g,
  // Quotes may come escaped (`\"`): inputs are JSON, and so are the files the model writes.
  /(?<=(?:api[_-]?key|token|secret|password|passwd)(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)[^\s"'\\,;]{6,}/gi,
];

/** Replaces known secret values and secret-looking tokens in `text` with `[REDACTED]`. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const value of secrets) {
    if (value.length < 6) continue;
    // Inputs are canonical JSON, where a value with quotes or backslashes appears escaped.
    for (const form of new Set([value, JSON.stringify(value).slice(1, -1)])) {
      out = out.split(form).join("[REDACTED]");
    }
  }
  for (const pattern of GENERIC_SECRETS) out = out.replace(pattern, "[REDACTED]");
  return out;
}

/** `text` cut to at most `max` UTF-8 bytes on a character boundary, `…` marking a cut. */
function cut(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a UTF-8 sequence
  return new TextDecoder().decode(bytes.subarray(0, end)) + "…";
}

/** What a line holds of a call's input. */
export interface InputFields {
  /** The input, redacted, cut to `MAX_INPUT` bytes. */
  readonly input: string;
  /** SHA-256 of the whole redacted input, so what lies past the cut is still pinned down. */
  readonly "input_sha256": string;
  /** Length of the whole redacted input in UTF-8 bytes. */
  readonly "input_bytes": number;
}

/**
 * The input fields of a line. A cut alone would let a payload hide past 1 KiB of padding;
 * the hash and length of the whole input pin down what ran, and a transcript's call (say,
 * from `session show`) can be matched against the line by redacting and hashing it the same
 * way. The hash is of the *redacted* text on purpose: a hash of the raw input would let
 * anyone who reads the log confirm a guessed secret (put the guess back, hash, compare), an
 * offline dictionary attack on every short password or token that was redacted. The redacted
 * text still binds everything but the secret values.
 */
export function inputFields(input: string, secrets: readonly string[] | undefined): InputFields {
  const redacted = redact(input, secrets);
  const bytes = new TextEncoder().encode(redacted);
  return {
    input: cut(redacted, MAX_INPUT),
    "input_sha256": sha256Hex(bytes),
    "input_bytes": bytes.length,
  };
}
