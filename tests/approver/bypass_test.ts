/**
 * The bypass suite: under a deny rule on `rm` and a read-only allow list, every way of
 * smuggling `rm -rf x` into a bash call must be denied. Each attempt that has a harmless
 * twin (the same construct around `git status`) checks the twin is allowed, so the policy
 * is not trivially deny-all.
 */

import { createApprover, type PolicyConfig } from "../../approver/mod.ts";
import { assertEquals } from "../_helpers/assert.ts";

const POLICY: PolicyConfig = {
  mode: "pattern",
  deny: [{ tool: "bash", command: "^rm( |$)" }],
  allow: [
    { tool: "read" },
    { tool: "grep" },
    { tool: "bash", command: "^(ls|cat|git (status|diff|log))( |$)" },
  ],
  default: "deny",
};

interface Attempt {
  /** What the attempt does. */
  readonly name: string;
  /** The bash command line, or the raw JSON text of the input when `json` is set. */
  readonly command: string;
  /** `command` is the raw JSON text of the input. */
  readonly json?: boolean;
  /** Tool name as the caller spells it. */
  readonly tool?: string;
  /** What denies it: the rm rule when the splitter sees the rm, else the default. */
  readonly by: "deny[0]" | "default";
  /** The same construct around git status, which must be allowed. */
  readonly twin?: string;
}

/** Bytes of a string, written as a JSON text with every character \u-escaped. */
function escapedJson(command: string): string {
  const escaped = [...command].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `{"command":"${escaped.join("")}"}`;
}

