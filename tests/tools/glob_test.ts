/**
 * `compileGlob` and `expandBraces` against Go's `path/filepath.Match` (Unix), plus the
 * `{a,b}` extension. The first table is Go's own `matchTests` (src/path/filepath/match_test.go);
 * a bad pattern must be reported when the glob is compiled, whatever the name.
 */

import { assertEquals, assertThrows } from "../_helpers/assert.ts";
import { compileGlob, expandBraces, GlobSyntaxError } from "../../tools/_glob.ts";

type Expect = boolean | "bad";

function check(cases: ReadonlyArray<readonly [string, string, Expect]>): void {
  for (const [pattern, name, expected] of cases) {
    const label = `${JSON.stringify(pattern)} vs ${JSON.stringify(name)}`;
    if (expected === "bad") {
      assertThrows(() => compileGlob(pattern), GlobSyntaxError);
    } else {
      assertEquals(compileGlob(pattern)(name), expected, label);
    }
  }
}

Deno.test("compileGlob: Go's filepath.Match test table", () => {
  check([
    ["abc", "abc", true],
    ["*", "abc", true],
    ["*c", "abc", true],
    ["a*", "a", true],
    ["a*", "abc", true],
    ["a*", "ab/c", false],
    ["a*/b", "abc/b", true],
    ["a*/b", "a/c/b", false],
    ["a*b*c*d*e*/f", "axbxcxdxe/f", true],
    ["a*b*c*d*e*/f", "axbxcxdxexxx/f", true],
    ["a*b*c*d*e*/f", "axbxcxdxe/xxx/f", false],
    ["a*b*c*d*e*/f", "axbxcxdxexxx/fff", false],
    ["a*b?c*x", "abxbbxdbxebxczzx", true],
    ["a*b?c*x", "abxbbxdbxebxczzy", false],
    ["ab[c]", "abc", true],
    ["ab[b-d]", "abc", true],
    ["ab[e-g]", "abc", false],
    ["ab[^c]", "abc", false],
    ["ab[^b-d]", "abc", false],
    ["ab[^e-g]", "abc", true],
    ["a\\*b", "a*b", true],
    ["a\\*b", "ab", false],
    ["a?b", "a☺b", true],
    ["a[^a]b", "a☺b", true],
    ["a???b", "a☺b", false],
    ["a[^a][^a][^a]b", "a☺b", false],
    ["[a-ζ]*", "α", true],
    ["*[a-ζ]", "A", false],
    ["a?b", "a/b", false],
    ["a*b", "a/b", false],
    ["[\\]a]", "]", true],
    ["[\\-]", "-", true],
    ["[x\\-]", "x", true],
    ["[x\\-]", "-", true],
    ["[x\\-]", "z", false],
    ["[\\-x]", "x", true],
    ["[\\-x]", "-", true],
    ["[\\-x]", "a", false],
    ["[]a]", "]", "bad"],
    ["[-]", "-", "bad"],
    ["[x-]", "x", "bad"],
    ["[x-]", "-", "bad"],
    ["[x-]", "z", "bad"],
    ["[-x]", "x", "bad"],
    ["[-x]", "-", "bad"],
    ["[-x]", "a", "bad"],
    ["\\", "a", "bad"],
    ["[a-b-c]", "a", "bad"],
    ["[", "a", "bad"],
    ["[^", "a", "bad"],
    ["[^bc", "a", "bad"],
    ["a[", "a", "bad"],
    ["a[", "ab", "bad"],
    ["a[", "x", "bad"],
    ["a/b[", "x", "bad"],
    ["*x", "xxx", true],
  ]);
});

