/**
 * The needle prefilter of grep (tools/_grep_needles.ts): what it extracts, that its search
 * finds every occurrence, and, end to end, that grep with it reports exactly the lines a
 * plain line-by-line RE2 test reports (and the lines ripgrep reports, where the two engines
 * agree on the syntax).
 */

import { RE2JS } from "re2js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { type Files, type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { type Needle, NeedleFinder, needlesOf } from "../../tools/_grep_needles.ts";
import { referenceGrep } from "../_helpers/reference_grep.ts";

const ENCODER = new TextEncoder();

function needles(pattern: string, flags = 0): Needle[] | undefined {
  return needlesOf(RE2JS.compile(pattern, RE2JS.MULTILINE | flags), RE2JS);
}

/** Latin-1 view of a string's UTF-8 bytes, as the finder sees file contents. */
function bytesOf(text: string): string {
  return String.fromCharCode(...ENCODER.encode(text));
}

Deno.test("needlesOf() reads needles off the compiled program", async (t) => {
  const table: Array<[string, number, Needle[] | undefined]> = [
    ["quux_7f", 0, [["q", "u", "u", "x", "_", "7", "f"]]],
    ["foo|ba", 0, [["b", "a"], ["f", "o", "o"]]],
    ["(?i)[a-z]+_ab\\d", 0, [["_", "aA", "bB", "0123456789"]]],
    ["ab(c|d)e", 0, [["a", "b", "cd", "e"]]],
    ["a?bcd", 0, [["b", "c", "d"]]],
    ["\\bfoo\\b", 0, [["f", "o", "o"]]],
    ["^hit (50|150)$", 0, [["h", "i", "t", " "]]],
    ["é+", 0, [[bytesOf("é")[0]!, bytesOf("é")[1]!]]],
    ["ab", RE2JS.CASE_INSENSITIVE, [["aA", "bB"]]],
    // k and s fold to U+212A and U+017F too: they end a needle.
    ["(?i)mask", 0, [["mM", "aA"]]],
    ["(?i)kx", 0, [["xX"]]],
    // Non-ASCII folding, U+FFFD (also shown for invalid bytes), empty matches: no needles.
    ["(?i)é", 0, undefined],
    ["\\x{FFFD}x", 0, [["x"]]],
    ["\\x{FFFD}", 0, undefined],
    ["^$", 0, undefined],
    ["x*", 0, undefined],
    ["foo|", 0, undefined],
    ["a|b|", 0, undefined],
    [".", 0, undefined],
  ];
  for (const [pattern, flags, expected] of table) {
    await t.step(`${pattern}${flags === 0 ? "" : " (ignore_case)"}`, () => {
      const got = needles(pattern, flags);
      const sorted = (list: Needle[] | undefined) =>
        list?.map((n) => n.join("\u0100")).sort() ?? undefined;
      assertEquals(sorted(got), sorted(expected));
    });
  }
});

Deno.test("needlesOf() gives up on cuts of more than 16 needles", () => {
  // Distinct first letters: RE2 factors common prefixes out of an alternation.
  const many = Array.from({ length: 17 }, (_, i) => String.fromCharCode(97 + i).repeat(2) + "9");
  assertEquals(needles(many.join("|")), undefined);
  assertEquals(needles(many.slice(0, 16).join("|"))?.length, 16);
});

Deno.test("re2js folds no ASCII letter but k and s beyond ASCII (needles rely on it)", () => {
  let text = "";
  for (let cp = 0x80; cp <= 0x10ffff; cp++) {
    if (cp < 0xd800 || cp > 0xdfff) text += String.fromCodePoint(cp);
  }
  for (const letter of "abcdefghijlmnopqrtuvwxyz") {
    assertEquals(RE2JS.compile(`(?i)${letter}`).test(text), false, letter);
  }
  assert(RE2JS.compile("(?i)k").test(text), "k folds to U+212A");
  assert(RE2JS.compile("(?i)s").test(text), "s folds to U+017F");
});

/** Every start of `needle` in `text`, the slow way. */
function naive(text: string, needle: Needle): number[] {
  const out: number[] = [];
  for (let i = 0; i + needle.length <= text.length; i++) {
    if (needle.every((unit, k) => unit.includes(text[i + k]!))) out.push(i);
  }
  return out;
}