const ATTEMPTS: readonly Attempt[] = [
  { name: "plain", command: "rm -rf x", by: "deny[0]", twin: "git status" },
  { name: "behind ;", command: "ls; rm -rf x", by: "deny[0]", twin: "ls; git status" },
  { name: "behind ; without spaces", command: "ls;rm -rf x", by: "deny[0]", twin: "ls;git status" },
  { name: "behind &&", command: "ls && rm -rf x", by: "deny[0]", twin: "ls && git status" },
  { name: "behind ||", command: "ls || rm -rf x", by: "deny[0]", twin: "ls || git status" },
  { name: "behind |", command: "ls | rm -rf x", by: "deny[0]", twin: "ls | git status" },
  { name: "behind &", command: "ls & rm -rf x", by: "deny[0]", twin: "ls & git status" },
  { name: "in the background", command: "rm -rf x &", by: "deny[0]", twin: "git status &" },
  { name: "behind a newline", command: "ls\nrm -rf x", by: "deny[0]", twin: "ls\ngit status" },
  { name: "behind 2>&1 |", command: "ls 2>&1 | rm -rf x", by: "deny[0]", twin: "ls 2>&1 | cat" },
  { name: "inside $(...)", command: "ls $(rm -rf x)", by: "deny[0]" },
  { name: "inside nested $(...)", command: "ls $(cat $(rm -rf x))", by: "deny[0]" },
  { name: "inside backticks", command: "ls `rm -rf x`", by: "deny[0]" },
  { name: "inside a subshell", command: "(rm -rf x)", by: "deny[0]", twin: "(git status)" },
  {
    name: "inside a nested subshell",
    command: "ls; (cat f && (rm -rf x))",
    by: "deny[0]",
    twin: "ls; (cat f && (git status))",
  },
  { name: "inside { ...; }", command: "{ rm -rf x; }", by: "deny[0]", twin: "{ git status; }" },
  { name: "negated with !", command: "! rm -rf x", by: "deny[0]", twin: "! git status" },
  { name: "inside if", command: "if ls; then rm -rf x; fi", by: "deny[0]" },
  { name: "inside case", command: "case a in a) rm -rf x;; esac", by: "deny[0]" },
  { name: "after a loop", command: "while false; do ls; done; rm -rf x", by: "deny[0]" },
  {
    name: "in a for loop with a variable",
    command: "for f in x; do rm -rf $f; done",
    by: "deny[0]",
  },
  { name: "env assignment prefix", command: "FOO=1 rm -rf x", by: "deny[0]" },
  { name: "two env assignment prefixes", command: "A=1 B=2 rm -rf x", by: "deny[0]" },
  { name: "assignment from $(...)", command: "x=$(rm -rf x)", by: "deny[0]" },
  { name: "inside ${x:-$(...)}", command: "ls ${x:-$(rm -rf x)}", by: "deny[0]" },
  { name: "backslash: \\rm", command: "\\rm -rf x", by: "deny[0]", twin: "\\git status" },
  { name: "backslash inside: r\\m", command: "r\\m -rf x", by: "deny[0]", twin: "g\\it status" },
  { name: 'double quotes: "rm"', command: '"rm" -rf x', by: "deny[0]", twin: '"git" status' },
  { name: "single quotes: 'rm'", command: "'rm' -rf x", by: "deny[0]", twin: "'git' 'status'" },
  { name: "empty quotes inside: r''m", command: "r''m -rf x", by: "deny[0]", twin: "g''it status" },
  { name: 'empty quotes inside: r""m', command: 'r""m -rf x', by: "deny[0]", twin: 'gi""t status' },
  { name: "absolute path /bin/rm", command: "/bin/rm -rf x", by: "deny[0]" },
  { name: "relative path ../../bin/rm", command: "../../bin/rm -rf x", by: "deny[0]" },
  {
    name: "line continuation r\\<newline>m",
    command: "r\\\nm -rf x",
    by: "deny[0]",
    twin: "gi\\\nt status",
  },
  {
    name: "extra whitespace",
    command: "   rm    -rf   x   ",
    by: "deny[0]",
    twin: "  git   status ",
  },
  { name: "tabs", command: "rm\t-rf\tx", by: "deny[0]", twin: "git\tstatus" },
  {
    name: "upper-case tool name BASH",
    command: "rm -rf x",
    tool: "BASH",
    by: "deny[0]",
    twin: "ls",
  },
  {
    name: "mixed-case tool name Bash",
    command: "rm -rf x",
    tool: "Bash",
    by: "deny[0]",
    twin: "ls",
  },
  {
    name: "unicode-escaped JSON (every character \\u-escaped)",
    command: escapedJson("rm -rf x"),
    json: true,
    by: "deny[0]",
    twin: escapedJson("git status"),
  },
  {
    name: "unicode-escaped JSON: \\u0072m behind \\u003b",
    command: '{"command":"ls\\u003b \\u0072m -rf x"}',
    json: true,
    by: "deny[0]",
    twin: '{"command":"ls\\u003b \\u0067it status"}',
  },
  {
    name: "JSON \\n escape as the separator",
    command: '{ "command" : "ls\\nrm -rf x" }',
    json: true,
    by: "deny[0]",
    twin: '{ "command" : "ls\\ngit status" }',
  },
  {
    name: "duplicate JSON key: the last one is what runs",
    command: '{"command":"ls","command":"rm -rf x"}',
    json: true,
    by: "deny[0]",
    twin: '{"command":"rm -rf x","command":"git status"}',
  },
  { name: "eval with a quoted string", command: 'eval "rm -rf x"', by: "deny[0]" },
  { name: "eval with words", command: "eval rm -rf x", by: "deny[0]" },
  { name: "eval of a variable", command: "eval $CMD", by: "default" },
  { name: "sh -c", command: 'sh -c "rm -rf x"', by: "deny[0]" },
  { name: "bash -c", command: "bash -c 'rm -rf x'", by: "deny[0]" },
  { name: "sh -ec (combined flags)", command: "sh -ec 'rm -rf x'", by: "deny[0]" },
  { name: "sh -o errexit -c", command: "sh -o errexit -c 'rm -rf x'", by: "deny[0]" },
  { name: "/bin/sh -c behind env", command: "env /bin/sh -c 'ls; rm -rf x'", by: "deny[0]" },
  { name: "sudo", command: "sudo rm -rf x", by: "deny[0]" },
  { name: "sudo -u root --", command: "sudo -u root -- rm -rf x", by: "deny[0]" },
  { name: "env", command: "env rm -rf x", by: "deny[0]" },
  { name: "env -i FOO=1", command: "env -i FOO=1 rm -rf x", by: "deny[0]" },
  { name: "timeout 5", command: "timeout 5 rm -rf x", by: "deny[0]" },
  { name: "nice -n 10", command: "nice -n 10 rm -rf x", by: "deny[0]" },
  { name: "nohup", command: "nohup rm -rf x", by: "deny[0]" },
  { name: "command", command: "command rm -rf x", by: "deny[0]" },
  { name: "exec", command: "exec rm -rf x", by: "deny[0]" },
  { name: "busybox", command: "busybox rm -rf x", by: "deny[0]" },
  { name: "xargs", command: "echo x | xargs rm -rf", by: "deny[0]" },
  { name: "find -exec", command: "find . -exec rm -rf {} \\;", by: "deny[0]" },
  { name: "find -exec sh -c", command: "find . -exec sh -c 'rm -rf x' \\;", by: "deny[0]" },
  {
    name: "here-doc with $(rm)",
    command: "cat <<EOF\n$(rm -rf x)\nEOF",
    by: "deny[0]",
    twin: "cat <<EOF\nplain text\nEOF",
  },
  { name: "here-doc with backticks", command: "cat <<EOF\n`rm -rf x`\nEOF", by: "deny[0]" },
  {
    name: "git status; rm",
    command: "git status; rm -rf x",
    by: "deny[0]",
    twin: "git status; git diff",
  },
  { name: "git status && rm", command: "git status && rm -rf x", by: "deny[0]" },
  {
    name: "write redirect ls > /etc/x",
    command: "ls > /etc/x",
    by: "default",
    twin: "ls > /dev/null",
  },
  { name: "append redirect ls >> x", command: "ls >> x", by: "default", twin: "ls 2>/dev/null" },
  { name: "clobber redirect ls >| x", command: "ls >| x", by: "default" },
  { name: "fd redirect 2>x", command: "ls 2>x", by: "default", twin: "ls 2>&1" },
  { name: "read-write redirect <>x", command: "cat <>x", by: "default", twin: "cat <x" },
  { name: "redirect-only statement > x", command: "ls; > x", by: "default" },
  { name: "redirect on a group { ls; } > x", command: "{ ls; } > x", by: "default" },
  { name: "exec opening a file for writing", command: "exec 3>/etc/x", by: "default" },
  { name: "$CMD as the program", command: "CMD=rm; $CMD -rf x", by: "default" },
  { name: "${CMD} as the program", command: "${CMD:-rm} -rf x", by: "default" },
  { name: "$(echo rm) as the program", command: "$(echo rm) -rf x", by: "default" },
  {
    name: "function shadowing git",
    command: "git() { rm -rf x; }; git status",
    by: "deny[0]",
    // No twin: defining a function is never allowed by `command` rules (spec, "What an allow
    // grants"), so `ls() { git status; }; ls` is not allowed either.
  },
  { name: "function body in a subshell", command: "f() (rm -rf x); f", by: "deny[0]" },
  { name: "alias shadowing ls", command: "alias ls='rm -rf x'\nls", by: "default" },
  {
    name: "comment hiding nothing: the rm is on its own line",
    command: "ls # harmless\nrm -rf x",
    by: "deny[0]",
    twin: "ls # rm -rf x",
  },
  { name: "comment after rm", command: "rm -rf x # ls", by: "deny[0]", twin: "git log # rm -rf x" },
  {
    name: "ANSI-C quote $'\\'' hiding ; rm from a POSIX parse",
    command: "ls $'\\'' ; rm -rf x # '",
    // The line is also read as bash reads it, so the rm rule sees the rm.
    by: "deny[0]",
  },
  { name: 'locale quote $"..."', command: 'ls $"x" ; rm -rf x', by: "deny[0]" },
  { name: "process substitution <(rm)", command: "cat <(rm -rf x)", by: "deny[0]" },
  { name: "here-string with $(rm)", command: 'cat <<< "$(rm -rf x)"', by: "deny[0]" },
  { name: "unbalanced line hiding rm", command: "ls && (rm -rf x", by: "deny[0]" },
  // Deny rules also see bash's brace expansion.
  { name: "brace expansion {rm,-rf,x}", command: "{rm,-rf,x}", by: "deny[0]" },
  { name: "glob as the program /bin/r?", command: "/bin/r? -rf x", by: "default" },
];