Deno.test("compileGlob: * and ?", () => {
  check([
    ["*", "", true],
    ["*", ".hidden", true], // no special case for a leading dot
    ["*.txt", ".env.txt", true],
    ["*.txt", ".txt", true],
    ["*.txt", "a.txt.bak", false],
    [".*", ".x", true],
    [".*", "x", false],
    ["**", "abc", true], // same as *
    ["a**b", "a/b", false],
    ["*", "a/b", false], // never crosses /
    ["*/*", "a/b", true],
    ["a*", "a", true], // * matches the empty string
    ["*a*", "a", true],
    ["?", "", false],
    ["?", "a", true],
    ["?", "ab", false],
    ["?", "/", false],
    ["??", "é😀", true], // one character each, however many bytes or UTF-16 units
    ["?", "😀", true],
    ["a*a*a*a*a*a*a*a*b", "a".repeat(200), false], // no exponential backtracking
    ["*a*a*a*a*a*a*a*a*", "a".repeat(200), true],
    ["", "", true],
    ["", "a", false],
  ]);
});

Deno.test("compileGlob: literals and escapes", () => {
  check([
    ["abc", "ABC", false], // case-sensitive
    ["ABC", "abc", false],
    ["*.TXT", "a.txt", false],
    ["a]", "a]", true], // a lone ] is literal
    ["]", "]", true],
    ["a-b", "a-b", true],
    ["^a", "^a", true],
    ["!a", "!a", true],
    ["\\a", "a", true], // escaping an ordinary character
    ["\\\\", "\\", true],
    ["\\?", "?", true],
    ["\\?", "a", false],
    ["\\[a]", "[a]", true],
    ["\\[a]", "a", false],
    ["a\\", "a", "bad"],
    ["a\\\\", "a\\", true],
    ["é", "é", true],
    ["😀*", "😀.txt", true],
  ]);
});

Deno.test("compileGlob: character classes", () => {
  check([
    ["[abc]", "b", true],
    ["[abc]", "d", false],
    ["[abc]", "", false],
    ["[abc]", "ab", false],
    ["[a-c]", "a", true],
    ["[a-c]", "c", true], // ranges are inclusive
    ["[a-c]", "d", false],
    ["[a-c]", "B", false],
    ["[a-cx-z]", "y", true],
    ["[z-a]", "m", false], // an empty range is valid and matches nothing
    ["[^a]", "b", true],
    ["[^a]", "a", false],
    ["[^a]", "", false],
    ["[^a-c]", "d", true],
    ["[^a-c]", "b", false],
    ["[!a]", "!", true], // ! does not negate in Go: it is a member
    ["[!a]", "a", true],
    ["[!a]", "b", false],
    ["[^^]", "^", false],
    ["[^^]", "a", true],
    ["[a^]", "^", true], // ^ is only special first
    ["[*]", "*", true],
    ["[*]", "a", false],
    ["[?]", "?", true],
    ["[?]", "a", false],
    ["[[]", "[", true],
    ["[\\]]", "]", true],
    ["[\\\\]", "\\", true],
    ["[\\a]", "a", true],
    ["[a\\-z]", "-", true],
    ["[a\\-z]", "b", false],
    ["[é-ë]", "ê", true],
    ["[😀]", "😀", true],
    ["[^😀]", "😀", false],
    ["*[0-9]", "file9", true],
    ["*[0-9]", "file", false],
    ["[a-z]*.[ch]", "main.c", true],
    ["[a-z]*.[ch]", "Main.c", false],
    ["[{]", "{", true], // braces inside a class are members
    ["[}]", "}", true],
    ["[{,}]", ",", true],
    ["x[{]y", "x{y", true],
    ["[]", "a", "bad"],
    ["[^]", "a", "bad"],
    ["[a-]", "a", "bad"],
    ["[a--]", "a", "bad"],
    ["[a-\\", "a", "bad"],
    ["[a\\", "a", "bad"],
    ["[\\", "a", "bad"],
    ["*[", "a", "bad"],
    ["[*", "a", "bad"],
    ["[abc", "a", "bad"],
    ["[a-z", "a", "bad"],
    ["ok[", "nope", "bad"], // bad even when the literal prefix already fails
    ["x*[", "abc", "bad"],
  ]);
});

