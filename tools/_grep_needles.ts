/**
 * Needles for grep: byte runs that every match of a pattern contains, read off the pattern's
 * compiled RE2 program, and a fast search for them in a file's bytes.
 *
 * re2js is a pure-JavaScript engine and scans large inputs slowly, while most patterns cannot
 * match without certain bytes: `foo_bar|baz_qux` needs "foo_bar" or "baz_qux", and
 * `(?i)[a-z]+_handler\d` needs "_", then "handler" in any case, then a digit. Grep hands RE2
 * only the lines that hold a needle.
 *
 * The needles come from the program re2js compiled, not from a second parser of the pattern,
 * so the two cannot disagree about what the pattern means. A needle is a chain of rune
 * instructions with no branch between them (a path through its first instruction goes on
 * through the rest), and the needles form a cut: no path from the start to the match
 * instruction avoids them all. Anything this module does not understand (lookbehind, a
 * program layout it does not recognise, a rune it cannot turn into bytes exactly) yields no
 * needles, and grep falls back to RE2 over the whole text.
 *
 * Needles are found in the file's bytes read as a Latin-1 string (one code unit per byte),
 * where V8's `indexOf` runs at memchr speed when the first character is rare. So each needle
 * is looked up through a short window that starts at its rarest byte, spelled out in all its
 * variants (`[hH][aA]` gives four), and then checked in full: ripgrep's rare-byte prefilter,
 * with V8's string search as the memchr.
 *
 * @module
 */

import type { RE2JS } from "re2js";

/** One byte position of a needle: the bytes it accepts, as Latin-1 characters. */
export type Unit = string;
/** A run of byte positions that a match of the pattern contains somewhere. */
export type Needle = readonly Unit[];

// re2js 2.10 instruction codes (`Inst` in its sources) and the fold flag of a RUNE.
const ALT = 1;
const ALT_MATCH = 2;
const CAPTURE = 3;
const EMPTY_WIDTH = 4;
const FAIL = 5;
const MATCH = 6;
const NOP = 7;
const RUNE = 8;
const RUNE1 = 9;
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;
const FOLD_CASE = 1;

/** Longest needle kept, in bytes. */
const MAX_NEEDLE_BYTES = 64;
/** Most needles in one cut; beyond it the search costs more than it saves. */
const MAX_NEEDLES = 16;
/** Largest character class kept as a needle position (`\d` is 10). */
const MAX_CLASS = 16;
/** Programs larger than this are not analysed. */
const MAX_PROGRAM = 20_000;
/** Most spelled-out variants of a search window longer than one byte. */
const MAX_VARIANTS = 8;
/** Longest search window: V8 searches shorter strings by memchr on their first character. */
const MAX_WINDOW = 6;

interface Inst {
  readonly op: number;
  readonly out: number;
  readonly arg: number;
  readonly runes: ArrayLike<number>;
}

interface Program {
  readonly inst: readonly Inst[];
  readonly start: number;
}

/**
 * The program of `re`, or undefined when re2js does not lay it out the way this module
 * expects (checked once on known patterns, so an upgrade that changes the layout turns the
 * prefilter off instead of making it wrong).
 */
function programOf(re: RE2JS, engine: typeof RE2JS): Program | undefined {
  if (!layoutKnown(engine)) return undefined;
  const prog = (re.re2() as unknown as { prog?: Program }).prog;
  if (prog === undefined || !Array.isArray(prog.inst) || typeof prog.start !== "number") {
    return undefined;
  }
  return prog;
}

let layoutChecked: boolean | undefined;

function layoutKnown(engine: typeof RE2JS): boolean {
  if (layoutChecked === undefined) {
    try {
      layoutChecked = checkLayout(engine);
    } catch {
      layoutChecked = false;
    }
  }
  return layoutChecked;
}

