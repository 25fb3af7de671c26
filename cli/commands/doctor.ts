/**
 * `rousseau doctor`: checks the configuration and states each permission layer as it will
 * be set up, so an operator sees what holds before anything runs. Exit 1 if a check fails.
 *
 * @module
 */

import type { Policy, Rule } from "../../approver/mod.ts";
import type { Sandbox, WorkerPermissions } from "../../tools/hosting.ts";
import { connectMcpServers } from "../../agent/mcp_sources.ts";
import { checkGrants, grantsFor, mayRun } from "../layers/grants.ts";
import { type ProviderFlags, providerFrom, providerSettings } from "../config/provider.ts";
import { wireNamed } from "../../providers/wires.ts";
import { toolProbe } from "./doctor_online.ts";
import { type Config, loadConfig } from "../config/config.ts";
import { EXIT } from "../errors.ts";
import { type GlobalFlags, workspaceFrom } from "../config/options.ts";
import { writeStdout } from "../terminal/output.ts";
import { visible } from "../../approver/visible.ts";
import { toolsWhere } from "../../approver/tool_facts.ts";
import { type PolicyFlags, resolvePolicy } from "../config/policy.ts";
import {
  probeSandbox,
  resolveSandbox,
  sandboxForRoots,
  type SandboxReport,
} from "../layers/sandbox.ts";
import { contextChecks } from "./doctor_context.ts";
import { reachProvider } from "./doctor_reach.ts";
import { stateLines, stateUsage } from "../config/state_dir.ts";
import { openSessionStore } from "../../agent/session_store.ts";
import { sessionsPath } from "../agent_setup.ts";

interface Check {
  readonly ok: boolean;
  readonly name: string;
  readonly detail: string;
  /** Holds, but less than it could: printed as `warn`, does not fail doctor. */
  readonly warn?: boolean;
}

async function attempt(name: string, fn: () => Promise<string>): Promise<Check> {
  try {
    return { ok: true, name, detail: await fn() };
  } catch (error) {
    return { ok: false, name, detail: error instanceof Error ? error.message : String(error) };
  }
}

async function bwrapVersion(path: string): Promise<string> {
  const out = await new Deno.Command(path, { args: ["--version"], stdout: "piped", stderr: "null" })
    .output().catch(() => undefined);
  return out?.success ? new TextDecoder().decode(out.stdout).trim() : "version unknown";
}

/** A tool's standing under `policy`, for the side-by-side line. */
function standing(policy: Policy, tool: string): string {
  if (policy.mode === "allow_all") return "allow";
  if (!mayRun(policy, tool)) return "never";
  const applies = (rule: Rule) => rule.tool === undefined || rule.tool === tool;
  const plain = (rule: Rule) =>
    rule.match === undefined && rule.command === undefined && rule.path === undefined;
  if (policy.lists.deny.some(applies)) return "by rule";
  const ask = policy.lists.ask.filter(applies);
  const allow = policy.lists.allow.filter(applies);
  if (ask.some(plain)) return "ask";
  if (ask.length === 0 && allow.some(plain)) return "allow";
  if (ask.length === 0 && allow.length === 0) return policy.default;
  return "by rule";
}

/**
 * The built-in tools for the side-by-side line, by what they may do: those that only read
 * (read, grep), then those that write files (write, edit), then those that run commands
 * (bash); within each, in `createBuiltinTools()` order. Read from the tools' facts.
 */
const TOOLS = [
  ...toolsWhere((f) => f.path !== "write" && f.command !== true),
  ...toolsWhere((f) => f.path === "write" && f.command !== true),
  ...toolsWhere((f) => f.command === true),
];

function grantsText(grants: WorkerPermissions): string {
  const list = (values: readonly string[]) => values.length === 0 ? "none" : values.join(",");
  return `read=${list(grants.read)} write=${list(grants.write)} run=${list(grants.run)}`;
}

/** GETs the provider's model list: proves the base URL answers and the key is accepted. */
async function probe(settings: ReturnType<typeof providerSettings>): Promise<string> {
  const wire = wireNamed(settings.name)!;
  const base = (settings.baseUrl ?? wire.defaultBaseUrl).replace(/\/+$/, "");
  const { url, headers } = wire.modelsRequest(base, settings.apiKey);
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new Error(`${url}: not reachable: ${(error as Error).message}`, { cause: error });
  }
  await response.body?.cancel();
  if (response.status === 401 || response.status === 403) {
    throw new Error(`${url}: HTTP ${response.status}: the API key was refused`);
  }
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return `${url}: HTTP ${response.status}, key accepted`;
}

