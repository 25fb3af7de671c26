/**
 * Promise: the run header states what the bash sandbox holds and what it does not (issue 15,
 * items 6 and 9), and the result object's `layers` keeps exactly the fields cli.md names.
 *
 * @module
 */

import { assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { describeLayers, layersLine } from "../../cli/layers/grants.ts";
import { resolvePolicy } from "../../cli/config/policy.ts";
import { createWorkspace } from "../../mod.ts";

Deno.test("header: the sandbox's walls, the process limit, or what an unconfined bash can do", async () => {
  const workspace = await createWorkspace([Deno.cwd()]);
  const policy = resolvePolicy("tool", undefined, {});
  const sandbox = { bwrap: "/usr/bin/bwrap", network: false, hide: [] };
  // As root without an unprivileged shell the header says what that exposes.
  const who = Deno.uid() === 0 ? "uid 0: root-only host files readable, see doctor, " : "";
  const limited = describeLayers(policy, workspace, null, {
    ...sandbox,
    pids: { dir: "/sys/fs/cgroup/pids/rousseau/1", max: 512 },
  });
  assertStringIncludes(
    layersLine(limited),
    ` · sandbox=bwrap (no capabilities, ${who}processes≤512, changes predicted) · net=off`,
  );
  const identity = {
    perl: "/usr/bin/perl",
    setpriv: "/usr/bin/setpriv",
    unshare: "/usr/bin/unshare",
    uid: 65534,
    gid: 65534,
    calls: { unshare: 272, mount: 165 },
  };
  assertStringIncludes(
    layersLine(describeLayers(policy, workspace, null, { ...sandbox, identity })),
    " · sandbox=bwrap (no capabilities, uid 65534, processes unlimited: no pids cgroup, see " +
      "doctor, changes predicted) · ",
  );
  const overlay = { setpriv: "/usr/bin/setpriv", unshare: "/usr/bin/unshare", mount: "/bin/mount" };
  assertStringIncludes(
    layersLine(
      describeLayers(policy, workspace, null, {
        ...sandbox,
        overlay: { ...overlay, base: "/state/overlay", owner: "1.1" },
      }),
    ),
    ` · sandbox=bwrap (no capabilities, ${who}processes unlimited: no pids cgroup, see doctor, ` +
      "changes observed) · ",
  );
  assertStringIncludes(
    layersLine(describeLayers(policy, workspace, null, sandbox)),
    ` · sandbox=bwrap (no capabilities, ${who}processes unlimited: no pids cgroup, see doctor, ` +
      "changes predicted) · ",
  );
  assertStringIncludes(
    layersLine(describeLayers(policy, workspace, null, undefined)),
    " · sandbox=none (bash unconfined: a process that detaches (setsid, double fork) can " +
      "outlive the call unless rousseau is root on cgroup v2, and as root it can read rousseau's " +
      "environment) · ",
  );
  // The walls ride outside the JSON: the layers object keeps the fields cli.md names.
  assertEquals(Object.keys(JSON.parse(JSON.stringify(limited))), [
    "approver",
    "confinement",
    "worker_permissions",
    "sandbox",
    "bash_network",
  ]);
});
