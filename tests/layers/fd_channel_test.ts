/**
 * The tool worker cannot read `/proc/self/fd` (Deno refuses it without --allow-all), so it
 * asks its host where an open descriptor leads: the proof of confinement stays the kernel's,
 * not a second path lookup that a swapped directory can fool.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals } from "../_helpers/assert.ts";
import { runCli } from "../_helpers/cli.ts";
import { createWorkerHost, createWorkspace, DEFAULT_LIMITS } from "../../mod.ts";
import { askFdChannel, createFdChannel, serveFdChannel } from "../../tools/_fd_channel.ts";

const PROBE = new URL("../testdata/swap_probe_tool.ts", import.meta.url).href;

/** A workspace whose `d` leads outside, and a directory to swap in holding a hard link. */
async function swapStage(base: string): Promise<string> {
  const root = join(base, "ws");
  const outside = join(base, "outside");
  await Deno.mkdir(root);
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(outside, "secret"), "secret\n");
  await Deno.symlink(outside, join(root, "d"));
  await Deno.mkdir(join(root, "hardlinked"));
  await Deno.link(join(outside, "secret"), join(root, "hardlinked", "secret"));
  return root;
}

Deno.test("worker: a file opened through a directory swapped afterwards is refused", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-fdchan-" }));
  try {
    const root = await swapStage(base);
    await using host = await createWorkerHost({
      workspace: await createWorkspace([root]),
      limits: DEFAULT_LIMITS,
      env: {},
      modules: [PROBE],
    });
    const result = await host.call("swap_probe", { root }, new AbortController().signal);
    assertEquals(result, {
      output: `swap_probe: ${root}/d/secret is outside the workspace`,
      isError: true,
    });
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("the CLI's permission set lets the host answer: the swap is refused there too", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-fdchan-" }));
  try {
    const root = await swapStage(base);
    const config = join(base, "config.yaml");
    await Deno.writeTextFile(
      config,
      `tools:\n  modules: [${JSON.stringify(fileURLToPath(PROBE))}]\n`,
    );
    const run = await runCli([
      "--config",
      config,
      "--workspace",
      root,
      "tool",
      "swap_probe",
      JSON.stringify({ root }),
    ]);
    assertEquals([run.code, run.stdout, run.stderr], [
      1,
      "",
      `swap_probe: ${root}/d/secret is outside the workspace\n`,
    ]);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("fd channel: the host answers with the kernel's path; a stopped host fails closed", async () => {
  const channel = createFdChannel();
  const stop = serveFdChannel(channel);
  const file = fileURLToPath(import.meta.url);
  const worker = new Worker(
    `data:application/javascript,${
      encodeURIComponent(`
      import { askFdChannel } from ${
        JSON.stringify(new URL("../../tools/_fd_channel.ts", import.meta.url).href)
      };
      import { openSync } from "node:fs";
      self.onmessage = (e) => {
        const ask = askFdChannel(e.data.channel);
        const fd = openSync(e.data.file, "r");
        const first = ask(fd);
        self.postMessage({ first });
      };`)
    }`,
    { type: "module" },
  );
  try {
    const reply = await new Promise<{ first: string }>((resolve) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.postMessage({ channel, file });
    });
    assertEquals(reply.first, file);
  } finally {
    worker.terminate();
    stop();
  }
  // Once the host has stopped, asking throws at once instead of trusting anything.
  let thrown = "";
  try {
    askFdChannel(channel)(0);
  } catch (error) {
    thrown = (error as Error).message;
  }
  assertEquals(thrown, "the tool host did not answer where an opened file leads");
});
