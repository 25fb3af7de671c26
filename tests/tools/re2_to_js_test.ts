/**
 * The RE2-to-JavaScript translation (tools/_re2_to_js.ts) against re2js itself: generated
 * patterns and texts, compared the way grep uses a pattern (which lines match, where the first
 * match of a line starts, which lines a whole-text scan reports). Seeded, so a failure names
 * the seed and the case that replays it.
 */

import { fileURLToPath } from "node:url";
import { RE2JS, RE2Set } from "re2js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { prng } from "../_helpers/prng.ts";
import { MAX_SOURCE_CHARS, re2ToJs } from "../../tools/_re2_to_js.ts";
import {
  jsMatcher,
  type LineMatcher,
  NEEDS_LINES,
  re2jsMatcher,
  searchLines,
} from "../../tools/_grep_matcher.ts";
import { GREP_V8_FLAGS } from "../../tools/grep.ts";

const RE2 = { RE2JS, RE2Set };
const SEED = Number(Deno.env.get("RE2_TO_JS_SEED") ?? 0x5eed_2026);
const CASES = Number(Deno.env.get("RE2_TO_JS_CASES") ?? 4000);

// Characters where RE2 and JavaScript part ways: \s (RE2: [\t\n\f\r ]; JS adds \v, NBSP,
// U+2028...), \w and \b (ASCII in RE2), case orbits beyond ASCII (ſ, K, ß/ẞ, σ/ς/Σ), `.`
// (JS also stops at \r, U+2028, U+2029), astral letters and emoji (surrogate pairs), digits
// of other scripts (\d is ASCII in RE2), and the punctuation RE2 escapes.
const ALPHABET = [
  "a",
  "b",
  "A",
  "B",
  "k",
  "K",
  "s",
  "S",
  "x",
  "z",
  "_",
  "0",
  "7",
  "9",
  " ",
  "\t",
  "\r",
  "\v",
  "\f",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\u0085",
  "\u017f",
  "\u212a",
  "\u00df",
  "\u1e9e",
  "\u03c3",
  "\u03c2",
  "\u03a3",
  "\u00e9",
  "\u00c9",
  "\u0661",
  "-",
  ".",
  "*",
  "(",
  "]",
  "\\",
  "\u{1f600}",
  "\u{1d538}",
  "\u{10400}",
  "\u{10428}",
  "\ufffd",
]; // deno-fmt-ignore

/** RE2 pattern pieces: atoms the generator combines. */
const ATOMS = [
  "a", "b", "k", "s", "x", "A", "K", "S", "\u017f", "\u212a", "\u00df", "\u03c3", "\u00e9",
  "\u{1f600}", "\u{1d538}", "\u{10400}", "0", "7", "_", " ", "-", "\\.", "\\*", "\\(", "\\]",
  "\\\\", ".", "\\d", "\\D", "\\s", "\\S", "\\w", "\\W", "\\b", "^", "$", "\\A", "\\z",
  "[a-z]", "[^a-z]", "[A-Z0-9_]", "[^\\s]", "[\\s\\d]", "[^\\w\\-]", "[[:alpha:]]",
  "[[:^space:]]", "[[:punct:]]", "[[:upper:]]", "\\pL", "\\PL", "\\p{Greek}", "\\PN",
  "\\p{Lu}", "\\pN", "[\\p{Ll}\\d]", "[^\\p{L}]", "\\x{1F600}", "\\x41", "\\x{212A}",
  "\\101", "\\t", "\\n", "\\r", "\\f", "\\v", "[\\x{10000}-\\x{10FFFF}]", "[^\\x00-\\x7f]",
  "[\\x{1F600}-\\x{1F64F}a]", "\\Qa.*\\E", "\\Q(\\E", "[.]", "[\\^x]", "[\\]a]", "[a-]",
  "\\C",
]; // deno-fmt-ignore

const FLAG_GROUPS = ["(?i)", "(?s)", "(?m)", "(?U)", "(?-m)", "(?i-s)", "(?is)", "(?-i)"];
const QUANTIFIERS = ["*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,}", "{2,3}?", "{0}"];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)]!;
}

