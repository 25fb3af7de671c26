/**
 * Runtime rows `calls`: 10,000 `read` calls of a small file through the gate (the approver,
 * then the tool worker) in one process, one at a time and 8 in flight, against the read tool
 * called in-process; with a per-layer breakdown of one call.
 *
 * @module
 */

import { join } from "node:path";
import { callTool, type GateOptions } from "../../agent/tool_host.ts";
import { canonicalJson, createAuditFile } from "../../approver/mod.ts";
import {
  createReadTool,
  createWorkerHost,
  DEFAULT_LIMITS,
  scrubEnvironment,
} from "../../tools/mod.ts";
import {
  concurrent,
  expectOk,
  fastest,
  type Fixture,
  gateFor,
  makeRow,
  PATTERN_POLICY,
  type Section,
  sequential,
  type Settings,
} from "./_common.ts";
import { type Breakdown, round, type Row } from "./table.ts";

/** A worker that answers every call at once: the postMessage round trip alone. */
const ECHO_WORKER = `self.onmessage = (e) => self.postMessage({ type: "result", id: e.data.id, ` +
  `output: "ok", isError: false });`;

function startEchoWorker(): { call: (input: unknown) => Promise<void>; close: () => void } {
  const worker = new Worker(`data:application/javascript,${encodeURIComponent(ECHO_WORKER)}`, {
    type: "module",
    deno: { permissions: "none" },
  } as WorkerOptions);
  const pending = new Map<number, () => void>();
  let next = 0;
  worker.onmessage = (event: MessageEvent<{ id: number }>) => {
    pending.get(event.data.id)?.();
    pending.delete(event.data.id);
  };
  return {
    call: (input) =>
      new Promise<void>((resolve) => {
        const id = ++next;
        pending.set(id, resolve);
        worker.postMessage({ type: "call", id, name: "read", input });
      }),
    close: () => worker.terminate(),
  };
}

const IN_PROCESS_ROW = "read tool in-process: parse + execute (the comparison)";
const GATE_ROW = "gate, pattern policy (the row's figure)";
const IN_FLIGHT_ROW = "gate, pattern policy, 8 in flight (the second row's figure)";

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const n = settings.quick ? 200 : 10_000;
  const runs = settings.quick ? 1 : settings.runs;
  const input = { path: fx.small };
  const signal = new AbortController().signal;
  const env = scrubEnvironment(Deno.env.toObject());
  await using host = await createWorkerHost({
    workspace: fx.workspace,
    limits: DEFAULT_LIMITS,
    env,
  });
  const pattern = gateFor(host, PATTERN_POLICY);
  const allowAll = gateFor(host, { mode: "allow_all" });
  const audited: GateOptions = {
    ...pattern,
    audit: createAuditFile(join(fx.home, "audit.jsonl"), {
      secrets: Object.entries(Deno.env.toObject()).filter(([key]) => !(key in env))
        .map(([, value]) => value),
    }),
  };
  const tool = createReadTool();
  const context = { workspace: fx.workspace, limits: DEFAULT_LIMITS, env, signal };
  const echo = startEchoWorker();
  try {
    expectOk("read through the gate", await callTool(pattern, "read", input, signal), fx.smallText);
    const auditN = Math.min(n, 2000);
    const contenders: Array<[string, number, () => Promise<number>]> = [
      ["`Deno.readTextFile` of the file", n, sequential(n, () => Deno.readTextFile(fx.small))],
      [
        IN_PROCESS_ROW,
        n,
        sequential(n, () => tool.execute(tool.parseInput(input), context)),
      ],
      ["`canonicalJson(input)`", n, sequential(n, () => Promise.resolve(canonicalJson(input)))],
      [
        "approver alone (pattern policy)",
        n,
        sequential(n, () => pattern.approver.approve({ tool: "read", input }, signal)),
      ],
      ["postMessage round trip to an echo worker", n, sequential(n, () => echo.call(input))],
      [
        "worker host alone: postMessage + the read in the worker",
        n,
        sequential(n, () => host.call("read", input, signal)),
      ],
      [
        "gate, allow_all policy",
        n,
        sequential(n, () => callTool(allowAll, "read", input, signal)),
      ],
      [
        GATE_ROW,
        n,
        sequential(n, () => callTool(pattern, "read", input, signal)),
      ],
      [
        IN_FLIGHT_ROW,
        n,
        concurrent(n, 8, () => callTool(pattern, "read", input, signal)),
      ],
      [
        "gate, pattern policy, with the audit file (as `tool` and `mcp` run)",
        auditN,
        sequential(auditN, () => callTool(audited, "read", input, signal)),
      ],
    ];
    const best = await fastest(
      `${n} read calls`,
      runs,
      contenders.map(([, , contender]) => contender),
    );
    const perCall = contenders.map(([name, count], i) => ({
      name,
      value: round(best[i]! * 1000 / count, 1),
    }));
    const rate = (name: string) => {
      const i = contenders.findIndex(([n]) => n === name);
      return contenders[i]![1] / best[i]! * 1000;
    };
    const fields = {
      group: "calls" as const,
      unit: "calls/s",
      "comparison_name": "the read tool called in-process (parse + execute)",
      target: ">= 20000 calls/s",
    };
    const rows = [
      makeRow(
        {
          ...fields,
          id: "read_calls",
          name: `${n} \`read\` calls of a small file through the gate (pattern approver, ` +
            "tool worker), one at a time",
          note: `sequential calls in one process, best of ${runs}; the file is ` +
            `${fx.smallText.length} bytes; no audit sink (see the breakdown for its cost)`,
        },
        rate(GATE_ROW),
        rate(IN_PROCESS_ROW),
        (ours) => ours >= 20_000,
        false,
      ),
      makeRow(
        {
          ...fields,
          id: "read_calls_in_flight",
          name: `${n} \`read\` calls through the gate, 8 in flight (as the agent runs ` +
            "consecutive read-only calls)",
          note: `best of ${runs}; the comparison is the sequential in-process figure`,
        },
        rate(IN_FLIGHT_ROW),
        rate(IN_PROCESS_ROW),
        (ours) => ours >= 20_000,
        false,
      ),
    ];
    const breakdown: Breakdown = {
      title: "read through the gate, per call (µs)",
      unit: "µs/call",
      rows: perCall,
      note: "Layers nest: the gate is canonical JSON + the approver + the worker host; the " +
        "worker host is a postMessage round trip + the read tool inside the worker.",
    };
    return [rows, [breakdown]];
  } finally {
    echo.close();
  }
}

/** The per-call rows. */
export const readCalls: Section = {
  group: "calls",
  ids: ["read_calls", "read_calls_in_flight"],
  run: measure,
};