Deno.test("NeedleFinder.find() returns every needle start, in order", async (t) => {
  // Small alphabets make overlaps, near misses and repeats common.
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const pick = (alphabet: string) => alphabet[Math.floor(random() * alphabet.length)]!;
  for (let round = 0; round < 200; round++) {
    const alphabet = round % 2 === 0 ? "abAB_\n" : "aab\u00e9\u00c3";
    const text = Array.from({ length: 300 }, () => pick(alphabet)).join("");
    const count = 1 + Math.floor(random() * 3);
    const list: Needle[] = Array.from(
      { length: count },
      () =>
        Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
          const r = random();
          if (r < 0.5) return pick(alphabet);
          if (r < 0.8) return "aA";
          return "ab_";
        }),
    );
    await t.step(`round ${round}`, () => {
      const expected = [...new Set(list.flatMap((n) => naive(text, n)))].sort((a, b) => a - b);
      const finder = new NeedleFinder(list);
      finder.reset(text);
      const got: number[] = [];
      for (let at = finder.find(0); at !== -1; at = finder.find(at + 1)) got.push(at);
      assertEquals(got, expected, JSON.stringify({ text, list }));
      // Restarting from anywhere gives the next start.
      finder.reset(text);
      for (const from of [0, 17, 150, 299, 300]) {
        assertEquals(finder.find(from), expected.find((p) => p >= from) ?? -1, `from ${from}`);
      }
    });
  }
});

// ---------------------------------------------------------------------------------------------
// End to end: grep against a line-by-line RE2 reference and against ripgrep.

const LINES = [
  "plain words here",
  "click_handler1 and Error_Handler7, KEY_HANDLER0",
  "on_close_handler; resize_handlerX",
  "hAnDlEr_x handler_ _handler",
  "foo_bar baz_qux zeta_omega",
  "foobar bazqux",
  "mask MASK Mask",
  "MAS\u212a ma\u017fk", // Kelvin sign, long s
  "caf\u00e9 CAF\u00c9 Caf\u00e9foo",
  "\u03c3\u03c2\u03a3 sigma",
  "stra\u00dfe STRASSE",
  "foo at start",
  "ends with foo",
  "",
  "   ",
  "ab1234cd 99",
  "x\u00e9y \u{1f600} \u{1f600}x",
  "tab\there",
  "colour color colr",
  "a.b axb a+b",
  "word_boundary foo_foo foo-foo",
];

function corpus(): Files & Record<string, string | Uint8Array> {
  const lf = LINES.join("\n") + "\n";
  return {
    "a_lf.txt": lf,
    "b_crlf.txt": LINES.join("\r\n") + "\r\n",
    "c_no_eol.txt": LINES.join("\n"),
    "d_bom.txt": "\ufeff" + lf,
    "e_invalid.txt": Uint8Array.from([
      ...ENCODER.encode("ok "),
      0xff,
      0xfe,
      ...ENCODER.encode(" handler\n"),
      0xe2,
      0x82,
      ...ENCODER.encode("\nfoo_bar\r\n"),
      0xc3,
      ...ENCODER.encode("\r\nend"),
    ]),
    "f_nul.txt": Uint8Array.from([...ENCODER.encode("foo_bar handler\n"), 0]),
    "g_long.txt": `${"x".repeat(3000)} handler ${"é".repeat(2500)}\n`,
    "h_cr_mid.txt": "a\rb handler\r\r\nfoo\r",
    "i_empty.txt": "",
  };
}

const PATTERNS = [
  "handler",
  "(?i)handler",
  "(?i)[a-z]+_handler\\d",
  "[A-Z]+_HANDLER\\d",
  "foo_bar|baz_qux|zeta_omega",
  "foo|",
  "|foo",
  "foo||bar",
  "(foo|baz)_?(bar|qux)",
  "(?i)mask",
  "(?i)mas[k]",
  "(?i)ma\u017fk",
  "(?i)caf\u00e9",
  "CAF\u00c9",
  "(?i)\u03c3",
  "(?i)stra\u00dfe",
  "\\bfoo\\b",
  "\\Bfoo",
  "^foo",
  "foo$",
  "^$",
  "^\\s*$",
  "\\d{4}",
  "ab\\d+cd",
  "colou?r",
  "a\\.b",
  "a.b",
  "\\Qa+b\\E",
  "x\u00e9y",
  "\u{1f600}x",
  "\\x{FFFD} handler",
  "\\x{FFFD}",
  "a\\rb",
  "handler\\r",
  "foo\\nbar",
  "\\Ahandler",
  "handler\\z",
  "(?-m)^foo",
  "(?i:H)andler",
  "h(?i)ANDLER",
  "[[:alpha:]]+_\\d",
  "\\pL+_handler",
  "tab\\there",
  "(?U)ha+ndler",
  "x{1000}",
  "word_boundary|foo-foo",
];

async function grepOut(ws: TmpWorkspace, pattern: string, ignoreCase: boolean): Promise<string> {
  const input = ignoreCase
    ? { pattern, path: ws.root, ignore_case: true }
    : { pattern, path: ws.root };
  const result = await ws.call("grep", input, { limits: { grepMaxMatches: 100_000 } });
  assertEquals(result.isError, false, result.output);
  return result.output;
}

