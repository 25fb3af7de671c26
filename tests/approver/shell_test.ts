/**
 * splitCommands: the views of each simple command (written, variants, opaque, why) for
 * representative lines.
 */

import { type SimpleCommand, splitCommands, type SplitResult } from "../../approver/mod.ts";
import { DYNAMIC } from "../../approver/shell.ts";
import { assert, assertEquals, assertMatch } from "../_helpers/assert.ts";
import { BACKGROUND, runWithStubs, writeStubs } from "../_helpers/sh_stubs.ts";

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
      commands: [
        opaque(`ls ${DYNAMIC}`, `$'...' and $"..." are read differently by sh and bash`),
        // What bash, /bin/sh on many systems, runs: listed for deny rules.
        opaque("rm -rf x", "bash reads this line differently"),
      ],
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
    ["unbalanced (", "ls && (", /^1:8: end of input unexpected$/, []],
    [
      "complete lines before the error still run, so they are reported",
      "ls\nrm -rf x\n)",
      /^3:1: "\)" unexpected$/,
      [plain("ls"), plain("rm -rf x")],
    ],
    [
      "an unclosed here-document is read to the end of input, as sh does",
      "cat <<EOF\n$(rm -rf x)",
      /^2:12: unclosed here-document 'EOF'$/,
      [opaque("cat", "a here-document contains substitutions"), plain("rm -rf x")],
    ],
    ["bash-only process substitution", "cat <(ls)", /^1:6: "\(" unexpected$/, []],
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

/** What each line runs, as argv lists (opaque ones marked), checked against dash below. */
const DASH: ReadonlyArray<
  [string, string, Array<readonly string[] | { opaque: readonly string[] }>]
> = [
  [
    "backslash-newline inside double quotes joins $ and (: a command substitution",
    'echo "$\\\n(touch PWNED)"',
    [{ opaque: ["echo", DYNAMIC] }, ["touch", "PWNED"]],
  ],
  [
    "backslash-newline joins words and operators",
    "gi\\\nt sta\\\ntus &\\\n& l\\\ns",
    [["git", "status"], ["ls"]],
  ],
  [
    "backslash-newline is kept inside single quotes",
    "ls '$\\\n(x)'",
    [["ls", "$\\\n(x)"]],
  ],
  [
    "an escaped backslash before a newline does not continue the line",
    "ls a\\\\\ngit status",
    [["ls", "a\\"], ["git", "status"]],
  ],
  [
    "a comment does not continue over backslash-newline",
    "ls # x \\\ngit status",
    [["ls"], ["git", "status"]],
  ],
  ["escaped option dashes are plain dashes", "find . \\-delete", [["find", ".", "-delete"]]],
  [
    "an unquoted here-document joins continued lines before looking for the delimiter",
    "cat <<E\na\\\nE\nE\nls x",
    [["cat"], ["ls", "x"]],
  ],
  [
    "a quoted here-document keeps backslash-newline; its first delimiter line ends it",
    "cat <<'E'\na\\\nE\nls x",
    [["cat"], ["ls", "x"]],
  ],
  [
    "<<- strips tabs, also before the delimiter",
    "cat <<-E\n\tfoo\n\tE\ngit status",
    [["cat"], ["git", "status"]],
  ],
  [
    "a here-document's substitutions run",
    "cat <<E\n$(touch a) `touch b`\nE",
    [{ opaque: ["cat"] }, ["touch", "a"], ["touch", "b"]],
  ],
  [
    "${...} words are read for substitutions",
    'ls ${x:-$(git status)} "${y-"}"}"',
    [{ opaque: ["ls", DYNAMIC, DYNAMIC] }, ["git", "status"]],
  ],
  [
    "arithmetic is read for substitutions",
    "ls $((a[$(git log)]))",
    [{ opaque: ["ls", DYNAMIC] }, ["git", "log"]],
  ],
  [
    "$[ ] is arithmetic to bash: opaque",
    "ls $[1+$(git log)]",
    [{ opaque: ["ls", DYNAMIC] }, ["git", "log"]],
  ],
  ["${x@P} is opaque", "ls ${x@P}", [{ opaque: ["ls", DYNAMIC] }]],
  ["${!ref} is opaque", "ls ${!ref}", [{ opaque: ["ls", DYNAMIC] }]],
  ["${IFS} makes the word computed", "cat${IFS}/etc/passwd", [{ opaque: [DYNAMIC] }]],
  [
    "a carriage return is part of the word; control characters are opaque",
    "ls\r\ngit status",
    [{ opaque: ["ls\r"] }, ["git", "status"]],
  ],
  [
    "backquotes are unescaped and parsed again",
    'echo "`ls \\"q\\"`"',
    [{ opaque: ["echo", DYNAMIC] }, ["ls", "q"]],
  ],
  [
    "case patterns' ) does not close $(",
    "echo $(case a in a) ls x;; esac)",
    [{ opaque: ["echo", DYNAMIC] }, ["ls", "x"]],
  ],
  [
    "a comment inside $( runs to the newline",
    "echo $(ls # )\n)",
    [{ opaque: ["echo", DYNAMIC] }, ["ls"]],
  ],
  [
    "&> is a background & and a redirect to dash",
    "ls &>/dev/null",
    // The empty statement `>/dev/null` is listed too: no allow rule matches it.
    [["ls"], []],
  ],
  [
    "a function body's commands are listed after the definition",
    "f() { ls in; }; f",
    [{ opaque: ["f"] }, ["ls", "in"], { opaque: ["f"] }],
  ],
  [
    "a function shadowing its own name",
    "ls() { ls | ls & }; ls",
    [{ opaque: ["ls"] }, { opaque: ["ls"] }, { opaque: ["ls"] }, { opaque: ["ls"] }],
  ],
  [
    "a for loop over an environment variable's name is opaque",
    "for PATH in /tmp; do ls; done",
    [{ opaque: [] }, ["ls"]],
  ],
];

