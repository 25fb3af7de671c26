/**
 * The floor of a `tool read` cold start in this design, for the cold-start breakdown of
 * `cold_start.ts`: start the tool worker first thing (with the grants the CLI derives for
 * `--workspace DIR`), then read `FILE` through it and print it. No argument parser, config,
 * approver or audit: what is left is the process, the worker's isolate and its tools.
 *
 * Usage: `deno run -A --config deno.json scripts/bench/_floor.ts DIR FILE`
 *
 * @module
 */

import { derivePermissions, startToolWorker } from "../../tools/worker_start.ts";

const [dir, file] = Deno.args as [string, string];
const root = Deno.realPathSync(dir);
const started = startToolWorker(derivePermissions({ roots: [root] }));
const { createWorkerHost, createWorkspace, DEFAULT_LIMITS } = await import(
  new URL("../../tools/hosting.ts", import.meta.url).href
) as typeof import("../../tools/hosting.ts");
await using host = await createWorkerHost({
  workspace: await createWorkspace([root]),
  limits: DEFAULT_LIMITS,
  env: {},
  started,
});
const result = await host.call("read", { path: file }, new AbortController().signal);
await Deno.stdout.write(new TextEncoder().encode(result.output));
