/**
 * Base-name globs with the semantics of Go's `path/filepath.Match` (`*`, `?`, `[...]`,
 * `[^...]`, `\` escapes; `*` matches a leading dot; case-sensitive), plus `{a,b}` alternatives.
 *
 * Why not a glob library: the common ones compile to backtracking JavaScript regexes (a
 * pattern such as `*a*a*a*a*a*b` then takes exponential time on a long name) and differ
 * from Go on `[!...]`, `a]` and dot files. Go's algorithm below never backtracks past the
 * last star, so a match costs O(len(pattern) × len(name)).
 *
 * @module
 */

/** Thrown for a malformed glob. */
export class GlobSyntaxError extends Error {
  constructor() {
    super("syntax error in pattern");
    this.name = "GlobSyntaxError";
  }
}

const MAX_ALTERNATIVES = 1024;

/**
 * Expands `{a,b}` groups (nested allowed); `\` keeps the next character literal, and so does
 * a `[...]` class (`[{]` is Go's class of `{`).
 */
export function expandBraces(glob: string): string[] {
  let open = -1;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
    } else if (c === "{") {
      if (depth === 0) open = i;
      depth++;
    } else if (c === "}") {
      if (depth === 0) throw new GlobSyntaxError();
      depth--;
      if (depth === 0) {
        const head = glob.slice(0, open);
        const tails = expandBraces(glob.slice(i + 1));
        const out: string[] = [];
        for (const alternative of splitTopLevel(glob.slice(open + 1, i))) {
          for (const inner of expandBraces(alternative)) {
            for (const tail of tails) {
              out.push(head + inner + tail);
              if (out.length > MAX_ALTERNATIVES) throw new GlobSyntaxError();
            }
          }
        }
        return out;
      }
    }
  }
  if (depth !== 0) throw new GlobSyntaxError();
  return [glob];
}

function splitTopLevel(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "{") depth++;
    else if (c === "}") depth--;
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

/** Compiles `glob`; throws `GlobSyntaxError` when any alternative is malformed. */
export function compileGlob(glob: string): (name: string) => boolean {
  const patterns = expandBraces(glob).map((p) => Array.from(p));
  // Go finds a bad pattern only while matching; check every alternative up front instead.
  for (const p of patterns) validate(p);
  return (name: string) => {
    const chars = Array.from(name);
    return patterns.some((p) => match(p, chars));
  };
}

function validate(pattern: string[]): void {
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === "\\") {
      if (i + 1 >= pattern.length) throw new GlobSyntaxError();
      i += 2;
    } else if (c === "[") {
      i = classEnd(pattern, i + 1);
    } else {
      i++;
    }
  }
}

/** Index after the `]` closing a class whose body starts at `i`; throws when malformed. */
function classEnd(pattern: string[], i: number): number {
  if (pattern[i] === "^") i++;
  let first = true;
  for (;;) {
    if (i >= pattern.length) throw new GlobSyntaxError();
    if (pattern[i] === "]" && !first) return i + 1;
    first = false;
    i = classChar(pattern, i).next;
    if (pattern[i] === "-") {
      i = classChar(pattern, i + 1).next;
    }
  }
}

function classChar(pattern: string[], i: number): { char: string; next: number } {
  let c = pattern[i];
  if (c === undefined || c === "-" || c === "]") throw new GlobSyntaxError();
  if (c === "\\") {
    i++;
    c = pattern[i];
    if (c === undefined) throw new GlobSyntaxError();
  }
  return { char: c, next: i + 1 };
}

/** Go's `filepath.Match` on code points, for a pattern already validated. */
function match(pattern: string[], name: string[]): boolean {
  let p = 0;
  let n = 0;
  outer: while (p < pattern.length) {
    let star = false;
    while (pattern[p] === "*") {
      star = true;
      p++;
    }
    const chunkEnd = chunkEndOf(pattern, p);
    if (star && chunkEnd === p) return !name.slice(n).includes("/");
    const end = matchChunk(pattern, p, chunkEnd, name, n);
    if (end !== -1 && (chunkEnd < pattern.length || end === name.length)) {
      n = end;
      p = chunkEnd;
      continue;
    }
    if (star) {
      for (let i = n; i < name.length && name[i] !== "/"; i++) {
        const e = matchChunk(pattern, p, chunkEnd, name, i + 1);
        if (e !== -1) {
          if (chunkEnd === pattern.length && e !== name.length) continue;
          n = e;
          p = chunkEnd;
          continue outer;
        }
      }
    }
    return false;
  }
  return n === name.length;
}

function chunkEndOf(pattern: string[], p: number): number {
  let inClass = false;
  for (let i = p; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") i++;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "*" && !inClass) return i;
  }
  return pattern.length;
}

/** Matches pattern[p, end) at name[n]; returns the name index after it, or -1. */
function matchChunk(pattern: string[], p: number, end: number, name: string[], n: number): number {
  while (p < end) {
    const c = pattern[p]!;
    const ch = name[n];
    if (c === "[") {
      if (ch === undefined || ch === "/") return -1;
      p++;
      const negated = pattern[p] === "^";
      if (negated) p++;
      let matched = false;
      let first = true;
      while (first || pattern[p] !== "]") {
        first = false;
        const lo = classChar(pattern, p);
        let hi = lo;
        p = lo.next;
        if (pattern[p] === "-") {
          hi = classChar(pattern, p + 1);
          p = hi.next;
        }
        const code = ch.codePointAt(0)!;
        if (lo.char.codePointAt(0)! <= code && code <= hi.char.codePointAt(0)!) matched = true;
      }
      p++;
      if (matched === negated) return -1;
      n++;
    } else if (c === "?") {
      if (ch === undefined || ch === "/") return -1;
      p++;
      n++;
    } else {
      const literal = c === "\\" ? pattern[++p]! : c;
      if (ch !== literal) return -1;
      p++;
      n++;
    }
  }
  return n;
}
