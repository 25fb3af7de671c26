/**
 * Runtime rows `mcp`: `tools/call` round trips over stdio with the SDK client against
 * `rousseau mcp`, sequential and 8 in flight, against a minimal SDK server answering an echo
 * tool. Also the stdio client the live-grep rows use.
 *
 * @module
 */

import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CLI,
  cliEnv,
  concurrent,
  CONFIG,
  fastest,
  type Fixture,
  makeRow,
  message,
  missingRow,
  REPO,
  type Section,
  sequential,
  type Settings,
} from "./_common.ts";
import { type Breakdown, log, type Row } from "./table.ts";

const ECHO_SERVER = join(REPO, "tests", "testdata", "mcp_echo_server.ts");

/** An SDK client connected to a server process over stdio. */
export interface Connected {
  readonly client: Client;
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `deno <args>` as an MCP server and connects the SDK client; throws with its stderr. */
export async function connect(args: string[], env: Record<string, string>): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args,
    env,
    cwd: REPO,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new Client({ name: "rousseau-bench", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => {});
    throw new Error(`${message(error)}${stderr === "" ? "" : `; stderr: ${stderr.slice(0, 500)}`}`);
  }
  return { client, stderr: () => stderr, close: () => client.close() };
}

/** The text of a `tools/call` result; throws on an error result. */
export function callText(result: unknown): string {
  const r = result as { content?: Array<{ type: string; text?: string }>; isError?: boolean };
  const text = (r.content ?? []).map((c) => c.text ?? "").join("");
  if (r.isError) throw new Error(`bench: tools/call failed: ${text.slice(0, 300)}`);
  return text;
}

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const n = settings.quick ? 20 : 2000;
  const runs = settings.quick ? 1 : settings.runs;
  const lanes = 8;
  const fields = {
    group: "mcp" as const,
    unit: "calls/s",
    "comparison_name": "a minimal SDK server answering an echo tool",
    target: ">= 1500 calls/s",
  };
  const sequentialFields = {
    ...fields,
    id: "mcp_sequential",
    name: "MCP `tools/call` read of a small file over stdio, sequential",
  };
  const flightFields = {
    ...fields,
    id: "mcp_in_flight",
    name: `MCP \`tools/call\` read of a small file over stdio, ${lanes} in flight`,
  };
  const env = cliEnv(fx);
  let ours: Connected | undefined;
  let echo: Connected | undefined;
  try {
    try {
      ours = await connect([...CLI, "--workspace", fx.root, "mcp"], env);
      const text = callText(
        await ours.client.callTool({ name: "read", arguments: { path: fx.small } }),
      );
      if (text !== fx.smallText) {
        throw new Error(`bench: read returned ${JSON.stringify(text.slice(0, 100))}`);
      }
    } catch (error) {
      const why = `rousseau mcp did not answer: ${message(error)}`;
      log(`bench: ${why}`);
      return [[missingRow(sequentialFields, why), missingRow(flightFields, why)], []];
    }
    echo = await connect(["run", "--quiet", "--config", CONFIG, ECHO_SERVER], env);
    const read = (c: Connected) => async () => {
      callText(await c.client.callTool({ name: "read", arguments: { path: fx.small } }));
    };
    const echoed = (c: Connected) => async () => {
      callText(await c.client.callTool({ name: "echo", arguments: { text: fx.smallText } }));
    };
    const [oSeq, eSeq, oPar, ePar] = await fastest(`${n} MCP calls`, runs, [
      sequential(n, read(ours)),
      sequential(n, echoed(echo)),
      concurrent(n, lanes, read(ours)),
      concurrent(n, lanes, echoed(echo)),
    ]);
    const rate = (ms: number) => n / ms * 1000;
    const met = (r: number) => r >= 1500;
    const note = `${n} calls, best of ${runs}; \`rousseau mcp\` runs every call through the ` +
      "pattern approver, the tool worker and the audit file; the echo server replies with " +
      `the same ${fx.smallText.length} characters`;
    return [[
      makeRow({ ...sequentialFields, note }, rate(oSeq!), rate(eSeq!), met, false),
      makeRow({ ...flightFields, note }, rate(oPar!), rate(ePar!), met, false),
    ], []];
  } finally {
    await ours?.close().catch(() => {});
    await echo?.close().catch(() => {});
  }
}

/** The MCP throughput rows. */
export const mcp: Section = {
  group: "mcp",
  ids: ["mcp_sequential", "mcp_in_flight"],
  run: measure,
};
