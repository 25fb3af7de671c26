// deno-lint-ignore-file no-console
/**
 * The runtime suite's runner: the rows, each our figure beside a comparison measured in the
 * same run, one file of this folder per group (named after each group below):
 *
 * - **cold** (`cold_start.ts`): `deno task cli tool read`, `deno task cli version` and `deno task cli --help`,
 *   start to exit, each against a `deno task` that runs a one-line hello script; and `main.ts
 *   tool read` against the floor (`_floor.ts`: the narrowed tool worker reading one file).
 * - **calls** (`per_call.ts`): 10,000 `read` calls through the gate (approver, then the tool worker) in one
 *   process, against the read tool called in-process; with a per-layer breakdown.
 * - **peer** (`peer_calls.ts`): one `read`, `edit`, `write`, `bash` (`sh test.sh`) and `grep`
 *   call as the model sees it (call sent to result back, median ms), through a live `rousseau
 *   mcp` and in `rousseau run` against a loopback model, beside the best peer's figures (pi 0.73,
 *   constants from issue 28); and `rousseau run` beside pi 0.73.1 itself (`_pi.ts`: installed
 *   with npm into `--dir`, driven by the same loopback model in the same run), without a target.
 * - **bash** (`bash.ts`): `bash {"command":"true"}` through the gate, unsandboxed and under bwrap,
 *   against spawning `/bin/sh -c true` with `Deno.Command`.
 * - **memory** (`memory.ts`): peak RSS of a fresh process making one call (bash printing 1 GiB, read of a
 *   100 MiB file, grep over the grep suite's 1 GiB tree), against the same process making a
 *   trivial call.
 * - **agent** (`agent.ts`): a 50-iteration turn (49 cheap tool calls and a final text) against an
 *   instant provider, in-process and over loopback HTTP, time per iteration without tool
 *   time, against the same provider answering the same 50 requests on its own.
 * - **mcp** (`mcp.ts`): `tools/call` round trips over stdio with the SDK client against `rousseau mcp`,
 *   sequential and 8 in flight, against a minimal SDK server answering an echo tool.
 * - **live** (`live_grep.ts`): grep through a live `rousseau mcp`, and `tool grep` as a whole
 *   process, against `rg -j1` as a whole process, on a tree generated from a random seed (over
 *   1 GB unless `--quick`) and on `/usr/include`.
 *
 * Each figure is the best of `--runs` runs after a warm-up round; a row's contenders run
 * interleaved, so machine noise hits them alike. A row's ratio is our cost over the
 * comparison's (time, bytes, or inverse throughput): above 1.00x we are slower or bigger.
 *
 * Writes a markdown table (`table.ts`) to stdout and `bench/runtime.md`, and `bench/runtime.json`.
 *
 * Options: `--runs N` (default 5; cold start does 2N), `--quick` (tiny sizes and one run,
 * for the smoke test), `--only ROW[,ROW]` (a group above or a row id; repeatable), `--out
 * DIR` (default `bench/`), `--dir DIR` (tree cache and pi's install, default `.bench/`),
 * `--seed N` (the live rows' generated tree; picked at random when absent, printed on stderr
 * and in the notes), `--no-peers` (pi is neither installed nor measured; its rows say so).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { createFixture, REPO, type Section, type Settings } from "./_common.ts";
import { agent } from "./agent.ts";
import { bashCalls } from "./bash.ts";
import { coldStart } from "./cold_start.ts";
import { liveGrep } from "./live_grep.ts";
import { mcp } from "./mcp.ts";
import { memory } from "./memory.ts";
import { peerCalls } from "./peer_calls.ts";
import { readCalls } from "./per_call.ts";
import { type Breakdown, log, report, type Row } from "./table.ts";

/** The row families in report order; `--only` takes their groups or row ids. */
const SECTIONS: readonly Section[] = [
  coldStart,
  readCalls,
  peerCalls,
  bashCalls,
  memory,
  agent,
  mcp,
  liveGrep,
];

function selection(only: readonly string[]): Map<Section, Set<string>> {
  const wanted = new Map<Section, Set<string>>();
  const names = only.flatMap((o) => o.split(",")).map((o) => o.trim()).filter(Boolean);
  if (names.length === 0) {
    for (const section of SECTIONS) wanted.set(section, new Set(section.ids));
    return wanted;
  }
  for (const name of names) {
    const section = SECTIONS.find((s) => s.group === name || s.ids.includes(name));
    if (section === undefined) {
      throw new Error(
        `bench: unknown row ${JSON.stringify(name)} (want one of ${
          [...SECTIONS.map((s) => s.group), ...SECTIONS.flatMap((s) => s.ids)].join(", ")
        })`,
      );
    }
    const ids = wanted.get(section) ?? new Set<string>();
    for (const id of name === section.group ? section.ids : [name]) ids.add(id);
    wanted.set(section, ids);
  }
  return wanted;
}

/** Runs the selected rows and writes the report; resolves to the rows. */
export async function main(args: readonly string[] = Deno.args): Promise<Row[]> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      quick: { type: "boolean", default: false },
      runs: { type: "string" },
      only: { type: "string", multiple: true, default: [] },
      out: { type: "string", default: join(REPO, "bench") },
      dir: { type: "string", default: join(REPO, ".bench") },
      seed: { type: "string" },
      "no-peers": { type: "boolean", default: false },
    },
  });
  const runs = values.runs === undefined ? (values.quick ? 1 : 5) : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`bench: --runs: not a positive integer: ${values.runs}`);
  }
  const seed = values.seed === undefined
    ? crypto.getRandomValues(new Uint32Array(1))[0]! >>> 1
    : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new Error(`bench: --seed: not a non-negative integer: ${values.seed}`);
  }
  log(`bench: seed ${seed} (--seed ${seed} reproduces the generated tree)`);
  const settings: Settings = {
    quick: values.quick,
    runs,
    dir: values.dir,
    seed,
    peers: !values["no-peers"],
  };
  const wanted = selection(values.only);
  const rows: Row[] = [];
  const breakdowns: Breakdown[] = [];
  {
    await using fx = await createFixture();
    for (const [section, ids] of wanted) {
      log(`bench: ${section.group}`);
      const [sectionRows, sectionBreakdowns] = await section.run(fx, settings);
      rows.push(...sectionRows.filter((r) => ids.has(r.id)));
      breakdowns.push(...sectionBreakdowns);
    }
  }
  const meta = {
    command: ["deno task bench", ...args].join(" "),
    date: new Date().toISOString().slice(0, 10),
    deno: `deno ${Deno.version.deno}`,
    cpus: navigator.hardwareConcurrency,
    runs,
    quick: values.quick,
    seed,
  };
  const markdown = report(rows, breakdowns, meta);
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(join(values.out, "runtime.md"), markdown);
  await Deno.writeTextFile(
    join(values.out, "runtime.json"),
    JSON.stringify({ ...meta, rows, breakdowns }, null, 2) + "\n",
  );
  console.log(markdown);
  return rows;
}

if (import.meta.main) await main();
