/**
 * `rousseau doctor`: checks the configuration and states each permission layer as it will
 * be set up, so an operator sees what holds before anything runs. Exit 1 if a check fails.
 *
 * @module
 */

import { derivePermissions } from "../tools/mod.ts";
import { loadConfig } from "./config.ts";
import { EXIT } from "./errors.ts";
import { type GlobalFlags, workspaceFrom } from "./options.ts";
import { writeStdout } from "./output.ts";
import { type PolicyFlags, resolvePolicy } from "./policy.ts";
import { resolveSandbox } from "./sandbox.ts";

interface Check {
  readonly ok: boolean;
  readonly name: string;
  readonly detail: string;
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

/** Runs `doctor` and returns its exit code. */
export async function doctorCommand(flags: GlobalFlags & PolicyFlags): Promise<number> {
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
      await attempt("approver", () => {
        const policies = (["tool", "run", "chat"] as const).map((command) => {
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
    // One trial run of bwrap serves the sandbox, worker and network lines.
    const resolved = resolveSandbox(config);
    resolved.catch(() => {}); // a failure is reported by the sandbox line below
    const sandbox = await attempt("sandbox", async () => {
      const report = await resolved;
      if (report.sandbox === undefined) return report.summary;
      return `${report.summary}; ${await bwrapVersion(report.sandbox.bwrap)}; own PID namespace`;
    });
    checks.push(sandbox);
    if (workspace.ok) {
      checks.push(
        await attempt("worker", async () => {
          const ws = await workspaceFrom(flags, config);
          const report = await resolved.catch(() => undefined);
          const grants = derivePermissions(
            ws,
            report?.sandbox ? { sandbox: report.sandbox } : {},
          );
          return `read=${grants.read.join(",")} write=${grants.write.join(",")} ` +
            `run=${grants.run.join(",")}; no net, env, ffi, sys or import ` +
            "(processes bash starts are not bound by these; only the sandbox reaches them)";
        }),
      );
      checks.push(
        await attempt("bash network", async () => {
          const report = await resolved.catch(() => undefined);
          if (report?.sandbox === undefined) return "not restricted (bash is not sandboxed)";
          return report.sandbox.network ? "on (tools.bash.network: true)" : "off";
        }),
      );
    }
  }
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) =>
    `${c.ok ? "ok  " : "FAIL"}  ${c.name.padEnd(width)}  ${c.detail}`
  );
  await writeStdout(lines.join("\n") + "\n");
  return checks.every((c) => c.ok) ? EXIT.ok : EXIT.failure;
}