/**
 * The walls of the bash sandbox as a command inside it finds them (a trial run, not the
 * configuration read back): capabilities, process limit, hidden paths and sockets. Without
 * the sandbox, what an unconfined command can still do.
 */
async function wallChecks(report: SandboxReport, roots: readonly string[]): Promise<Check[]> {
  const sandbox = report.sandbox;
  if (sandbox === undefined) {
    return [{
      ok: true,
      warn: true,
      name: "bash walls",
      detail: "none: bash runs as rousseau's user with its rights; a process that detaches " +
        "(setsid, double fork) can outlive the call unless rousseau is root on cgroup v2 (each " +
        "call then has a cgroup of its own, killed with it); rousseau's environment (the API key) " +
        (report.environmentProblem === undefined
          ? "is kept from the same user (not dumpable), but not from root"
          : `is readable by the same user (${report.environmentProblem})`),
    }];
  }
  let probe: Awaited<ReturnType<typeof probeSandbox>>;
  try {
    probe = await probeSandbox(sandbox, roots);
  } catch (error) {
    return [{ ok: false, name: "sandbox caps", detail: (error as Error).message }];
  }
  const checks: Check[] = [];
  const noCaps = /^0+$/.test(probe.capEff);
  checks.push({
    ok: noCaps && probe.noNewPrivs && probe.userns !== true,
    name: "sandbox caps",
    detail: noCaps
      ? `none (CapEff ${probe.capEff}), no_new_privs ${probe.noNewPrivs ? "set" : "NOT set"}, ` +
        (probe.userns === undefined
          ? "new user namespaces not tried (no unshare)"
          : probe.userns
          ? "a new user namespace CAN be made"
          : "no new user namespace")
      : `the shell holds capabilities (CapEff ${probe.capEff}): it can undo the sandbox`,
  });
  checks.push(
    sandbox.pids === undefined || probe.pidsMax === undefined
      ? {
        ok: true,
        warn: true,
        name: "sandbox pids",
        detail: `no process limit: ${
          report.pidsProblem ?? "the trial command could not join the cgroup"
        }; a fork bomb runs until the timeout`,
      }
      : {
        ok: probe.pidsMax === String(sandbox.pids.max),
        name: "sandbox pids",
        detail: `at most ${probe.pidsMax} processes (pids cgroup ${sandbox.pids.dir}, shared ` +
          "by this rousseau's bash calls)",
      },
  );
  const sockets = sandbox.hide.filter((h) => h.kind === "file" && isSocket(h.path)).length;
  checks.push({
    ok: probe.visible.length === 0 && probe.maskedEntries <= 0,
    name: "sandbox hide",
    detail: probe.visible.length > 0
      ? `still readable inside: ${probe.visible.join(", ")}`
      : `${sandbox.hide.length} paths empty inside (credentials, rousseau's config and state, ` +
        `${sockets} unix sockets); ${(sandbox.mask ?? []).join(", ") || "no /run"} masked; ` +
        (!sandbox.network
          ? "network off: abstract unix sockets and 127.0.0.1 unreachable"
          : sandbox.userNet !== undefined
          ? "network on, in a namespace of its own: the host's abstract unix sockets and " +
            "127.0.0.1 unreachable"
          : sandbox.scopeAbstract !== undefined
          ? "network on: abstract unix sockets of the host out of reach (Landlock), its " +
            "127.0.0.1 reachable"
          : `network on: abstract unix sockets (${report.abstractProblem}) and 127.0.0.1 ` +
            "of the host are reachable"),
  });
  checks.push(identityCheck(report, sandbox, probe));
  checks.push({
    ok: true,
    ...(sandbox.seccomp === undefined ? { warn: true } : {}),
    name: "sandbox keys",
    detail: sandbox.seccomp !== undefined
      ? "kernel keyrings out of reach: add_key, request_key and keyctl refused (seccomp)"
      : `the session keyring rousseau runs in is readable inside (${report.keyringProblem})`,
  });
  checks.push(changesCheck(report, sandbox, roots));
  return checks;
}

/**
 * With the network on: whether the command has a network namespace of its own (slirp4netns),
 * or shares the host's, where every service on the host's loopback answers it.
 */
