/**
 * What the undo store's files may say, checked when they are read. `undo` writes where its
 * records say, so a record (or a mirror, or a pending marker) that names a path with `..`, a
 * NUL, a path outside its own workspace, or a session id that is not one, is damaged and
 * never acted on: a copy of the state directory from elsewhere, a disk error or a hand edit
 * must not become a write outside the workspace (the class of gemini-cli#29191, a `../` in a
 * stored checkpoint name deleting files outside the checkpoint directory).
 *
 * Nothing here touches the disk: `_guard.ts` checks the paths again against the
 * disk just before each write.
 *
 * @module
 */

import { normalize } from "node:path";
import { type Entry, isEntry } from "./_entry.ts";

/** Session ids as the store names its directories (UUIDs, or test names). */
const SESSION_ID = /^[A-Za-z0-9-]{1,128}$/;

/** True when `id` can name a session's directory (no `/`, `.`, NUL). */
export function isSessionId(id: unknown): id is string {
  return typeof id === "string" && SESSION_ID.test(id);
}

/** True when `n` can be a turn's number (and so a file name). */
export function isTurnNumber(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}

/** True for an absolute path with no `.`, `..`, empty part, trailing slash or NUL. */
export function isCleanPath(path: unknown): path is string {
  return typeof path === "string" && path.startsWith("/") && !path.includes("\0") &&
    normalize(path) === path && (path === "/" || !path.endsWith("/"));
}

/** True when `path` is one of `roots` or lies below one. */
export function isUnder(path: string, roots: readonly string[]): boolean {
  return roots.some((r) => path === r || path.startsWith(r === "/" ? "/" : `${r}/`));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why a change's `before`/`after` is not one, or undefined. */
function entryFault(value: unknown, pending: boolean): string | undefined {
  if (value === null || (pending && value === "pending")) return undefined;
  return isEntry(value as Entry) ? undefined : "a malformed entry";
}

/**
 * Why `value`, read from `<sessions>/<session>/<turn>.json`, is not a sound turn record of
 * that session and turn; undefined when it is. `mirrorKey` is `_store.ts`'s.
 */
export function recordFault(
  value: unknown,
  session: string,
  turn: number,
  mirrorKey: (roots: readonly string[]) => string,
): string | undefined {
  if (!isRecord(value)) return "not a JSON object";
  if (value.version !== 1) return `version ${JSON.stringify(value.version)}, want 1`;
  if (value.session !== session) return "it names another session";
  if (value.turn !== turn) return "it names another turn";
  for (const key of ["prompt", "started"] as const) {
    if (typeof value[key] !== "string") return `its ${key} is not a string`;
  }
  for (const key of ["ended", "undone", "dropped"] as const) {
    if (value[key] !== undefined && typeof value[key] !== "string") {
      return `its ${key} is not a string`;
    }
  }
  const roots = value.roots;
  if (!Array.isArray(roots) || roots.length === 0 || !roots.every(isCleanPath)) {
    return "its workspace roots are not clean absolute paths";
  }
  if (value.mirror !== mirrorKey(roots)) return "its mirror key does not match its roots";
  if (!isRecord(value.changes)) return "its changes are not an object";
  for (const [path, change] of Object.entries(value.changes)) {
    if (!isCleanPath(path)) return `${JSON.stringify(path)} is not a clean absolute path`;
    if (!isUnder(path, roots)) return `${path} lies outside its workspace`;
    if (!isRecord(change)) return `the change of ${path} is not an object`;
    const fault = entryFault(change.before, false) ?? entryFault(change.after, true);
    if (fault !== undefined) return `the change of ${path} holds ${fault}`;
  }
  if (!isRecord(value.problems)) return "its problems are not an object";
  for (const [path, why] of Object.entries(value.problems)) {
    if (path !== "*" && !(isCleanPath(path) && isUnder(path, roots))) {
      return `the problem path ${JSON.stringify(path)} lies outside its workspace`;
    }
    if (typeof why !== "string") return `the problem of ${path} is not a string`;
  }
  return undefined;
}

/** True when `value` is a sound pending marker (`mirrors/<key>.pending.json`). */
export function isPendingMarker(
  value: unknown,
): value is { session: string; turn: number; tool: string } {
  return isRecord(value) && isSessionId(value.session) && isTurnNumber(value.turn) &&
    typeof value.tool === "string";
}
