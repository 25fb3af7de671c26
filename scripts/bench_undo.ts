// deno-lint-ignore-file no-console
/**
 * `deno run -A scripts/bench_undo.ts [--files N] [--dir DIR]`: what undo costs a call on a
 * large tree. Generates N small files (default 100,000, ~0.5 KiB each, 100 per directory)
 * under DIR (default `.bench/undo-<N>`, kept between runs), then times, with the recorder the
 * agent uses:
 *
 * - the first `bash` call in a workspace never seen (every file read, hashed and copied);
 * - a `bash` call that changes nothing (the steady cost: two stat walks and the mirror file);
 * - a `bash` call that changes 100 files;
 * - a `write` call (one file kept before, one hashed after).
 *
 * Each figure is the minimum of three runs (the first call: one run, on a fresh store).
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createUndoRecorder } from "../agent/undo_recorder.ts";
import { openUndoStore } from "../agent/undo_store.ts";

const REPO = fileURLToPath(new URL("../", import.meta.url));
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

async function time(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const state = await Deno.makeTempDir({ prefix: "rousseau-bench-undo-" });
try {
  const store = openUndoStore(state, { maxBytes: 4 * 1024 * 1024 * 1024 });
  const recorder = createUndoRecorder({ store, sessionId: "bench", roots: [workspace] });
  recorder.beginTurn(1, "bench");
  const noop = () => Promise.resolve("");
  const first = await time(() => recorder.around("bash", {}, false, noop));
  const idle: number[] = [];
  for (let i = 0; i < 3; i++) idle.push(await time(() => recorder.around("bash", {}, false, noop)));
  const busy: number[] = [];
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
  const writes: number[] = [];
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
  const ms = (n: number) => `${Math.round(n)} ms`;
  console.log(`| ${files.toLocaleString("en")} files | time |`);
  console.log("|---|---|");
  console.log(`| first bash call (copy of the tree) | ${ms(first)} |`);
  console.log(`| bash call changing nothing | ${ms(Math.min(...idle))} |`);
  console.log(`| bash call changing 100 files | ${ms(Math.min(...busy))} |`);
  console.log(`| write call | ${ms(Math.min(...writes))} |`);
  console.log(
    `\nobjects ${(store.totalBytes() / 1024 / 1024).toFixed(1)} MiB, mirror file ${
      (mirror / 1024 / 1024).toFixed(1)
    } MiB`,
  );
} finally {
  await Deno.remove(state, { recursive: true });
}
