/**
 * One policy, two layers: the tool worker's runtime grants are derived from the approver
 * policy, so a tool the policy refuses outright gets no capability to misuse, and the run
 * header and `doctor` state what each layer really holds.
 *
 * @module
 */

import type { Policy } from "../../approver/mod.ts";
import { toolsWhere } from "../../approver/tool_facts.ts";
import {
  derivePermissions,
  isInside,
  type Sandbox,
  type WorkerPermissions,
  type Workspace,
} from "../../tools/hosting.ts";

/** The layers as the result object and stream-json `init` report them. */
export interface Layers {
  readonly approver: string;
  readonly confinement: readonly string[];
  readonly "worker_permissions": WorkerPermissions | null;
  readonly sandbox: "bwrap" | "none";
  readonly "bash_network": boolean;
}

/** The built-in tools that write the file their `path` names (write, edit), from their facts. */
const WRITERS = toolsWhere((facts) => facts.path === "write");
/** The built-in tools that run command lines (bash): the run grant and the sandbox are theirs. */
const RUNNERS = toolsWhere((facts) => facts.command === true);

/** False when no call of `tool` can ever be allowed (or asked) under `policy`. */
export function mayRun(policy: Policy, tool: string): boolean {
  if (policy.mode === "allow_all") return true;
  if (policy.mode === "deny_all") return false;
  const applies = (rule: { tool?: string }) => rule.tool === undefined || rule.tool === tool;
  const unconditional = (rule: { match?: unknown; command?: unknown; path?: unknown }) =>
    rule.match === undefined && rule.command === undefined && rule.path === undefined;
  if (policy.lists.deny.some((rule) => applies(rule) && unconditional(rule))) return false;
  if (policy.default !== "deny") return true;
  return [...policy.lists.allow, ...policy.lists.ask].some(applies);
}

/** False when no call of a tool that runs command lines can ever be allowed under `policy`. */
export function mayRunCommands(policy: Policy): boolean {
  return RUNNERS.some((tool) => mayRun(policy, tool));
}

/** False when no call of a tool that writes a named file can ever be allowed under `policy`. */
function mayWriteFiles(policy: Policy): boolean {
  return WRITERS.some((tool) => mayRun(policy, tool));
}

/** `^/abs/dir/` written as a plain prefix (dots may be escaped), as a directory. */
function literalDirectory(source: string | undefined): string | undefined {
  const m = source?.match(/^\^((?:\/(?:[A-Za-z0-9_\-]|\\\.)+)+)\/$/);
  return m ? m[1]!.replaceAll("\\.", ".") : undefined;
}

/**
 * The write roots `path` allow rules narrow write and edit to, when every rule that could
 * let a write or an edit through names a plain directory prefix inside the workspace;
 * undefined when the whole workspace stays writable.
 */
function writeRoots(policy: Policy, workspace: Workspace): string[] | undefined {
  if (policy.mode !== "pattern" || policy.default !== "deny") return undefined;
  const rules = [...policy.lists.allow, ...policy.lists.ask].filter((rule) =>
    rule.tool === undefined || WRITERS.includes(rule.tool)
  );
  if (rules.length === 0) return undefined;
  const dirs = rules.map((rule) =>
    rule.tool === undefined || rule.match !== undefined
      ? undefined
      : literalDirectory(rule.source.path)
  );
  if (dirs.some((dir) => dir === undefined)) return undefined;
  const inside = (dirs as string[]).filter((dir) => isInside(workspace, dir));
  return [...new Set(inside)];
}

/** The worker grants `policy` allows over `workspace`. */
export function grantsFor(
  policy: Policy,
  workspace: Workspace,
  sandbox?: Sandbox,
): WorkerPermissions {
  const write = mayWriteFiles(policy);
  const base = derivePermissions(workspace, {
    write,
    run: mayRunCommands(policy),
    ...(sandbox === undefined ? {} : { sandbox }),
  });
  // bash under the overlay applies its judged changes from the worker: it keeps the roots.
  const observed = sandbox?.overlay !== undefined && mayRunCommands(policy);
  const narrowed = write && !observed ? writeRoots(policy, workspace) : undefined;
  return narrowed === undefined ? base : { ...base, write: narrowed };
}

/**
 * Throws when `grants` hold a capability the policy never allows: the layers must agree,
 * and a worker wider than its policy must not start.
 */
export function checkGrants(
  policy: Policy,
  grants: WorkerPermissions,
  sandbox?: Sandbox,
): void {
  const problems: string[] = [];
  if (grants.run.length > 0 && !mayRunCommands(policy)) {
    problems.push(
      `run is granted (${grants.run.join(", ")}) but the policy never allows ${
        RUNNERS.join(" or ")
      }`,
    );
  }
  const bashApplies = sandbox?.overlay !== undefined && mayRunCommands(policy);
  if (grants.write.length > 0 && !mayWriteFiles(policy) && !bashApplies) {
    problems.push(`write is granted but the policy never allows ${WRITERS.join(" or ")}`);
  }
  if (grants.net !== false) problems.push("the tool worker must not have network access");
  if (problems.length > 0) {
    throw new Error(
      `layers: the worker's grants are wider than the policy: ${problems.join("; ")}`,
    );
  }
}

