/**
 * splitCommands: the views of each simple command (written, variants, opaque, why) for
 * representative lines.
 */

import { type SimpleCommand, splitCommands, type SplitResult } from "../../approver/mod.ts";
import { DYNAMIC } from "../../approver/shell.ts";
import { assertEquals, assertMatch } from "../_helpers/assert.ts";

const COMPUTED = "a word is computed when the shell runs ($VAR, $(...) or backticks)";

/** The views the rules see (the effects data is checked by its own tests below). */
type View = Pick<SimpleCommand, "written" | "variants" | "opaque" | "why">;
interface Views {
  readonly commands: readonly View[];
  readonly error?: string;
}

function views(result: SplitResult): Views {
  const commands = result.commands.map((c): View => {
    const view: View = { written: c.written, variants: c.variants, opaque: c.opaque };
    return c.why === undefined ? view : { ...view, why: c.why };
  });
  return result.error === undefined ? { commands } : { commands, error: result.error };
}

/** A see-through command whose only variant is what was written. */
function plain(written: string): View {
  return { written, variants: [written], opaque: false };
}

function opaque(written: string, why: string, variants: string[] = [written]): View {
  return { written, variants, opaque: true, why };
}

const CASES: ReadonlyArray<[string, string, Views]> = [
  ["one command", "git status", { commands: [plain("git status")] }],
  [
    "pipes and lists, in source order",
    "ls -la | wc -l && echo done || echo failed; date & wait\nuptime",
    {
      commands: [
        plain("ls -la"),
        plain("wc -l"),
        plain("echo done"),
        plain("echo failed"),
        plain("date"),
        plain("wait"),
        plain("uptime"),
      ],
    },
  ],
  [
    "quotes and escapes are removed; words join with one space",
    "echo \"a  b\" 'c' e\\ f\t\tg",
    { commands: [plain("echo a  b c e f g")] },
  ],
  [
    "subshells, groups, if and functions are walked into",
    "(ls) && { cat f; }; if git status; then git diff; fi; f() { git log; }",
    {
      commands: [
        plain("ls"),
        plain("cat f"),
        plain("git status"),
        plain("git diff"),
        opaque("f()", "defines a function f"),
        plain("git log"),
      ],
    },
  ],
  [
    "assignment prefixes stay in written; variants drop them",
    "FOO=1 BAR= rm -rf x",
    {
      commands: [{
        written: "FOO=1 BAR= rm -rf x",
        variants: ["FOO=1 BAR= rm -rf x", "rm -rf x"],
        opaque: false,
      }],
    },
  ],
  [
    "a path to the program adds its base name",
    "/bin/rm -f x",
    {
      commands: [{ written: "/bin/rm -f x", variants: ["/bin/rm -f x", "rm -f x"], opaque: false }],
    },
  ],
  [
    "after a wrapper every later word may be the program",
    "sudo -u root rm x",
    {
      commands: [{
        written: "sudo -u root rm x",
        variants: ["sudo -u root rm x", "-u root rm x", "root rm x", "rm x", "x"],
        opaque: false,
      }],
    },
  ],
  [
    "$(...) makes the outer word computed; the inner command is its own",
    "ls $(cat list)",
    { commands: [opaque(`ls ${DYNAMIC}`, COMPUTED), plain("cat list")] },
  ],
  [
    "backticks likewise",
    "echo `date`",
    { commands: [opaque(`echo ${DYNAMIC}`, COMPUTED), plain("date")] },
  ],
  [
    "a variable makes a word computed",
    "ls $HOME",
    { commands: [opaque(`ls ${DYNAMIC}`, COMPUTED)] },
  ],
  [
    "a computed assignment too",
    "X=$(ls) git status",
    {
      commands: [
        opaque(`X=${DYNAMIC} git status`, COMPUTED, [`X=${DYNAMIC} git status`, "git status"]),
        plain("ls"),
      ],
    },
  ],
  [
    "eval is opaque; its words are parsed as a command line",
    'eval "ls; rm x"',
    {
      commands: [
        opaque("eval ls; rm x", "eval runs a computed command"),
        plain("ls"),
        plain("rm x"),
      ],
    },
  ],
  [
    "sh -c is opaque; its script is parsed",
    "bash -c 'git status && rm x'",
    {
      commands: [
        opaque("bash -c git status && rm x", "bash -c runs a command string"),
        plain("git status"),
        plain("rm x"),
      ],
    },
  ],
  [
    "find -exec is opaque; later words are program names",
    "find . -exec rm {} +",
    {
      commands: [
        opaque("find . -exec rm {} +", "find -exec runs other commands", [
          "find . -exec rm {} +",
          ". -exec rm {} +",
          "-exec rm {} +",
          "rm {} +",
          "{} +",
          "+",
        ]),
      ],
    },
  ],
  [
    "writing to a file is opaque",
    "ls > out.txt",
    { commands: [opaque("ls", "output is redirected to out.txt")] },
  ],
  [
    "appending, clobbering and fd redirects to files are opaque",
    "ls >> a; ls >| b; ls 2> c; ls <> d; ls >&e",
    {
      commands: [
        opaque("ls", "output is redirected to a"),
        opaque("ls", "output is redirected to b"),
        opaque("ls", "output is redirected to c"),
        opaque("ls", "output is redirected to d"),
        opaque("ls", "output is redirected to a file"),
      ],
    },
  ],
  [
    "/dev/null, fd duplication, closing and input are fine",
    "ls >/dev/null 2>&1; ls 3>&-; cat < f",
    { commands: [plain("ls"), plain("ls"), plain("cat")] },
  ],
  [
    "a redirect on a compound command counts",
    "{ ls; } > out.txt; (ls) 2>&1",
    {
      commands: [
        opaque("", "output is redirected to out.txt"),
        plain("ls"),
        plain("ls"),
      ],
    },
  ],
  [
    "a redirect-only statement is opaque",
    "> x",
    { commands: [opaque("", "output is redirected to x")] },
  ],
  [
    "a here-document without substitutions is seen through",
    "cat <<EOF\nhello $ world\nEOF",
    { commands: [plain("cat")] },
  ],
  [
    "a here-document with a substitution is opaque; the inner command is seen",
    "cat <<EOF\n$(date)\nEOF",
    { commands: [opaque("cat", "a here-document contains substitutions"), plain("date")] },
  ],
  [
    "a quoted here-document delimiter means no substitutions",
    "cat <<'EOF'\n$(date)\nEOF",
    { commands: [plain("cat")] },
  ],
  [
    "$'...' is opaque: sh and bash disagree on where it ends",
    "ls $'\\'' ; rm -rf x # '",
    {
      commands: [opaque(`ls ${DYNAMIC}`, `$'...' and $"..." are read differently by sh and bash`)],
    },
  ],
  [
    "an escaped \\$ before a quote is a plain dollar",
    "ls \\$'x'",
    { commands: [plain("ls $x")] },
  ],
  [
    "comments are dropped",
    "ls # ; rm -rf x",
    { commands: [plain("ls")] },
  ],
  [
    "line continuations join words",
    "gi\\\nt sta\\\ntus",
    { commands: [plain("git status")] },
  ],
  ["empty line", "", { commands: [] }],
  ["only a comment", "# nothing", { commands: [] }],
];

