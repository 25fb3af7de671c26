/**
 * The gate the agent loop calls tools through, over a temp workspace: the built-in tools (and
 * any extra), an in-process host, and an approver from a policy. For loop and context tests.
 *
 * @module
 */

import type { GateOptions } from "../../agent/tool_host.ts";
import { createApprover, type PolicyConfig } from "../../approver/mod.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  DEFAULT_LIMITS,
  type defineTool,
  Registry,
} from "../../mod.ts";
import type { TmpWorkspace } from "./tmp_workspace.ts";

/**
 * A model-sourced gate in `ws` under `policy` (default: allow all). The tools see `env`
 * (default: our PATH only).
 */
export function gateFor(
  ws: TmpWorkspace,
  policy: PolicyConfig = { mode: "allow_all" },
  extra: readonly ReturnType<typeof defineTool>[] = [],
  env: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
): GateOptions {
  const registry = new Registry([...createBuiltinTools(), ...extra]);
  return {
    registry,
    host: createInProcessHost(registry, { workspace: ws.workspace, limits: DEFAULT_LIMITS, env }),
    approver: createApprover(policy),
    source: "model",
  };
}
