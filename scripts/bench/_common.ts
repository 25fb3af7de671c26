/**
 * What every row family of the runtime suite shares: the CLI's command line, the fixture
 * (a workspace with one small file, private config homes), the contender timing that runs a
 * row's contenders interleaved, the row constructors, and a series' agent process (`rousseau
 * run`, pi): its loopback model's timed script, the reading of its output and its ending.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { GateOptions } from "../../agent/tool_host.ts";
import { createApprover, type PolicyConfig } from "../../approver/mod.ts";
import {
  createWorkspace,
  Registry,
  resolveReal,
  type ToolHost,
  type Workspace,
} from "../../tools/mod.ts";
import { GREP_V8_FLAGS } from "../../tools/grep.ts";
import type { Step } from "../../tests/_helpers/fake_providers.ts";
import { type Breakdown, type Group, log, round, type Row } from "./table.ts";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const CONFIG = join(REPO, "deno.json");
const MAIN = join(REPO, "main.ts");
/** `deno run` arguments of the CLI as `deno task cli` runs it, without the task runner. */
export const CLI: readonly string[] = [
  "run",
  "--quiet",
  "--config",
  CONFIG,
  "-P=cli",
  "--no-prompt",
  `--v8-flags=${GREP_V8_FLAGS}`,
  MAIN,
];

export interface Settings {
  readonly quick: boolean;
  readonly runs: number;
  /** The grep suite's tree cache (`--dir`). */
  readonly dir: string;
  /** The seed of the generated grep tree of the live rows (`--seed`, else picked at random). */
  readonly seed: number;
  /** Whether peers (pi) are installed into `dir` and measured beside us (not `--no-peers`). */
  readonly peers: boolean;
}

/** The temp files every row shares, removed on dispose. */
export interface Fixture extends AsyncDisposable {
  /** The workspace root (realpath'd). */
  readonly root: string;
  readonly workspace: Workspace;
  /** A small text file inside the root. */
  readonly small: string;
  /** Its contents. */
  readonly smallText: string;
  /** Config and data homes for CLI processes, so no developer config is read. */
  readonly home: string;
}

/** One row family: its group, its row ids in report order, and what measures them. */
export interface Section {
  readonly group: Group;
  readonly ids: readonly string[];
  /** Measures the family's rows (every id, in order) and its breakdowns. */
  run(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]>;
}

