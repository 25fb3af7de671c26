// deno-lint-ignore-file no-console
/**
 * `deno run -A scripts/bench/overlay.ts [--files 10000,100000] [--runs N] [--quick]
 * [--out DIR] [--dir DIR]`: what a bash call costs under the overlay (its changes observed,
 * undo keeping only what changed) against the mirror (the roots bound read-write, undo
 * walking the tree before and after), a bare bwrap with the same arguments, and a bare
 * `/bin/sh -c`, side by side in one run, in git repositories of N small files (generated once
 * under DIR, default `.bench/overlay-<N>/`, kept between runs).
 *
 * Commands: `true`, `touch` of an existing file, and an npm-style writer (1,000 new files in a
 * new directory, removed again outside the measurement). Each figure is the median of N runs
 * (default 5) after one warm-up. One more row: the copy-up cost of appending a line to a
 * 100 MiB file (overlay against bare bwrap). Writes `bench/overlay.md` and `.json`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callTool, type GateOptions } from "../../agent/tool_host.ts";
import { createUndoRecorder, openUndoStore } from "../../agent/undo/mod.ts";
import { createApprover } from "../../approver/mod.ts";
import { resolveSandbox } from "../../cli/layers/sandbox.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkspace,
  DEFAULT_LIMITS,
  Registry,
  resolveReal,
  type Sandbox,
  sandboxArgs,
} from "../../tools/mod.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const { values } = parseArgs({
  args: Deno.args,
  options: {
    files: { type: "string", default: "10000,100000" },
    runs: { type: "string", default: "5" },
    quick: { type: "boolean", default: false },
    out: { type: "string", default: join(REPO, "bench") },
    dir: { type: "string", default: join(REPO, ".bench") },
  },
});
const sizes = values.quick ? [1000] : values.files.split(",").map(Number);
const runs = values.quick ? 1 : Number(values.runs);
const ENV = { PATH: "/usr/bin:/bin", HOME: "/nonexistent", LC_ALL: "C" };

function sh(cwd: string, command: string): void {
  const out = new Deno.Command("/bin/sh", {
    args: ["-c", command],
    cwd,
    stdout: "null",
    stderr: "piped",
  })
    .outputSync();
  if (!out.success) throw new Error(`${command}: ${new TextDecoder().decode(out.stderr)}`);
}

/** A git repository of `files` small files, 100 a directory, made once. */
function tree(files: number): string {
  const root = join(values.dir, `overlay-${files}`, "repo");
  const ready = join(values.dir, `overlay-${files}`, ".ready");
  try {
    Deno.statSync(ready);
    return root;
  } catch { /* make it */ }
  try {
    Deno.removeSync(join(values.dir, `overlay-${files}`), { recursive: true });
  } catch { /* not there */ }
  const line = "export function handler(value: number): number { return value * 2; }\n";
  for (let i = 0; i < files; i++) {
    const dir = join(root, "src", `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) Deno.mkdirSync(dir, { recursive: true });
    Deno.writeTextFileSync(join(dir, `f${i}.ts`), `// file ${i}\n` + line.repeat(7));
  }
  Deno.writeTextFileSync(join(root, "one-file"), "x\n");
  sh(root, "git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm start");
  Deno.writeTextFileSync(ready, "");
  return root;
}

const COMMANDS = [
  { key: "true", command: "true", cleanup: "" },
  { key: "touch", command: "touch one-file", cleanup: "" },
  {
    key: "write_1000",
    command: "mkdir -p out && i=0; while [ $i -lt 1000 ]; do echo $i > out/f$i; i=$((i+1)); done",
    cleanup: "rm -rf out",
  },
] as const;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** Median ms of `call` over `runs` runs after one warm-up; `cleanup` runs between, untimed. */
async function time(call: () => Promise<void>, cleanup: () => void): Promise<number> {
  await call();
  cleanup();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
    cleanup();
  }
  return Math.round(median(times) * 10) / 10;
}

async function gateFor(root: string, sandbox: Sandbox, observed: boolean, state: string) {
  const workspace = await createWorkspace([root]);
  const host = createInProcessHost(new Registry(createBuiltinTools()), {
    workspace,
    limits: DEFAULT_LIMITS,
    env: ENV,
    sandbox,
  });
  const store = openUndoStore(state);
  const undo = createUndoRecorder({ store, sessionId: "bench", roots: workspace.roots });
  undo.beginTurn(1, "bench");
  const gate: GateOptions = {
    registry: new Registry(createBuiltinTools()),
    host,
    approver: createApprover({ mode: "allow_all" }, {
      resolvePath: resolveReal,
      workspace,
      observed,
    }),
    source: "cli",
    undo,
    ...(observed ? { observed: new Set(["bash"]) } : {}),
  };
  return gate;
}

async function raw(program: string, args: string[], cwd: string): Promise<void> {
  const out = await new Deno.Command(program, {
    args,
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "null",
    clearEnv: true,
    env: ENV,
  }).output();
  if (!out.success) throw new Error(`${program} exited ${out.code}`);
}

interface Row {
  readonly tree: number;
  readonly command: string;
  readonly overlay: number;
  readonly mirror: number;
  readonly bwrap: number;
  readonly sh: number;
}

