/**
 * The regular expression engine grep runs: V8's own when the process can fall back to its
 * linear-time engine, re2js otherwise.
 *
 * V8 backtracks (Irregexp), which is fast on ordinary patterns but exponential on some
 * (`(a+)+$`). Started with `--v8-flags=--enable-experimental-regexp-engine,
 * --enable-experimental-regexp-engine-on-excessive-backtracks` (see `V8_FLAGS`), V8 switches a
 * match to its linear-time engine once it has backtracked too much, so every match stays
 * linear, like RE2, and ordinary patterns run at Irregexp speed. V8 flags are per process:
 * the launchers pass them (deno.json tasks, the npm bin, `deno compile`); a process without
 * them, such as a library user's, keeps re2js.
 *
 * Two checks make that safe, both per isolate:
 * - the fallback is on (`linearFallback`): `--enable-experimental-regexp-engine` shows in the
 *   `l` flag being accepted; the fallback itself shows in a pathological match returning far
 *   sooner than backtracking could (see `probeFallback`);
 * - the pattern can fall back: V8 only falls back for patterns its linear engine handles (no
 *   `u` or `i` flag, bounded repetition, no lookahead), which is exactly what the `l` flag
 *   accepts, so each translation is compiled once with `l` before it is used without it.
 *
 * @module
 */

import type { RE2JS } from "re2js";
import { type JsSources, type Re2Module, re2ToJs } from "./_re2_to_js.ts";

/** The V8 flags under which grep runs patterns on V8 (one `--v8-flags=` value). */
export const V8_FLAGS =
  "--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks";

/** How grep tests lines, whichever engine runs them. */
export interface LineMatcher {
  /** Which engine runs the pattern. */
  readonly engine: "v8" | "re2js";
  /** True when `line` (no `\n`) holds a match. */
  test(line: string): boolean;
  /**
   * For a whole text: a function giving where a match may start at or after `from`, or -1.
   * Every line holding a match holds such a start, or follows one in the same line; a start
   * does not promise a match, so its line must be tested again.
   */
  scan(text: string): (from: number) => number;
}

/** The re2js matcher of `re`. */
export function re2jsMatcher(re: RE2JS): LineMatcher {
  return {
    engine: "re2js",
    test: (line) => re.test(line),
    scan(text) {
      // One test first: on a text without a match it is much quicker than the matcher.
      if (!re.test(text)) return () => -1;
      const matcher = re.matcher(text);
      return (from) => matcher.find(from) ? matcher.start() : -1;
    },
  };
}

/**
 * The V8 matcher of the RE2 `pattern`, or undefined when it must stay on re2js: no exact
 * translation, or V8 could not fall back to linear time on it. `pattern` must already have
 * compiled with re2js (errors are re2js's).
 */
export function v8Matcher(
  re2: Re2Module,
  pattern: string,
  ignoreCase: boolean,
): LineMatcher | undefined {
  const sources = re2ToJs(re2, pattern, ignoreCase);
  if (sources === undefined) return undefined;
  try {
    // Accepted with `l`: V8's linear engine handles it, so the fallback applies to it.
    new RegExp(sources.line, "l");
    new RegExp(sources.text, "gml");
  } catch {
    return undefined;
  }
  return jsMatcher(sources);
}

/** Characters one exec of a whole-text scan covers, give or take a line (see `jsMatcher`). */
const SCAN_CHUNK_CHARS = 4096;

/**
 * The matcher running the translated `sources` on V8, whether or not V8 could fall back to
 * linear time on them (`v8Matcher` checks that first). `chunkChars` is for tests.
 */
export function jsMatcher(sources: JsSources, chunkChars = SCAN_CHUNK_CHARS): LineMatcher {
  const line = new RegExp(sources.line, "");
  const text = new RegExp(sources.text, "gm");
  return {
    engine: "v8",
    test: (body) => line.test(body),
    scan(whole) {
      // One exec per chunk of whole lines, not one over the whole text: V8 counts backtracks
      // per exec, and an ordinary pattern (`\w+\s*=`) backtracks a little at every position,
      // which over megabytes adds up to the fallback's limit and moves the rest of the scan to
      // the linear engine, many times slower than backtracking. `from` is always a line start
      // (see `searchLines`), and a line that matches on its own holds its match within its
      // chunk.
      return (from) => {
        while (from <= whole.length) {
          let stop = whole.indexOf("\n", Math.min(from + chunkChars, whole.length));
          stop = stop === -1 ? whole.length : stop + 1;
          text.lastIndex = 0;
          const found = text.exec(
            from === 0 && stop === whole.length ? whole : whole.slice(from, stop),
          );
          if (found !== null) return from + found.index;
          if (stop === whole.length) return -1;
          from = stop;
        }
        return -1;
      };
    },
  };
}