function checkLayout(engine: typeof RE2JS): boolean {
  const prog = (pattern: string): Program =>
    (engine.compile(pattern).re2() as unknown as { prog: Program }).prog;
  const at = (p: Program, pc: number): Inst => p.inst[pc]!;
  // "ab": rune1 a -> rune1 b -> match
  const ab = prog("ab");
  const a = at(ab, ab.start);
  const b = at(ab, a.out);
  if (a.op !== RUNE1 || a.runes[0] !== 0x61 || b.op !== RUNE1 || b.runes[0] !== 0x62) return false;
  if (at(ab, b.out).op !== MATCH) return false;
  // "(?i)x": one folded rune
  const x = prog("(?i)x");
  const fx = at(x, x.start);
  if (fx.op !== RUNE || fx.runes.length !== 1 || (fx.arg & FOLD_CASE) === 0) return false;
  // "x|y(z)": alt -> rune1 x, rune1 y -> capture -> rune1 z -> capture -> match
  const alt = prog("x|y(z)");
  const fork = at(alt, alt.start);
  if (fork.op !== ALT) return false;
  const branches = [at(alt, fork.out), at(alt, fork.arg)];
  const y = branches.find((inst) => inst.op === RUNE1 && inst.runes[0] === 0x79);
  if (!branches.some((inst) => inst.op === RUNE1 && inst.runes[0] === 0x78)) return false;
  if (y === undefined || at(alt, y.out).op !== CAPTURE) return false;
  // "^[a-c]." : empty-width -> rune (a range) -> any but newline -> match
  const cls = prog("^[a-c].");
  const caret = at(cls, cls.start);
  const range = at(cls, caret.out);
  if (caret.op !== EMPTY_WIDTH || range.op !== RUNE) return false;
  if (range.runes.length !== 2 || range.runes[0] !== 0x61 || range.runes[1] !== 0x63) return false;
  if (at(cls, range.out).op !== RUNE_ANY_NOT_NL) return false;
  const dot = prog("(?s).");
  return at(dot, dot.start).op === RUNE_ANY;
}

const ENCODER = new TextEncoder();

/** The bytes of rune `r` as units, or undefined when decoded text may show it without them. */
function exactRune(r: number): Unit[] | undefined {
  // U+FFFD also stands for invalid bytes, which are not its encoding; surrogates never occur.
  if (r < 0 || r > 0x10ffff || r === 0xfffd || (r >= 0xd800 && r <= 0xdfff)) return undefined;
  return Array.from(ENCODER.encode(String.fromCodePoint(r)), (byte) => String.fromCharCode(byte));
}

/** The units of one rune instruction, or undefined when it is not a short, exact run. */
function unitsOf(inst: Inst): Unit[] | undefined {
  const runes = inst.runes;
  if (inst.op === RUNE1) return exactRune(runes[0]!);
  if (inst.op !== RUNE || runes.length === 0) return undefined;
  if (runes.length === 1) {
    const r = runes[0]!;
    if ((inst.arg & FOLD_CASE) === 0) return exactRune(r);
    // Case folding, for ASCII letters only: k and s also fold to U+212A and U+017F, and other
    // letters' orbits reach beyond ASCII, so they are left to RE2.
    const lower = r | 0x20;
    if (r > 0x7a || lower < 0x61 || lower > 0x7a || lower === 0x6b || lower === 0x73) {
      return undefined;
    }
    return [String.fromCharCode(lower, lower ^ 0x20)];
  }
  if (runes.length % 2 !== 0) return undefined;
  // A class of ranges [lo, hi] pairs: kept when small and ASCII (one byte per rune).
  let unit = "";
  for (let i = 0; i < runes.length; i += 2) {
    const lo = runes[i]!;
    const hi = runes[i + 1]!;
    if (lo > hi || hi > 0x7f || unit.length + hi - lo + 1 > MAX_CLASS) return undefined;
    for (let r = lo; r <= hi; r++) unit += String.fromCharCode(r);
  }
  return [unit];
}

function isRune(op: number): boolean {
  return op === RUNE || op === RUNE1 || op === RUNE_ANY || op === RUNE_ANY_NOT_NL;
}