const state = await Deno.makeTempDir({ prefix: "rousseau-bench-overlay-" });
try {
  // The rows compare the overlay, the mirror and bare bwrap at one identity: the shell keeps
  // rousseau's uid here (the unprivileged shell's own cost is not what this bench measures).
  const report = await resolveSandbox({
    values: { tools: { bash: { unprivileged: "off" } } },
    stateDir: state,
    protectedPaths: [state],
  });
  if (report.sandbox?.overlay === undefined) {
    throw new Error(`bench: the overlay does not work here: ${report.overlayProblem}`);
  }
  const withOverlay = report.sandbox;
  const { overlay: _, seccomp: _filter, ...mirrorSandbox } = withOverlay;
  const rows: Row[] = [];
  for (const files of sizes) {
    console.error(`bench: tree of ${files} files`);
    const root = tree(files);
    const overlayGate = await gateFor(root, withOverlay, true, join(state, `o${files}`));
    const mirrorGate = await gateFor(root, mirrorSandbox, false, join(state, `m${files}`));
    const signal = new AbortController().signal;
    for (const { key, command, cleanup } of COMMANDS) {
      const clean = () => cleanup === "" ? undefined : sh(root, cleanup);
      const gated = (gate: GateOptions) => async () => {
        const result = await callTool(gate, "bash", { command }, signal);
        if (result.isError) throw new Error(`bench: ${command}: ${result.output}`);
      };
      const args = sandboxArgs(mirrorSandbox, [root], root, ["/bin/sh", "-c", command]);
      rows.push({
        tree: files,
        command: key,
        overlay: await time(gated(overlayGate), clean),
        mirror: await time(gated(mirrorGate), clean),
        bwrap: await time(() => raw(withOverlay.bwrap, args, root), clean),
        sh: await time(() => raw("/bin/sh", ["-c", command], root), clean),
      });
      console.error(`bench: ${JSON.stringify(rows.at(-1))}`);
    }
  }

  // Copy-up: appending one line to a large file copies it whole into the upper layer first.
  const big = tree(sizes[0]!);
  const bigFile = join(big, "big.bin");
  Deno.writeFileSync(bigFile, new Uint8Array(100 * 1024 * 1024));
  let copyUp: { overlay: number; bwrap: number };
  try {
    const gate = await gateFor(big, withOverlay, true, join(state, "big"));
    const signal = new AbortController().signal;
    const command = "echo x >> big.bin";
    const args = sandboxArgs(mirrorSandbox, [big], big, ["/bin/sh", "-c", command]);
    copyUp = {
      overlay: await time(async () => {
        const result = await callTool(gate, "bash", { command }, signal);
        if (result.isError) throw new Error(result.output);
      }, () => {}),
      bwrap: await time(() => raw(withOverlay.bwrap, args, big), () => {}),
    };
  } finally {
    Deno.removeSync(bigFile);
  }

  const ratio = (a: number, b: number) => b === 0 ? "–" : `${(a / b).toFixed(2)}×`;
  const table = [
    "| tree | command | overlay (ms) | mirror (ms) | bare bwrap (ms) | bare sh (ms) | overlay / bwrap | overlay / mirror |",
    "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map((r) =>
      `| ${
        r.tree.toLocaleString("en")
      } | \`${r.command}\` | ${r.overlay} | ${r.mirror} | ${r.bwrap} | ${r.sh} | ` +
      `${ratio(r.overlay, r.bwrap)} | ${ratio(r.overlay, r.mirror)} |`
    ),
  ].join("\n");
  const kernel = Deno.osRelease();
  const md = [
    "# bash under the overlay: per-call cost",
    "",
    `${new Date().toISOString().slice(0, 10)}, Deno ${Deno.version.deno}, Linux ${kernel}, ` +
    `median of ${runs} runs after one warm-up (\`deno run -A scripts/bench/overlay.ts\`).`,
    "",
    "overlay: the gate, the undo recorder and the bash tool in-process, each root an overlay " +
    "(change set read, judged, kept for undo, applied). mirror: the same with the roots bound " +
    "read-write and undo walking the tree before and after. bare bwrap: bwrap with the same " +
    "arguments running `/bin/sh -c`; bare sh: `/bin/sh -c` alone. `write_1000` makes 1,000 new " +
    "files, removed again between runs outside the timing.",
    "",
    table,
    "",
    `Copy-up: \`echo x >> big.bin\` on a 100 MiB file takes ${copyUp.overlay} ms under the ` +
    `overlay against ${copyUp.bwrap} ms in bare bwrap (the file is copied whole into the upper ` +
    "layer, then back into the workspace).",
    "",
  ].join("\n");
  console.log(md);
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(join(values.out, "overlay.md"), md);
  await Deno.writeTextFile(
    join(values.out, "overlay.json"),
    JSON.stringify(
      { date: new Date().toISOString(), deno: Deno.version.deno, kernel, runs, rows, copyUp },
      null,
      2,
    ) + "\n",
  );
} finally {
  await Deno.remove(state, { recursive: true }).catch(() => {});
}
