/**
 * RE2 patterns as JavaScript regular expressions with the same matches, for V8 to run.
 *
 * The translation starts from the tree re2js itself parsed and simplified, not from a second
 * parser of the pattern: escapes, flag groups, `\Q...\E`, POSIX and Unicode classes, negation
 * and case folding are already resolved there into code point ranges, literals and a few
 * operators. Every piece is then written out in the subset of JavaScript syntax V8's linear-time
 * engine accepts (no `u`, `i` or `s` flag, no lookaround, no backreference), so that a pattern
 * can fall back to that engine when backtracking grows (see `_grep_matcher.ts`):
 *
 * - a class is its code point ranges: the BMP ones as one JavaScript class (surrogate code
 *   points left out), the others as surrogate pairs, since without the `u` flag JavaScript
 *   matches UTF-16 code units. `.` is the class of everything but `\n` (RE2's `.`), never
 *   JavaScript's `.` (which also stops at `\r`, U+2028 and U+2029);
 * - a case-folded literal is the class of its case orbit as re2js computes it (`(?i)k` is
 *   `[Kk\u212A]`), never JavaScript's `i` flag, whose folding is its own;
 * - `\b` is JavaScript's `\b` without the `u` and `i` flags: ASCII word characters, as in RE2;
 * - `^` and `$` are JavaScript's without the `m` flag (start and end of input) in the line
 *   form: grep tests one line at a time, a line holds no `\n`, so RE2's line and text anchors
 *   agree there.
 *
 * Hazards. The texts searched must be well-formed UTF-16 (grep decodes with replacement, so a
 * lone surrogate never occurs): a match then never starts or ends inside a surrogate pair,
 * except an empty one, which only `\B` could find there, so `\B` is not translated. Anything
 * this module does not know (an operator added by a later re2js, lookbehinds) gives undefined,
 * and the caller stays on re2js.
 *
 * @module
 */

import type { RE2JS, RE2Set } from "re2js";

/** The two JavaScript sources of one RE2 pattern. */
export interface JsSources {
  /**
   * Source for one line (no `\n`), no flags: matches exactly the lines RE2 matches, with the
   * same match start positions.
   */
  readonly line: string;
  /**
   * Source for a whole text, for the `gm` flags: a match starts wherever RE2 (multi-line) has
   * one, and maybe elsewhere too (`\A` and `\z` match anywhere, and the `m` flag's `^` and `$`
   * also match at `\r`, U+2028 and U+2029). Each line where it finds a match start must be
   * tested again with `line`.
   */
  readonly text: string;
}

/** The re2js classes the translation parses with (re2js is loaded on demand). */
export interface Re2Module {
  readonly RE2JS: typeof RE2JS;
  readonly RE2Set: typeof RE2Set;
}

/** Longest source produced; a pattern whose translation is longer stays on re2js. */
export const MAX_SOURCE_CHARS = 64 * 1024;

/** The shape of re2js 2.10's `Regexp` (parse tree) nodes, as far as this module reads them. */
interface Node {
  readonly op: number;
  readonly flags: number;
  readonly runes: ArrayLike<number>;
  readonly subs: readonly Node[];
  readonly min: number;
  readonly max: number;
}

/** re2js 2.10 `RE2Flags` bits read here. */
const FOLD_CASE = 0x01;
const NON_GREEDY = 0x20;

/** Operator names of re2js 2.10 `Regexp.Op` that the translation knows. */
const KNOWN_OPS = [
  "NO_MATCH",
  "EMPTY_MATCH",
  "LITERAL",
  "CHAR_CLASS",
  "ANY_CHAR_NOT_NL",
  "ANY_CHAR",
  "BEGIN_LINE",
  "END_LINE",
  "BEGIN_TEXT",
  "END_TEXT",
  "WORD_BOUNDARY",
  "NO_WORD_BOUNDARY",
  "CAPTURE",
  "STAR",
  "PLUS",
  "QUEST",
  "REPEAT",
  "CONCAT",
  "ALTERNATE",
] as const;
type OpName = typeof KNOWN_OPS[number];

/** The simplified parse tree of `pattern`, as `RE2JS.compile(pattern, flags)` builds it. */
function treeOf(re2: Re2Module, pattern: string, flags: number): Node | undefined {
  const set = new re2.RE2Set(re2.RE2Set.UNANCHORED, flags);
  set.add(pattern);
  const regexps = (set as unknown as { regexps?: unknown }).regexps;
  if (!Array.isArray(regexps) || regexps.length !== 1) return undefined;
  return regexps[0] as Node;
}

/** Operator numbers by name, read from the tree's own class; undefined when unexpected. */
function opsOf(node: Node): Map<number, OpName> | undefined {
  const table = (node.constructor as unknown as { Op?: Record<string, unknown> }).Op;
  if (table === undefined || table === null) return undefined;
  const ops = new Map<number, OpName>();
  for (const name of KNOWN_OPS) {
    const value = table[name];
    if (typeof value !== "number") return undefined;
    ops.set(value, name);
  }
  return ops;
}

/** Layout of re2js confirmed on first use: flag bits where this module expects them. */
let layout: boolean | undefined;

