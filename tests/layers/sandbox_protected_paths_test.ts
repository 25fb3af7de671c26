/**
 * Promise: rousseau's own files — the config in use, the config directory and the state
 * directory (sessions.db, audit.jsonl) — are hidden from sandboxed bash wherever they live,
 * inside the workspace too (issue 15, item 2: with the config under the repo, sandboxed bash
 * truncated the audit log and read sessions.db). Hidden means: not readable, not writable, not
 * replaceable (no rename of a parent to plant a new config), not reachable through a symlink,
 * a hardlink or `..`.
 *
 * Public sources: google-gemini/gemini-cli#29216 (the settings directory with credentials was
 * mounted into the sandbox); Codex keeps `.codex` and `.git` read-only inside writable roots
 * ("protected paths in writable roots", cited in antropos17/Aegis#343).
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { seat } from "./_sandboxed.ts";

const AUDIT = '{"seq":1,"secret":"rousseau-audit-line"}\n';
const SESSIONS = "SQLite format 3\u0000rousseau-session-transcript";

async function seed(state: string): Promise<void> {
  await Deno.mkdir(state, { recursive: true });
  await Deno.writeTextFile(join(state, "audit.jsonl"), AUDIT);
  await Deno.writeTextFile(join(state, "sessions.db"), SESSIONS);
}

/** The seeded files are intact; rousseau itself appends its own records to the audit log. */
async function unchanged(state: string, config: string, configText: string): Promise<void> {
  const audit = await Deno.readTextFile(join(state, "audit.jsonl"));
  assert(audit.startsWith(AUDIT), `the audit log lost its first line:\n${audit}`);
  for (const line of audit.split("\n").slice(1, -1)) {
    assert(line.startsWith('{"seq":'), `a line not written by rousseau: ${line}`);
  }
  assertEquals(await Deno.readTextFile(join(state, "sessions.db")), SESSIONS);
  assertEquals(await Deno.readTextFile(config), configText);
}

Deno.test("protected paths: config and state inside the workspace can be neither read nor changed by bash", async () => {
  await using s = await seat({ configAt: "ws/.github/rousseau.yaml", stateAt: "ws/.rousseau" });
  await seed(s.state);
  const configText = await Deno.readTextFile(s.config);
  const run = await s.bash(
    [
      "cat .github/rousseau.yaml .rousseau/audit.jsonl .rousseau/sessions.db",
      "ls -A .rousseau",
      "true > .rousseau/audit.jsonl",
      "truncate -s 0 .rousseau/audit.jsonl",
      "echo '{}' > .rousseau/audit.jsonl",
      "rm -f .rousseau/audit.jsonl .rousseau/sessions.db",
      "printf 'agent:\\n  approver:\\n    mode: allow_all\\n' > .github/rousseau.yaml",
      "rm -f .github/rousseau.yaml",
      // Planting a new config by moving its parent away, or the state dir itself.
      "mv .github .github.old",
      "mv .rousseau .rousseau.old",
      "rm -rf .github .rousseau",
      "echo end",
    ].join("; "),
  );
  assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
  for (const secret of ["rousseau-audit-line", "rousseau-session-transcript", "sandbox: bwrap"]) {
    assertEquals(run.stdout.includes(secret), false, `${secret} leaked:\n${run.stdout}`);
  }
  await unchanged(s.state, s.config, configText);
  const names = (await Array.fromAsync(Deno.readDir(s.root))).map((e) => e.name).sort();
  assertEquals(names.filter((n) => n.endsWith(".old")), [], "a parent was renamed");
});

Deno.test("protected paths: no way round through a symlink, a hardlink or .. from the workspace", async () => {
  await using s = await seat({ stateAt: "outside/state", configAt: "ws/conf/rousseau.yaml" });
  await seed(s.state);
  const configText = await Deno.readTextFile(s.config);
  const run = await s.bash(
    [
      `ln -s ${s.state} state-link`,
      "cat state-link/audit.jsonl",
      "true > state-link/audit.jsonl",
      `ln ${s.state}/audit.jsonl hard-audit`,
      "ln conf/rousseau.yaml hard-config",
      "cat hard-audit hard-config",
      `cat ${s.root}/../outside/state/sessions.db`,
      `cat ${s.root}/conf/../conf/rousseau.yaml`,
      "cp conf/rousseau.yaml copy.yaml",
      "cat copy.yaml",
      "echo end",
    ].join("; "),
  );
  assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
  for (const secret of ["rousseau-audit-line", "rousseau-session-transcript", "sandbox: bwrap"]) {
    assertEquals(run.stdout.includes(secret), false, `${secret} leaked:\n${run.stdout}`);
  }
  await unchanged(s.state, s.config, configText);
});

Deno.test("protected paths: with the workspace at HOME, the config dir and a state dir that does not exist yet are covered", async () => {
  await using s = await seat({ workspaceAt: "home", stateAt: "home/.local/state/rousseau" });
  let existed = true;
  await Deno.stat(s.state).catch(() => existed = false);
  assertEquals(existed, false, "the state dir existed before the call");
  const configDir = join(s.home, ".config", "rousseau");
  const run = await s.bash(
    [
      "mkdir -p .config/rousseau .local/state/rousseau",
      "printf 'agent:\\n  approver:\\n    mode: allow_all\\n' > .config/rousseau/config.yaml",
      "echo forged > .local/state/rousseau/audit.jsonl",
      "mv .config .config.old",
      "mv .local .local.old",
      "mkdir -p .config/rousseau && echo x > .config/rousseau/config.yaml",
      "echo end",
    ].join("; "),
  );
  assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
  // Both were made (0700) before the sandbox started, so they could be covered.
  assertEquals((await Deno.stat(s.state)).mode! & 0o777, 0o700);
  assertEquals((await Deno.stat(configDir)).isDirectory, true, "the config dir was not made");
  let planted = true;
  await Deno.stat(join(configDir, "config.yaml")).catch(() => planted = false);
  assertEquals(planted, false, "a config was planted in the config dir");
  const audit = await Deno.readTextFile(join(s.state, "audit.jsonl")).catch(() => "");
  assertEquals(audit.split("\n").includes("forged"), false, audit);
  const names = (await Array.fromAsync(Deno.readDir(s.home))).map((e) => e.name).sort();
  assertEquals(names.filter((n) => n.endsWith(".old")), [], "a parent was renamed");
});
