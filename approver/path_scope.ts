/**
 * What a call that reads many files may return: grep over a directory reads files the call
 * did not name, and a `path` rule (or a `match` rule, which sees the path in the canonical
 * JSON) that allowed the directory says nothing about them. Each file whose content would
 * leave is judged as a call of its own, on its resolved path: a symlink under an allowed
 * directory that leads elsewhere, or a file a deny rule covers, is skipped.
 *
 * The evaluator that judges each file is passed in (`createPathScope(evaluate)` in
 * `approver.ts`), so this file does not import the evaluator back.
 *
 * @module
 */

import { LISTS, type Policy } from "./rules.ts";
import type { ApprovalRequest, Decision, Verdict } from "./types.ts";
import { factsOf } from "./tool_facts.ts";

/** Whether the content of the file at the resolved path `realPath` may be returned. */
export type PathScope = (realPath: string) => Promise<boolean>;

/** Decides one call under a policy, with paths resolved by `options.resolvePath`: `evaluate`. */
export type Judge = (
  policy: Policy,
  request: ApprovalRequest,
  options: { readonly resolvePath: (path: string) => Promise<string> },
) => Promise<Decision>;

/** Builds the per-file check for a call (see `pathScope` in `approver.ts`). */
export type PathScopeOf = (
  policy: Policy,
  request: ApprovalRequest,
  verdict: Decision,
) => PathScope | undefined;

const RANK: Readonly<Record<Verdict, number>> = { deny: 0, ask: 1, allow: 2 };

/** The per-file check, each file judged by `judge` (see {@linkcode checkFor}). */
export function createPathScope(judge: Judge): PathScopeOf {
  return (policy, request, verdict) => checkFor(policy, request, verdict, judge);
}

/**
 * The per-file check for `request`, which `policy` decided as `verdict` (before an operator
 * answered an ask), or undefined when no rule can tell the files of the call apart (no
 * `path` or `match` rule applies to the tool, or the mode is not `pattern`).
 *
 * A file passes when the call, with `path` set to the file's resolved path, would be decided
 * at least as well as the call itself: allow when it was allowed; allow or ask when an
 * operator approved an ask (the operator saw the directory, and a file that would ask is of
 * the kind they approved; one a rule denies is not).
 */
function checkFor(
  policy: Policy,
  request: ApprovalRequest,
  verdict: Decision,
  judge: Judge,
): PathScope | undefined {
  const tool = request.tool.toLowerCase();
  if (policy.mode !== "pattern" || factsOf(tool)?.path !== "walk") return undefined;
  const input = request.input;
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined;
  const relevant = LISTS.some((list) =>
    policy.lists[list].some((rule) =>
      (rule.tool === undefined || rule.tool === tool) &&
      (rule.path !== undefined || rule.match !== undefined)
    )
  );
  if (!relevant) return undefined;
  const need = RANK[verdict.decision];
  // The path is already resolved (by the tool, from the file it opened): it is tested as is.
  const asIs = { resolvePath: (path: string) => Promise.resolve(path) };
  return async (realPath) => {
    const decision = await judge(policy, {
      tool: request.tool,
      input: { ...input, path: realPath },
    }, asIs);
    return RANK[decision.decision] >= need && need > RANK.deny;
  };
}