/** A random RE2 pattern of nesting `depth` at most. */
function pattern(next: () => number, depth: number): string {
  const parts: string[] = [];
  const length = 1 + Math.floor(next() * 4);
  for (let i = 0; i < length; i++) {
    let part: string;
    const roll = next();
    if (depth > 0 && roll < 0.25) {
      const inner = pattern(next, depth - 1);
      const open = pick(next, ["(", "(?:", "(?P<n" + i + ">", "(?<g" + i + ">", "(?i:", "(?s:"]);
      part = `${open}${inner})`;
    } else if (depth > 0 && roll < 0.35) {
      const alternatives = [pattern(next, depth - 1), pattern(next, depth - 1)];
      if (next() < 0.3) alternatives.push(""); // an empty alternative
      part = `(?:${alternatives.join("|")})`;
    } else if (roll < 0.42) part = pick(next, FLAG_GROUPS);
    else part = pick(next, ATOMS);
    if (!part.startsWith("(?") || part.endsWith(")") && !FLAG_GROUPS.includes(part)) {
      if (next() < 0.3) part += pick(next, QUANTIFIERS);
    }
    parts.push(part);
  }
  return parts.join("");
}

/** A random text of a few lines from ALPHABET. */
function text(next: () => number): string {
  let out = "";
  const length = Math.floor(next() * 40);
  for (let i = 0; i < length; i++) out += next() < 0.12 ? "\n" : pick(next, ALPHABET);
  return out;
}

/** The lines grep reports for `text`, with the whole-text scan or line by line. */
function lines(matcher: LineMatcher, text: string, whole: boolean): number[] {
  const found: number[] = [];
  searchLines(matcher, text, whole, (line) => {
    found.push(line);
    return true;
  });
  return found;
}

/** Where the first match in `line` starts, by re2js, or -1. */
function re2Start(re: RE2JS, line: string): number {
  const m = re.matcher(line);
  return m.find() ? m.start() : -1;
}

/**
 * Runs `cases` generated cases from `seed`; returns the first disagreement, or undefined,
 * and how many patterns translated.
 */
