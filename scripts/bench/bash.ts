/**
 * Runtime rows `bash`: `bash {"command":"true"}` through the gate, unsandboxed and under
 * bwrap, against spawning `/bin/sh -c true` with `Deno.Command`; with a breakdown that adds
 * one layer a step.
 *
 * @module
 */

import { callTool } from "../../agent/tool_host.ts";
import { resolveSandbox } from "../../cli/layers/sandbox.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkerHost,
  DEFAULT_LIMITS,
  Registry,
  type Sandbox,
  sandboxArgs,
} from "../../tools/mod.ts";
import {
  expectOk,
  fastest,
  type Fixture,
  gateFor,
  makeRow,
  missingRow,
  PATTERN_POLICY,
  type Section,
  sequential,
  type Settings,
} from "./_common.ts";
import { type Breakdown, round, type Row } from "./table.ts";

/** `sandbox` as bare bwrap runs it: no seccomp filter (fed on stdin), no unprivileged shell. */
function bareBwrap(sandbox: Sandbox): Sandbox {
  const { seccomp: _filter, identity: _identity, ...bare } = sandbox;
  return bare;
}

/** The sandbox the CLI uses by default (`tools.bash.sandbox: auto`), or why there is none. */
async function findSandbox(): Promise<Sandbox | string> {
  const report = await resolveSandbox({ values: {} });
  return report.sandbox ?? report.summary;
}

async function measure(fx: Fixture, settings: Settings): Promise<[Row[], Breakdown[]]> {
  const n = settings.quick ? 3 : 200;
  const runs = settings.quick ? 1 : settings.runs;
  const input = { command: "true" };
  const signal = new AbortController().signal;
  const env = { PATH: "/usr/bin:/bin" };
  const sandbox = await findSandbox();
  await using plain = await createWorkerHost({
    workspace: fx.workspace,
    limits: DEFAULT_LIMITS,
    env,
  });
  await using boxed = typeof sandbox === "string"
    ? undefined
    : await createWorkerHost({ workspace: fx.workspace, limits: DEFAULT_LIMITS, env, sandbox });
  const inProcess = createInProcessHost(new Registry(createBuiltinTools()), {
    workspace: fx.workspace,
    limits: DEFAULT_LIMITS,
    env,
  });
  const gate = gateFor(plain, PATTERN_POLICY);
  const boxedGate = boxed === undefined ? undefined : gateFor(boxed, PATTERN_POLICY);
  const spawn = (command: string, args: string[], detached = false) => async () => {
    const out = await new Deno.Command(command, {
      args,
      detached,
      cwd: fx.root,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env,
    }).output();
    if (!out.success) throw new Error(`bench: ${command} exited ${out.code}`);
  };
  const bashArgv = ["-c", 'exec 2>&1; exec "$0" -c -- "$1"', "/bin/sh", "true"];
  const streamed = (detached: boolean) => async () => {
    const child = new Deno.Command("/bin/sh", {
      args: bashArgv,
      cwd: fx.root,
      detached,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
      env,
    }).spawn();
    const reading = (async () => {
      for await (const _ of child.stdout) {
        // drained
      }
    })();
    const status = await child.status;
    await reading;
    if (!status.success) throw new Error(`bench: /bin/sh exited ${status.code}`);
  };
  const ok = (call: () => Promise<{ output: string; isError: boolean }>) => async () => {
    expectOk("bash true", await call());
  };
  const contenders: Array<[string, string, (() => Promise<number>) | undefined]> = [
    [
      "sh",
      "`/bin/sh -c true` with `Deno.Command` (the comparison)",
      sequential(n, spawn("/bin/sh", ["-c", "true"])),
    ],
    [
      "argv",
      '`/bin/sh` with bash\'s argv (`exec 2>&1; exec "$0" -c ...`), detached',
      sequential(n, spawn("/bin/sh", bashArgv, true)),
    ],
    [
      "streamed",
      "the same, not detached, with `spawn()`, stdout read as a stream, then `status`",
      sequential(n, streamed(false)),
    ],
    [
      "streamed-detached",
      "the same, detached (bash's pattern)",
      sequential(n, streamed(true)),
    ],
    [
      "in-process",
      "bash tool in-process (no worker, no gate)",
      sequential(n, ok(() => inProcess.call("bash", input, signal))),
    ],
    ["worker", "worker host alone", sequential(n, ok(() => plain.call("bash", input, signal)))],
    [
      "gate",
      "gate (the row's figure)",
      sequential(n, ok(() => callTool(gate, "bash", input, signal))),
    ],
    [
      "bwrap",
      "bwrap + `/bin/sh -c true` with `Deno.Command`",
      typeof sandbox === "string" ? undefined : sequential(
        n,
        spawn(
          sandbox.bwrap,
          // Bare bwrap: the same walls without the seccomp filter (it is fed on stdin).
          sandboxArgs(
            bareBwrap(sandbox),
            fx.workspace.roots,
            fx.root,
            ["/bin/sh", "-c", "true"],
          ),
        ),
      ),
    ],
    [
      "gate-bwrap",
      "gate, bwrap sandbox",
      boxedGate === undefined
        ? undefined
        : sequential(n, ok(() => callTool(boxedGate, "bash", input, signal))),
    ],
  ];
  const present = contenders.filter(([, , c]) => c !== undefined);
  const best = await fastest(`${n} bash calls`, runs, present.map(([, , c]) => c!));
  const perCall = new Map(present.map(([key], i) => [key, best[i]! / n]));
  const at = (key: string) => perCall.get(key) ?? null;
  const fields = {
    group: "bash" as const,
    unit: "ms/call",
    "comparison_name": "`/bin/sh -c true` spawned with `Deno.Command`",
  };
  const rows = [
    makeRow(
      {
        ...fields,
        id: "bash_true",
        name: '`bash {"command":"true"}` through the gate, no sandbox',
        target: "<= 1.3x",
        note: `${n} sequential calls, best of ${runs}`,
      },
      at("gate"),
      at("sh"),
      (_, ratio) => ratio === null ? null : ratio <= 1.3,
    ),
    typeof sandbox === "string"
      ? missingRow({
        ...fields,
        id: "bash_true_bwrap",
        name: '`bash {"command":"true"}` through the gate, bwrap sandbox',
        unit: "ms/call",
        target: "-",
      }, `no sandbox: ${sandbox}`)
      : makeRow(
        {
          ...fields,
          id: "bash_true_bwrap",
          name: '`bash {"command":"true"}` through the gate, bwrap sandbox',
          target: "-",
          note: `${n} sequential calls, best of ${runs}; bwrap alone costs ${
            round(at("bwrap")!, 2)
          } ms per call (see the breakdown)`,
        },
        at("gate-bwrap"),
        at("sh"),
        () => null,
      ),
  ];
  const breakdown: Breakdown = {
    title: '`bash {"command":"true"}`, per call (ms)',
    unit: "ms/call",
    rows: contenders.map(([key, name]) => ({
      name,
      value: at(key) === null ? null : round(at(key)!, 2),
    })),
    note: "Steps down the table add one thing each: bash's argv (a shell that execs a " +
      "shell), `spawn()` with streamed stdout instead of `output()`, `detached` (a new " +
      "session, so the group can be killed), the tool's own work, the worker (whose " +
      "clean-up cannot signal the process group itself, its run grant being `/bin/sh` only, " +
      "so it kills the group through a second `/bin/sh`: two spawns per call), the gate.",
  };
  return [rows, [breakdown]];
}

/** The bash rows. */
export const bashCalls: Section = {
  group: "bash",
  ids: ["bash_true", "bash_true_bwrap"],
  run: measure,
};
