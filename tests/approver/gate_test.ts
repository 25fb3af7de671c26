/**
 * The gate (agent/tool_host.ts callTool) with a real registry and an in-process host in a
 * temporary workspace: denials never run the tool, and every outcome is audited in order.
 */

import { join } from "node:path";
import { blockedText, callTool, type GateOptions } from "../../agent/tool_host.ts";
import {
  type Approver,
  type AuditEvent,
  type AuditSink,
  createApprover,
  createAuditFile,
  createFunctionApprover,
  NO_OPERATOR_REASON,
  type PolicyConfig,
  verifyChain,
} from "../../approver/mod.ts";
import { createBuiltinTools, createInProcessHost, DEFAULT_LIMITS, Registry } from "../../mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";

/** An audit sink that keeps events in memory. */
function memoryAudit(): AuditSink & { readonly events: AuditEvent[] } {
  const events: AuditEvent[] = [];
  return {
    events,
    record(event) {
      events.push(event);
      return Promise.resolve();
    },
  };
}

function gate(
  ws: TmpWorkspace,
  approver: Approver | PolicyConfig,
  extra: Partial<GateOptions> = {},
): GateOptions & { readonly audit: ReturnType<typeof memoryAudit> } {
  const registry = new Registry(createBuiltinTools());
  return {
    registry,
    host: createInProcessHost(registry, {
      workspace: ws.workspace,
      limits: DEFAULT_LIMITS,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    }),
    approver: "approve" in approver ? approver as Approver : createApprover(approver),
    audit: memoryAudit(),
    source: "model",
    ...extra,
  } as GateOptions & { readonly audit: ReturnType<typeof memoryAudit> };
}

function signal(): AbortSignal {
  return new AbortController().signal;
}

/** The events without their durations (present, not asserted: no timing in tests). */
function shapes(events: readonly AuditEvent[]): unknown[] {
  return events.map(({ duration_ms: duration, ...rest }) => {
    const timed = rest.event === "tool.done" || rest.event === "tool.error";
    assertEquals(typeof duration, timed ? "number" : "undefined");
    return rest;
  });
}

const READ_ONLY: PolicyConfig = {
  allow: [{ tool: "read" }, { tool: "bash", command: "^(ls|cat|git status)( |$)" }],
  deny: [{ tool: "write", reason: "this workspace is read-only" }],
};

Deno.test("gate: a denied write is blocked with the reason and the file is untouched", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "before" } });
  const options = gate(ws, READ_ONLY);
  const input = { path: ws.path("a.txt"), content: "after" };
  const result = await callTool(options, "write", input, signal());
  assertEquals(result, {
    output: "tool call blocked: this workspace is read-only",
    isError: true,
    decision: { decision: "deny", reason: "this workspace is read-only", rule: "deny[0]" },
  });
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "before");
  assertEquals(shapes(options.audit.events), [{
    event: "tool.denied",
    tool: "write",
    input: JSON.stringify(input),
    source: "model",
    reason: "this workspace is read-only",
    rule: "deny[0]",
  }]);
});

Deno.test("gate: git status; touch marker is blocked and nothing runs", async () => {
  await using ws = await tmpWorkspace();
  const options = gate(ws, READ_ONLY);
  const result = await callTool(
    options,
    "bash",
    { command: `git status; touch ${ws.path("marker")}` },
    signal(),
  );
  assertEquals(result.output, blockedText("denied by pattern policy"));
  assertEquals(result.output, "tool call blocked: denied by pattern policy");
  assertEquals(result.isError, true);
  assertEquals(await Deno.stat(ws.path("marker")).then(() => true, () => false), false);
  assertEquals(options.audit.events.map((e) => [e.event, e.rule]), [["tool.denied", "default"]]);
});

Deno.test("gate: an allowed call runs and is audited as execute then done", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hello" } });
  const options = gate(ws, READ_ONLY, { sessionId: "s-1" });
  const { durationMs, ...result } = await callTool(
    options,
    "bash",
    { command: "cat a.txt" },
    signal(),
  );
  assertEquals(result, {
    output: "hello",
    isError: false,
    decision: { decision: "allow", rule: "allow[1]" },
  });
  assertEquals(typeof durationMs, "number");
  assertEquals(shapes(options.audit.events), [
    {
      event: "tool.execute",
      tool: "bash",
      input: '{"command":"cat a.txt"}',
      source: "model",
      "session_id": "s-1",
      rule: "allow[1]",
    },
    {
      event: "tool.done",
      tool: "bash",
      input: '{"command":"cat a.txt"}',
      source: "model",
      "session_id": "s-1",
    },
  ]);
});