/**
 * The needles of `re`'s program, or undefined when there is no safe cut of them. `engine` is
 * the class that compiled `re` (re2js is loaded on demand, so it is passed in, not imported).
 */
export function needlesOf(re: RE2JS, engine: typeof RE2JS): Needle[] | undefined {
  const prog = programOf(re, engine);
  if (prog === undefined || prog.inst.length > MAX_PROGRAM) return undefined;
  const insts = prog.inst;
  for (const inst of insts) {
    if (inst.op < ALT || inst.op > RUNE_ANY_NOT_NL) return undefined; // lookbehind, or unknown
  }
  // chains[pc]: the needle a path through rune instruction pc is sure to spell from there.
  const chains = new Map<number, Unit[]>();
  const chainAt = (first: number): Unit[] | undefined => {
    const known = chains.get(first);
    if (known !== undefined) return known;
    const own = unitsOf(insts[first]!);
    if (own === undefined) return undefined;
    const run: Unit[] = [...own];
    const seen = new Set([first]);
    let pc = insts[first]!.out;
    while (run.length < MAX_NEEDLE_BYTES && !seen.has(pc)) {
      seen.add(pc);
      const inst = insts[pc];
      if (inst === undefined) break;
      // Zero-width steps with one way out do not break a run: `a\bb` still spells "ab".
      if (inst.op === NOP || inst.op === CAPTURE || inst.op === EMPTY_WIDTH) {
        pc = inst.out;
        continue;
      }
      if (!isRune(inst.op)) break;
      const units = unitsOf(inst);
      if (units === undefined) break;
      run.push(...units);
      pc = inst.out;
    }
    if (run.length > MAX_NEEDLE_BYTES) run.length = MAX_NEEDLE_BYTES;
    chains.set(first, run);
    return run;
  };
  const scores = new Map<number, number>();
  for (let pc = 0; pc < insts.length; pc++) {
    if (!isRune(insts[pc]!.op)) continue;
    const chain = chainAt(pc);
    if (chain !== undefined) scores.set(pc, score(chain));
  }
  // The longest needles that still cut every path: try thresholds from the top.
  const thresholds = [...new Set(scores.values())].filter((s) => s >= 1).sort((a, b) => b - a);
  for (const threshold of thresholds.slice(0, 64)) {
    const cut = frontier(prog, (pc) => (scores.get(pc) ?? 0) >= threshold);
    if (cut === undefined || cut.length === 0) continue;
    const needles = distinct(cut.map((pc) => chains.get(pc)!));
    if (needles.length <= MAX_NEEDLES) return needles;
  }
  return undefined;
}

/** How selective a needle is: exact and case-folded bytes count 1, small classes less. */
function score(needle: Needle): number {
  let total = 0;
  for (const unit of needle) total += unit.length <= 2 ? 1 : 0.5;
  return total;
}

/**
 * The first instructions in `inCut` met on the paths from the start, or undefined when a path
 * reaches the match without meeting one.
 */
function frontier(prog: Program, inCut: (pc: number) => boolean): number[] | undefined {
  const seen = new Uint8Array(prog.inst.length);
  const stack = [prog.start];
  const cut: number[] = [];
  while (stack.length > 0) {
    const pc = stack.pop()!;
    if (seen[pc] === 1) continue;
    seen[pc] = 1;
    if (inCut(pc)) {
      cut.push(pc);
      continue;
    }
    const inst = prog.inst[pc];
    if (inst === undefined) return undefined;
    switch (inst.op) {
      case MATCH:
        return undefined;
      case FAIL:
        break;
      case ALT:
      case ALT_MATCH:
        stack.push(inst.out, inst.arg);
        break;
      case CAPTURE:
      case EMPTY_WIDTH:
      case NOP:
      case RUNE:
      case RUNE1:
      case RUNE_ANY:
      case RUNE_ANY_NOT_NL:
        stack.push(inst.out);
        break;
      default:
        return undefined;
    }
  }
  return cut;
}