function requestOf(tool: string, command: string, json: boolean) {
  return { tool, input: json ? JSON.parse(command) : { command } };
}

Deno.test(`approver denies all ${ATTEMPTS.length} bypass attempts`, async (t) => {
  const approver = createApprover(POLICY);
  for (const attempt of ATTEMPTS) {
    await t.step(`${attempt.name}: ${JSON.stringify(attempt.command)}`, async () => {
      const request = requestOf(attempt.tool ?? "bash", attempt.command, attempt.json ?? false);
      const decision = await approver.approve(request);
      assertEquals({ decision: decision.decision, rule: decision.rule }, {
        decision: "deny",
        rule: attempt.by,
      });
    });
  }
});

const TWINS = ATTEMPTS.filter((a) => a.twin !== undefined);

Deno.test(`the ${TWINS.length} git status twins of the bypass attempts are allowed`, async (t) => {
  const approver = createApprover(POLICY);
  for (const attempt of TWINS) {
    await t.step(`${attempt.name}: ${JSON.stringify(attempt.twin)}`, async () => {
      const request = requestOf(attempt.tool ?? "bash", attempt.twin!, attempt.json ?? false);
      const decision = await approver.approve(request);
      assertEquals(decision.decision, "allow", JSON.stringify(decision));
    });
  }
});

Deno.test("the bypass policy allows read and grep and denies write", async () => {
  const approver = createApprover(POLICY);
  assertEquals((await approver.approve({ tool: "read", input: { path: "/a" } })).decision, "allow");
  assertEquals(
    (await approver.approve({ tool: "grep", input: { pattern: "rm" } })).decision,
    "allow",
  );
  assertEquals(
    (await approver.approve({ tool: "write", input: { path: "/a", content: "" } })).decision,
    "deny",
  );
});
