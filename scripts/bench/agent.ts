/**
 * Runtime rows `agent`: a 50-iteration turn (49 cheap tool calls and a final text) against an
 * instant provider, in-process and over loopback HTTP, time per iteration without tool time,
 * against the same provider answering the same 50 requests on its own.
 *
 * @module
 */

import { runTurn, toolSpecs } from "../../agent/loop.ts";
import type { GateOptions } from "../../agent/tool_host.ts";
import { createAnthropicProvider } from "../../providers/anthropic.ts";
import type { Message, Provider } from "../../providers/types.ts";
import { createWorkerHost, DEFAULT_LIMITS } from "../../tools/mod.ts";
import { startFakeAnthropic, type Step } from "../../tests/_helpers/fake_providers.ts";
import { type Reply, scriptedProvider } from "../../tests/_helpers/scripted_provider.ts";
import {
  elapsed,
  fastest,
  type Fixture,
  gateFor,
  makeRow,
  PATTERN_POLICY,
  type Section,
  type Settings,
} from "./_common.ts";
import { type Breakdown, round, type Row } from "./table.ts";

const ITERATIONS = 50;

interface TurnFigures {
  /** Wall time of the turn minus the time spent in tool calls. */
  readonly loopMs: number;
  readonly toolMs: number;
  /** The history after the turn. */
  readonly messages: readonly Message[];
}

async function timedTurn(provider: Provider, gate: GateOptions): Promise<TurnFigures> {
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: "go" }] }];
  const started = new Map<string, number>();
  let toolMs = 0;
  const t0 = performance.now();
  const result = await runTurn(messages, {
    provider,
    gate,
    system: "bench",
    maxIterations: ITERATIONS,
    signal: new AbortController().signal,
    // Timed here rather than from durationMs, which is rounded to whole milliseconds.
    onEvent: (event) => {
      if (event.type === "tool_use") started.set(event.id, performance.now());
      else if (event.type === "tool_result") {
        toolMs += performance.now() - started.get(event.toolUseId)!;
      }
    },
  });
  const total = performance.now() - t0;
  if (result.subtype !== "success" || result.iterations !== ITERATIONS) {
    throw new Error(
      `bench: the turn ended ${result.subtype} after ${result.iterations}: ${result.result}`,
    );
  }
  return { loopMs: total - toolMs, toolMs, messages };
}

/** The same requests the turn made, answered by the provider with no loop around it. */
async function providerAlone(
  provider: Provider,
  gate: GateOptions,
  history: readonly Message[],
): Promise<number> {
  const tools = toolSpecs(gate);
  const signal = new AbortController().signal;
  return await elapsed(async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      const messages = history.slice(0, 2 * i + 1);
      for await (const _ of provider.complete({ system: "bench", messages, tools }, signal)) {
        // drained
      }
    }
  });
}

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const runs = settings.quick ? 1 : settings.runs;
  await using host = await createWorkerHost({
    workspace: fx.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
  });
  const gate = gateFor(host, PATTERN_POLICY);
  const input = { path: fx.small };
  const replies = (): Reply[] => [
    ...Array.from({ length: ITERATIONS - 1 }, () => ({ tools: [{ name: "read", input }] })),
    { text: "Done: read the file 49 times." },
  ];
  const steps = (): Step[] => [
    ...Array.from({ length: ITERATIONS - 1 }, () => ({ tools: [{ name: "read", input }] })),
    { text: "Done: read the file 49 times." },
  ];
  const anthropic = (url: string) =>
    createAnthropicProvider({
      apiKey: "bench",
      model: "claude-fake",
      maxTokens: 1024,
      baseUrl: url,
    });
  let history: readonly Message[] = [];
  const tool = { scripted: Infinity, http: Infinity };
  const turnWith = (kind: "scripted" | "http") => async () => {
    await using server = kind === "http" ? startFakeAnthropic(steps()) : undefined;
    const provider = server === undefined ? scriptedProvider(replies()) : anthropic(server.url);
    const figures = await timedTurn(provider, gate);
    history = figures.messages;
    tool[kind] = Math.min(tool[kind], figures.toolMs);
    return figures.loopMs;
  };
  const aloneWith = (kind: "scripted" | "http") => async () => {
    await using server = kind === "http" ? startFakeAnthropic(steps()) : undefined;
    const provider = server === undefined ? scriptedProvider(replies()) : anthropic(server.url);
    return await providerAlone(provider, gate, history);
  };
  const [scripted, scriptedAlone, http, httpAlone] = await fastest(
    `${ITERATIONS}-iteration turn`,
    runs,
    [turnWith("scripted"), aloneWith("scripted"), turnWith("http"), aloneWith("http")],
  );
  const per = (ms: number) => ms / ITERATIONS;
  const fields = {
    group: "agent" as const,
    unit: "ms/iteration",
    "comparison_name": "the same provider answering the same 50 requests, no loop",
    target: "<= 2 ms",
  };
  const met = (ours: number) => ours <= 2;
  const rows = [
    makeRow(
      {
        ...fields,
        id: "agent_scripted",
        name: "agent turn, 50 iterations, in-process scripted provider, excluding tool time",
        note: "tests/_helpers/scripted_provider.ts (it clones each request, which the " +
          `comparison pays too); best of ${runs}`,
      },
      per(scripted!),
      per(scriptedAlone!),
      met,
    ),
    makeRow(
      {
        ...fields,
        id: "agent_http",
        name: "agent turn, 50 iterations, fake Anthropic over loopback HTTP, excluding tool time",
        note: "the Anthropic provider (official SDK, streaming) against " +
          "tests/_helpers/fake_providers.ts in the same process, so the server's work is " +
          `counted on both sides; best of ${runs}`,
      },
      per(http!),
      per(httpAlone!),
      met,
    ),
  ];
  const breakdown: Breakdown = {
    title: "agent turn, per iteration (ms)",
    unit: "ms/iteration",
    rows: [
      { name: "scripted: provider alone", value: round(per(scriptedAlone!), 3) },
      {
        name: "scripted: loop excluding tools (the row's figure)",
        value: round(per(scripted!), 3),
      },
      { name: "scripted: the read call through the gate", value: round(per(tool.scripted), 3) },
      { name: "HTTP: provider alone", value: round(per(httpAlone!), 3) },
      { name: "HTTP: loop excluding tools (the row's figure)", value: round(per(http!), 3) },
      { name: "HTTP: the read call through the gate", value: round(per(tool.http), 3) },
    ],
    note: "The loop's own cost is its figure minus the provider's.",
  };
  return [rows, [breakdown]];
}

/** The agent-overhead rows. */
export const agent: Section = {
  group: "agent",
  ids: ["agent_scripted", "agent_http"],
  run: measure,
};
