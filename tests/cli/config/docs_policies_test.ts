/**
 * Every complete policy shown in the docs passes `policy test --strict`: the examples the
 * docs give hold, and no rule there is dead. A doc that teaches a broken policy fails here.
 */

import { join } from "node:path";
import { parse } from "yaml";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { REPO, runCli } from "../../_helpers/cli.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

async function policyBlocks(): Promise<{ file: string; yaml: string }[]> {
  const files = ["README.md"];
  for await (const entry of Deno.readDir(join(REPO, "docs"))) {
    if (entry.name.endsWith(".md")) files.push(join("docs", entry.name));
  }
  const out: { file: string; yaml: string }[] = [];
  for (const file of files.sort()) {
    const text = await Deno.readTextFile(join(REPO, file));
    for (const match of text.matchAll(/```yaml\n([\s\S]*?)```/g)) {
      const lines = match[1]!.split("\n");
      const indent = Math.min(
        ...lines.filter((l) => l.trim() !== "").map((l) => l.length - l.trimStart().length),
      );
      const yaml = lines.map((l) => l.slice(indent)).join("\n");
      const value = parse(yaml) as { agent?: { approver?: unknown } } | null;
      if (value?.agent?.approver !== undefined) out.push({ file, yaml });
    }
  }
  return out;
}

Deno.test("docs: every complete policy in the docs passes policy test --strict", async (t) => {
  const blocks = await policyBlocks();
  assert(blocks.length >= 4, `only ${blocks.length} policies found in the docs`);
  await using ws = await tmpWorkspace();
  for (const [i, block] of blocks.entries()) {
    await t.step(`${block.file} #${i + 1}`, async () => {
      const path = join(ws.outside, `policy-${i}.yaml`);
      // Server paths in the docs do not exist here; the flag names a workspace that does.
      const yaml = block.yaml.replace(/^workspace:\n {2}roots: .*\n/m, "")
        .replace(/^state:\n {2}dir: .*\n/m, "");
      // A snippet about MCP tools may leave out the servers they come from.
      const servers = [...new Set([...yaml.matchAll(/mcp__([a-z0-9_]+?)__/g)].map((m) => m[1]!))]
        .filter((name) => !yaml.includes(`\n  ${name}:`));
      const stubs = servers.length === 0
        ? ""
        : `mcp_servers:\n${servers.map((n) => `  ${n}: {command: "true"}\n`).join("")}`;
      await Deno.writeTextFile(path, yaml + stubs);
      const out = await runCli([
        "--config",
        path,
        "--workspace",
        ws.root,
        "policy",
        "test",
        "--strict",
      ]);
      assertEquals(out.code, 0, `${block.file}:\n${out.stdout}${out.stderr}`);
    });
  }
});
