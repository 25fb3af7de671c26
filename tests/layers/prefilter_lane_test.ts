/**
 * grep's prefilter worker is started by the host, on the main thread, with read on the
 * workspace roots, when the built-in grep asks for it (tools/_grep_pool.ts). Only the
 * built-ins' lane is heard: a custom module in its own worker that asks the same way gets
 * nothing started for it.
 */

import { join } from "node:path";
import { createWorkerHost, createWorkspace, DEFAULT_LIMITS } from "../../mod.ts";
import { assertEquals } from "../_helpers/assert.ts";

const ASKER = new URL("../testdata/prefilter_asker_tool.ts", import.meta.url).href;

/** What the host does once a message has been handled: its module load, then a turn. */
async function settled(): Promise<void> {
  await import("../../tools/_grep_prefilter.ts");
  await new Promise((resolve) => setTimeout(resolve, 0));
}

Deno.test("prefilter: a custom module asking for grep's prefilter worker gets none; the built-in grep does", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-prefilter-" }));
  const started: string[] = [];
  const Original = globalThis.Worker;
  // Every worker this isolate starts from here on is counted (the host's, the prefilter's).
  globalThis.Worker = class extends Original {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      started.push(String(url));
    }
  };
  try {
    const root = join(base, "ws");
    for (let d = 0; d < 30; d++) {
      await Deno.mkdir(join(root, `d${d}`), { recursive: true });
      for (let f = 0; f < 50; f++) {
        await Deno.writeTextFile(join(root, `d${d}`, `f${f}.txt`), `line ${d} ${f}\n`);
      }
    }
    await using host = await createWorkerHost({
      workspace: await createWorkspace([root]),
      limits: DEFAULT_LIMITS,
      env: {},
      modules: [ASKER],
    });
    const before = started.length;
    const signal = new AbortController().signal;
    assertEquals(await host.call("prefilter_asker", {}, signal), {
      output: "asked",
      isError: false,
    });
    await settled();
    assertEquals(started.slice(before), [], "a worker was started for the custom module");
    // The built-ins' lane is heard: grep over 1,500 files asks once 1,000 are walked.
    const grep = await host.call("grep", { pattern: "line 29 49$", path: root }, signal);
    assertEquals(grep, {
      output: `${join(root, "d29", "f49.txt")}:1: line 29 49\n`,
      isError: false,
    });
    await settled();
    assertEquals(started.length - before, 1, "the built-in grep got no prefilter worker");
  } finally {
    globalThis.Worker = Original;
    await Deno.remove(base, { recursive: true });
  }
});
