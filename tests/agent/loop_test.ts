/**
 * The loop with a scripted in-process provider and the real built-in tools in a temp
 * workspace: results in call order, every failure fed back as an error result, read-only
 * calls run together, the budget, cancellation.
 */

import { budgetExhausted, runTurn, type TurnOptions } from "../../agent/loop.ts";
import type { AgentEvent } from "../../agent/types.ts";
import type { PolicyConfig } from "../../approver/mod.ts";
import { defineTool } from "../../mod.ts";
import type { Message, ToolResultBlock } from "../../providers/types.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { type Reply, scriptedProvider } from "../_helpers/scripted_provider.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { survivors, waitForProcess } from "../_helpers/processes.ts";
import { gateFor } from "../_helpers/gate.ts";

function user(text: string): Message {
  return { role: "user", content: [{ type: "text", text }] };
}

async function turn(
  ws: TmpWorkspace,
  replies: Reply[],
  options: Partial<TurnOptions> & { policy?: PolicyConfig } = {},
) {
  const provider = scriptedProvider(replies);
  const messages = [user("do the task")];
  const events: AgentEvent[] = [];
  const stored: Message[] = [];
  const result = await runTurn(messages, {
    provider,
    gate: options.gate ?? gateFor(ws, options.policy),
    system: "test",
    maxIterations: options.maxIterations ?? 32,
    signal: options.signal ?? new AbortController().signal,
    onEvent: (e) => events.push(e),
    onMessage: (m) => {
      stored.push(m);
    },
  });
  return { result, provider, messages, events, stored };
}

function results(message: Message | undefined): ToolResultBlock[] {
  return (message?.content ?? []).filter((b): b is ToolResultBlock => b.type === "tool_result");
}

Deno.test("loop: a multi-step task changes the file and ends with the final text", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "hello world\n" } });
  const path = ws.path("a.txt");
  const { result, messages, stored, provider } = await turn(ws, [
    { tools: [{ name: "grep", input: { pattern: "hello", path: ws.root } }] },
    { tools: [{ name: "read", input: { path } }] },
    { tools: [{ name: "edit", input: { path, "old_string": "world", "new_string": "there" } }] },
    { tools: [{ name: "bash", input: { command: `grep -c there ${path}` } }] },
    { text: "Changed world to there." },
  ]);
  assertEquals(result.subtype, "success");
  assertEquals(result.result, "Changed world to there.");
  assertEquals(result.iterations, 5);
  assertEquals(result.usage.inputTokens, 50);
  assertEquals(await Deno.readTextFile(path), "hello there\n");
  assertEquals(messages.length, 10); // prompt + 4 × (call, results) + answer
  assertEquals(stored, messages.slice(1));
  assertEquals(results(messages[8])[0]!.content, "1\n");
  // The provider saw every earlier result before the next step.
  assertStringIncludes(results(provider.requests[1]!.messages[2])[0]!.content, "a.txt:1:");
  // Tools are offered sorted by name.
  assertEquals(provider.requests[0]!.tools.map((t) => t.name), [
    "bash",
    "edit",
    "grep",
    "read",
    "write",
  ]);
});

Deno.test("loop: failures come back as error results and the model can retry", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "one\n" } });
  const path = ws.path("a.txt");
  const { result, messages } = await turn(ws, [
    {
      tools: [
        { name: "edit", input: { path, "old_string": "missing", "new_string": "x" } },
        { name: "frobnicate", input: {} },
        { name: "read", inputError: "invalid JSON: Unexpected end of JSON input" },
      ],
    },
    { tools: [{ name: "edit", input: { path, "old_string": "one", "new_string": "two" } }] },
    { text: "done" },
  ]);
  assertEquals(result.subtype, "success");
  const first = results(messages[2]);
  assertEquals(first.map((r) => r.isError), [true, true, true]);
  assertStringIncludes(first[0]!.content, "edit:");
  assertEquals(first[1]!.content, "unknown tool: frobnicate");
  assertEquals(
    first[2]!.content,
    "read: parse input: invalid JSON: Unexpected end of JSON input",
  );
  assertEquals(results(messages[4])[0]!.isError, false);
  assertEquals(await Deno.readTextFile(path), "two\n");
});

