/**
 * What the repository ignores, for the grep walk (spec tools.md grep, "(beyond) Also skip
 * what the repository ignores"): `.gitignore` files (the repository root's, those between it
 * and the search root, and nested ones met on the way down) and `.git/info/exclude`, with
 * gitignore semantics (the npm package `ignore`, whose cases are checked against
 * `git check-ignore`).
 *
 * Precedence is git's: a deeper `.gitignore` overrides a shallower one, and
 * `.git/info/exclude` comes below every `.gitignore`. Within one file the last matching
 * pattern wins, so `!pattern` re-includes. An ignored directory is not descended, so nothing
 * below it can be re-included (as in git).
 *
 * Bounds, decided here:
 * - Nothing outside the workspace is read: the tool's confinement covers ignore files too,
 *   and the worker may not read there anyway. So a repository whose root lies above the
 *   workspace contributes only the ignore files from the workspace root down; the patterns of
 *   `.gitignore` files above it, `core.excludesFile` and the global ignore file are not seen.
 * - Without any `.git` between the search root and the workspace root, the `.gitignore` files
 *   from the workspace root down still count: they say what is generated even in a copy
 *   without its history.
 * - A directory below the search root that holds `.git` starts a repository of its own: the
 *   outer repository's patterns stop there, as in git.
 * - A `.gitignore` that is a symlink is not followed (git ignores those too), nor one over
 *   `MAX_IGNORE_FILE_BYTES`.
 *
 * @module
 */

import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { default as ignoreFactory, Ignore } from "ignore";
import { isInside } from "./_workspace.ts";
import type { Workspace } from "./types.ts";

/** The `ignore` package's factory, once `loadIgnore` has loaded it. */
let createRules: typeof ignoreFactory | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads the `ignore` package; the functions below that read ignore files need it loaded first.
 * It is loaded on the first grep, not at start: it is CommonJS, and evaluating it brings up
 * Deno's Node compatibility layer (tens of milliseconds) that a worker serving only `read`
 * never needs.
 *
 * Hazard: the specifier must stay a string literal. Inside the tool worker (a narrowed read
 * grant) a computed specifier fails with "Requires read access"; a literal one is part of the
 * worker's module graph, fetched at start but evaluated only here.
 */