function differ(seed: number, cases: number): { failure?: string; translated: number } {
  const next = prng(seed);
  let translated = 0;
  for (let n = 0; n < cases; n++) {
    const source = pattern(next, 2);
    const ignoreCase = next() < 0.25;
    const texts = [text(next), text(next), text(next)];
    let re: RE2JS;
    try {
      re = RE2JS.compile(source, RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
    } catch {
      continue; // not RE2: grep reports re2js's error before any translation
    }
    const js = re2ToJs(RE2, source, ignoreCase);
    if (js === undefined) continue;
    translated++;
    const line = new RegExp(js.line);
    // Whole-text scans go chunk by chunk; tiny chunks put boundaries everywhere.
    const ours = jsMatcher(js, 1 + Math.floor(next() * 12));
    const theirs = re2jsMatcher(re);
    const where = `seed ${seed}, case ${n}: pattern ${JSON.stringify(source)}` +
      `${ignoreCase ? " (ignore_case)" : ""}, JS /${js.line}/`;
    for (const sample of texts) {
      for (const body of sample.split("\n")) {
        const expected = re2Start(re, body);
        const actual = line.exec(body)?.index ?? -1;
        if (expected !== actual) {
          return {
            failure: `${where}: line ${JSON.stringify(body)}: re2js starts at ${expected}, ` +
              `JS at ${actual}`,
            translated,
          };
        }
      }
      // Line by line always; with the whole-text scan where grep uses it.
      for (const whole of NEEDS_LINES.test(source) ? [false] : [true, false]) {
        const expected = lines(theirs, sample, whole);
        const actual = lines(ours, sample, whole);
        if (expected.join() !== actual.join()) {
          return {
            failure: `${where}: text ${JSON.stringify(sample)} (${whole ? "whole" : "lines"}): ` +
              `re2js lines ${expected.join(",")}, JS lines ${actual.join(",")}`,
            translated,
          };
        }
      }
    }
  }
  return { translated };
}

Deno.test("re2ToJs() matches the lines re2js matches, at the same starts, on generated patterns", () => {
  const { failure, translated } = differ(SEED, CASES);
  assertEquals(failure, undefined, `replay with RE2_TO_JS_SEED=${SEED}`);
  // Most generated patterns must translate, or the comparison proves little.
  assert(translated > CASES / 3, `only ${translated} of ${CASES} patterns translated`);
});

Deno.test("re2ToJs() gives the exact class for each construct where RE2 and JavaScript differ", async (t) => {
  // [pattern, ignore_case, lines that match, lines that do not]
  const rows: Array<[string, boolean, string[], string[]]> = [
    ["^\\s$", false, [" ", "\t", "\f", "\r"], ["\v", "\u00a0", "\u2028", "\ufeff", "\u0085"]],
    ["^\\w$", false, ["a", "Z", "_", "0"], ["\u00e9", "\u017f", "\u212a", "\u0661"]],
    // Under (?i) a class takes its members' case orbits: \w holds ſ and K (U+212A) then.
    ["^\\w$", true, ["k", "K", "s", "\u017f", "\u212a"], ["\u00e9"]],
    ["^k$", true, ["k", "K", "\u212a"], ["\u017f"]],
    ["^s$", true, ["s", "S", "\u017f"], ["\u212a"]],
    ["^\\d$", false, ["0", "9"], ["\u0661", "\uff10"]],
    ["\\bx\\b", false, ["x", "\u00e9x\u00e9"], ["_x", "x0"]],
    ["^.$", false, ["\r", "\u2028", "\u2029", "\u{1f600}", "\u0085"], ["", "ab"]],
    ["^[^a]$", false, ["\u{1f600}", "b"], ["a", "\u{1f600}\u{1f600}"]],
    ["^\\x{1F600}+$", false, ["\u{1f600}\u{1f600}"], ["\ud83d", "\u{1f601}"]],
    ["^\\pL$", false, ["\u{1d538}", "\u00e9"], ["\u{1f600}", "1"]],
    ["^\\p{Greek}$", false, ["\u03c3", "\u{10140}"], ["a"]],
    ["^[[:alpha:]]+$", false, ["abZ"], ["\u00e9"]],
    ["^(?i)σ$", false, ["\u03c3", "\u03c2", "\u03a3"], ["s"]],
    ["^ß$", true, ["\u00df", "\u1e9e"], ["ss", "SS"]],
    ["^\\Qa.b\\E$", false, ["a.b"], ["axb"]],
    ["\\Aab\\z", false, ["ab"], ["xab", "abx"]],
    ["^$", false, [""], [" "]],
    ["a|", false, ["", "b"], []],
    ["x{3}", false, ["xxx"], ["xx"]],
  ];
  for (const [source, ignoreCase, yes, no] of rows) {
    await t.step(`${source}${ignoreCase ? " (ignore_case)" : ""}`, () => {
      const js = re2ToJs(RE2, source, ignoreCase);
      assert(js !== undefined, `${source} did not translate`);
      const re = RE2JS.compile(
        source,
        RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0),
      );
      const line = new RegExp(js.line);
      for (const body of yes) {
        assertEquals([re.test(body), line.test(body)], [true, true], JSON.stringify(body));
      }
      for (const body of no) {
        assertEquals([re.test(body), line.test(body)], [false, false], JSON.stringify(body));
      }
    });
  }
});

Deno.test("re2ToJs() leaves \\B, oversized patterns and lookbehinds to re2js", () => {
  // \B holds between the halves of a surrogate pair in JavaScript, never in RE2.
  assertEquals(re2ToJs(RE2, "\\B", false), undefined);
  // 1000 copies of a large class are far beyond the source limit.
  assertEquals(re2ToJs(RE2, "\\pL{1000}", false), undefined);
  assert(MAX_SOURCE_CHARS < 1000 * 100);
});

Deno.test("re2ToJs() matches re2js also where V8 runs its linear-time engine", async () => {
  // The same comparison in a process where V8 falls back to its linear-time engine after one
  // backtrack: the engine grep's patterns end up on when they backtrack too much must agree
  // with re2js too, not only the backtracking one.
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "-A",
      "--quiet",
      `--v8-flags=${GREP_V8_FLAGS},--regexp-backtracks-before-fallback=1`,
      "--filter",
      "on generated patterns",
      fileURLToPath(import.meta.url),
    ],
    env: { RE2_TO_JS_CASES: "800", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  assertEquals(code, 0, text);
  assert(/1 passed/.test(text), text);
});
