/**
 * Property test of the shell-aware rules: command lines built at random from a small grammar
 * (seeded, so every run sees the same lines) never get an allow verdict when they contain a
 * denied simple command, and lines made only of allowed commands joined plainly are allowed,
 * so the property can fail both ways.
 */

import { createApprover, type PolicyConfig, splitCommands } from "../../approver/mod.ts";
import { assert, assertEquals, assertMatch } from "../_helpers/assert.ts";
import { prng } from "../_helpers/prng.ts";
import { BACKGROUND, runWithStubs, writeStubs } from "../_helpers/sh_stubs.ts";

const SEED = 0x5eed_2024;
const CASES = 2000;

const READ_ONLY: PolicyConfig = {
  mode: "pattern",
  deny: [{ tool: "bash", command: "^rm( |$)" }],
  allow: [{ tool: "bash", command: "^(ls|cat|git (status|diff|log))( |$)" }],
  default: "deny",
};

/** The deny rule alone, over an allow default: only the deny rule can stop a line. */
const DENY_ONLY: PolicyConfig = {
  mode: "pattern",
  deny: [{ tool: "bash", command: "^rm( |$)" }],
  default: "allow",
};

type Random = () => number;

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** A generated line and whether a denied program runs somewhere in it. */
interface Line {
  readonly text: string;
  readonly denied: boolean;
}

const ALLOWED: readonly string[][] = [
  ["ls"],
  ["ls", "-la"],
  ["git", "status"],
  ["git", "log", "--oneline"],
  ["git", "diff"],
  ["cat", "f"],
];
const DENIED: readonly string[][] = [["rm", "-rf", "x"], ["/bin/rm", "x"], ["rm"]];

/** One word, quoted one of the ways that leave its value unchanged. */
function quoteWord(random: Random, word: string): string {
  switch (Math.floor(random() * 6)) {
    case 0:
      return `'${word}'`;
    case 1:
      return `"${word}"`;
    case 2:
      return `\\${word}`;
    case 3:
      return word.length > 1 ? `${word[0]}''${word.slice(1)}` : word;
    default:
      return word;
  }
}

function simple(random: Random, words: readonly string[], plain: boolean): string {
  const quoted = words.map((w) => plain && random() < 0.7 ? w : quoteWord(random, w));
  let text = quoted.join(pick(random, [" ", " ", "  ", "\t"]));
  if (!plain && random() < 0.3) {
    text = pick(random, ["FOO=1 ", "A=1 B=2 ", "sudo ", "env ", "timeout 5 ", "nice ", "nohup "]) +
      text;
  }
  if (random() < 0.2) text += pick(random, [" 2>&1", " >/dev/null", " </dev/null", " 2>/dev/null"]);
  return text;
}

/** Escapes `text` for single quotes. */
function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** Escapes `text` for double quotes. */
function doubleQuoted(text: string): string {
  return `"${text.replace(/[\\"$`]/g, "\\$&")}"`;
}

/** A command line; `plain` keeps to constructs an allow list can pass. */
function line(random: Random, depth: number, plain: boolean): Line {
  const choice = random();
  if (depth >= 3 || choice < 0.35) {
    const denied = !plain && random() < 0.3;
    const words = denied ? pick(random, DENIED) : pick(random, ALLOWED);
    return { text: simple(random, words, plain), denied };
  }
  if (choice < 0.7) {
    const a = line(random, depth + 1, plain);
    const b = line(random, depth + 1, plain);
    const sep = pick(random, [" ; ", ";", " && ", " || ", " | ", " & ", "\n", " &&\n"]);
    return { text: a.text + sep + b.text, denied: a.denied || b.denied };
  }
  const inner = line(random, depth + 1, plain);
  const wrappers: Array<(t: string) => string> = [
    (t) => `( ${t} )`,
    (t) => `{ ${t}; }`,
    (t) => `if git status; then ${t}; fi`,
  ];
  if (!plain) {
    wrappers.push(
      (t) => `ls $( ${t} )`,
      (t) => `cat "$( ${t} )"`,
      (t) => `X=$( ${t} ) git status`,
      (t) => `sh -c ${singleQuoted(t)}`,
      (t) => `bash -c ${doubleQuoted(t)}`,
      (t) => `eval ${singleQuoted(t)}`,
      // The delimiter must stand alone on its line, and differ from any nested one.
      (t) => `{ cat <<EOF${depth}\n$( ${t} )\nEOF${depth}\n}`,
      (t) => `( ${t} ) > out.txt`,
    );
    // Backticks do not nest without escapes; the grammar only puts them around plain text.
    if (!inner.text.includes("`") && !inner.text.includes("\\")) {
      wrappers.push((t) => `ls \`${t}\``);
    }
  }
  return { text: pick(random, wrappers)(inner.text), denied: inner.denied };
}

function withComment(random: Random, text: string): string {
  // A comment runs to the end of its line only.
  return random() < 0.15 && !text.includes("\n") ? `${text} # rm -rf x; ${text}` : text;
}