/** `needles` without repeats, and without any exact needle that holds another exact one. */
function distinct(needles: readonly Needle[]): Needle[] {
  const byText = new Map<string, Needle>();
  for (const needle of needles) byText.set(needle.join("\u0100"), needle);
  const unique = [...byText.values()];
  const exact = unique.filter((n) => n.every((unit) => unit.length === 1)).map((n) => n.join(""));
  return unique.filter((needle) => {
    if (!needle.every((unit) => unit.length === 1)) return true;
    const text = needle.join("");
    return !exact.some((other) => other !== text && text.includes(other));
  });
}

// Printable ASCII from the most to the least frequent in a mix of C, JavaScript, Python and
// prose (measured on /usr/include, npm packages, the Python library and /usr/share/doc).
const BY_FREQUENCY =
  " etsonira_cl\ndpu/hfm.)(SgbE,*TyI0ARNOLkC:'xPv-=1w\";#2DMB`F59[]3UGj4X{}>68\\H7K\tVqz<YW|$?&J+Z@!Q%^\r~";

/** Rough share of text bytes that are each byte value. */
const PRIOR: Float64Array = (() => {
  const share = new Float64Array(256);
  for (let byte = 0; byte < 256; byte++) {
    const rank = BY_FREQUENCY.indexOf(String.fromCharCode(byte));
    // Bytes of non-ASCII text are common in some files; control bytes are rare.
    share[byte] = rank !== -1 ? 0.12 * 0.915 ** rank : byte >= 0x80 ? 0.002 : 0.00001;
  }
  return share;
})();

// Rough relative costs (nanoseconds, tuned on V8 in Deno 2.9 against the shares above): a
// pass of `indexOf` per byte, a false start inside it on the window's first character, and
// a window hit returned to JavaScript and checked against the whole needle.
const PASS_COST = 0.08;
const FALSE_START_COST = 3;
const CHECK_COST = 60;

interface Window {
  readonly offset: number;
  readonly variants: readonly string[];
  readonly cost: number;
}

/**
 * The cheapest window of `needle` to search for, by the cost model above and `share`, the
 * share of text bytes that are each byte value.
 */
function bestWindow(needle: Needle, share: Float64Array): Window {
  const shareOf = (unit: Unit) => {
    let total = 0;
    for (let i = 0; i < unit.length; i++) total += share[unit.charCodeAt(i)]!;
    return total;
  };
  let best: Window | undefined;
  for (let offset = 0; offset < needle.length; offset++) {
    const head = needle[offset]!;
    // Every variant starts with one of the head's bytes, each in count / head.length of them.
    const falseStarts = shareOf(head) / head.length;
    let count = 1;
    let hits = 1;
    for (let length = 1; length <= MAX_WINDOW && offset + length <= needle.length; length++) {
      const unit = needle[offset + length - 1]!;
      count *= unit.length;
      if (length > 1 && count > MAX_VARIANTS) break;
      hits *= shareOf(unit);
      const whole = length === needle.length;
      const cost = count * (PASS_COST + falseStarts * FALSE_START_COST) +
        (whole ? 0 : hits * CHECK_COST);
      if (best === undefined || cost < best.cost) {
        best = { offset, variants: spell(needle.slice(offset, offset + length)), cost };
      }
    }
  }
  return best!;
}

/** Every string the units accept, in order. */
function spell(units: Needle): string[] {
  let out = [""];
  for (const unit of units) out = out.flatMap((prefix) => Array.from(unit, (c) => prefix + c));
  return out;
}

/**
 * What a `NeedleFinder` searches for, as plain data that can cross to another isolate (see
 * `holdsNeedle`).
 */
export interface NeedlePlan {
  readonly needles: readonly Needle[];
  /** Each needle as one string when every unit is a single byte, else null. */
  readonly exact: readonly (string | null)[];
  /** The windows searched: the needle, the window's offset in it, and one spelling of it. */
  readonly probes: ReadonlyArray<
    { readonly needle: number; readonly offset: number; readonly text: string }
  >;
}