export function loadIgnore(): Promise<void> {
  loading ??= import("ignore").then(
    (module) => {
      createRules = module.default;
    },
    (error) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Ignore files larger than this are not read (no real one comes close). */
export const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/** How one level judges a path relative to its base (a directory ends with a slash). */
type Judge = (relative: string) => { ignored: boolean; unignored: boolean };

/** The rules of one ignore file, anchored at a directory. */
export interface IgnoreLevel {
  /** Real path of the directory the patterns are relative to, with a trailing slash. */
  readonly base: string;
  readonly rules: Ignore;
  /** `rules` applied to the path alone (see `judgeOf`). */
  readonly judge: Judge;
}

/** What a level says of a path no rule matches. */
const UNDECIDED = Object.freeze({ ignored: false, unignored: false });

/** The rule list inside an `Ignore` of the pinned 7.0.x (see `judgeOf`). */
interface RuleList {
  readonly _rules?: ReadonlyArray<{ readonly regex?: unknown; readonly _basenameOnly?: boolean }>;
  test?(path: string, mode: string): { ignored: boolean; unignored: boolean };
}

/**
 * The judge of `rules`: the path alone against the rules, without `Ignore.test`'s walk up
 * the path's parent directories (the walk never enters an ignored directory, so the parents
 * were judged already) and without its per-path cache, which grows by one key per file; and
 * with one regular expression, the union of the rules' own, that tells the common case (no
 * rule matches) in one pass instead of one per rule. Together about five times less time per
 * file than `Ignore.test`, which the walk pays for every file of a repository.
 *
 * Hazard: this reaches inside `ignore` (the rule list `_rules`, each rule's `regex`, and
 * `_rules.test(path, "regex")`, the step `Ignore.test` runs for a path once its parents are
 * settled, in the pinned 7.0.x). Where a later version lacks any of them, the public `test`
 * is used, which gives the same answers for the walk (it only adds the parents' verdicts,
 * "not ignored" there) at the old cost. The oracle test against real git covers both.
 */
function judgeOf(rules: Ignore): Judge {
  const inner = (rules as unknown as { _rules?: RuleList })._rules;
  const list = inner?._rules;
  const test = inner?.test;
  if (
    inner === undefined || typeof test !== "function" || !Array.isArray(list) ||
    !list.every((rule) => rule.regex instanceof RegExp && !rule.regex.global)
  ) {
    return (relative) => rules.test(relative);
  }
  const regexes = list.map((rule) => rule.regex as RegExp);
  if (regexes.length === 0) return () => UNDECIDED;
  const flags = regexes[0]!.flags;
  if (!regexes.every((re) => re.flags === flags)) {
    return (relative) => test.call(inner, relative, "regex");
  }
  // Rules without a slash (most of a .gitignore) can only match the last name of the path:
  // their union is run on that name alone, which is shorter to scan (as `ignore` does).
  const union = (res: RegExp[]) =>
    res.length === 0 ? undefined : new RegExp(res.map((re) => `(?:${re.source})`).join("|"), flags);
  const named = union(regexes.filter((_, i) => list[i]!._basenameOnly === true));
  const pathed = union(regexes.filter((_, i) => list[i]!._basenameOnly !== true));
  return (relative) => {
    if (pathed === undefined || !pathed.test(relative)) {
      if (named === undefined) return UNDECIDED;
      const end = relative.endsWith("/") ? relative.length - 1 : relative.length;
      const name = relative.slice(relative.lastIndexOf("/", end - 1) + 1);
      if (!named.test(name)) return UNDECIDED;
    }
    return test.call(inner, relative, "regex");
  };
}

/** Levels in order of precedence, lowest first; shared between frames, never changed. */
export type IgnoreLevels = readonly IgnoreLevel[];

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** The text of the regular file at `path`, or undefined (missing, a link, too big, unreadable). */
function readSmallFileSync(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile() || info.size > MAX_IGNORE_FILE_BYTES) return undefined;
    const bytes = new Uint8Array(info.size);
    let filled = 0;
    while (filled < bytes.length) {
      const n = readSync(fd, bytes, filled, bytes.length - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return new TextDecoder().decode(bytes.subarray(0, filled));
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The level of the ignore file at `file`, anchored at `dir`; undefined when there is none. */
function levelOf(dir: string, file: string): IgnoreLevel | undefined {
  const text = readSmallFileSync(file);
  if (text === undefined || text.trim() === "") return undefined;
  // Case-sensitive, as git is where core.ignoreCase is false (Linux; `ignore` defaults the
  // other way).
  if (createRules === undefined) throw new Error("grep: ignore rules read before loadIgnore()");
  const rules = createRules({ allowRelativePaths: true, ignorecase: false }).add(text);
  return { base: slashed(dir), rules, judge: judgeOf(rules) };
}

function slashed(path: string): string {
  return path.endsWith("/") ? path : `${path}/`;
}

function parentOf(path: string): string {
  const at = path.lastIndexOf("/");
  return at <= 0 ? "/" : path.slice(0, at);
}

function existsSync(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * `levels` with the repository files of `dir` added: when `dir` holds `.git` it starts a
 * repository (the levels above are dropped, `.git/info/exclude` comes first), and its
 * `.gitignore` comes last. `names` says what `dir` holds (the walk has listed it already), so
 * a directory without either costs nothing.
 */
export function levelsAt(
  levels: IgnoreLevels,
  dir: string,
  names: { readonly git: boolean; readonly gitignore: boolean },
): IgnoreLevels {
  if (!names.git && !names.gitignore) return levels;
  let out = levels;
  if (names.git) {
    const exclude = levelOf(dir, `${slashed(dir)}.git/info/exclude`);
    out = exclude === undefined ? [] : [exclude];
  }
  if (names.gitignore) {
    const own = levelOf(dir, `${slashed(dir)}.gitignore`);
    if (own !== undefined) out = [...out, own];
  }
  return out;
}

/**
 * The levels that apply above the search root `root` (a real directory), its own
 * `.gitignore` not included: from the repository root (the nearest directory holding `.git`)
 * or else the workspace root, down to `root`'s parent. Nothing outside the workspace is read.
 */
export function levelsAbove(root: string, workspace: Workspace): IgnoreLevels {
  const chain: string[] = [];
  for (let dir = parentOf(root); isInside(workspace, dir); dir = parentOf(dir)) {
    chain.push(dir);
    if (existsSync(`${slashed(dir)}.git`) || dir === parentOf(dir)) break;
  }
  // `root` may be a repository root itself: then nothing above it counts.
  if (existsSync(`${slashed(root)}.git`)) return [];
  let levels: IgnoreLevels = [];
  for (const dir of chain.reverse()) {
    levels = levelsAt(levels, dir, {
      git: existsSync(`${slashed(dir)}.git`),
      gitignore: existsSync(`${slashed(dir)}.gitignore`),
    });
  }
  return levels;
}

/**
 * Whether the real path `path` (a directory when `directory`), met by the walk, is ignored
 * under `levels`: the deepest level with a pattern for it decides, a negation re-including.
 * Only the path itself is judged: the walk never enters an ignored directory, so what lies
 * below one is not reached.
 */
export function isIgnored(levels: IgnoreLevels, path: string, directory: boolean): boolean {
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!;
    if (!path.startsWith(level.base)) continue;
    const result = level.judge(path.slice(level.base.length) + (directory ? "/" : ""));
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

/**
 * Whether the directory `path`, which no walk reached (a search root), is ignored under
 * `levels`, its parent directories below each level's base included, as git sees it.
 */
export function isIgnoredRoot(levels: IgnoreLevels, path: string): boolean {
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!;
    if (!path.startsWith(level.base)) continue;
    const result = level.rules.test(`${path.slice(level.base.length)}/`);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}
