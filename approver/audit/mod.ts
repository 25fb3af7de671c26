/**
 * The audit trail: one JSON object a line, appended under an exclusive lock, each line
 * holding `prev`, the SHA-256 of the line before it, so any edit, removal or reordering
 * breaks the chain, and `seq`, its position, so the break can be named. Inputs are cut to
 * 1 KiB and secrets are redacted before writing.
 *
 * The chain's head (the last line's `seq` and hash) is kept beside the log, in `<log>.head`,
 * updated under the same lock with every line: the chain alone cannot tell a log whose last
 * lines were dropped, or that was emptied or rewritten whole, from an intact one. The head
 * file holds two checksummed records, the last line's and the one before, and each line
 * rewrites one of them in place; a record cut short by a crash fails its check and the other
 * stands (see `_head.ts` for the format and its crash-safety contract).
 * A writer that finds the log and its head disagreeing never papers over it: it chains the
 * next line onto the head (so the gap stays visible in the log), or, with no head at all
 * beside a non-empty log, starts the next line with an all-zero `prev` (see `verifyChain`).
 *
 * Rotation (`maxBytes`): a log that has reached the size is renamed, under its lock, to
 * `<log>.<first seq, 9 digits>` (`audit.jsonl.000000001`), and the next line starts a new
 * `<log>` chained onto the head, so the files read oldest first are one chain. With `keep`,
 * the oldest rotated files beyond that many are removed; `<log>.start` then records where
 * the chain now begins (the `seq` and `prev` of the oldest file's first line), so removing
 * a rotated file by hand is told from retention (as the head tells a dropped end).
 *
 * The parts: `_event.ts` (events, redaction), `_chain.ts` (hashes, where a line hooks on),
 * `_head.ts` (the head file), `_writer.ts` (`createAuditFile`), `_rotation.ts` (rotated files, the start file),
 * `_read.ts` (reading a log for checks), `_verify.ts` (finding the first broken link).
 *
 * @module
 */

export { type AuditEvent, type AuditEventName, type AuditSink, redact } from "./_event.ts";
export { type ChainHead, GENESIS, sha256 } from "./_chain.ts";
export { headPathOf, parseHead } from "./_head.ts";
export { type AuditFileOptions, createAuditFile } from "./_writer.ts";
export {
  type ChainStart,
  DEFAULT_AUDIT_KEEP,
  DEFAULT_AUDIT_MAX_BYTES,
  parseStart,
  rotatedFiles,
  rotatedPathOf,
  startPathOf,
} from "./_rotation.ts";
export {
  type AuditFiles,
  type AuditFileText,
  type AuditSnapshot,
  readAuditFiles,
  readAuditLog,
} from "./_read.ts";
export {
  type ChainBreak,
  type FileBreak,
  type FirstLink,
  head,
  verifyChain,
  verifyFiles,
  verifyHead,
} from "./_verify.ts";