/**
 * The matcher grep uses for `pattern` (compiled by re2js as `re`): V8's when the fallback is
 * on and the pattern translates, re2js's otherwise.
 */
export function matcherFor(
  re2: Re2Module,
  re: RE2JS,
  pattern: string,
  ignoreCase: boolean,
): LineMatcher {
  return (linearFallback() ? v8Matcher(re2, pattern, ignoreCase) : undefined) ??
    re2jsMatcher(re);
}

let fallback: boolean | undefined;

/** True when this process runs V8 regular expressions with the linear-time fallback. */
export function linearFallback(): boolean {
  fallback ??= flagAccepted() && probeFallback();
  return fallback;
}

/** True when `--enable-experimental-regexp-engine` is on (the `l` flag is accepted). */
function flagAccepted(): boolean {
  try {
    // The `l` flag exists only under that V8 flag (which the linter does not know).
    const linear = "l";
    new RegExp("", linear);
    return true;
  } catch {
    return false;
  }
}

// `^(?:a+)+$` on n `a`s and a `!` backtracks about 2^n times before it fails. With the
// fallback on, V8 gives up after `--regexp-backtracks-before-fallback` backtracks (50,000 by
// default) and finishes in linear time, so the long probe costs about what the short one does;
// without it the long probe costs about 2^(LONG-SHORT) = 256 times the short one.
const PROBE = /^(?:a+)+$/;
const SHORT = 14;
const LONG = 22;
/** The long probe must cost less than this many short ones. */
const RATIO = 16;

/**
 * True when a pathological match returns too soon for backtracking: the fallback is on.
 * Timing errors only make it answer false (a slow long probe), which keeps grep on re2js.
 * Costs about 1 ms with the fallback on; without it (only when the `l` flag is accepted, which
 * the fallback flag alone does not do) about 20 ms, once.
 */
function probeFallback(): boolean {
  const time = (n: number) => {
    const input = `${"a".repeat(n)}!`;
    const started = performance.now();
    PROBE.test(input);
    return performance.now() - started;
  };
  let short = Infinity;
  for (let i = 0; i < 3; i++) short = Math.min(short, time(SHORT));
  return time(LONG) < RATIO * short;
}

/**
 * Patterns whose meaning differs between a whole text and a single line: \A and \z anchor the
 * text, and a flag group can switch multi-line mode off. They are matched line by line.
 */
export const NEEDS_LINES = /\\[Az]|\(\?[a-zA-Z]*-/;

/** Receives each matching line (1-based number, text); returns false to stop the search. */
export type Emit = (line: number, text: string) => boolean;

const NEWLINES = /\n/g;

/** How many newlines `text` holds in [from, to). */
export function countNewlines(text: string, from: number, to: number): number {
  // A short stretch is quickest by indexOf; a long one (a match deep in a large file) by one
  // regex pass, which V8 runs natively (a slice of a flat string is not copied).
  if (to - from < 4096) {
    let n = 0;
    for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
    return n;
  }
  return text.slice(from, to).match(NEWLINES)?.length ?? 0;
}

/**
 * Emits the lines of `text` (`\n`-separated, no `\r` at their ends) that hold a match of
 * `re`, in order. `whole` allows one scan of the whole text to find candidate lines, each
 * then tested on its own; otherwise every line is tested (patterns whose meaning differs
 * between a whole text and a line, see `NEEDS_LINES` in grep.ts).
 */
export function searchLines(re: LineMatcher, text: string, whole: boolean, emit: Emit): void {
  if (text.length === 0) return;
  const end = text.endsWith("\n") ? text.length - 1 : text.length;
  if (!whole) {
    let line = 0;
    for (let start = 0; start <= end;) {
      let stop = text.indexOf("\n", start);
      if (stop === -1 || stop > end) stop = end;
      line++;
      const body = text.slice(start, stop);
      if (re.test(body) && !emit(line, body)) return;
      start = stop + 1;
    }
    return;
  }
  const next = re.scan(text);
  let line = 1;
  let counted = 0; // text before this offset has been counted into `line`
  for (let from = 0; from <= end;) {
    const at = next(from);
    if (at === -1) return;
    const start = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
    if (start > end) return; // an empty match after the final newline
    let stop = text.indexOf("\n", at);
    if (stop === -1) stop = text.length;
    line += countNewlines(text, counted, start);
    counted = start;
    const body = text.slice(start, stop);
    if (re.test(body) && !emit(line, body)) return;
    from = stop + 1;
  }
}