Deno.test("gate: an allowed call that fails is audited as execute then error", async () => {
  await using ws = await tmpWorkspace();
  const options = gate(ws, READ_ONLY);
  const input = { path: ws.path("missing.txt") };
  const result = await callTool(options, "read", input, signal());
  assertEquals(result.isError, true);
  assertEquals(result.decision, { decision: "allow", rule: "allow[0]" });
  const [execute, error, ...rest] = options.audit.events;
  assertEquals(rest, []);
  assertEquals([execute?.event, error?.event], ["tool.execute", "tool.error"]);
  assertEquals(error?.reason, result.output);
  assert(typeof error?.duration_ms === "number");
});

Deno.test("gate: a call that may change files waits for its reply to be on disk, and a read does not", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "before" } });
  const options = gate(ws, { allow: [{ tool: "write" }, { tool: "read" }] });
  const ran: string[] = [];
  const host = options.host;
  const watched: GateOptions = {
    ...options,
    host: { ...host, call: (name, ...rest) => (ran.push(name), host.call(name, ...rest)) },
  };
  let sync!: () => void;
  const stored = new Promise<void>((resolve) => sync = resolve);
  const input = { path: ws.path("a.txt"), content: "after" };
  const writing = callTool(watched, "write", input, signal(), stored);
  // The read runs meanwhile: it changes nothing, so it does not wait.
  const read = await callTool(watched, "read", { path: ws.path("a.txt") }, signal(), stored);
  assertEquals(read.output, "before");
  // The write was approved and audited, and went on to run (a host call follows its audit
  // line in the same chain of promises): it is held, and the file is as it was.
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(options.audit.events.filter((e) => e.tool === "write").map((e) => e.event), [
    "tool.execute",
  ]);
  assertEquals(ran, ["read"]);
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "before");
  sync();
  assertEquals((await writing).isError, false);
  assertEquals(ran, ["read", "write"]);
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "after");
});

Deno.test("gate: a call whose reply could not be synced to disk is not run, and says why", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "before" } });
  const options = gate(ws, { allow: [{ tool: "write" }] });
  const stored = Promise.reject(new Error("session: the model's reply could not be synced"));
  const input = { path: ws.path("a.txt"), content: "after" };
  const result = await callTool(options, "write", input, signal(), stored);
  assertEquals(result.output, "write: not run: session: the model's reply could not be synced");
  assertEquals(result.isError, true);
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "before");
  assertEquals(options.audit.events.map((e) => e.event), ["tool.execute", "tool.error"]);
});

Deno.test("gate: an unknown tool is an error result, audited, and nothing is asked", async () => {
  await using ws = await tmpWorkspace();
  let asked = 0;
  const approver = createFunctionApprover(() => {
    asked++;
    return { decision: "allow" };
  });
  const options = gate(ws, approver);
  for (const name of ["Write", "BASH", "nope"]) {
    const result = await callTool(options, name, {}, signal());
    assertEquals(result, { output: `unknown tool: ${name}`, isError: true });
  }
  assertEquals(asked, 0);
  assertEquals(options.audit.events.map((e) => [e.event, e.tool, e.reason]), [
    ["tool.error", "Write", "unknown tool: Write"],
    ["tool.error", "BASH", "unknown tool: BASH"],
    ["tool.error", "nope", "unknown tool: nope"],
  ]);
});

Deno.test("gate: an approver that throws denies, and the tool does not run", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "before" } });
  const input = { path: ws.path("a.txt"), content: "after" };
  const throwing: Array<[string, Approver]> = [
    ["throws", { approve: () => Promise.reject(new Error("policy engine unreachable")) }],
    ["throws synchronously", {
      approve: () => {
        throw new Error("policy engine unreachable");
      },
    }],
    [
      "function adapter throws",
      createFunctionApprover(() => {
        throw new Error("policy engine unreachable");
      }),
    ],
  ];
  for (const [name, approver] of throwing) {
    await t.step(name, async () => {
      const options = gate(ws, approver);
      const result = await callTool(options, "write", input, signal());
      assertEquals(result, {
        output: "tool call blocked: the approver failed: policy engine unreachable",
        isError: true,
        decision: {
          decision: "deny",
          reason: "the approver failed: policy engine unreachable",
          rule: "error",
        },
      });
      assertEquals(await Deno.readTextFile(ws.path("a.txt")), "before");
      assertEquals(options.audit.events.map((e) => [e.event, e.rule]), [["tool.denied", "error"]]);
    });
  }
  await t.step("a thrown non-Error is reported too", async () => {
    const options = gate(ws, { approve: () => Promise.reject("nope") });
    const result = await callTool(options, "write", input, signal());
    assertEquals(result.output, "tool call blocked: the approver failed: nope");
  });
});