/**
 * True when `text` holds one of the plan's needles: the answer of `find(0) !== -1` on the
 * finder the plan came from (the same windows, each hit checked against the whole needle).
 *
 * Hazard: the prefilter worker receives this function as source text (`_grep_pool.ts`), so it
 * must name nothing outside itself.
 */
export function holdsNeedle(text: string, plan: NeedlePlan): boolean {
  for (const probe of plan.probes) {
    const needle = plan.needles[probe.needle]!;
    const exact = plan.exact[probe.needle];
    let hit = text.indexOf(probe.text, probe.offset);
    while (hit !== -1) {
      const start = hit - probe.offset;
      // Later hits start later still: none of them fits either.
      if (start + needle.length > text.length) break;
      if (exact !== null && exact !== undefined) {
        if (text.startsWith(exact, start)) return true;
      } else {
        let i = 0;
        while (i < needle.length && needle[i]!.includes(text[start + i]!)) i++;
        if (i === needle.length) return true;
      }
      hit = text.indexOf(probe.text, hit + 1);
    }
  }
  return false;
}

interface Probe {
  readonly needle: number;
  readonly offset: number;
  readonly text: string;
  /** Start of the needle at the next window hit; -1 when stale, Infinity when none is left. */
  at: number;
}

/**
 * Finds needles in one text at a time: `reset(text)`, then `find(from)` for the first place
 * at or after `from` where a needle starts.
 */
export class NeedleFinder {
  readonly #needles: readonly Needle[];
  readonly #exact: readonly (string | undefined)[];
  readonly #probes: Probe[];
  #text = "";

  /** `needles` must not be empty. */
  constructor(needles: readonly Needle[]) {
    if (needles.length === 0) throw new RangeError("NeedleFinder: no needles");
    this.#needles = needles;
    this.#exact = needles.map((n) => n.every((u) => u.length === 1) ? n.join("") : undefined);
    this.#probes = needles.flatMap((needle, index) => {
      const window = bestWindow(needle, PRIOR);
      return window.variants.map((text) => ({
        needle: index,
        offset: window.offset,
        text,
        at: -1,
      }));
    });
  }

  /** The needles and windows this finder searches for, as plain data. */
  plan(): NeedlePlan {
    return {
      needles: this.#needles,
      exact: this.#exact.map((text) => text ?? null),
      probes: this.#probes.map(({ needle, offset, text }) => ({ needle, offset, text })),
    };
  }

  /** Starts over on `text`. */
  reset(text: string): void {
    this.#text = text;
    for (const probe of this.#probes) probe.at = -1;
  }

  /** Where the first needle at or after `from` starts, or -1. */
  find(from: number): number {
    const text = this.#text;
    for (;;) {
      let best: Probe | undefined;
      for (const probe of this.#probes) {
        if (probe.at < from) probe.at = this.#next(probe, from);
        if (best === undefined || probe.at < best.at) best = probe;
      }
      if (best === undefined || best.at === Infinity) return -1;
      const start = best.at;
      if (this.#matches(best.needle, start, text)) return start;
      best.at = this.#next(best, start + 1);
    }
  }

  #next(probe: Probe, from: number): number {
    const hit = this.#text.indexOf(probe.text, from + probe.offset);
    return hit === -1 ? Infinity : hit - probe.offset;
  }

  #matches(index: number, start: number, text: string): boolean {
    const needle = this.#needles[index]!;
    if (start < 0 || start + needle.length > text.length) return false;
    const exact = this.#exact[index];
    if (exact !== undefined) return text.startsWith(exact, start);
    for (let i = 0; i < needle.length; i++) {
      const unit = needle[i]!;
      const c = text[start + i]!;
      if (unit.length === 1 ? unit !== c : !unit.includes(c)) return false;
    }
    return true;
  }
}
