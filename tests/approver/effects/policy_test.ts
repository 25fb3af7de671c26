/**
 * Effects (spec "What an allow grants: effects") as the approver judges them: the reasons a denial
 * names, writes whose place is decided at run time, the opt-in `effects` field, its validation and
 * lint.
 */

import {
  compilePolicy,
  createApprover,
  type PolicyConfig,
  PolicyError,
  testPolicy,
} from "../../../approver/mod.ts";
import { assert, assertEquals, assertThrows } from "../../_helpers/assert.ts";

const README: PolicyConfig = {
  mode: "pattern",
  default: "deny",
  deny: [{ tool: "bash", command: "^rm( |$)" }],
  allow: [
    { tool: "read" },
    { tool: "grep" },
    { tool: "bash", command: "^git (status|diff|log)( |$)" },
  ],
};

Deno.test("effects: the deny reason names the effect that decided", async (t) => {
  const approver = createApprover(
    {
      ...README,
      allow: [
        ...README.allow!,
        { tool: "bash", command: "^(find|sort|ls|grep)( |$)" },
        { tool: "write", path: "^/ws/out/" },
      ],
      deny: [...README.deny!, { tool: "write", path: "^/ws/secrets/", reason: "no secrets" }],
    },
    { workspace: { roots: ["/ws"] }, protectedPaths: ["/ws/.rousseau"] },
  );
  const rows: Array<[string, string, string, string | undefined]> = [
    [
      "git log --output=.git/config",
      "deny",
      "default",
      "git log --output writes /ws/.git/config, and no rule allows writing there",
    ],
    ["find . -exec rm {} \\;", "deny", "deny[0]", "denied by pattern policy"],
    [
      "find . -exec touch x {} +",
      "deny",
      "default",
      "find -exec runs touch x {}, and no rule allows it",
    ],
    [
      "find . -delete",
      "deny",
      "effect",
      "find -delete writes /ws, which holds a protected path",
    ],
    [
      "sort -o /etc/passwd f",
      "deny",
      "effect",
      "sort -o writes /etc/passwd, outside the workspace",
    ],
    ["sort -o secrets/k f", "deny", "deny[1]", "sort -o writes /ws/secrets/k: no secrets"],
    [
      "sort -o .rousseau/x f",
      "deny",
      "effect",
      "sort -o writes /ws/.rousseau/x, which is a protected path",
    ],
    ["sort -o out/x f", "allow", "allow[3]+allow[4]", undefined],
    [
      "ls() { ls | ls & }; ls",
      "deny",
      "default",
      "defining the function ls changes the shell, which command rules never allow",
    ],
    [
      "PAGER=less git log",
      "deny",
      "default",
      "denied by pattern policy",
    ],
    [
      "grep -r x . | sort -T /tmp",
      "deny",
      "effect",
      "sort -T writes /tmp, outside the workspace",
    ],
    [
      "ls | sort -o out/x && ls -l out/x",
      "allow",
      "allow[3]+allow[4]",
      undefined,
    ],
  ];
  for (const [line, decision, rule, reason] of rows) {
    await t.step(line, async () => {
      const got = await approver.approve({ tool: "bash", input: { command: line } });
      assertEquals(
        got,
        reason === undefined ? { decision, rule } as never : { decision, reason, rule } as never,
      );
    });
  }
});

Deno.test("effects: writes whose place is decided at run time cannot be judged", async (t) => {
  const approver = createApprover({
    mode: "pattern",
    allow: [
      { tool: "bash", command: "^(find|sort|grep|ln|cd)( |$)" },
      { tool: "write", path: "^/ws/out/" },
    ],
  }, { workspace: { roots: ["/ws"] } });
  const rows: Array<[string, string, string | undefined]> = [
    ["find . -exec sort -o out/x {} \\;", "allow", undefined],
    [
      "find out -execdir sort -o out/x {} \\;",
      "deny",
      "sort -o writes out/x in a directory chosen at run time, which cannot be judged from the text",
    ],
    ["find . -execdir grep x {} +", "allow", undefined],
    ["ln -s a out/b", "allow", undefined],
    [
      "ln -s ../.git/config out/l && sort -o out/l f",
      "deny",
      "sort -o writes /ws/out/l in a line where ln can create links, so where it writes " +
      "cannot be judged from the text",
    ],
    [
      "cd out && sort -o x f",
      "deny",
      "sort -o writes x after a cd, so where it writes cannot be judged from the text",
    ],
  ];
  for (const [line, decision, reason] of rows) {
    await t.step(line, async () => {
      const got = await approver.approve({ tool: "bash", input: { command: line } });
      assertEquals({ decision: got.decision, reason: got.reason }, { decision, reason });
    });
  }
});

Deno.test("effects: a write the policy asks about makes the line ask", async () => {
  const approver = createApprover({
    mode: "pattern",
    ask: [{ tool: "write" }],
    allow: [{ tool: "bash", command: "^sort( |$)" }],
  }, { workspace: { roots: ["/ws"] } });
  assertEquals(await approver.approve({ tool: "bash", input: { command: "sort -o x f" } }), {
    decision: "ask",
    reason: "sort -o writes /ws/x, which needs approval",
    rule: "allow[0]",
  });
});

Deno.test("effects: a rule opts in with effects: [write] and a path, or [run]", async () => {
  const approver = createApprover({
    mode: "pattern",
    allow: [
      { tool: "bash", command: "^sed -i ", effects: ["write"], path: "^/ws/src/" },
      { tool: "bash", command: "^find ", effects: ["run"] },
    ],
  }, { workspace: { roots: ["/ws"] } });
  const decide = async (command: string) =>
    (await approver.approve({ tool: "bash", input: { command } })).decision;
  assertEquals(await decide("sed -i s/a/b/ src/a.ts"), "allow");
  assertEquals(await decide("sed -i s/a/b/ README.md"), "deny");
  assertEquals(await decide("sed -i s/a/b/ /etc/hosts"), "deny");
  assertEquals(await decide("sed -i 's/a/b/;1e id' src/a.ts"), "deny");
  assertEquals(await decide("find . -name '*.o' -exec wc -c {} +"), "allow");
  assertEquals(await decide("find . -delete"), "deny");
  assertEquals(await decide("PATH=/x find . -exec ls {} +"), "deny");
});

Deno.test("effects: the field is validated, and lint says where it cannot apply", async () => {
  assertEquals(
    assertThrows(
      () => compilePolicy({ allow: [{ tool: "bash", command: "^x", effects: ["delete"] }] }),
      PolicyError,
    ).message,
    'approver: allow[0].effects[0]: unknown effect "delete" (want a list of write, run, ' +
      "e.g. effects: [write] with a path)",
  );
  assertEquals(
    assertThrows(
      () => compilePolicy({ allow: [{ tool: "bash", effects: "write" } as never] }),
      PolicyError,
    ).message,
    "approver: allow[0].effects: want a list of write, run, e.g. effects: [write] with a path",
  );
  const report = await testPolicy(
    compilePolicy({
      allow: [
        { tool: "bash", command: "^sed -i ", effects: ["write"], path: "^/ws/src/" },
        { tool: "read", effects: ["write"] },
        { tool: "bash", command: "^ls", path: "^/ws/" },
      ],
    }),
    { registered: ["bash", "read"] },
  );
  assertEquals(report.warnings.map((w) => w.rule), ["allow[1]", "allow[2]"]);
  assert(/effects only apply to bash rules/.test(report.warnings[0]!.message));
  assert(/only applies with effects: \[write\]/.test(report.warnings[1]!.message));
});