Deno.test("gate: ask without an operator denies with the spec's reason", async () => {
  await using ws = await tmpWorkspace();
  const options = gate(ws, { ask: [{ tool: "bash" }] });
  const result = await callTool(
    options,
    "bash",
    { command: `touch ${ws.path("marker")}` },
    signal(),
  );
  assertEquals(result.output, `tool call blocked: ${NO_OPERATOR_REASON}`);
  assertEquals(await Deno.stat(ws.path("marker")).then(() => true, () => false), false);
  assertEquals(options.audit.events.map((e) => [e.event, e.rule, e.reason]), [
    ["tool.denied", "ask[0]", NO_OPERATOR_REASON],
  ]);
});

Deno.test("gate: ask goes to the operator", async (t) => {
  await using ws = await tmpWorkspace();
  await t.step("the operator allows: the call runs", async () => {
    const seen: string[] = [];
    const options = gate(ws, { ask: [{ tool: "bash" }] }, {
      operator: (request, decision) => {
        seen.push(`${request.tool} ${decision.rule} ${request.canonical}`);
        return Promise.resolve(true);
      },
    });
    const command = `touch ${ws.path("allowed")}`;
    const result = await callTool(options, "bash", { command }, signal());
    assertEquals(result.isError, false);
    assertEquals(seen, [`bash ask[0] ${JSON.stringify({ command })}`]);
    assertEquals((await Deno.stat(ws.path("allowed"))).isFile, true);
    assertEquals(options.audit.events.map((e) => e.event), ["tool.execute", "tool.done"]);
  });
  await t.step("the operator denies with a reason: blocked with it", async () => {
    const options = gate(ws, { ask: [{ tool: "bash" }] }, {
      operator: () => Promise.resolve("denied by the operator: not now"),
    });
    const result = await callTool(
      options,
      "bash",
      { command: `touch ${ws.path("denied")}` },
      signal(),
    );
    assertEquals(result.output, "tool call blocked: denied by the operator: not now");
    assertEquals(await Deno.stat(ws.path("denied")).then(() => true, () => false), false);
    assertEquals(options.audit.events.map((e) => e.event), ["tool.denied"]);
  });
  await t.step("an operator that throws denies", async () => {
    const options = gate(ws, { ask: [{ tool: "bash" }] }, {
      operator: () => Promise.reject(new Error("terminal closed")),
    });
    const result = await callTool(
      options,
      "bash",
      { command: `touch ${ws.path("thrown")}` },
      signal(),
    );
    assertEquals(result.output, "tool call blocked: the approver failed: terminal closed");
    assertEquals(await Deno.stat(ws.path("thrown")).then(() => true, () => false), false);
  });
  await t.step("allow and deny never reach the operator", async () => {
    const options = gate(ws, READ_ONLY, {
      operator: () => Promise.reject(new Error("must not be asked")),
    });
    assertEquals((await callTool(options, "bash", { command: "ls" }, signal())).isError, false);
    assertEquals(
      (await callTool(options, "write", { path: ws.path("x"), content: "" }, signal())).output,
      "tool call blocked: this workspace is read-only",
    );
  });
});

Deno.test("gate: the approver gets the request and the signal", async () => {
  await using ws = await tmpWorkspace();
  const controller = new AbortController();
  const seen: unknown[] = [];
  const options = gate(
    ws,
    createFunctionApprover((request, s) => {
      seen.push(request, s === controller.signal);
      return { decision: "deny", reason: "external engine says no", rule: "hook" };
    }),
    { sessionId: "abc" },
  );
  const result = await callTool(
    options,
    "read",
    JSON.parse('{"path":"\\u002fetc"}'),
    controller.signal,
  );
  assertEquals(result.output, "tool call blocked: external engine says no");
  assertEquals(seen, [
    { tool: "read", input: { path: "/etc" }, canonical: '{"path":"/etc"}', sessionId: "abc" },
    true,
  ]);
});

Deno.test("gate: a deny without a reason still says why", async () => {
  await using ws = await tmpWorkspace();
  const options = gate(ws, createFunctionApprover(() => ({ decision: "deny" })));
  const result = await callTool(options, "read", { path: ws.path("a") }, signal());
  assertEquals(result.output, "tool call blocked: denied by policy");
});

Deno.test("gate: with the audit file, the trail chains and holds no secrets", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "x" } });
  const path = join(ws.outside, "state", "audit.jsonl");
  const options = {
    ...gate(ws, READ_ONLY),
    audit: createAuditFile(path, { secrets: ["super-secret-value"] }),
  };
  await callTool(options, "read", { path: ws.path("a.txt") }, signal());
  await callTool(
    options,
    "write",
    { path: ws.path("a.txt"), content: "super-secret-value" },
    signal(),
  );
  await callTool(options, "bash", { command: "echo super-secret-value" }, signal());
  const text = await Deno.readTextFile(path);
  assertEquals(await verifyChain(text), undefined);
  assertEquals(
    text.trimEnd().split("\n").map((l) => JSON.parse(l).event),
    ["tool.execute", "tool.done", "tool.denied", "tool.denied"],
  );
  assert(!text.includes("super-secret-value"), text);
});
