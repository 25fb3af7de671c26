/**
 * Runtime rows `peer`: what one tool call costs the model (it sends the call, it gets the
 * result), median ms, for read, edit, write, bash (`sh test.sh`) and grep, through a live
 * `rousseau mcp` and through `rousseau run` against a loopback model, beside the best peer's
 * figure for the same call (a constant: see {@linkcode PEER}); and `rousseau run` beside pi
 * itself (`_pi.ts`), installed into the bench's cache dir and measured in the same run, its
 * series interleaved with ours in the same project against the same loopback model (rows
 * without a target: issue 28's targets are the constants; `--no-peers` skips pi).
 *
 * @module
 */

import { join } from "node:path";
import { startFakeAnthropic } from "../../tests/_helpers/fake_providers.ts";
import {
  CLI,
  cliEnv,
  endSeries,
  type Fixture,
  makeRow,
  message,
  missingRow,
  type Section,
  type Settings,
  stampedLines,
  timedScript,
} from "./_common.ts";
import { callText, connect, type Connected } from "./mcp.ts";
import { type Pi, PI_VERSION, piInput, piSeries, preparePi } from "./_pi.ts";
import { type Breakdown, log, round, type Row } from "./table.ts";

const TOOLS = ["read", "edit", "write", "bash", "grep"] as const;
type ToolName = typeof TOOLS[number];

/**
 * The best peer's per-call figures (ms), taken as constants: pi 0.73, measured side by side
 * with us in one run by the team, the same scripted 12-step loopback task (issue 28).
 */
export const PEER: Readonly<Record<ToolName, number>> = {
  read: 7.0,
  edit: 16.9,
  write: 8.4,
  bash: 40,
  grep: 48.1,
};
const PEER_SOURCE = "pi 0.73, measured side by side with us in one run by the team on the same " +
  "scripted 12-step loopback task (issue 28); a constant, not measured here";

const MODES = ["mcp", "run"] as const;
/** What a round runs per tool, in order: ours through `mcp`, ours in `run`, pi. */
const SERIES = [...MODES, "pi"] as const;
type Series = typeof SERIES[number];
const IDS = SERIES.flatMap((s) => TOOLS.map((t) => `peer_${s}_${t}`));

/** A small project: a file to read, one to edit, one to write, a test script, sources. */
interface Project {
  readonly root: string;
  /** The `i`th call's input (0-based); `reset` puts the files back before a series. */
  input(tool: ToolName, i: number): Record<string, string>;
  reset(): Promise<void>;
}