/** A fresh fixture in a temp directory. */
export async function createFixture(): Promise<Fixture> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-bench-" }));
  const ws = join(root, "ws");
  const home = join(root, "home");
  await Deno.mkdir(ws);
  await Deno.mkdir(home);
  const small = join(ws, "small.txt");
  const smallText = Array.from({ length: 20 }, (_, i) => `line ${i + 1} of a small text file\n`)
    .join("");
  await Deno.writeTextFile(small, smallText);
  return {
    root: ws,
    workspace: await createWorkspace([ws]),
    small,
    smallText,
    home,
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** Environment of CLI processes: ours, minus `INIT_CWD`, with private config and data homes. */
export function cliEnv(fx: Fixture): Record<string, string> {
  const { INIT_CWD: _, ...env } = Deno.env.toObject();
  return {
    ...env,
    NO_COLOR: "1",
    XDG_CONFIG_HOME: join(fx.home, "config"),
    XDG_DATA_HOME: join(fx.home, "data"),
  };
}

/** Wall time of `fn`, ms. */
export async function elapsed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** A contender that makes `n` calls one after another; resolves to their total ms. */
export function sequential(n: number, call: () => Promise<unknown>): () => Promise<number> {
  return () =>
    elapsed(async () => {
      for (let i = 0; i < n; i++) await call();
    });
}

/** A contender that makes `n` calls with `lanes` in flight; resolves to their total ms. */
export function concurrent(
  n: number,
  lanes: number,
  call: () => Promise<unknown>,
): () => Promise<number> {
  return () =>
    elapsed(async () => {
      let next = 0;
      const lane = async () => {
        while (next++ < n) await call();
      };
      await Promise.all(Array.from({ length: lanes }, lane));
    });
}

/**
 * Runs every contender once per round, interleaved, for one warm-up round and `runs`
 * measured ones; returns each contender's lowest figure (a contender resolves to ms).
 */
export async function fastest(
  label: string,
  runs: number,
  contenders: ReadonlyArray<() => Promise<number>>,
): Promise<number[]> {
  const best = contenders.map(() => Infinity);
  for (let run = 0; run <= runs; run++) {
    log(`  ${label}: ${run === 0 ? "warm-up" : `run ${run}/${runs}`}`);
    for (const [i, contender] of contenders.entries()) {
      const ms = await contender();
      if (run > 0) best[i] = Math.min(best[i]!, ms);
    }
  }
  return best;
}

/** A row from our figure and the comparison's; `lowerIsBetter` says how to form the ratio. */
export function makeRow(
  fields: Omit<Row, "ratio" | "target_met" | "ours" | "comparison">,
  ours: number | null,
  comparison: number | null,
  met: (ours: number, ratio: number | null) => boolean | null,
  lowerIsBetter = true,
): Row {
  const valid = (n: number | null) => n !== null && Number.isFinite(n) && n > 0;
  const ratio = valid(ours) && valid(comparison)
    ? (lowerIsBetter ? ours! / comparison! : comparison! / ours!)
    : null;
  return {
    ...fields,
    ours: ours === null ? null : round(ours, 2),
    comparison: comparison === null ? null : round(comparison, 2),
    ratio: ratio === null ? null : round(ratio, 2),
    "target_met": valid(ours) ? met(ours!, ratio) : null,
  };
}

/** A row that could not be measured. */
export function missingRow(
  fields: Omit<Row, "ratio" | "target_met" | "ours" | "comparison" | "note">,
  why: string,
): Row {
  return {
    ...fields,
    ours: null,
    comparison: null,
    ratio: null,
    "target_met": null,
    note: why,
  };
}

/** The text of a thrown value. */
export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The gate the CLI builds around `host`: its registry, an approver of `policy`. */
export function gateFor(
  host: ToolHost & { registry: Registry },
  policy: PolicyConfig,
): GateOptions {
  return {
    registry: host.registry,
    host,
    approver: createApprover(policy, { resolvePath: resolveReal }),
    source: "cli",
  };
}

/** The default policy of `run` and `mcp`, with bash allowed too. */
export const PATTERN_POLICY: PolicyConfig = {
  mode: "pattern",
  allow: [{ tool: "read" }, { tool: "grep" }, { tool: "bash" }],
  default: "deny",
};

/** Throws when a call failed or (given `want`) returned other text. */
export function expectOk(
  what: string,
  result: { output: string; isError: boolean },
  want?: string,
): void {
  if (result.isError || (want !== undefined && result.output !== want)) {
    throw new Error(`bench: ${what} failed: ${result.output.slice(0, 300)}`);
  }
}

/** Lines of `stream` as they arrive, each with the time it was read. */
export async function* stampedLines(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<{ line: string; at: number }> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const at = performance.now();
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const line of lines) yield { line, at };
  }
  if (rest !== "") yield { line: rest, at: performance.now() };
}

/**
 * Ends a series' process cut short by an error: killed and reaped, its stderr read, so nothing
 * outlives the series when the error goes on.
 */
export async function endSeries(child: Deno.ChildProcess, stderr: Promise<string>): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
  await child.status;
  await stderr.catch(() => {});
}

/**
 * A loopback model's script for one series: `n` replies asking for one call of `tool` each
 * (the `i`th with `input(i)`), then a text answer; every request it receives is stamped.
 */
export interface TimedScript {
  readonly steps: Step[];
  /** How many requests the model has received so far. */
  requests(): number;
  /** Each call's ms as the model sees it: from one request it receives to the next. */
  gaps(): number[];
}

/** The script of a series of `n` calls of `tool` (see {@linkcode TimedScript}). */
export function timedScript(
  tool: string,
  n: number,
  input: (i: number) => unknown,
): TimedScript {
  const stamps: number[] = [];
  const steps: Step[] = [
    ...Array.from({ length: n }, (_, i): Step => () => {
      stamps.push(performance.now());
      return { tools: [{ name: tool, input: input(i) }] };
    }),
    () => {
      stamps.push(performance.now());
      return { text: "done" };
    },
  ];
  return {
    steps,
    requests: () => stamps.length,
    gaps: () => stamps.slice(1).map((t, i) => t - stamps[i]!),
  };
}