Deno.test(`fuzz: ${CASES} random lines with a denied command are never allowed`, async () => {
  const random = prng(SEED);
  const readOnly = createApprover(READ_ONLY);
  const denyOnly = createApprover(DENY_ONLY);
  let withDenied = 0;
  for (let i = 0; i < CASES; i++) {
    let generated = line(random, 0, false);
    // Every line gets a denied command; the generator often leaves one in on its own.
    if (!generated.denied) {
      const rm = line(random, 2, false);
      generated = rm.denied ? { text: `${rm.text}; ${generated.text}`, denied: true } : {
        text: `${generated.text}\n${simple(random, pick(random, DENIED), false)}`,
        denied: true,
      };
    }
    withDenied++;
    const request = { tool: "bash", input: { command: withComment(random, generated.text) } };
    for (const [name, approver] of [["read-only", readOnly], ["deny-only", denyOnly]] as const) {
      const decision = await approver.approve(request);
      assert(
        decision.decision !== "allow",
        `case ${i} (seed ${SEED}), ${name} policy allowed ${JSON.stringify(request.input.command)}`,
      );
    }
  }
  assertEquals(withDenied, CASES);
});

Deno.test(`fuzz: ${CASES} random lines of allowed commands joined plainly are allowed`, async () => {
  const random = prng(SEED ^ 0xffff);
  const approver = createApprover(READ_ONLY);
  for (let i = 0; i < CASES; i++) {
    const generated = line(random, 0, true);
    assert(!generated.denied);
    const command = withComment(random, generated.text);
    const decision = await approver.approve({ tool: "bash", input: { command } });
    assertEquals(
      decision.decision,
      "allow",
      `case ${i} (seed ${SEED ^ 0xffff}) was not allowed: ${JSON.stringify(command)} ${
        JSON.stringify(decision)
      }`,
    );
  }
});

Deno.test("fuzz: the generator is deterministic", () => {
  const a = prng(SEED);
  const b = prng(SEED);
  const lines = (r: Random) => Array.from({ length: 20 }, () => line(r, 0, false).text);
  assertEquals(lines(a), lines(b));
});

/** The allow list of the parser-bypass suite. */
const LOOKING: PolicyConfig = {
  mode: "pattern",
  allow: [{ tool: "bash", command: "^(ls|cat|echo|grep|git status)( |$)" }],
  default: "deny",
};
const ALLOWED_PROGRAMS = new Set(["ls", "cat", "grep", "git"]);

/** Lines to mutate: harmless ones and attacks, with the characters the shell treats specially. */
const SEEDS: readonly string[] = [
  "ls -la src 2>/dev/null",
  "echo \"a && touch x\" 'b; touch y'",
  "cat <<E\nbody $(touch h)\nE\nls",
  "cat <<'E'\n$(touch q)\nE",
  'echo "$\\\n(touch c)"',
  "ls \\\n -la; git status",
  "echo `touch b` ${x:-$(touch p)}",
  "if ls; then cat f; else grep x f; fi",
  "for i in a b; do ls $i; done",
  "case a in a) ls;; *) touch z;; esac",
  "(ls; (cat f)) | grep x || echo no",
  "ls # touch c\ngit status",
  "echo $((1 + 2)) $'x' \"\\$y\"",
  "x=1 ls; touch w",
];
const NOISE = " \t\n\\\"'$(){}`;|<>#*?[]=!~-acehlostu1\r";

function mutate(random: Random, line: string): string {
  let out = line;
  const edits = 1 + Math.floor(random() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (out.length + 1));
    switch (Math.floor(random() * 4)) {
      case 0:
        out = out.slice(0, at) + pick(random, [...NOISE]) + out.slice(at);
        break;
      case 1:
        out = out.slice(0, at) + out.slice(at + 1);
        break;
      case 2: {
        const end = Math.min(out.length, at + 1 + Math.floor(random() * 8));
        out = out.slice(0, end) + out.slice(at, end) + out.slice(end);
        break;
      }
      default:
        out = out.slice(0, at) + pick(random, SEEDS) + out.slice(at);
    }
  }
  return out;
}

const MUTATIONS = 600;

