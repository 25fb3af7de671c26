/**
 * Runs one bash call in a fresh process and prints `{grown, result}`: the peak RSS growth
 * while it ran. A separate process keeps other tests' allocations out of the figure.
 *
 * Usage: deno run -A bash_rss.ts <workspace> <command> [timeout_ms] [max_output_bytes]
 *
 * @module
 */

import {
  createBuiltinTools,
  createInProcessHost,
  createWorkspace,
  DEFAULT_LIMITS,
  Registry,
} from "../../mod.ts";

const [root, command, timeout, maxOutput] = Deno.args;
const host = createInProcessHost(new Registry(createBuiltinTools()), {
  workspace: await createWorkspace([root!]),
  limits: {
    ...DEFAULT_LIMITS,
    ...(timeout ? { bashTimeoutMs: Number(timeout) } : {}),
    ...(maxOutput ? { bashMaxOutputBytes: Number(maxOutput) } : {}),
  },
  env: { PATH: "/usr/bin:/bin" },
});
const before = Deno.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 5);
const result = await host.call("bash", { command }, new AbortController().signal);
clearInterval(sampler);
peak = Math.max(peak, Deno.memoryUsage().rss);
await Deno.stdout.write(new TextEncoder().encode(JSON.stringify({ grown: peak - before, result })));