function layoutKnown(re2: Re2Module): boolean {
  if (layout !== undefined) return layout;
  try {
    const fold = treeOf(re2, "(?i)k", 0);
    const lazy = treeOf(re2, "a*?", 0);
    const greedy = treeOf(re2, "a*", 0);
    const ops = fold === undefined ? undefined : opsOf(fold);
    layout = ops !== undefined && fold !== undefined && lazy !== undefined &&
      greedy !== undefined && ops.get(fold.op) === "LITERAL" &&
      (fold.flags & FOLD_CASE) !== 0 && ops.get(lazy.op) === "STAR" &&
      (lazy.flags & NON_GREEDY) !== 0 && (greedy.flags & NON_GREEDY) === 0;
  } catch {
    layout = false;
  }
  return layout;
}

/** Case orbits by code point, as re2js folds them. */
const ORBITS = new Map<number, readonly number[]>();

/**
 * The code points `(?i)` makes `rune` match, as re2js computes them: a class holding `rune`
 * (and NUL, so the parser keeps it a class) is expanded by its own fold tables.
 */
function orbitOf(re2: Re2Module, rune: number): readonly number[] | undefined {
  const known = ORBITS.get(rune);
  if (known !== undefined) return known;
  if (rune === 0) return [0]; // NUL folds to nothing (and the probe class below needs it)
  const tree = treeOf(re2, `(?i)[\\x{0}\\x{${rune.toString(16)}}]`, 0);
  const ops = tree === undefined ? undefined : opsOf(tree);
  if (tree === undefined || ops?.get(tree.op) !== "CHAR_CLASS") return undefined;
  const orbit: number[] = [];
  for (let i = 0; i + 1 < tree.runes.length; i += 2) {
    for (let r = tree.runes[i]!; r <= tree.runes[i + 1]!; r++) {
      if (r !== 0) orbit.push(r);
    }
  }
  if (!orbit.includes(rune) || orbit.length > 8) return undefined;
  ORBITS.set(rune, orbit);
  return orbit;
}