/**
 * What the sandbox does and does not hold, for the header: under bwrap, the capabilities,
 * the shell's uid as root, the process limit and whether file changes are observed (overlay)
 * or predicted; without it, what an unconfined command can still do.
 */
export function sandboxWalls(sandbox: Sandbox | undefined): string {
  if (sandbox === undefined) {
    return "bash unconfined: a process that detaches (setsid, double fork) can outlive the " +
      "call unless rousseau is root on cgroup v2, and as root it can read rousseau's environment";
  }
  const pids = sandbox.pids === undefined
    ? "processes unlimited: no pids cgroup, see doctor"
    : `processes≤${sandbox.pids.max}`;
  // How bash's file changes reach the roots: observed through the overlay, or predicted.
  const changes = sandbox.overlay === undefined ? "changes predicted" : "changes observed";
  // As root, whether the shell is unprivileged (see doctor's `sandbox uid`).
  const who = sandbox.identity !== undefined
    ? `uid ${sandbox.identity.uid}, `
    : Deno.uid() === 0
    ? "uid 0: root-only host files readable, see doctor, "
    : "";
  return `no capabilities, ${who}${pids}, ${changes}`;
}

const WALLS = Symbol("walls");
const HOST_NET = Symbol("host network");
const SCRATCH = Symbol("scratch");

/**
 * The layers object. The walls text rides along under a symbol: the result object's `layers`
 * keeps exactly the fields cli.md names.
 */
export function describeLayers(
  policy: Policy,
  workspace: Workspace,
  grants: WorkerPermissions | null,
  sandbox: Sandbox | undefined,
): Layers {
  const bash = grants === null || grants.run.length > 0;
  const layers: Layers = {
    approver: policy.mode,
    confinement: [...workspace.roots],
    "worker_permissions": grants,
    sandbox: sandbox === undefined ? "none" : "bwrap",
    // Without a run grant nothing can reach the network through bash.
    "bash_network": bash && (sandbox === undefined || sandbox.network),
  };
  if (bash) Object.defineProperty(layers, WALLS, { value: sandboxWalls(sandbox) });
  // With the network on but no namespace of its own (no slirp4netns), the header says what
  // the command then reaches.
  if (bash && sandbox?.network === true && sandbox.userNet === undefined) {
    Object.defineProperty(layers, HOST_NET, { value: true });
  }
  // The overlay's scratch directory is granted too; the header names it short.
  if (bash && sandbox?.overlay) {
    Object.defineProperty(layers, SCRATCH, { value: sandbox.overlay.base });
  }
  return layers;
}

/** The one-line header a run prints on stderr before it starts. */
export function layersLine(layers: Layers): string {
  const grants = layers.worker_permissions;
  let worker = "none";
  if (grants !== null) {
    const scratch = (layers as unknown as Record<symbol, string | undefined>)[SCRATCH];
    const shown = (paths: readonly string[]) => paths.filter((p) => p !== scratch);
    const read = shown(grants.read.filter((path) => path !== "/proc/self/fd"));
    const write = shown(grants.write);
    const same = read.length === write.length && read.every((p, i) => p === write[i]);
    const parts = same && read.length > 0
      ? [`read,write:${read.join(",")}`]
      : [`read:${read.join(",") || "none"}`, `write:${write.join(",") || "none"}`];
    if (scratch !== undefined && grants.write.includes(scratch)) parts.push("+overlay scratch");
    parts.push(`run:${grants.run.join(",") || "none"}`);
    worker = parts.join(" ");
  }
  const bash = grants === null || grants.run.length > 0;
  const net = !bash
    ? "off (bash is not allowed)"
    : layers.sandbox === "bwrap"
    ? (!layers.bash_network
      ? "off"
      : (layers as unknown as Record<symbol, boolean | undefined>)[HOST_NET]
      ? "on (the host's network namespace: its 127.0.0.1 and ::1 reachable, see doctor)"
      : "on")
    : "on (no sandbox: Deno permissions do not reach processes bash starts)";
  const walls = (layers as unknown as Record<symbol, string | undefined>)[WALLS];
  return `rousseau: approver=${layers.approver} · confinement=${layers.confinement.join(",")} · ` +
    `worker=${worker} · sandbox=${layers.sandbox}${walls ? ` (${walls})` : ""} · net=${net}`;
}

/**
 * The gate's `observed` tools: those that run command lines (bash), under the overlay; with
 * the network off they are `contained` too (their run can change nothing until their change
 * set is applied).
 */
export function observedBy(
  sandbox: Sandbox | undefined,
): { observed?: ReadonlySet<string>; contained?: ReadonlySet<string> } {
  if (sandbox?.overlay === undefined) return {};
  const observed = new Set(RUNNERS);
  return sandbox.network ? { observed } : { observed, contained: observed };
}