function argvs(result: SplitResult): Array<readonly string[] | { opaque: readonly string[] }> {
  return result.commands.map((c) => c.opaque ? { opaque: c.argv } : c.argv);
}

Deno.test("splitCommands: lines read the way dash reads them", async (t) => {
  for (const [name, line, want] of DASH) {
    await t.step(`${name}: ${JSON.stringify(line)}`, async () => {
      const result = await splitCommands(line);
      assertEquals(result.error, undefined);
      assertEquals(argvs(result), want);
    });
  }
});

Deno.test("splitCommands: NUL and over-long lines fail closed", async () => {
  const nul = await splitCommands("ls\u0000; r\u0000m -rf x");
  assertEquals(nul.error, "the command holds a NUL byte");
  assertEquals(nul.commands.map((c) => c.written), ["ls", "rm -rf x"]);
  const long = await splitCommands("ls " + "é".repeat(40_000));
  assertEquals(long, {
    commands: [],
    error: "command too long to check (80003 bytes; the limit is 65536)",
  });
  // Just under the limit is parsed.
  const under = await splitCommands("ls " + "a".repeat(65533));
  assertEquals(under.error, undefined);
  assertEquals(under.commands.length, 1);
});

/** Programs the differential test stubs out: each records its argv and does nothing. */
const STUBS = ["ls", "cat", "git", "grep", "find", "touch", "rm", "sed", "f"];

/** More lines for the differential test (no `&`: a background stub could outlive dash). */
const DIFFERENTIAL: readonly string[] = [
  "ls -la src",
  'ls "a b" c\\ d \'e\'"f"g',
  "git log -1 --format='%H' -- \\-p",
  "ls $(git rev-parse HEAD) `cat x`",
  "x=1 ls; X='a b' git status",
  "ls && git diff || cat f",
  "(ls; (git log)) | cat",
  "{ ls; git status; } >/dev/null",
  "if ls; then git status; else cat x; fi",
  "for i in a b; do ls $i; done",
  "case x in x) ls case;; *) cat no;; esac",
  "while false; do ls; done; ls after",
  "ls 2>/dev/null -la",
  "ls ${x-\\}}",
  "ls $'a' b",
  "ls \"a\\\nb\" 'c\\\nd'",
  "cat <<E; ls after\nbody $(touch inner)\nE",
  "cat <<'E'\n$(touch notrun)\nE\nls after",
  "ls *.none [ab].none",
  "ls \\\n# not a comment\ngit status",
  "echo $(( $(git log | cat) + 1 ))",
  "ls; ; git status",
  "ls\ngit status\n)",
  'echo "$(ls "in ner")"',
  "git -c core.pager=cat log",
  "! ls x | grep -v y",
  "ls ${#x} ${x%%a} ${x##b}",
  "f() ls fn; f",
];

function parseLog(text: string): string[][] {
  return text.split("\u001e").filter((r) => r !== "").map((r) => r.split("\u001f").slice(0, -1));
}

Deno.test("splitCommands agrees with dash: every program dash runs is listed, with the argv the parser is sure of", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rousseau-dash-" });
  try {
    const bin = await writeStubs(
      dir,
      STUBS,
      // One write per record: the programs of a pipeline run at once, and records written
      // field by field would interleave.
      `r=$(printf '%s\\037' "\${0##*/}" "$@"; printf '\\036'); printf '%s' "$r" >>"$STUB_LOG"`,
    );
    const lines = [...DASH.map(([, line]) => line), ...DIFFERENTIAL].filter((line) =>
      !BACKGROUND.test(line)
    );
    let ran = 0;
    for (const [i, line] of lines.entries()) {
      const log = `${dir}/log${i}`;
      await Deno.writeTextFile(log, "");
      const work = `${dir}/work${i}`;
      await Deno.mkdir(work);
      await runWithStubs(line, { bin, log, cwd: work });
      const runs = parseLog(await Deno.readTextFile(log));
      ran += runs.length;
      const { commands } = await splitCommands(line);
      for (const argv of runs) {
        // A computed program name may be any program.
        const candidates = commands.filter((c) =>
          c.argv[0] === argv[0] || c.argv[0]?.includes(DYNAMIC) || c.globs[0]
        );
        assert(
          candidates.length > 0,
          `${JSON.stringify(line)}: dash ran ${JSON.stringify(argv)}, the parser did not list it`,
        );
        const sure = candidates.filter((c) =>
          !c.opaque && !c.argv.some((a) => a.includes(DYNAMIC)) && !c.globs.some(Boolean)
        );
        if (sure.length === candidates.length) {
          assert(
            sure.some((c) => JSON.stringify(c.argv) === JSON.stringify(argv)),
            `${JSON.stringify(line)}: dash ran ${JSON.stringify(argv)}, the parser is sure of ${
              JSON.stringify(sure.map((c) => c.argv))
            }`,
          );
        }
      }
    }
    // The stubs did run: the comparison is not vacuous.
    assert(ran > 60, `only ${ran} stub runs`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