Deno.test("grep() reports what a line-by-line RE2 test reports, on tricky patterns", async (t) => {
  const files = corpus();
  await using ws = await tmpWorkspace({ files });
  for (const ignoreCase of [false, true]) {
    for (const pattern of PATTERNS) {
      await t.step(`${pattern}${ignoreCase ? " (ignore_case)" : ""}`, async () => {
        assertEquals(
          await grepOut(ws, pattern, ignoreCase),
          referenceGrep(files, ws.root, pattern, ignoreCase),
        );
      });
    }
  }
});

async function rgAvailable(): Promise<boolean> {
  try {
    return (await new Deno.Command("rg", { args: ["--version"], stdout: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

/** `path:line` of each row. */
function places(output: string): string[] {
  if (output === "no matches") return [];
  return output.split("\n").filter((row) => row !== "").map((row) => {
    const match = /^(.*?:\d+):/.exec(row);
    return match === null ? row : match[1]!;
  });
}

// Patterns where RE2 and ripgrep's regex crate mean the same on the corpus below (no \b, \w
// or \d: those are ASCII in RE2 and Unicode in Rust).
const RG_PATTERNS = [
  "handler",
  "(?i)handler",
  "(?i)[a-z]+_handler[0-9]",
  "foo_bar|baz_qux|zeta_omega",
  "foo|",
  "foo||bar",
  "(?i)mask",
  "(?i)mas[k]",
  "(?i)caf\u00e9",
  "(?i)\u03c3",
  "^foo",
  "foo$",
  "^$",
  "colou?r",
  "a\\.b",
  "x\u00e9y",
  "\u{1f600}x",
  "[[:alpha:]]+_[0-9]",
  "(?i:H)andler",
];

Deno.test(
  "grep() finds the lines ripgrep finds, where the two engines agree on the syntax",
  async (t) => {
    if (!(await rgAvailable())) {
      await t.step("rg not installed (skipped)", () => {});
      return;
    }
    const lf = LINES.join("\n") + "\n";
    const files = { "a.txt": lf, "b.txt": LINES.join("\n"), "c.txt": lf.repeat(3) };
    await using ws = await tmpWorkspace({ files });
    for (const ignoreCase of [false, true]) {
      for (const pattern of RG_PATTERNS) {
        await t.step(`${pattern}${ignoreCase ? " (ignore_case)" : ""}`, async () => {
          const args = ["--no-config", "-n", "--no-heading", "--color", "never", "-j1"];
          if (ignoreCase) args.push("-i");
          args.push("--no-ignore", "--hidden", "-e", pattern, ws.root);
          const { stdout, code } = await new Deno.Command("rg", { args, stdout: "piped" })
            .output();
          assert(code === 0 || code === 1, `rg exited ${code}`);
          const rg = new TextDecoder().decode(stdout).split("\n").filter((r) => r !== "")
            .map((row) => /^(.*?:\d+):/.exec(row)![1]!).sort();
          assertEquals(places(await grepOut(ws, pattern, ignoreCase)).sort(), rg);
        });
      }
    }
  },
);

Deno.test("grep() reads walked files of any size around the first read", async () => {
  const files: Record<string, string> = {};
  for (const size of [65_535, 65_536, 65_537, 200_000]) {
    // Lines of 100 bytes, a match in the middle, and the last line padded to the size.
    const half = "x".repeat(99).concat("\n").repeat(Math.floor((size - 200) / 200));
    const head = `${half}mid handler7 here\n${half}`;
    const text = `${head}end handler9${"y".repeat(size - head.length - 13)}\n`;
    assertEquals(ENCODER.encode(text).length, size);
    files[`f${size}.txt`] = text;
  }
  await using ws = await tmpWorkspace({ files });
  for (const pattern of ["handler\\d", "(?i)HANDLER[79]", "mid|end"]) {
    assertEquals(await grepOut(ws, pattern, false), referenceGrep(files, ws.root, pattern, false));
  }
});

Deno.test("grep() gives the same rows when most files hold a needle but few match", async () => {
  // Past the first 64 proofs, files are proved before they are read: the rows must not change.
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) {
    files[`d${Math.floor(i / 50)}/f${String(i).padStart(3, "0")}.txt`] = `handler ${i}\n` +
      (i % 37 === 0 ? `handler_${i} found\n` : "nothing\n");
  }
  await using ws = await tmpWorkspace({ files });
  const out = await grepOut(ws, "handler_\\d+ found", false);
  assertEquals(out, referenceGrep(files, ws.root, "handler_\\d+ found", false));
  assertEquals(places(out).length, 9);
});