Deno.test("splitCommands: views of representative lines", async (t) => {
  for (const [name, line, want] of CASES) {
    await t.step(`${name}: ${JSON.stringify(line)}`, async () => {
      assertEquals(views(await splitCommands(line)), want);
    });
  }
});

Deno.test("splitCommands: lines that do not parse", async (t) => {
  const cases: Array<[string, string, RegExp, View[]]> = [
    ["unbalanced (", "ls && (", /^1:7: reached EOF without matching \( with \)$/, []],
    [
      "complete lines before the error still run, so they are reported",
      "ls\nrm -rf x\n)",
      /^3:1: \) can only be used to close a subshell$/,
      [plain("ls"), plain("rm -rf x")],
    ],
    [
      "an unclosed here-document is read to the end of input, as sh does",
      "cat <<EOF\n$(rm -rf x)",
      /^1:5: unclosed here-document 'EOF'$/,
      [opaque("cat", "a here-document contains substitutions"), plain("rm -rf x")],
    ],
    ["bash-only process substitution", "cat <(ls)", /^1:5: < must be followed by a word$/, []],
  ];
  for (const [name, line, error, commands] of cases) {
    await t.step(`${name}: ${JSON.stringify(line)}`, async () => {
      const result = await splitCommands(line);
      assertMatch(result.error ?? "", error);
      assertEquals(views(result).commands, commands);
    });
  }
});

Deno.test("splitCommands: deep nesting stops, it does not recurse forever", async () => {
  let line = "rm x";
  for (let i = 0; i < 12; i++) line = `sh -c ${JSON.stringify(line)}`;
  const result = await splitCommands(line);
  assertEquals(result.error, undefined);
  // Too deep to see through: opaque, so no allow rule passes it.
  assertEquals(result.commands[0]?.opaque, true);
  assertEquals(result.commands.every((c) => c.opaque || c.written === "rm x"), true);
});

/** The effects data of each command: argv, globs, assignments, redirects, definitions. */
type Facts = Pick<
  SimpleCommand,
  "argv" | "globs" | "assignments" | "redirects" | "defines" | "names" | "shadowed" | "opaque"
>;