function networkCheck(report: SandboxReport, sandbox: Sandbox): Check {
  const net = sandbox.userNet;
  if (net === undefined) {
    return {
      ok: true,
      warn: true,
      name: "bash network",
      detail:
        "on (tools.bash.network: true), in the host's network namespace: services on its 127.0.0.1 and ::1 are reachable " +
        `from bash (${report.userNetProblem}); install slirp4netns ` +
        "(Debian: apt-get install slirp4netns) or set tools.bash.network: false",
    };
  }
  return {
    ok: true,
    name: "bash network",
    detail:
      `on (tools.bash.network: true), in a network namespace of its own, linked out by ${net.slirp4netns}: the host's ` +
      "127.0.0.1, ::1 and abstract unix sockets unreachable; DNS " +
      (net.resolv === undefined
        ? "through the host's nameservers"
        : `through 10.0.2.3 to the host's loopback resolver (${net.resolv.path} replaced inside)`),
  };
}

/** Which uid the shell has, and whether host files only root may read are out of its reach. */
function identityCheck(
  report: SandboxReport,
  sandbox: Sandbox,
  probe: Awaited<ReturnType<typeof probeSandbox>>,
): Check {
  const shadow = probe.shadowReadable === undefined
    ? ""
    : `; /etc/shadow ${probe.shadowReadable ? "READABLE" : "unreadable"} inside`;
  if (sandbox.identity !== undefined) {
    return {
      ok: probe.shadowReadable !== true,
      name: "sandbox uid",
      detail: `${sandbox.identity.uid} on the host (the workspace owner inside; the roots and ` +
        `${
          sandbox.identity.home?.path ?? "no home"
        } mapped to it): host files only root may read ` +
        `are unreadable${shadow}`,
    };
  }
  if (Deno.uid() !== 0) {
    return {
      ok: true,
      name: "sandbox uid",
      detail: `${Deno.uid()}, rousseau's own: the shell reads what that user may${shadow}`,
    };
  }
  return {
    ok: true,
    warn: true,
    name: "sandbox uid",
    detail: `0 (no unprivileged shell: ${report.identityProblem}): host files only root may ` +
      `read (/etc/shadow, /root, keys under /etc and /var/lib) are readable inside${shadow}`,
  };
}

/** How bash's file changes reach the workspace: observed through the overlay, or predicted. */
function changesCheck(report: SandboxReport, sandbox: Sandbox, roots: readonly string[]): Check {
  const fitted = sandboxForRoots(sandbox, roots);
  const overlay = fitted.sandbox.overlay;
  const why = fitted.overlayProblem ?? report.overlayProblem;
  return {
    ok: true,
    ...(overlay === undefined ? { warn: true } : {}),
    name: "bash changes",
    detail: overlay !== undefined
      ? `observed: each command runs over an overlay of the roots (upper layers in ` +
        `${overlay.base}); what it changed is judged as writes and kept for undo before it lands`
      : `predicted from the command line, the roots bound read-write (no overlay: ${why}); ` +
        "undo scans the workspace around each call",
  };
}

function isSocket(path: string): boolean {
  try {
    return Deno.statSync(path).isSocket === true;
  } catch {
    return false;
  }
}

/** What the state directory holds and how long it keeps it (nothing is created to say so). */
function stateChecks(config: Config): Check[] {
  try {
    const db = sessionsPath(config);
    const exists = (() => {
      try {
        return Deno.statSync(db).isFile;
      } catch {
        return false;
      }
    })();
    let sessions = 0;
    if (exists) {
      using store = openSessionStore(db);
      sessions = store.list().length;
    }
    const [held, kept] = stateLines(config, stateUsage(config, sessions));
    return [{ ok: true, name: "state", detail: held }, {
      ok: true,
      name: "retention",
      detail: kept,
    }];
  } catch (error) {
    return [{
      ok: false,
      name: "state",
      detail: `${config.stateDir}: ${error instanceof Error ? error.message : String(error)}`,
    }];
  }
}

/** Flags of `doctor`. */
export interface DoctorFlags extends GlobalFlags, PolicyFlags, ProviderFlags {
  /** `--online`: contact the provider. */
  readonly online?: boolean;
}

