/**
 * Property test of the shell-aware rules: command lines built at random from a small grammar
 * (seeded, so every run sees the same lines) never get an allow verdict when they contain a
 * denied simple command, and lines made only of allowed commands joined plainly are allowed,
 * so the property can fail both ways.
 */

import { createApprover, type PolicyConfig } from "../../approver/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { prng } from "../_helpers/prng.ts";

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