function facts(result: SplitResult): Facts[] {
  return result.commands.map((c) => {
    const f: Facts = {
      argv: c.argv,
      globs: c.globs,
      assignments: c.assignments,
      redirects: c.redirects,
      opaque: c.opaque,
    };
    return {
      ...f,
      ...(c.defines ? { defines: c.defines } : {}),
      ...(c.names ? { names: c.names } : {}),
      ...(c.shadowed ? { shadowed: c.shadowed } : {}),
    };
  });
}

const FACTS: ReadonlyArray<[string, string, Facts[]]> = [
  [
    "argv after quote removal and escapes",
    `git log '--format=%H' "-1" \\-p a\\ b`,
    [{
      argv: ["git", "log", "--format=%H", "-1", "-p", "a b"],
      globs: [false, false, false, false, false, false],
      assignments: [],
      redirects: [],
      opaque: false,
    }],
  ],
  [
    "an expansion inside double quotes is DYNAMIC within the word; unquoted, the whole word",
    `git log "--output=$F" --x=$Y`,
    [{
      argv: ["git", "log", `--output=${DYNAMIC}`, DYNAMIC],
      globs: [false, false, false, false],
      assignments: [],
      redirects: [],
      opaque: true,
    }],
  ],
  [
    "assignments and their values",
    `GIT_PAGER='sh -c x' A= B="$H" git log`,
    [{
      argv: ["git", "log"],
      globs: [false, false],
      assignments: [
        { name: "GIT_PAGER", value: "sh -c x" },
        { name: "A", value: "" },
        { name: "B", value: DYNAMIC },
      ],
      redirects: [],
      opaque: true,
    }],
  ],
  [
    "redirects with fd, op and target",
    `ls 2>/dev/null >'out file' 3>&1 <in >>"$L"`,
    [{
      argv: ["ls"],
      globs: [false],
      assignments: [],
      redirects: [
        { op: ">", fd: 2, target: "/dev/null" },
        { op: ">", target: "out file" },
        { op: ">&", fd: 3, target: "1" },
        { op: "<", target: "in" },
        { op: ">>", target: DYNAMIC },
      ],
      opaque: true,
    }],
  ],
  [
    "a here-document's target is its body",
    "cat <<EOF\nhi \\$x\nEOF\ncat <<'E'\n\\$y\nE",
    [
      {
        argv: ["cat"],
        globs: [false],
        assignments: [],
        redirects: [{ op: "<<", target: "hi $x\n" }],
        opaque: false,
      },
      {
        argv: ["cat"],
        globs: [false],
        assignments: [],
        redirects: [{ op: "<<", target: "\\$y\n" }],
        opaque: false,
      },
    ],
  ],
  [
    "unquoted pattern characters are globs; quoted or escaped ones are not",
    `ls *.ts '*' \\? src/[ab]`,
    [{
      argv: ["ls", "*.ts", "*", "?", "src/[ab]"],
      globs: [false, true, false, false, true],
      assignments: [],
      redirects: [],
      opaque: false,
    }],
  ],
  [
    "a function definition, and a call of it, are opaque; the body is its own command",
    "ls() { ls | ls & }; ls",
    [
      {
        argv: ["ls"],
        globs: [false],
        assignments: [],
        redirects: [],
        opaque: true,
        defines: "function",
        names: ["ls"],
      },
      {
        argv: ["ls"],
        globs: [false],
        assignments: [],
        redirects: [],
        opaque: true,
        shadowed: true,
      },
      {
        argv: ["ls"],
        globs: [false],
        assignments: [],
        redirects: [],
        opaque: true,
        shadowed: true,
      },
      {
        argv: ["ls"],
        globs: [false],
        assignments: [],
        redirects: [],
        opaque: true,
        shadowed: true,
      },
    ],
  ],
  [
    "an alias definition names what it defines; later uses are shadowed",
    "alias ls='rm -rf x' ll=ls\nls",
    [
      {
        argv: ["alias", "ls=rm -rf x", "ll=ls"],
        globs: [false, false, false],
        assignments: [],
        redirects: [],
        opaque: true,
        defines: "alias",
        names: ["ls", "ll"],
      },
      {
        argv: ["ls"],
        globs: [false],
        assignments: [],
        redirects: [],
        opaque: true,
        shadowed: true,
      },
    ],
  ],
  [
    "a redirect on a compound command is reported with an empty argv",
    "{ ls; } >out",
    [
      {
        argv: [],
        globs: [],
        assignments: [],
        redirects: [{ op: ">", target: "out" }],
        opaque: true,
      },
      { argv: ["ls"], globs: [false], assignments: [], redirects: [], opaque: false },
    ],
  ],
];

Deno.test("splitCommands: argv, assignments, redirects and definitions", async (t) => {
  for (const [name, line, want] of FACTS) {
    await t.step(`${name}: ${JSON.stringify(line)}`, async () => {
      assertEquals(facts(await splitCommands(line)), want);
    });
  }
});
