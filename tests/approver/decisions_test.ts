/**
 * The decision table: every mode, rule field, default, label and example of
 * `spec/approver.md`, one step per row.
 */

import {
  compilePolicy,
  createApprover,
  type Decision,
  evaluate,
  NO_OPERATOR_REASON,
  type PolicyConfig,
  PolicyError,
  settle,
} from "../../approver/mod.ts";
import { defaultPolicy } from "../../cli/config/policy.ts";
import { resolveReal } from "../../mod.ts";
import { assertEquals, assertThrows } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

interface Row {
  readonly name: string;
  readonly policy: PolicyConfig;
  readonly tool: string;
  readonly input: unknown;
  readonly want: Decision;
}

function allow(rule: string): Decision {
  return { decision: "allow", rule };
}

function deny(reason: string, rule: string): Decision {
  return { decision: "deny", reason, rule };
}

function ask(reason: string, rule: string): Decision {
  return { decision: "ask", reason, rule };
}

const PATTERN_DENIED = "denied by pattern policy";
const GIT_READ_ONLY: PolicyConfig = {
  mode: "pattern",
  allow: [{ tool: "bash", command: "^git (status|diff|log)( |$)" }],
};

const ROWS: readonly Row[] = [
  // Modes and their aliases.
  ...["allow_all", "allow", " Allow_All ", "ALLOW", "\tallow\n"].map((mode): Row => ({
    name: `mode ${JSON.stringify(mode)} allows everything`,
    policy: { mode, deny: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "rm -rf /" },
    want: allow("mode"),
  })),
  ...["deny_all", "deny", " DENY_ALL ", "Deny"].map((mode): Row => ({
    name: `mode ${JSON.stringify(mode)} denies everything with "denied by policy"`,
    policy: { mode, allow: [{ tool: "read" }] },
    tool: "read",
    input: { path: "/etc/hostname" },
    want: deny("denied by policy", "mode"),
  })),
  {
    name: "deny_all uses the configured reason",
    policy: { mode: "deny_all", reason: "this server runs no tools" },
    tool: "grep",
    input: { pattern: "x" },
    want: deny("this server runs no tools", "mode"),
  },
  {
    name: "deny_all with an empty reason falls back to the default text",
    policy: { mode: "deny_all", reason: "" },
    tool: "grep",
    input: { pattern: "x" },
    want: deny("denied by policy", "mode"),
  },
  {
    name: "no mode means pattern, and no default means deny",
    policy: {},
    tool: "read",
    input: { path: "/a" },
    want: deny(PATTERN_DENIED, "default"),
  },
  // Defaults in pattern mode.
  {
    name: "pattern default allow",
    policy: { mode: "pattern", default: "allow" },
    tool: "write",
    input: { path: "/a", content: "" },
    want: allow("default"),
  },
  {
    name: "pattern default deny",
    policy: { mode: "Pattern", default: "deny" },
    tool: "write",
    input: { path: "/a", content: "" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "pattern default ask",
    policy: { mode: "pattern", default: "ask" },
    tool: "write",
    input: { path: "/a", content: "" },
    want: ask("write needs approval", "default"),
  },
  {
    name: "pattern default empty means deny",
    policy: { mode: "pattern", default: "" },
    tool: "write",
    input: { path: "/a", content: "" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "pattern default is trimmed and case-insensitive",
    policy: { mode: "pattern", default: " ALLOW " },
    tool: "write",
    input: { path: "/a", content: "" },
    want: allow("default"),
  },
  // Reasons.
  {
    name: 'deny rule without reason says "denied by pattern policy"',
    policy: { mode: "pattern", default: "allow", deny: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "ls" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "deny rule without reason uses the policy reason",
    policy: { mode: "pattern", default: "allow", reason: "ask ops", deny: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "ls" },
    want: deny("ask ops", "deny[0]"),
  },
  {
    name: "a rule's own reason beats the policy reason",
    policy: {
      mode: "pattern",
      reason: "ask ops",
      deny: [{ tool: "bash", reason: "no shell on this box" }],
    },
    tool: "bash",
    input: { command: "ls" },
    want: deny("no shell on this box", "deny[0]"),
  },
  {
    name: "the default denial uses the policy reason",
    policy: { mode: "pattern", reason: "read-only inspection" },
    tool: "write",
    input: { path: "/a", content: "" },
    want: deny("read-only inspection", "default"),
  },
  {
    name: "an ask rule's reason is the ask's reason",
    policy: { ask: [{ tool: "edit", reason: "edits need a second pair of eyes" }] },
    tool: "edit",
    input: { path: "/a", "old_string": "a", "new_string": "b" },
    want: ask("edits need a second pair of eyes", "ask[0]"),
  },
  // Evaluation order: deny, then ask, then allow, then default.
  {
    name: "deny beats ask and allow",
    policy: { allow: [{ tool: "bash" }], ask: [{ tool: "bash" }], deny: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "ls" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "ask beats allow",
    policy: { allow: [{ tool: "bash" }], ask: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "ls" },
    want: ask("bash needs approval", "ask[0]"),
  },
  {
    name: "allow beats the default",
    policy: { allow: [{ tool: "bash" }], default: "deny" },
    tool: "bash",
    input: { command: "ls" },
    want: allow("allow[0]"),
  },
  {
    name: "deny beats default allow",
    policy: { deny: [{ tool: "bash" }], default: "allow" },
    tool: "bash",
    input: { command: "ls" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "the first matching rule of a list is the label (deny[1])",
    policy: { deny: [{ tool: "read" }, { tool: "bash" }, { tool: "bash", match: "ls" }] },
    tool: "bash",
    input: { command: "ls" },
    want: deny(PATTERN_DENIED, "deny[1]"),
  },
  {
    name: "the first matching rule of a list is the label (allow[1])",
    policy: { allow: [{ tool: "read" }, { tool: "grep" }] },
    tool: "grep",
    input: { pattern: "x" },
    want: allow("allow[1]"),
  },
  // Rule fields: all present fields must hold.
  {
    name: "tool and match both hold: matched",
    policy: { deny: [{ tool: "bash", match: "curl" }], default: "allow" },
    tool: "bash",
    input: { command: "curl example.com" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "match holds but tool differs: not matched",
    policy: { deny: [{ tool: "bash", match: "curl" }], default: "allow" },
    tool: "grep",
    input: { pattern: "curl" },
    want: allow("default"),
  },
  {
    name: "tool holds but match does not: not matched",
    policy: { deny: [{ tool: "bash", match: "curl" }], default: "allow" },
    tool: "bash",
    input: { command: "ls" },
    want: allow("default"),
  },
  {
    name: "a rule without tool applies to every tool",
    policy: { deny: [{ match: "\\.env" }], default: "allow" },
    tool: "read",
    input: { path: "/srv/app/.env" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "an empty rule matches every call",
    policy: { allow: [{}] },
    tool: "write",
    input: { path: "/a", content: "" },
    want: allow("allow[0]"),
  },
  {
    name: "rule tool is case-insensitive (rule Bash, call BASH)",
    policy: { deny: [{ tool: "Bash" }], default: "allow" },
    tool: "BASH",
    input: { command: "ls" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "rule tool is trimmed",
    policy: { deny: [{ tool: " bash " }], default: "allow" },
    tool: "bash",
    input: { command: "ls" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  // match: on canonical JSON.
  {
    name: 'match sees {"command":"\\u006cs"} as {"command":"ls"}',
    policy: { allow: [{ tool: "bash", match: '^\\{"command":"ls"\\}$' }] },
    tool: "bash",
    input: JSON.parse('{"command":"\\u006cs"}'),
    want: allow("allow[0]"),
  },
  {
    name: 'match sees {"command": "ls"} (spaces) as {"command":"ls"}',
    policy: { allow: [{ tool: "bash", match: '^\\{"command":"ls"\\}$' }] },
    tool: "bash",
    input: JSON.parse('{ "command" :\n\t "ls" }'),
    want: allow("allow[0]"),
  },
  {
    name: "match: a deny on rm catches \\u0072m",
    policy: { deny: [{ tool: "bash", match: '"rm ' }], default: "allow" },
    tool: "bash",
    input: JSON.parse('{"command":"\\u0072m -rf x"}'),
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "match is unanchored unless the rule anchors it",
    policy: { deny: [{ match: "secret" }], default: "allow" },
    tool: "read",
    input: { path: "/srv/my-secret-file" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "match regexes are RE2 (a case-insensitive flag group)",
    policy: { deny: [{ match: "(?i)SECRET" }], default: "allow" },
    tool: "read",
    input: { path: "/srv/secret" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  // command: bash only, split into simple commands.
  {
    name: "spec example: git status is allowed by ^git (status|diff|log)( |$)",
    policy: GIT_READ_ONLY,
    tool: "bash",
    input: { command: "git status" },
    want: allow("allow[0]"),
  },
  {
    name: "spec example: git status; rm -rf ~ is not allowed by the same rule",
    policy: GIT_READ_ONLY,
    tool: "bash",
    input: { command: "git status; rm -rf ~" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "allow: every simple command matched by the same rule",
    policy: GIT_READ_ONLY,
    tool: "bash",
    input: { command: "git status && git log --oneline | git diff" },
    want: allow("allow[0]"),
  },
  {
    name: "allow: simple commands covered by two rules of the list",
    policy: { allow: [{ tool: "bash", command: "^ls( |$)" }, { command: "^wc( |$)" }] },
    tool: "bash",
    input: { command: "ls -la | wc -l" },
    want: allow("allow[0]+allow[1]"),
  },
  {
    name: "allow: one simple command not covered fails the whole line",
    policy: { allow: [{ tool: "bash", command: "^ls( |$)" }, { command: "^wc( |$)" }] },
    tool: "bash",
    input: { command: "ls -la | wc -l | sort" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "deny: any simple command matching denies",
    policy: { deny: [{ tool: "bash", command: "^rm( |$)" }], default: "allow" },
    tool: "bash",
    input: { command: "ls; echo hi && rm -rf x" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "deny: no simple command matching, default applies",
    policy: { deny: [{ tool: "bash", command: "^rm( |$)" }], default: "allow" },
    tool: "bash",
    input: { command: "ls; echo rm -rf x; git rm x" },
    want: allow("default"),
  },
  {
    name: "command is unanchored unless the rule anchors it",
    policy: { deny: [{ tool: "bash", command: "rm" }], default: "allow" },
    tool: "bash",
    input: { command: "ls; echo warm" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "ask with command rules: every simple command must match",
    policy: { ask: [{ tool: "bash", command: "^git push( |$)" }], allow: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "git push origin main" },
    want: ask("bash needs approval", "ask[0]"),
  },
  {
    name: "ask with command rules: a line with other commands is not asked",
    policy: { ask: [{ tool: "bash", command: "^git push( |$)" }], allow: [{ tool: "bash" }] },
    tool: "bash",
    input: { command: "git push origin main; ls" },
    want: allow("allow[0]"),
  },
  {
    name: "unparseable line falls through to the default (allow list)",
    policy: { allow: [{ tool: "bash", command: "^ls( |$)" }], default: "ask" },
    tool: "bash",
    input: { command: "ls && (" },
    want: ask("bash needs approval", "default"),
  },
  {
    name: "eval falls through to the default even when its words are allowed",
    policy: { allow: [{ tool: "bash", command: "^(eval|ls)( |$)" }] },
    tool: "bash",
    input: { command: "eval ls" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: 'sh -c "..." falls through to the default even when its words are allowed',
    policy: { allow: [{ tool: "bash", command: "^(sh|ls)( |$)" }] },
    tool: "bash",
    input: { command: 'sh -c "ls"' },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "here-doc with a substitution falls through to the default",
    policy: { allow: [{ tool: "bash", command: "^(cat|ls)( |$)" }] },
    tool: "bash",
    input: { command: "cat <<EOF\n$(ls)\nEOF" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "here-doc without substitutions is seen through",
    policy: { allow: [{ tool: "bash", command: "^cat( |$)" }] },
    tool: "bash",
    input: { command: "cat <<EOF\nplain text\nEOF" },
    want: allow("allow[0]"),
  },
  {
    name: "an empty command line is never allowed by command rules",
    policy: { allow: [{ tool: "bash", command: "" }] },
    tool: "bash",
    input: { command: "   " },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "command rules do not apply to other tools (allow)",
    policy: { allow: [{ command: ".*" }] },
    tool: "read",
    input: { path: "/a" },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "command rules do not apply to other tools (deny)",
    policy: { deny: [{ command: ".*" }], default: "allow" },
    tool: "grep",
    input: { pattern: "rm -rf" },
    want: allow("default"),
  },
  {
    name: "command rule on a bash call without a string command does not match",
    policy: { allow: [{ tool: "bash", command: ".*" }] },
    tool: "bash",
    input: { command: ["ls"] },
    want: deny(PATTERN_DENIED, "default"),
  },
  {
    name: "command rules see BASH as bash",
    policy: { deny: [{ tool: "bash", command: "^rm( |$)" }], default: "allow" },
    tool: "BASH",
    input: { command: "ls; rm x" },
    want: deny(PATTERN_DENIED, "deny[0]"),
  },
  {
    name: "command, tool and match together: all must hold",
    policy: {
      allow: [{ tool: "bash", match: '"command":"git ', command: "^git (status|log)( |$)" }],
    },
    tool: "bash",
    input: { command: "ls; git status" },
    want: deny(PATTERN_DENIED, "default"),
  },
];

Deno.test("decisions: one step per row of the table", async (t) => {
  for (const row of ROWS) {
    await t.step(row.name, async () => {
      const approver = createApprover(row.policy);
      assertEquals(await approver.approve({ tool: row.tool, input: row.input }), row.want);
    });
  }
});

/** `text` as a regex matching itself. */
function quote(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

Deno.test("decisions: path rules see the resolved path (.. and symlinks)", async (t) => {
  await using ws = await tmpWorkspace({
    files: { "src/a.ts": "", "other/b.ts": "" },
    outside: { "secret.txt": "" },
  });
  await Deno.symlink(ws.outside, ws.path("src", "link"));
  await Deno.symlink(ws.path("src"), ws.path("srclink"));
  const src = `^${quote(ws.root)}/src/`;
  const policy: PolicyConfig = {
    deny: [{ path: `^${quote(ws.outside)}/` }],
    allow: [{ tool: "read", path: src }, { tool: "grep", path: `^${quote(ws.root)}/src(/|$)` }],
  };
  const rows: Array<[string, string, unknown, Decision]> = [
    ["a path under src/ is allowed", "read", { path: ws.path("src/a.ts") }, allow("allow[0]")],
    [
      "a path under another directory is not",
      "read",
      { path: ws.path("other/b.ts") },
      deny(PATTERN_DENIED, "default"),
    ],
    [
      ".. is resolved: other/../src/a.ts is under src/",
      "read",
      { path: `${ws.root}/other/../src/a.ts` },
      allow("allow[0]"),
    ],
    [
      ".. is resolved: src/../other/b.ts is not under src/",
      "read",
      { path: `${ws.root}/src/../other/b.ts` },
      deny(PATTERN_DENIED, "default"),
    ],
    [
      "a symlink in src/ pointing outside is seen as outside (deny wins)",
      "read",
      { path: ws.path("src/link/secret.txt") },
      deny(PATTERN_DENIED, "deny[0]"),
    ],
    [
      "a symlink to src/ is seen as src/",
      "read",
      { path: ws.path("srclink/a.ts") },
      allow("allow[0]"),
    ],
    [
      "a file that does not exist yet resolves through its real parent",
      "read",
      { path: ws.path("srclink/new.ts") },
      allow("allow[0]"),
    ],
    [
      "grep's path is resolved too",
      "grep",
      { pattern: "x", path: ws.path("srclink") },
      allow("allow[1]"),
    ],
    [
      "path rules never match tools without a path (bash)",
      "bash",
      { command: `cat ${ws.outside}/secret.txt`, path: ws.path("src/a.ts") },
      deny(PATTERN_DENIED, "default"),
    ],
    [
      "path rules never match a call without a path",
      "grep",
      { pattern: "x" },
      deny(PATTERN_DENIED, "default"),
    ],
  ];
  for (const [name, tool, input, want] of rows) {
    await t.step(name, async () => {
      const approver = createApprover(policy, { resolvePath: resolveReal });
      assertEquals(await approver.approve({ tool, input }), want);
    });
  }
  await t.step("write and edit paths are resolved the same way", async () => {
    const approver = createApprover({
      allow: [{ tool: "write", path: src }, { tool: "edit", path: src }],
    }, { resolvePath: resolveReal });
    const write = { path: ws.path("srclink/new.ts"), content: "" };
    assertEquals(await approver.approve({ tool: "write", input: write }), allow("allow[0]"));
    const edit = { path: ws.path("src/link/secret.txt"), "old_string": "", "new_string": "" };
    assertEquals(
      await approver.approve({ tool: "edit", input: edit }),
      deny(PATTERN_DENIED, "default"),
    );
  });
});

Deno.test("decisions: evaluate() takes a compiled policy and a precomputed canonical", async () => {
  const policy = compilePolicy({ allow: [{ match: "^CANON$" }] });
  assertEquals(
    await evaluate(policy, { tool: "read", input: { path: "/a" }, canonical: "CANON" }),
    allow("allow[0]"),
  );
  assertEquals(
    await createApprover(policy).approve({ tool: "read", input: { path: "/a" } }),
    deny(PATTERN_DENIED, "default"),
  );
});

Deno.test("decisions: settle() resolves ask", async (t) => {
  const request = { tool: "bash", input: { command: "ls" } };
  const asked = ask("bash needs approval", "ask[0]");
  await t.step("no operator: ask becomes deny with the spec's reason", async () => {
    assertEquals(await settle(asked, request), deny(NO_OPERATOR_REASON, "ask[0]"));
    assertEquals(
      NO_OPERATOR_REASON,
      "needs approval, and no operator is attached (allow it with --allow or agent.approver in config)",
    );
  });
  await t.step("no operator, ask from the default", async () => {
    assertEquals(
      await settle(ask("bash needs approval", "default"), request),
      deny(NO_OPERATOR_REASON, "default"),
    );
  });
  await t.step("operator answers true: allow", async () => {
    const seen: unknown[] = [];
    const decision = await settle(asked, request, (req, d) => {
      seen.push(req, d);
      return Promise.resolve(true);
    });
    assertEquals(decision.decision, "allow");
    assertEquals(seen, [request, asked]);
  });
  await t.step("operator answers a string: deny with it", async () => {
    const decision = await settle(asked, request, () => Promise.resolve("not now"));
    assertEquals({ decision: decision.decision, reason: decision.reason }, {
      decision: "deny",
      reason: "not now",
    });
  });
  await t.step("allow and deny pass through untouched, the operator is not called", async () => {
    const operator = () => Promise.reject(new Error("must not be asked"));
    for (const d of [allow("allow[0]"), deny("x", "deny[0]")]) {
      assertEquals(await settle(d, request, operator), d);
    }
  });
});

Deno.test("decisions: defaults per command when nothing is configured", async (t) => {
  const calls: Array<[string, unknown]> = [
    ["read", { path: "/a" }],
    ["grep", { pattern: "x" }],
    ["write", { path: "/a", content: "" }],
    ["edit", { path: "/a", "old_string": "a", "new_string": "b" }],
    ["bash", { command: "ls" }],
  ];
  const verdicts = async (command: "chat" | "run" | "mcp" | "tool") => {
    const approver = createApprover(defaultPolicy(command));
    const out: Record<string, string> = {};
    for (const [tool, input] of calls) {
      out[tool] = (await approver.approve({ tool, input })).decision;
    }
    return out;
  };
  await t.step("chat: read and grep allowed; write, edit and bash ask", async () => {
    assertEquals(await verdicts("chat"), {
      read: "allow",
      grep: "allow",
      write: "ask",
      edit: "ask",
      bash: "ask",
    });
  });
  for (const command of ["run", "mcp"] as const) {
    await t.step(`${command}: read and grep allowed; the rest denied, saying how`, async () => {
      assertEquals(await verdicts(command), {
        read: "allow",
        grep: "allow",
        write: "deny",
        edit: "deny",
        bash: "deny",
      });
      const d = await createApprover(defaultPolicy(command)).approve({
        tool: "bash",
        input: { command: "ls" },
      });
      assertEquals(d.rule, "default");
      assertEquals(/--allow/.test(d.reason ?? ""), true, d.reason);
      assertEquals(/agent\.approver/.test(d.reason ?? ""), true, d.reason);
    });
  }
  await t.step("tool: everything allowed", async () => {
    assertEquals(await verdicts("tool"), {
      read: "allow",
      grep: "allow",
      write: "allow",
      edit: "allow",
      bash: "allow",
    });
  });
});

Deno.test("decisions: start-up errors have the spec's texts", async (t) => {
  const cases: Array<[string, PolicyConfig, string]> = [
    [
      "unknown mode",
      { mode: "x" },
      'approver: unknown mode "x" (want allow_all / deny_all / pattern)',
    ],
    [
      "unknown mode keeps what was written",
      { mode: " Strict " },
      'approver: unknown mode " Strict " (want allow_all / deny_all / pattern)',
    ],
    ["unknown default", { mode: "pattern", default: "x" }, 'approver: unknown default "x"'],
    [
      "bad RE2 regex: the position names list, index and field",
      { deny: [{ tool: "bash" }, { tool: "bash", command: "(" }] },
      "approver: deny[1].command: error parsing regexp: missing closing ): `(`",
    ],
    [
      "lookahead is not RE2",
      { allow: [{ match: "^(?=.*ls)" }] },
      "approver: allow[0].match: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
    ],
    [
      "negative lookahead is not RE2",
      { ask: [{ path: "^(?!/srv/)" }] },
      "approver: ask[0].path: error parsing regexp: invalid or unsupported Perl syntax: `(?!`",
    ],
    [
      "backreferences are not RE2",
      { deny: [{ command: "(a)\\1" }] },
      "approver: deny[0].command: error parsing regexp: invalid escape sequence: `\\1`",
    ],
  ];
  for (const [name, config, message] of cases) {
    await t.step(name, () => {
      const error = assertThrows(() => createApprover(config), PolicyError);
      assertEquals(error.message, message);
    });
  }
  await t.step("a bad regex in any list stops start-up, even in allow_all mode", () => {
    const error = assertThrows(
      () => compilePolicy({ mode: "allow_all", allow: [{ command: "[" }] }),
      PolicyError,
    );
    assertEquals(error.message.startsWith("approver: allow[0].command: "), true, error.message);
  });
  await t.step("an unknown rule field stops start-up", () => {
    const error = assertThrows(() => compilePolicy({ deny: [{ tol: "bash" } as never] }));
    assertEquals(error.message.startsWith("approver: deny[0].tol: unknown field"), true);
  });
});
