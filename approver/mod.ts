/**
 * The approver: the policy gate every tool call passes.
 *
 * @module
 */

export * from "./types.ts";
export {
  type ApproverOptions,
  type AskOperator,
  createApprover,
  createFunctionApprover,
  evaluate,
  NO_OPERATOR_REASON,
  pathScope,
  ruleMatches,
  settle,
} from "./approver.ts";
export {
  compilePolicy,
  LISTS,
  type Matcher,
  type Policy,
  PolicyError,
  type Rule,
} from "./rules.ts";
export { canonicalJson } from "./canonical_json.ts";
export { factsOf, toolsWhere } from "./tool_facts.ts";
export { jsonVisible, visible, visibleExact, visibleValue } from "./visible.ts";
export type { PathScope } from "./path_scope.ts";
export {
  type Assignment,
  DYNAMIC,
  type Redirect,
  type SimpleCommand,
  splitCommands,
  type SplitResult,
} from "./shell.ts";
export {
  type AuditEvent,
  type AuditEventName,
  type AuditFileOptions,
  type AuditFiles,
  type AuditFileText,
  type AuditSink,
  type AuditSnapshot,
  type ChainBreak,
  type ChainHead,
  type ChainStart,
  createAuditFile,
  DEFAULT_AUDIT_KEEP,
  DEFAULT_AUDIT_MAX_BYTES,
  type FileBreak,
  type FirstLink,
  GENESIS,
  head as chainHead,
  headPathOf,
  parseHead,
  parseStart,
  readAuditFiles,
  readAuditLog,
  redact,
  rotatedFiles,
  rotatedPathOf,
  sha256,
  startPathOf,
  verifyChain,
  verifyFiles,
  verifyHead,
} from "./audit/mod.ts";
export {
  createPromptOperator,
  describeCall,
  grantsFor,
  type PromptIo,
  type PromptOperator,
  type SessionGrant,
} from "./prompt.ts";
export { type Finding, type PolicyReport, type TestOptions, testPolicy } from "./lint.ts";
export { didYouMean } from "./suggest.ts";
export { type Effect, effectsOf, type Invocation } from "./effects/mod.ts";