/** Runs `doctor` and returns its exit code. */
export async function doctorCommand(flags: DoctorFlags): Promise<number> {
  const checks: Check[] = [];
  const configCheck = await attempt("config", async () => {
    const config = await loadConfig(flags.config);
    return config.file === undefined
      ? "no config file (defaults apply)"
      : `${config.file} is valid`;
  });
  checks.push(configCheck);
  if (configCheck.ok) {
    const config = await loadConfig(flags.config);
    checks.push(
      await attempt("provider", () => {
        const settings = providerSettings(config, flags);
        providerFrom(config, flags); // throws with what to set when the key is missing
        const key = settings.apiKey === undefined
          ? "no API key (none needed for a local server)"
          : "API key set (not shown)";
        const base = settings.baseUrl ?? wireNamed(settings.name)!.defaultBaseUrl;
        return Promise.resolve(`${settings.name} · model ${settings.model} · ${key} · ${base}`);
      }),
    );
    checks.push(await attempt("server", () => reachProvider(providerSettings(config, flags))));
    if (flags.online) {
      checks.push(await attempt("online", () => probe(providerSettings(config, flags))));
      checks.push(await attempt("tool call", () => toolProbe(config, flags)));
    }
    checks.push(
      await attempt("approver", () => {
        const policies = (["tool", "run", "chat", "mcp"] as const).map((command) => {
          const policy = resolvePolicy(command, config.approver, flags);
          const rules = policy.lists.deny.length + policy.lists.ask.length +
            policy.lists.allow.length;
          return `${command}: ${policy.mode}${
            policy.mode === "pattern" ? ` (${rules} rules, default ${policy.default})` : ""
          }`;
        });
        const source = config.approver ? "agent.approver in config" : "no policy configured";
        return Promise.resolve(`${source}; ${policies.join("; ")}`);
      }),
    );
    const workspace = await attempt("workspace", async () => {
      const ws = await workspaceFrom(flags, config);
      return `confined to ${ws.roots.join(", ")} (symlinks resolved, opened files re-checked)`;
    });
    checks.push(workspace);
    if (workspace.ok) checks.push(...await contextChecks(flags, config));
    // One trial run of bwrap serves the sandbox, layers and network lines.
    const resolved = resolveSandbox(config);
    resolved.catch(() => {}); // a failure is reported by the sandbox line below
    const sandbox = await attempt("sandbox", async () => {
      const report = await resolved;
      if (report.sandbox === undefined) return report.summary;
      return `${report.summary}; ${await bwrapVersion(report.sandbox.bwrap)}; own PID namespace`;
    });
    checks.push(sandbox);
    if (sandbox.ok && workspace.ok) {
      const report = await resolved;
      checks.push(...await wallChecks(report, (await workspaceFrom(flags, config)).roots));
    }
    if (workspace.ok) {
      const ws = await workspaceFrom(flags, config);
      const report = await resolved.catch(() => undefined);
      // The policy and the worker grants derived from it, side by side, per command.
      for (const command of ["run", "chat", "mcp"] as const) {
        checks.push(
          await attempt(`layers ${command}`, () => {
            const policy = resolvePolicy(command, config.approver, flags);
            const sandbox = report?.sandbox === undefined
              ? undefined
              : sandboxForRoots(report.sandbox, ws.roots).sandbox;
            const grants = grantsFor(policy, ws, sandbox);
            checkGrants(policy, grants, sandbox);
            const tools = TOOLS.map((tool) => `${tool}=${standing(policy, tool)}`).join(" ");
            return Promise.resolve(`policy ${tools} → worker ${grantsText(grants)}`);
          }),
        );
      }
      const servers = Object.keys(config.mcpServers);
      if (servers.length > 0) {
        checks.push(
          await attempt("mcp servers", async () => {
            const warnings: string[] = [];
            await using sources = await connectMcpServers(config.mcpServers, {
              cwd: ws.roots[0]!,
              onWarning: (message) => warnings.push(message),
            });
            const down = servers.filter((name) => sources.unavailable(name) !== undefined);
            if (down.length > 0) throw new Error(warnings.join("; "));
            const count = (name: string) =>
              sources.tools.filter((tool) => tool.name.startsWith(`mcp__${name}__`)).length;
            return servers.map((name) => `${name}: ${count(name)} tools`).join(", ") +
              " (operator-configured processes: outside the worker and the sandbox)";
          }),
        );
      }
      checks.push({
        ok: true,
        name: "worker",
        detail: "no net, env, ffi, sys or import for any command; processes bash starts are " +
          "not bound by Deno permissions (only the sandbox reaches them)",
      });
      checks.push(
        report?.sandbox?.network === true ? networkCheck(report, report.sandbox) : await attempt(
          "bash network",
          () =>
            Promise.resolve(
              report?.sandbox === undefined ? "not restricted (bash is not sandboxed)" : "off",
            ),
        ),
      );
    }
    checks.push(...stateChecks(config));
  }
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) =>
    // Details quote paths (instruction files, links' targets) and servers' errors: shown as text.
    `${c.ok ? (c.warn ? "warn" : "ok  ") : "FAIL"}  ${c.name.padEnd(width)}  ${visible(c.detail)}`
  );
  await writeStdout(lines.join("\n") + "\n");
  return checks.every((c) => c.ok) ? EXIT.ok : EXIT.failure;
}
