import {
  createWorkerHost,
  createWorkspace,
  DEFAULT_LIMITS,
  startToolWorker,
  workerPermissions,
} from "../../mod.ts";
import { guessToolFlags } from "../../cli/early_worker.ts";
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

Deno.test("the early start guesses only from `[global options] tool NAME` (not bash)", () => {
  assertEquals(guessToolFlags(["tool", "read", "{}"]), {});
  assertEquals(
    guessToolFlags([
      "--config",
      "c.yaml",
      "--workspace",
      "/w",
      "--add-dir",
      "a",
      "--add-dir",
      "b",
      "--allow",
      "edit",
      "tool",
      "grep",
      "{}",
      "--json",
    ]),
    { config: "c.yaml", workspace: "/w", addDir: ["a", "b"] },
  );
  for (
    const args of [
      ["tool", "bash", "{}"],
      ["tool"],
      ["tool", "--help"],
      ["tool", "read", "--help"],
      ["run", "tool"],
      ["--workspace=/w", "tool", "read"],
      ["--workspace", "tool", "read"],
      ["tool", "read", "{}", "--workspace", "/elsewhere"],
      ["tool", "read", "{}", "--config=x.yaml"],
      ["-p", "tool", "read"],
      ["version"],
    ]
  ) {
    assertEquals(guessToolFlags(args), undefined, args.join(" "));
  }
});
