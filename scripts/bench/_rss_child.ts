/**
 * Child process of the memory rows (`memory.ts`): builds the gate the way the CLI
 * does (the permission-scoped tool worker and a pattern approver), makes one call through
 * it, and prints the process's peak resident set (`VmHWM` of `/proc/self/status`, which
 * covers the worker thread too) as one JSON line. A fresh process per call keeps the
 * benchmark's own allocations out of the figure.
 *
 * Usage: `deno run -A --config deno.json scripts/bench/_rss_child.ts <root> <tool> <json input>`
 *
 * @module
 */

import { callTool } from "../../agent/tool_host.ts";
import { createApprover } from "../../approver/mod.ts";
import { createWorkerHost, createWorkspace, DEFAULT_LIMITS, resolveReal } from "../../tools/mod.ts";

/** What the child prints. */
export interface RssReport {
  /** Peak resident set of the whole process, KiB. */
  readonly "hwm_kib": number;
  /** Resident set at the end, KiB. */
  readonly "rss_kib": number;
  /** Wall time of the call, ms. */
  readonly ms: number;
  /** Length of the returned text. */
  readonly "output_chars": number;
  readonly "is_error": boolean;
  /** The first characters of the output, to spot a failed call. */
  readonly head: string;
}

/** A `/proc/self/status` field in KiB. */
function statusKib(field: string): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const match = status.match(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m"));
  if (match === null) throw new Error(`bench: no ${field} in /proc/self/status`);
  return Number(match[1]);
}

async function main(): Promise<void> {
  const [root, tool, json] = Deno.args;
  if (root === undefined || tool === undefined || json === undefined) {
    throw new TypeError("usage: _rss_child.ts <root> <tool> <json input>");
  }
  const workspace = await createWorkspace([root]);
  await using host = await createWorkerHost({
    workspace,
    // A generous timeout: printing 1 GiB takes a while on a busy machine.
    limits: { ...DEFAULT_LIMITS, bashTimeoutMs: 600_000 },
    env: { PATH: "/usr/bin:/bin" },
  });
  const gate = {
    registry: host.registry,
    host,
    approver: createApprover(
      { mode: "pattern", allow: [{ tool: "read" }, { tool: "grep" }, { tool: "bash" }] },
      { resolvePath: resolveReal },
    ),
    source: "cli",
  };
  const started = performance.now();
  const result = await callTool(gate, tool, JSON.parse(json), new AbortController().signal);
  const ms = performance.now() - started;
  const report: RssReport = {
    "hwm_kib": statusKib("VmHWM"),
    "rss_kib": statusKib("VmRSS"),
    ms,
    "output_chars": result.output.length,
    "is_error": result.isError,
    head: result.output.slice(0, 200),
  };
  await Deno.stdout.write(new TextEncoder().encode(JSON.stringify(report) + "\n"));
}

if (import.meta.main) await main();