Deno.test("compileGlob: {a,b} alternatives", () => {
  check([
    ["{a,b}", "a", true],
    ["{a,b}", "b", true],
    ["{a,b}", "c", false],
    ["{a,b}", "{a,b}", false],
    ["*.{ts,tsx}", "x.tsx", true],
    ["*.{ts,tsx}", "x.js", false],
    ["x{a,b}y", "xby", true],
    ["x{a,b}y", "xy", false],
    ["{,x}", "", true],
    ["{,x}", "x", true],
    ["a{}b", "ab", true],
    ["{a}", "a", true],
    ["{a,{b,c}d}", "cd", true],
    ["{a,{b,c}d}", "c", false],
    ["{a,b}{c,d}", "bd", true],
    ["{a,b}{c,d}", "ab", false],
    ["{*.md,[A-Z]*}", "README", true],
    ["{*.md,[A-Z]*}", "notes.md", true],
    ["{*.md,[A-Z]*}", "notes.txt", false],
    ["\\{a,b\\}", "{a,b}", true],
    ["\\{a,b\\}", "a", false],
    ["{a\\,b,c}", "a,b", true],
    ["{a\\,b,c}", "a", false],
    ["{a\\}b,c}", "a}b", true],
    ["{[,],x}", ",", true], // the , is inside a class: one alternative
    ["{[,],x}", "x", true],
    ["{[,],x}", "[", false],
    ["{a,b", "a", "bad"],
    ["{a,{b,c}", "a", "bad"],
    ["a}", "a}", "bad"],
    ["{a,b}}", "a", "bad"],
    ["{a,b\\}", "a", "bad"],
    ["{a,[}", "a", "bad"],
    ["{a,[b}", "a", "bad"],
    ["{a,b[}", "a", "bad"],
    ["{ok,[}", "ok", "bad"], // every alternative is checked, even when another matches
    ["{ok,x\\}", "ok", "bad"],
  ]);
});

Deno.test("expandBraces", () => {
  const cases: Array<[string, string[]]> = [
    ["abc", ["abc"]],
    ["", [""]],
    ["{a,b}", ["a", "b"]],
    ["x{a,b}y", ["xay", "xby"]],
    ["{a,b}{c,d}", ["ac", "ad", "bc", "bd"]],
    ["{a,{b,c}d}", ["a", "bd", "cd"]],
    ["{a,{b,{c,d}}}", ["a", "b", "c", "d"]],
    ["{,x}", ["", "x"]],
    ["{}", [""]],
    ["\\{a,b\\}", ["\\{a,b\\}"]], // escapes are kept for the matcher
    ["{a\\,b,c}", ["a\\,b", "c"]],
    ["*.{ts,js}", ["*.ts", "*.js"]],
    ["[{]", ["[{]"]],
    ["{[,],x}", ["[,]", "x"]],
    ["[a,b]", ["[a,b]"]],
  ];
  for (const [glob, expected] of cases) assertEquals(expandBraces(glob), expected, glob);
  for (const glob of ["{", "}", "{a", "a}", "{a,b}}", "{{a}", "\\{a}", "{a\\}"]) {
    assertThrows(() => expandBraces(glob), GlobSyntaxError);
  }
});

Deno.test("expandBraces: at most 1024 alternatives", () => {
  assertEquals(expandBraces("{a,b}".repeat(10)).length, 1024);
  assertThrows(() => expandBraces("{a,b}".repeat(11)), GlobSyntaxError);
  assertThrows(() => compileGlob("{a,b}".repeat(11)), GlobSyntaxError);
});

Deno.test("GlobSyntaxError carries Go's message", () => {
  const error = assertThrows(() => compileGlob("["), GlobSyntaxError);
  assertEquals(error.message, "syntax error in pattern");
});