async function createProject(fx: Fixture): Promise<Project> {
  const root = join(fx.home, "project");
  await Deno.mkdir(join(root, "src"), { recursive: true });
  // Readable by the sandbox's unprivileged shell user too (bash runs as 65534 when root).
  await Deno.chmod(fx.home, 0o755);
  await Deno.chmod(join(fx.home, ".."), 0o755);
  for (let i = 0; i < 40; i++) {
    const lines = Array.from(
      { length: 60 },
      (_, j) => `export function step${i}_${j}(value: number): number { return value + ${j}; }`,
    );
    if (i % 8 === 0) lines.push(`export const request_handler${i} = () => "handled";`);
    await Deno.writeTextFile(join(root, "src", `m${i}.ts`), lines.join("\n") + "\n");
  }
  await Deno.writeTextFile(join(root, "notes.txt"), fx.smallText);
  await Deno.writeTextFile(
    join(root, "test.sh"),
    'for f in src/m1.ts src/m2.ts; do test -f "$f" || exit 1; done\necho "2 passed"\n',
  );
  const counter = join(root, "counter.ts");
  const reset = () => Deno.writeTextFile(counter, "let a = 1;\nexport const count = 0;\n");
  await reset();
  return {
    root,
    reset,
    input(tool, i) {
      switch (tool) {
        case "read":
          return { path: join(root, "notes.txt") };
        case "edit":
          return {
            path: counter,
            "old_string": `count = ${i};`,
            "new_string": `count = ${i + 1};`,
          };
        case "write":
          return { path: join(root, "out.txt"), content: `written by call ${i}\n${fx.smallText}` };
        case "bash":
          return { command: "sh test.sh" };
        case "grep":
          return { pattern: String.raw`request_handler\d+`, path: root };
      }
    },
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** `n` calls of `tool` over MCP, each timed by the SDK client (request sent to result back). */
async function mcpSeries(
  server: Connected,
  project: Project,
  tool: ToolName,
  n: number,
): Promise<number[]> {
  await project.reset();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const result = await server.client.callTool({ name: tool, arguments: project.input(tool, i) });
    times.push(performance.now() - started);
    callText(result);
  }
  return times;
}

/** Per-call times of one series in `rousseau run`. */
interface RunTimes {
  /** As the model sees a call: from one request it receives to the next. */
  readonly calls: number[];
  /** As `run` reports it: its `tool_use` line to its `tool_result` line (the gate, the tool). */
  readonly tools: number[];
}

/**
 * One `rousseau run --output stream-json` whose loopback model asks for `n` calls of `tool`,
 * then answers. Per call: the time between the fake server receiving one request and the next,
 * so a call spans the server streaming the tool_use reply, the SDK parsing it, the loop, the
 * gate and the tool, and the next request arriving with the result.
 */
async function runSeries(
  fx: Fixture,
  project: Project,
  tool: ToolName,
  n: number,
): Promise<RunTimes> {
  await project.reset();
  const script = timedScript(tool, n, (i) => project.input(tool, i));
  await using server = startFakeAnthropic(script.steps);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      ...CLI,
      "--workspace",
      project.root,
      "--approver",
      "allow_all",
      "--provider",
      "anthropic",
      "--model",
      "claude-fake",
      "--base-url",
      server.url,
      "run",
      "--output",
      "stream-json",
      "--max-iterations",
      `${n + 1}`,
      "go",
    ],
    cwd: project.root,
    env: { ...cliEnv(fx), ANTHROPIC_API_KEY: "bench" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const tools: number[] = [];
  let used: number | undefined;
  try {
    for await (const { line, at } of stampedLines(child.stdout)) {
      const event = JSON.parse(line) as { type: string; "is_error"?: boolean; output?: string };
      if (event.type === "tool_use") used = at;
      else if (event.type === "tool_result") {
        if (event.is_error) {
          throw new Error(`the ${tool} call failed: ${event.output?.slice(0, 300)}`);
        }
        tools.push(at - used!);
      }
    }
  } catch (error) {
    await endSeries(child, stderr);
    throw error;
  }
  const status = await child.status;
  if (status.code !== 0 || script.requests() !== n + 1 || tools.length !== n) {
    throw new Error(
      `rousseau run exited ${status.code} after ${script.requests()} model requests and ` +
        `${tools.length} tool results: ${(await stderr).slice(0, 400)}`,
    );
  }
  return { calls: script.gaps(), tools };
}

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const runs = settings.quick ? 1 : settings.runs;
  const n = settings.quick ? 5 : 30;
  const project = await createProject(fx);
  const fields = (series: Series, tool: ToolName) =>
    series === "pi"
      ? {
        id: `peer_pi_${tool}`,
        group: "peer" as const,
        name: `\`${tool}\` call in \`rousseau run\` beside pi ${PI_VERSION} in the same run, ` +
          "same loopback model, median",
        unit: "ms/call",
        "comparison_name": `pi ${PI_VERSION}'s \`${tool}\` call, measured in the same run ` +
          "(same project, same loopback model)",
        target: "-",
      }
      : {
        id: `peer_${series}_${tool}`,
        group: "peer" as const,
        name: series === "mcp"
          ? `\`${tool}\` call through a live \`rousseau mcp\`, median`
          : `\`${tool}\` call in \`rousseau run\` against a loopback model, median`,
        unit: "ms/call",
        "comparison_name": `the best peer's \`${tool}\` call (pi 0.73, issue 28; a constant)`,
        target: `<= 1.0x (${PEER[tool]} ms)`,
      };
  const samples = new Map<string, number[]>(IDS.map((id) => [id, []]));
  const inRun = new Map<ToolName, number[]>(TOOLS.map((t) => [t, []]));
  const failed = new Map<string, string>();
  let server: Connected | undefined;
  try {
    server = await connect(
      [...CLI, "--workspace", project.root, "--approver", "allow_all", "mcp"],
      cliEnv(fx),
    );
  } catch (error) {
    for (const t of TOOLS) failed.set(`peer_mcp_${t}`, `rousseau mcp: ${message(error)}`);
  }
  let pi: Pi | undefined;
  if (settings.peers) {
    try {
      pi = await preparePi(settings.dir, join(fx.home, "pi"));
    } catch (error) {
      for (const t of TOOLS) failed.set(`peer_pi_${t}`, `pi not measured: ${message(error)}`);
    }
  } else {
    for (const t of TOOLS) failed.set(`peer_pi_${t}`, "pi not measured: `--no-peers`");
  }
  try {
    // A warm-up round, then `runs` rounds; each round runs every series once, interleaved.
    for (let round = 0; round <= runs; round++) {
      log(`  per-call cost: ${round === 0 ? "warm-up" : `run ${round}/${runs}`}`);
      for (const tool of TOOLS) {
        for (const series of SERIES) {
          const id = `peer_${series}_${tool}`;
          if (failed.has(id)) continue;
          try {
            if (series === "mcp") {
              const times = await mcpSeries(server!, project, tool, n);
              if (round > 0) samples.get(id)!.push(...times);
            } else if (series === "pi") {
              const times = await piSeries(pi!, project, tool, n);
              if (round > 0) samples.get(id)!.push(...times);
            } else {
              const times = await runSeries(fx, project, tool, n);
              if (round > 0) {
                samples.get(id)!.push(...times.calls);
                inRun.get(tool)!.push(...times.tools);
              }
            }
          } catch (error) {
            failed.set(id, message(error));
            log(`bench: ${id}: ${message(error)}`);
          }
        }
      }
    }
  } finally {
    await server?.close().catch(() => {});
  }
  const shown = (tool: ToolName, series: Series = "run") =>
    JSON.stringify(
      series === "pi" ? piInput(tool, project.input(tool, 0)) : project.input(tool, 0),
      (key, value) => key === "content" ? `(${value.length} characters)` : value,
    ).replaceAll(project.root, "DIR");
  const figures = new Map<string, number>();
  for (const [id, times] of samples) {
    if (!failed.has(id) && times.length > 0) figures.set(id, median(times));
  }
  const besidePi = (tool: ToolName): Row => {
    const ran = failed.get(`peer_run_${tool}`);
    const why = failed.get(`peer_pi_${tool}`) ??
      (ran === undefined ? undefined : `rousseau run failed: ${ran}`);
    if (why !== undefined) return missingRow(fields("pi", tool), why);
    const ours = samples.get(`peer_run_${tool}`)!;
    const theirs = samples.get(`peer_pi_${tool}`)!;
    return makeRow(
      {
        ...fields("pi", tool),
        note: `medians of ${ours.length} calls each (${runs} series of ${n} after a warm-up ` +
          `series, pi's interleaved with ours), the same calls as \`peer_run_${tool}\`, pi's ` +
          `input \`${shown(tool, "pi")}\`; how pi is run: the breakdown below`,
      },
      median(ours),
      median(theirs),
      () => null,
    );
  };
  const rows = SERIES.flatMap((series) =>
    TOOLS.map((tool) => {
      if (series === "pi") return besidePi(tool);
      const id = `peer_${series}_${tool}`;
      const why = failed.get(id);
      if (why !== undefined) return missingRow(fields(series, tool), why);
      const times = samples.get(id)!;
      return makeRow(
        {
          ...fields(series, tool),
          note: `median of ${times.length} calls (${runs} series of ${n} after a warm-up ` +
            `series), input \`${shown(tool)}\`; how it is timed: the breakdown below`,
        },
        median(times),
        PEER[tool],
        (_, ratio) => ratio === null ? null : ratio <= 1,
      );
    })
  );
  const breakdown: Breakdown = {
    title: "one tool call as the model sees it, median (ms)",
    unit: "ms/call",
    rows: TOOLS.flatMap((tool) => [
      ...MODES.map((mode) => ({
        name: `\`${tool}\`, ${mode === "mcp" ? "live `rousseau mcp`" : "`rousseau run`"}`,
        value: figures.has(`peer_${mode}_${tool}`)
          ? round(figures.get(`peer_${mode}_${tool}`)!, 2)
          : null,
      })),
      {
        name: `\`${tool}\`, \`rousseau run\`: its \`tool_use\` line to its \`tool_result\` line`,
        value: inRun.get(tool)!.length === 0 ? null : round(median(inRun.get(tool)!), 2),
      },
      {
        name: `\`${tool}\`, pi ${PI_VERSION} in the same run`,
        value: figures.has(`peer_pi_${tool}`) ? round(figures.get(`peer_pi_${tool}`)!, 2) : null,
      },
      { name: `\`${tool}\`, the best peer (constant)`, value: PEER[tool] },
    ]),
    note: "MCP: each `tools/call` timed by the SDK client from request sent to result back, " +
      "against one long-lived `rousseau --approver allow_all mcp` (tool worker, audit file). " +
      "run: one `rousseau --approver allow_all run` per series against a loopback model " +
      "(tests/_helpers/fake_providers.ts, the Anthropic wire format) that asks for the calls " +
      "one by one, then answers; a call is timed by the model from one request it receives to " +
      "the next, so it spans streaming the tool_use reply, the SDK parsing it, the loop, the " +
      "gate, the tool and the next request (not a difference of turn times). `run` prints " +
      "its events (`--output stream-json`); the time from a `tool_use` line to its " +
      "`tool_result` line, as the bench reads them, is the gate and the tool inside `run`, " +
      "the rest of its figure is the model's reply and the loop. The workspace is " +
      "a small project (40 source files, a test script). pi: one `pi -p --mode json` " +
      `(${PI_VERSION}, npm, installed by the bench into \`<--dir>/peers/pi-${PI_VERSION}\`, run by ` +
      "the machine's Node.js) per series, with a private home whose `models.json` has one " +
      "provider, the same loopback model; it runs pi's read, bash, edit, write and grep in the " +
      "same project with the same inputs (edit in pi's shape), its series interleaved with ours " +
      "and timed the same way; bash runs unsandboxed in pi, under rousseau's default sandbox in ours. Every " +
      `result must not be an error, in both. The constant peer's figures: ${PEER_SOURCE}.`,
  };
  return [rows, [breakdown]];
}

/** The per-call rows beside the best peer. */
export const peerCalls: Section = {
  group: "peer",
  ids: IDS,
  run: measure,
};
