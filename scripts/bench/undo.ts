// deno-lint-ignore-file no-console
/**
 * `deno run -A scripts/bench/undo.ts [--files N] [--dir DIR]`: what undo costs a call on a
 * large tree. Generates N small files (default 100,000, ~0.5 KiB each, 100 per directory)
 * under DIR (default `.bench/undo-<N>`, kept between runs), then times, with the recorder the
 * agent uses:
 *
 * - the first `bash` call in a workspace never seen (every file read, hashed and copied);
 * - a `bash` call that changes nothing (the steady cost: two stat walks and the mirror file);
 * - a `bash` call that changes 100 files;
 * - a `write` call (one file kept before, one hashed after).
 *
 * Each figure is the run with the least wall time of three (the first call: one run, on a
 * fresh store), with its CPU time (this process and find, from /proc; a loaded machine
 * stretches the wall time, much less the CPU time).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createUndoRecorder, openUndoStore } from "../../agent/undo/mod.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const { values } = parseArgs({
  args: Deno.args,
  options: { files: { type: "string", default: "100000" }, dir: { type: "string" } },
});
const files = Number(values.files);
const root = values.dir ?? join(REPO, ".bench", `undo-${files}`);
const ready = join(root, ".ready");

if (!await Deno.stat(ready).then(() => true, () => false)) {
  await Deno.remove(root, { recursive: true }).catch(() => {});
  const line = "export function handler(value: number): number { return value * 2; }\n";
  for (let i = 0; i < files; i++) {
    const dir = join(root, "tree", `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(join(dir, `f${i}.ts`), `// file ${i}\n` + line.repeat(7));
  }
  await Deno.writeTextFile(ready, "");
}
const workspace = join(root, "tree");

/** What one measured call took: wall time, and CPU time of this process and its waited-for children (find). */
interface Cost {
  readonly wall: number;
  readonly cpu: number;
}

/** CPU ms so far (user + system) of this process and its reaped children, from /proc. */
function cpuMs(): number {
  try {
    const stat = Deno.readTextFileSync("/proc/self/stat");
    // Fields after the command name (which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = [11, 12, 13, 14].map((i) => Number(fields[i])).reduce((a, b) => a + b, 0);
    return ticks * 10; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

async function time(fn: () => Promise<unknown>): Promise<Cost> {
  const cpu = cpuMs();
  const started = performance.now();
  await fn();
  return { wall: performance.now() - started, cpu: cpuMs() - cpu };
}

/** The run with the least wall time. */
function best(costs: readonly Cost[]): Cost {
  return costs.reduce((a, b) => b.wall < a.wall ? b : a);
}

const state = await Deno.makeTempDir({ prefix: "rousseau-bench-undo-" });
try {
  const store = openUndoStore(state, { maxBytes: 4 * 1024 * 1024 * 1024 });
  const recorder = createUndoRecorder({ store, sessionId: "bench", roots: [workspace] });
  recorder.beginTurn(1, "bench");
  const noop = () => Promise.resolve("");
  const first = await time(() => recorder.around("bash", {}, false, noop));
  const idle: Cost[] = [];
  for (let i = 0; i < 3; i++) idle.push(await time(() => recorder.around("bash", {}, false, noop)));
  const busy: Cost[] = [];
  for (let run = 0; run < 3; run++) {
    busy.push(
      await time(() =>
        recorder.around("bash", {}, false, async () => {
          for (let i = 0; i < 100; i++) {
            await Deno.writeTextFile(join(workspace, "d0", `f${i}.ts`), `// run ${run}\n`);
          }
          return "";
        })
      ),
    );
  }
  const writes: Cost[] = [];
  for (let run = 0; run < 3; run++) {
    const path = join(workspace, "d1", "f100.ts");
    writes.push(
      await time(() =>
        recorder.around("write", { path }, false, async () => {
          await Deno.writeTextFile(path, `// write ${run}\n`);
          return "";
        })
      ),
    );
  }
  await recorder.endTurn();
  const mirror = (await Deno.stat(join(state, "undo", "mirrors"))).isDirectory
    ? [...Deno.readDirSync(join(state, "undo", "mirrors"))].map((e) =>
      Deno.statSync(join(state, "undo", "mirrors", e.name)).size
    ).reduce((a, b) => a + b, 0)
    : 0;
  const ms = (c: Cost) => `${Math.round(c.wall)} ms | ${Math.round(c.cpu)} ms`;
  console.log(`| ${files.toLocaleString("en")} files | wall | CPU (rousseau + find) |`);
  console.log("|---|---|---|");
  console.log(`| first bash call (copy of the tree) | ${ms(first)} |`);
  console.log(`| bash call changing nothing | ${ms(best(idle))} |`);
  console.log(`| bash call changing 100 files | ${ms(best(busy))} |`);
  console.log(`| write call | ${ms(best(writes))} |`);
  console.log(`\nload average: ${Deno.loadavg().map((n) => n.toFixed(1)).join(" ")}`);
  console.log(
    `\nobjects ${(store.usage().objects / 1024 / 1024).toFixed(1)} MiB, mirror file ${
      (mirror / 1024 / 1024).toFixed(1)
    } MiB`,
  );
} finally {
  await Deno.remove(state, { recursive: true });
}
