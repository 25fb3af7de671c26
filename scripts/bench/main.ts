// deno-lint-ignore-file no-console
/**
 * `deno task bench`: every benchmark, each suite (a script of this folder) in a fresh `deno`
 * process so one suite's heap, caches and threads cannot colour the other's figures:
 *
 * 1. grep against ripgrep (`grep.ts`): `bench/results.md`, `bench/results.json`;
 * 2. the runtime rows (`runtime.ts`: cold start, per-call cost, tool calls beside the best
 *    peer and beside pi, bash, memory, agent overhead, MCP, live and whole-process grep on a
 *    seeded tree): `bench/runtime.md`, `bench/runtime.json`;
 * 3. bash under the overlay against the mirror, bare bwrap and bare sh in 10k- and 100k-file
 *    git repositories (`overlay.ts`): `bench/overlay.md`, `bench/overlay.json`;
 * 4. start-up through the npm package's `rousseau` bin beside `deno task cli` (`npm.ts`,
 *    packs and installs the package first): `bench/npm.md`, `bench/npm.json`.
 *
 * The grep suite runs first, so the memory rows find its cached 1 GiB tree under `.bench/`.
 * `undo.ts` (what undo costs a call on a large tree) is not a suite of this run: run it on its
 * own, `deno run -A scripts/bench/undo.ts`.
 *
 * Options: `--quick`, `--runs N` (both passed to each suite), `--only ROW[,ROW]` (`grep`, `overlay`, `npm`, or
 * a runtime group or row id such as `cold`, `calls`, `mcp_sequential`; repeatable), `--out
 * DIR` (default `bench/`), `--dir DIR` (tree cache and pi's install, default `.bench/`),
 * `--seed N` (the runtime suite's generated grep tree; picked at random and printed when
 * absent), `--no-peers` (the runtime suite's peer rows do not install and measure pi).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { GREP_V8_FLAGS } from "../../tools/grep.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Runs `script` with `args` in a fresh process; throws when it fails. */
async function suite(script: string, args: readonly string[]): Promise<void> {
  console.error(`bench: ${script} ${args.join(" ")}`);
  const status = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      // The grep suite runs grep in its own process: with the V8 flags the CLI's process has, so it
      // measures the engine users get (tools/grep.ts).
      `--v8-flags=${GREP_V8_FLAGS}`,
      "--config",
      join(REPO, "deno.json"),
      join(REPO, "scripts", "bench", script),
      ...args,
    ],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) throw new Error(`bench: ${script} exited ${status.code}`);
}

/** Runs the selected suites. */
export async function main(args: readonly string[] = Deno.args): Promise<void> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      quick: { type: "boolean", default: false },
      runs: { type: "string" },
      only: { type: "string", multiple: true, default: [] },
      out: { type: "string" },
      dir: { type: "string" },
      seed: { type: "string" },
      "no-peers": { type: "boolean", default: false },
    },
  });
  const only = values.only.flatMap((o) => o.split(",")).map((o) => o.trim()).filter(Boolean);
  const grep = only.length === 0 || only.includes("grep");
  const overlay = only.length === 0 || only.includes("overlay");
  const npm = only.length === 0 || only.includes("npm");
  const runtime = only.filter((o) => !["grep", "overlay", "npm"].includes(o));
  const common = [
    ...(values.quick ? ["--quick"] : []),
    ...(values.runs === undefined ? [] : ["--runs", values.runs]),
    ...(values.out === undefined ? [] : ["--out", values.out]),
    ...(values.dir === undefined ? [] : ["--dir", values.dir]),
  ];
  if (grep) await suite("grep.ts", common);
  if (only.length === 0 || runtime.length > 0) {
    await suite("runtime.ts", [
      ...common,
      ...(runtime.length > 0 ? ["--only", runtime.join(",")] : []),
      ...(values.seed === undefined ? [] : ["--seed", values.seed]),
      ...(values["no-peers"] ? ["--no-peers"] : []),
    ]);
  }
  if (overlay) await suite("overlay.ts", common);
  if (npm) await suite("npm.ts", common);
  await formatReports(values.out ?? join(REPO, "bench"));
}

/**
 * Formats the reports the suites wrote in `out` as `deno fmt` would: the committed copies in
 * `bench/` are checked by `deno fmt --check` (`deno task ok`), and some suites write plain tables.
 */
async function formatReports(out: string): Promise<void> {
  const reports: string[] = [];
  for await (const entry of Deno.readDir(out)) {
    if (entry.isFile && entry.name.endsWith(".md")) reports.push(join(out, entry.name));
  }
  if (reports.length === 0) return;
  const status = await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", "--config", join(REPO, "deno.json"), ...reports],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) throw new Error(`bench: deno fmt of ${out} exited ${status.code}`);
}

if (import.meta.main) await main();
