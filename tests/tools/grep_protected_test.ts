/**
 * grep and rousseau's own files (spec tools.md "Protected paths"; issue 15 item 2): the
 * config file in use, the config directory and the state directory are skipped silently by
 * the walk, through symlinks too, and refused when named as the root. The workspace here
 * carries the `protected` list the way the walls-tools change hands it to the tools.
 *
 * The attack it protects against (issue 15): with the state directory inside the workspace,
 * grep returned the audit log and every session transcript to the model.
 */

import { join } from "node:path";
import {
  createBuiltinTools,
  createInProcessHost,
  DEFAULT_LIMITS,
  Registry,
  type ToolResult,
  type Workspace,
} from "../../mod.ts";
import { assertEquals } from "../_helpers/assert.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const NEEDLE = "NEEDLE_91c2";

function grepIn(ws: TmpWorkspace, protectedPaths: readonly string[], path: string) {
  const workspace = { roots: ws.workspace.roots, protected: protectedPaths } as Workspace;
  const registry = new Registry(createBuiltinTools());
  const host = createInProcessHost(registry, { workspace, limits: DEFAULT_LIMITS, env: {} });
  return host.call("grep", { pattern: NEEDLE, path }, new AbortController().signal);
}

function files(result: ToolResult, ws: TmpWorkspace): string[] {
  assertEquals(result.isError, false, result.output);
  return result.output.trimEnd().split("\n").map((row) =>
    row.slice(ws.root.length + 1, row.indexOf(":1: "))
  );
}

Deno.test("grep protected paths: the state dir and the config in use are skipped silently", async () => {
  await using ws = await tmpWorkspace({
    files: {
      "a.txt": `${NEEDLE}\n`,
      ".github/rousseau.yaml": `# ${NEEDLE}\n`,
      ".github/workflow.yml": `${NEEDLE}\n`,
      ".rousseau-state/audit.jsonl": `{"input":"${NEEDLE}"}\n`,
      ".rousseau-state/sessions.db": `${NEEDLE}\n`,
    },
  });
  await Deno.symlink(ws.path(".rousseau-state/audit.jsonl"), ws.path("z-link.txt"));
  await Deno.symlink(ws.path(".github/rousseau.yaml"), ws.path("z-config.txt"));
  const guard = [ws.path(".github/rousseau.yaml"), ws.path(".rousseau-state")];
  assertEquals(files(await grepIn(ws, guard, ws.root), ws), [".github/workflow.yml", "a.txt"]);
  // Without the list (today's CLI until the workspace carries it), the same walk finds them.
  assertEquals(files(await grepIn(ws, [], ws.root), ws).length, 7);
});

Deno.test("grep protected paths: a root among them is refused", async () => {
  await using ws = await tmpWorkspace({ files: { "state/audit.jsonl": `${NEEDLE}\n` } });
  const guard = [ws.path("state")];
  for (const path of [ws.path("state"), ws.path("state/audit.jsonl"), ws.path("state/../state")]) {
    assertEquals(await grepIn(ws, guard, path), {
      output: `grep: ${path} is rousseau's own configuration or state`,
      isError: true,
    });
  }
});

Deno.test("grep protected paths: a protected path named through a symlink is met resolved", async () => {
  await using ws = await tmpWorkspace({
    files: { "real-state/audit.jsonl": `${NEEDLE}\n`, "b.txt": `${NEEDLE}\n` },
  });
  await Deno.symlink(ws.path("real-state"), ws.path("alias"));
  // The list names the alias; the walk meets the real directory.
  assertEquals(files(await grepIn(ws, [ws.path("alias")], ws.root), ws), ["b.txt"]);
  assertEquals(
    (await grepIn(ws, [join(ws.path("alias"))], ws.path("real-state"))).output,
    `grep: ${ws.path("real-state")} is rousseau's own configuration or state`,
  );
});