Deno.test("loop: a denial is fed back with its reason and listed", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "keep\n" } });
  const path = ws.path("a.txt");
  const { result, messages } = await turn(ws, [
    { tools: [{ name: "write", input: { path, content: "gone" } }] },
    { text: "I could not write." },
  ], {
    policy: { mode: "pattern", allow: [{ tool: "read" }], default: "deny", reason: "read only" },
  });
  assertEquals(results(messages[2])[0]!.content, "tool call blocked: read only");
  assertEquals(result.denials, [{
    tool: "write",
    input: { path, content: "gone" },
    reason: "read only",
    rule: "default",
  }]);
  assertEquals(await Deno.readTextFile(path), "keep\n");
});

Deno.test("loop: consecutive read-only calls run together, others alone in order", async () => {
  await using ws = await tmpWorkspace();
  const log: string[] = [];
  let inFlight = 0;
  let most = 0;
  const make = (name: string, readOnly: boolean) =>
    defineTool({
      name,
      description: name,
      inputSchema: { type: "object", properties: {} },
      readOnly,
      parseInput: (raw) => raw,
      async execute() {
        inFlight++;
        most = Math.max(most, inFlight);
        log.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        log.push(`end ${name}`);
        inFlight--;
        return name;
      },
    });
  const gate = gateFor(ws, { mode: "allow_all" }, [
    make("look_a", true),
    make("look_b", true),
    make("change", false),
  ]);
  const { messages } = await turn(ws, [
    {
      tools: [{ name: "look_a" }, { name: "look_b" }, { name: "change" }, { name: "look_a" }],
    },
    { text: "ok" },
  ], { gate });
  assertEquals(results(messages[2]).map((r) => r.content), [
    "look_a",
    "look_b",
    "change",
    "look_a",
  ]);
  assertEquals(most, 2);
  assertEquals(log.slice(0, 2), ["start look_a", "start look_b"]);
  assertEquals(log.slice(4, 6), ["start change", "end change"]);
});

Deno.test("loop: the iteration budget ends the turn with the exact error", async () => {
  await using ws = await tmpWorkspace();
  const again: Reply = { tools: [{ name: "read", input: { path: ws.root } }] };
  const { result } = await turn(ws, [again, again, again], { maxIterations: 3 });
  assertEquals(result.subtype, "error_max_iterations");
  assertEquals(result.result, budgetExhausted(3));
  assertEquals(result.result, "agent: iteration budget exhausted (3 iterations)");
  assertEquals(result.iterations, 3);
});

Deno.test("loop: a provider error ends the turn as an error with its message", async () => {
  await using ws = await tmpWorkspace();
  const { result } = await turn(ws, [{ error: new Error("anthropic: overloaded; status 529") }]);
  assertEquals(result.subtype, "error");
  assertEquals(result.result, "anthropic: overloaded; status 529");
});

Deno.test("loop: cancelling mid-tool kills the bash child and stores its result", async () => {
  await using ws = await tmpWorkspace();
  const marker = `loop-cancel-${crypto.randomUUID()}`;
  const controller = new AbortController();
  const pending = turn(ws, [
    { tools: [{ name: "bash", input: { command: `sleep 30; echo ${marker}` } }] },
    { text: "never" },
  ], { signal: controller.signal });
  // Wait until the child is running, then cancel.
  await waitForProcess(marker);
  controller.abort(new Error("interrupted by SIGINT"));
  const { result, messages } = await pending;
  assertEquals(result.subtype, "cancelled");
  assertEquals(await survivors(marker), 0);
  const last = results(messages.at(-1));
  assertEquals(last.length, 1);
  assert(last[0]!.isError);
  assertStringIncludes(last[0]!.content, "cancelled");
});

Deno.test("loop: cancelling while the model streams keeps what was streamed", async () => {
  await using ws = await tmpWorkspace();
  const controller = new AbortController();
  const pending = turn(ws, [{ hang: true }], { signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 10));
  controller.abort(new Error("deadline"));
  const { result, messages } = await pending;
  assertEquals(result.subtype, "cancelled");
  assertEquals(messages.length, 1);
});