Deno.test(`fuzz: ${MUTATIONS} mutated lines never crash the check, and an allowed one runs only allowed programs in sh`, async () => {
  const random = prng(SEED ^ 0x5151);
  const approver = createApprover(LOOKING);
  const dir = await Deno.makeTempDir({ prefix: "rousseau-fuzz-" });
  try {
    const bin = await writeStubs(
      dir,
      [...ALLOWED_PROGRAMS, "touch", "rm", "sh", "x", "f", "w", "z"],
      // Stubs fail, so no `while ls` loops forever.
      `printf '%s\\n' "\${0##*/}" >>"$STUB_LOG"\nexit 1`,
    );
    const log = `${dir}/log`;
    let allowed = 0;
    for (let i = 0; i < MUTATIONS; i++) {
      const command = mutate(random, pick(random, SEEDS));
      const decision = await approver.approve({ tool: "bash", input: { command } });
      assert(["allow", "deny"].includes(decision.decision), JSON.stringify(decision));
      if (decision.decision !== "allow" || BACKGROUND.test(command)) continue;
      allowed++;
      await Deno.writeTextFile(log, "");
      await runWithStubs(command, { bin, log, cwd: dir });
      const ran = (await Deno.readTextFile(log)).split("\n").filter(Boolean);
      const outside = ran.filter((name) => !ALLOWED_PROGRAMS.has(name));
      assertEquals(outside, [], `case ${i}: allowed ${JSON.stringify(command)} ran ${outside}`);
    }
    // Both verdicts occur: the property is not vacuous.
    assert(allowed > 50 && allowed < MUTATIONS, `${allowed} of ${MUTATIONS} allowed`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Inputs built to be expensive, with what the check must say about each. */
const BOMBS: ReadonlyArray<readonly [string, () => string, RegExp | undefined]> = [
  [
    "$( nested 10,000 deep",
    () => "echo " + "$(".repeat(10_000) + "x" + ")".repeat(10_000),
    /nested more than 100 levels deep/,
  ],
  [
    "( nested 20,000 deep",
    () => "(".repeat(20_000) + "ls" + ")".repeat(20_000),
    /nested more than 100 levels deep/,
  ],
  [
    "${x:- nested 10,000 deep",
    () => "echo " + "${x:-".repeat(10_000) + "}".repeat(10_000),
    /nested more than 100 levels deep/,
  ],
  ["`\\` backquotes nested 14 deep", () => {
    let line = "ls";
    for (let i = 0; i < 14; i++) line = "echo `" + line.replace(/[\\`$]/g, "\\$&") + "`";
    return line;
  }, undefined],
  [
    "if nested 4,000 deep",
    () => "if true; then ".repeat(4_000),
    /nested more than 100 levels deep/,
  ],
  [
    "$(( with 20,000 parentheses",
    () => "echo $((" + "(".repeat(20_000) + "1" + ")".repeat(20_000) + "))",
    undefined,
  ],
  ["20,000 commands", () => "ls;".repeat(20_000), /too many commands to check \(more than 2048\)/],
  ["5,000 here-documents", () => "cat <<E\nx\nE\n".repeat(5_000), /too many commands to check/],
  [
    "8,000 here-documents on one line",
    () => "cat" + " <<E".repeat(8_000) + "\n" + "x\nE\n".repeat(8_000),
    undefined,
  ],
  ["a brace list of 30,000 items", () => "echo {" + "a,".repeat(30_000) + "b}", undefined],
  ["30,000 words", () => "ls " + "a ".repeat(30_000), /too many words to check \(more than 8192\)/],
  ["13,000 nested wrappers", () => "nice ".repeat(13_000) + "rm", /too many words to check/],
  ["eval 13,000 times", () => "eval ".repeat(13_000) + "ls", /too many words to check/],
  ["sh -c nested 12 deep", () => {
    let line = "rm x";
    for (let i = 0; i < 12; i++) line = `sh -c ${JSON.stringify(line)}`;
    return line;
  }, undefined],
  ["just under 64 KiB of one quoted word", () => "echo '" + "a".repeat(65_528) + "'", undefined],
  ["just under 64 KiB of continuations", () => "ls " + "\\\n".repeat(32_765), undefined],
];

Deno.test("fuzz: expensive inputs are bounded by structure (nesting, commands, words)", async (t) => {
  const approver = createApprover(LOOKING);
  for (const [name, make, error] of BOMBS) {
    await t.step(name, async () => {
      const command = make();
      assert(new TextEncoder().encode(command).length <= 65_536, `${name} is under the limit`);
      const split = await splitCommands(command);
      if (error === undefined) assertEquals(split.error, undefined);
      else assertMatch(split.error ?? "", error);
      const decision = await approver.approve({ tool: "bash", input: { command } });
      // A line the parser gave up on is never allowed; the others get their usual verdict.
      if (error !== undefined) assertEquals(decision.decision, "deny", JSON.stringify(decision));
    });
  }
});

Deno.test("fuzz: a line over 64 KiB is denied with the limit's reason, up to 6 MB", async () => {
  const approver = createApprover({ ...LOOKING, default: "allow" });
  for (const bytes of [65_537, 600_000, 6_000_000]) {
    const command = "ls " + "a".repeat(bytes - 3);
    assertEquals(await approver.approve({ tool: "bash", input: { command } }), {
      decision: "deny",
      reason: `command too long to check (${bytes} bytes; the limit is 65536)`,
      rule: "limit",
    });
  }
  // Exactly the limit is checked as usual.
  const at = "ls " + "a".repeat(65_533);
  assertEquals(
    (await approver.approve({ tool: "bash", input: { command: at } })).decision,
    "allow",
  );
});