/** One UTF-16 code unit, escaped for use inside or outside a class. */
function unit(code: number): string {
  if (
    (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) || code === 0x5f
  ) return String.fromCharCode(code);
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/** A class body item for the code unit range [lo, hi]. */
function unitRange(lo: number, hi: number): string {
  return lo === hi ? unit(lo) : `${unit(lo)}-${unit(hi)}`;
}

/** The high surrogate of the astral code point `cp`. */
function highOf(cp: number): number {
  return 0xd800 + ((cp - 0x10000) >> 10);
}

/** The low surrogate of the astral code point `cp`. */
function lowOf(cp: number): number {
  return 0xdc00 + ((cp - 0x10000) & 0x3ff);
}

/**
 * Surrogate-pair alternatives matching the astral code points of `ranges` (pairs lo, hi, all
 * above U+FFFF): one per high surrogate with the low ones it takes, and one for each run of
 * high surrogates that take every low one.
 */
function astral(ranges: readonly number[]): string[] {
  const lows = new Map<number, string[]>(); // high surrogate -> class items of low ones
  const full: number[] = []; // high surrogates taking every low one, ascending
  const add = (high: number, lo: number, hi: number) => {
    if (lo === 0xdc00 && hi === 0xdfff) full.push(high);
    else {
      const items = lows.get(high) ?? [];
      items.push(unitRange(lo, hi));
      lows.set(high, items);
    }
  };
  for (let i = 0; i + 1 < ranges.length; i += 2) {
    const lo = ranges[i]!;
    const hi = ranges[i + 1]!;
    for (let high = highOf(lo); high <= highOf(hi); high++) {
      add(high, high === highOf(lo) ? lowOf(lo) : 0xdc00, high === highOf(hi) ? lowOf(hi) : 0xdfff);
    }
  }
  const out: string[] = [];
  for (const [high, items] of lows) out.push(`${unit(high)}[${items.join("")}]`);
  for (let i = 0; i < full.length;) {
    let j = i;
    while (j + 1 < full.length && full[j + 1] === full[j]! + 1) j++;
    out.push(`[${unitRange(full[i]!, full[j]!)}][\\udc00-\\udfff]`);
    i = j + 1;
  }
  return out;
}

/**
 * A JavaScript expression matching one code point of the sorted code point ranges
 * `runes` (pairs lo, hi), as whole surrogate pairs beyond the BMP. Surrogate code points
 * themselves are left out: well-formed text holds none.
 */
function classOf(runes: ArrayLike<number>): string {
  const bmp: string[] = [];
  const wide: number[] = [];
  for (let i = 0; i + 1 < runes.length; i += 2) {
    const lo = runes[i]!;
    const hi = runes[i + 1]!;
    if (lo <= 0xffff) {
      const top = Math.min(hi, 0xffff);
      if (lo < 0xd800) bmp.push(unitRange(lo, Math.min(top, 0xd7ff)));
      if (top > 0xdfff) bmp.push(unitRange(Math.max(lo, 0xe000), top));
    }
    if (hi > 0xffff) wide.push(Math.max(lo, 0x10000), hi);
  }
  const alternatives = astral(wide);
  if (bmp.length > 0) alternatives.unshift(`[${bmp.join("")}]`);
  if (alternatives.length === 0) return "[]";
  return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join("|")})`;
}

/** One code point, as one unit or a surrogate pair. */
function codePoint(cp: number): string {
  return cp <= 0xffff ? unit(cp) : unit(highOf(cp)) + unit(lowOf(cp));
}

/** Sorted, merged ranges (pairs) of the code points `points`. */
function rangesOf(points: readonly number[]): number[] {
  const sorted = [...points].sort((a, b) => a - b);
  const out: number[] = [];
  for (const p of sorted) {
    if (out.length > 0 && out[out.length - 1]! + 1 >= p) {
      out[out.length - 1] = Math.max(out[out.length - 1]!, p);
    } else out.push(p, p);
  }
  return out;
}

/** Everything but `\n`, and everything: RE2's `.` without and with `(?s)`. */
const ANY_NOT_NL = classOf([0, 9, 11, 0x10ffff]);
const ANY = classOf([0, 0x10ffff]);

class Untranslatable extends Error {}

/**
 * The JavaScript sources for the RE2 `pattern` compiled by grep (multi-line, and
 * case-insensitive when `ignoreCase`); undefined when any part of it has no exact translation.
 * Parse errors are not reported here: the caller compiled the pattern with re2js first.
 */
export function re2ToJs(
  re2: Re2Module,
  pattern: string,
  ignoreCase: boolean,
): JsSources | undefined {
  if (!layoutKnown(re2)) return undefined;
  let tree: Node | undefined;
  try {
    const flags = re2.RE2JS.MULTILINE | (ignoreCase ? re2.RE2JS.CASE_INSENSITIVE : 0);
    tree = treeOf(re2, pattern, flags);
  } catch {
    return undefined;
  }
  const ops = tree === undefined ? undefined : opsOf(tree);
  if (tree === undefined || ops === undefined) return undefined;
  try {
    const line = write(re2, ops, tree, "line");
    const text = write(re2, ops, tree, "text");
    if (line.length > MAX_SOURCE_CHARS || text.length > MAX_SOURCE_CHARS) return undefined;
    return { line, text };
  } catch (error) {
    if (error instanceof Untranslatable) return undefined;
    throw error;
  }
}

function write(
  re2: Re2Module,
  ops: Map<number, OpName>,
  node: Node,
  form: "line" | "text",
): string {
  let size = 0;
  const visit = (node: Node): string => {
    const out = render(node);
    size += out.length;
    // The tree repeats shared subtrees (x{3} is x x x): stop as soon as the text grows too long.
    if (size > 4 * MAX_SOURCE_CHARS) throw new Untranslatable();
    return out;
  };
  const render = (node: Node): string => {
    const op = ops.get(node.op);
    const lazy = (node.flags & NON_GREEDY) !== 0 ? "?" : "";
    switch (op) {
      case "NO_MATCH":
        return "[]";
      case "EMPTY_MATCH":
        return "(?:)";
      case "LITERAL": {
        let out = "";
        for (let i = 0; i < node.runes.length; i++) {
          const rune = node.runes[i]!;
          if ((node.flags & FOLD_CASE) === 0) {
            out += codePoint(rune);
            continue;
          }
          const orbit = orbitOf(re2, rune);
          if (orbit === undefined) throw new Untranslatable();
          out += orbit.length === 1 ? codePoint(rune) : classOf(rangesOf(orbit));
        }
        return out;
      }
      case "CHAR_CLASS":
        return classOf(node.runes);
      case "ANY_CHAR_NOT_NL":
        return ANY_NOT_NL;
      case "ANY_CHAR":
        return ANY;
      case "BEGIN_LINE":
        return "^";
      case "END_LINE":
        return "$";
      case "BEGIN_TEXT":
        return form === "line" ? "^" : "(?:)";
      case "END_TEXT":
        return form === "line" ? "$" : "(?:)";
      case "WORD_BOUNDARY":
        return "\\b";
      case "CAPTURE":
        return `(?:${visit(one(node))})`;
      case "STAR":
        return `(?:${visit(one(node))})*${lazy}`;
      case "PLUS":
        return `(?:${visit(one(node))})+${lazy}`;
      case "QUEST":
        return `(?:${visit(one(node))})?${lazy}`;
      case "REPEAT": {
        // Simplification expands repeats; a tree that still holds one is translated as is.
        if (node.min < 0 || node.min > 1000 || node.max > 1000) throw new Untranslatable();
        const max = node.max === -1 ? "" : String(node.max);
        return `(?:${visit(one(node))}){${node.min},${max}}${lazy}`;
      }
      case "CONCAT":
        return node.subs.map(visit).join("");
      case "ALTERNATE":
        return `(?:${node.subs.map(visit).join("|")})`;
      default:
        // NO_WORD_BOUNDARY (see the module's hazards), lookbehinds, unknown operators.
        throw new Untranslatable();
    }
  };
  return visit(node);
}

function one(node: Node): Node {
  if (node.subs.length !== 1) throw new Untranslatable();
  return node.subs[0]!;
}
