import {
  createWorkerHost,
  createWorkspace,
  DEFAULT_LIMITS,
  startToolWorker,
  workerPermissions,
} from "../../mod.ts";
import { startEarlyWorker, takeEarlyWorker } from "../../cli/startup/early_worker.ts";
import { parseToolArgs } from "../../cli/startup/tool_args.ts";
import { assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const PROBE = new URL("../testdata/probe_tool.ts", import.meta.url).href;

async function probeThrough(broad: boolean): Promise<string[]> {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": "secret" } });
  const options = {
    workspace: await createWorkspace([ws.root]),
    limits: DEFAULT_LIMITS,
    env: {},
    modules: [PROBE],
  };
  const exact = workerPermissions(options);
  // A worker started early with wider grants than the host derives (the whole disk, the
  // network) must not be the one the calls run in.
  const started = startToolWorker(
    broad ? { ...exact, read: ["/"], write: ["/"], net: true as never } : exact,
  );
  await using host = await createWorkerHost({ ...options, started });
  assertEquals(host.permissions, exact);
  // Stopping the early worker after the host took it over (or stopped it) changes nothing.
  started.terminate();
  const result = await host.call(
    "probe",
    { outside: ws.outside },
    new AbortController().signal,
  );
  assertEquals(result.isError, false, result.output);
  return result.output.split("\n").slice(0, 2);
}

Deno.test("an early tool worker with wider grants is stopped, and calls run with the derived ones", async () => {
  assertEquals(await probeThrough(true), ["read outside: NotCapable", "write outside: NotCapable"]);
});

Deno.test("an early tool worker with exactly the derived grants is taken over", async () => {
  assertEquals(await probeThrough(false), [
    "read outside: NotCapable",
    "write outside: NotCapable",
  ]);
});

Deno.test("the early start is made for a decided tool call other than bash, with the call's roots", async () => {
  await using ws = await tmpWorkspace({});
  startEarlyWorker(parseToolArgs(["--workspace", ws.root, "tool", "bash", "{}"])!);
  assertEquals(takeEarlyWorker(), undefined);
  startEarlyWorker(parseToolArgs(["--workspace", `${ws.root}/missing`, "tool", "read", "{}"])!);
  assertEquals(takeEarlyWorker(), undefined);
  startEarlyWorker(parseToolArgs(["--workspace", ws.root, "tool", "read", "{}"])!);
  const started = takeEarlyWorker();
  try {
    assertEquals(started?.permissions.read, [await Deno.realPath(ws.root), "/proc/self/fd"]);
    assertEquals(started?.permissions.write, [await Deno.realPath(ws.root)]);
    // Taken once.
    assertEquals(takeEarlyWorker(), undefined);
  } finally {
    started?.terminate();
  }
});
