/**
 * grep under approver `path` rules (issue 16 item 4; spec tools.md grep): a file whose
 * resolved path the policy does not allow is skipped, so its content never leaves, even when
 * the walk reaches it through a symlink under an allowed directory. Through the real gate
 * (approver → host → grep) and through `deno task cli tool grep` (the tool worker).
 *
 * Sources of the cases: symlinks under an allowed directory leading elsewhere —
 * carderne/pi-sandbox#34 ("read tool bypasses allowRead via symlinks pointing outside cwd"),
 * gotgenes/pi-packages#493 ("symlink traversal bypasses path-based permission rules");
 * a filtered grep walk that must keep no-follow semantics for directory links —
 * can1357/oh-my-pi#7242 (review: "Preserve no-follow semantics in filtered searches").
 */

import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { callTool, type GateOptions } from "../../agent/tool_host.ts";
import {
  type AskOperator,
  compilePolicy,
  createApprover,
  pathScope,
  type PolicyConfig,
} from "../../approver/mod.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  DEFAULT_LIMITS,
  Registry,
  resolveReal,
} from "../../mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { CLI_ARGS, REPO, runCli, TEST_HOME } from "../_helpers/cli.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";

/** src/ is what rules allow; secret/ is elsewhere in the same workspace. */
async function project(): Promise<TmpWorkspace> {
  const ws = await tmpWorkspace({
    files: {
      "src/a.txt": "needle in src\n",
      "secret/key.txt": "needle SECRET-KEY\n",
      "secret/many.txt": "needle SECRET 1\nneedle SECRET 2\nneedle SECRET 3\n",
      "secret/hard.txt": "needle HARDLINKED\n",
    },
  });
  await Deno.symlink(ws.path("secret/key.txt"), ws.path("src/b-link.txt")); // absolute
  await Deno.symlink("../secret/many.txt", ws.path("src/0-many.txt")); // relative, sorts first
  await Deno.symlink("../secret", ws.path("src/dir-link")); // a directory link
  await Deno.link(ws.path("secret/hard.txt"), ws.path("src/hard.txt"));
  return ws;
}

function gate(
  ws: TmpWorkspace,
  policy: PolicyConfig,
  operator?: AskOperator,
  max = 2,
): GateOptions {
  const registry = new Registry(createBuiltinTools());
  return {
    registry,
    host: createInProcessHost(registry, {
      workspace: ws.workspace,
      limits: { ...DEFAULT_LIMITS, grepMaxMatches: max },
      env: {},
    }),
    approver: createApprover(policy, { resolvePath: resolveReal }),
    source: "model",
    ...(operator === undefined ? {} : { operator }),
  };
}

async function grep(options: GateOptions, path: string): Promise<string> {
  const result = await callTool(
    options,
    "grep",
    { pattern: "needle", path },
    new AbortController().signal,
  );
  return result.output;
}

/** `path` as an RE2 literal. */
function escape(path: string): string {
  return path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

Deno.test("grep path rules: a symlink under the allowed directory leading elsewhere is skipped", async (t) => {
  await using ws = await project();
  const src = ws.path("src");
  const allowSrc: PolicyConfig = {
    mode: "pattern",
    allow: [{ tool: "grep", path: `^${escape(src)}(/|$)` }],
  };
  await t.step("allow src only: the links' targets never come back", async () => {
    // The hard link is a file of src/ in its own right (a path rule sees paths, and read of
    // src/hard.txt is allowed the same way); the symlinks are files of secret/.
    assertEquals(
      await grep(gate(ws, allowSrc), src),
      `${src}/a.txt:1: needle in src\n${src}/hard.txt:1: needle HARDLINKED\n`,
    );
  });
  await t.step("rows of a skipped file do not count toward the cap", async () => {
    // src/0-many.txt (3 rows, walked first) would have filled the cap of 2 and truncated.
    const out = await grep(gate(ws, allowSrc), src);
    assert(!out.includes("truncated"), out);
    assert(!out.includes("SECRET"), out);
  });
  await t.step("the root itself through .., a directory link, a file link: denied", async () => {
    for (const path of [`${src}/../secret`, `${src}/dir-link`, `${src}/b-link.txt`]) {
      assertEquals(
        await grep(gate(ws, allowSrc), path),
        "tool call blocked: denied by pattern policy",
      );
    }
  });
  await t.step("a deny rule on a directory holds against a grep of its parent", async () => {
    const out = await grep(
      gate(ws, {
        mode: "pattern",
        default: "allow",
        deny: [{ tool: "grep", path: `^${escape(ws.path("secret"))}(/|$)` }],
      }),
      ws.root,
    );
    assertEquals(
      out,
      `${ws.root}/src/a.txt:1: needle in src\n${ws.root}/src/hard.txt:1: needle HARDLINKED\n`,
    );
  });
  await t.step("a deny match rule on the path is judged per file too", async () => {
    const out = await grep(
      gate(ws, {
        mode: "pattern",
        default: "allow",
        deny: [{ tool: "grep", match: '"path":"[^"]*/secret/' }],
      }),
      src,
    );
    assert(!out.includes("SECRET"), out);
  });
  await t.step(
    "an operator-approved ask: files that would ask pass, denied ones do not",
    async () => {
      const policy: PolicyConfig = {
        mode: "pattern",
        deny: [{ tool: "grep", path: "/secret/key\\.txt$" }],
        ask: [{ tool: "grep" }],
      };
      const out = await grep(gate(ws, policy, () => Promise.resolve(true), 10), src);
      assert(!out.includes("SECRET-KEY"), out); // denied by a rule
      assert(out.includes("needle SECRET 1"), out); // would ask: the operator approved that
    },
  );
});

Deno.test("grep path rules: pathScope judges only what a rule can tell apart", () => {
  const request = { tool: "grep", input: { pattern: "x", path: "/w" } };
  const allow = { decision: "allow" } as const;
  assertEquals(pathScope(compilePolicy({ allow: [{ tool: "grep" }] }), request, allow), undefined);
  assertEquals(pathScope(compilePolicy({ mode: "allow_all" }), request, allow), undefined);
  assertEquals(
    pathScope(compilePolicy({ allow: [{ tool: "read", path: "^/w" }] }), request, allow),
    undefined,
  );
  const read = { tool: "read", input: { path: "/w/a" } };
  assertEquals(pathScope(compilePolicy({ allow: [{ path: "^/w" }] }), read, allow), undefined);
  assert(pathScope(compilePolicy({ allow: [{ path: "^/w" }] }), request, allow) !== undefined);
});

/** A config allowing grep under src/ only. */
async function srcOnlyConfig(ws: TmpWorkspace): Promise<string> {
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(
    config,
    `state:\n  dir: ${join(ws.outside, "state")}\nagent:\n  approver:\n    mode: pattern\n` +
      `    allow:\n      - tool: grep\n        path: '^${escape(ws.path("src"))}(/|$)'\n`,
  );
  return config;
}

Deno.test("grep path rules: through the CLI and the tool worker", async () => {
  await using ws = await project();
  const src = ws.path("src");
  const config = await srcOnlyConfig(ws);
  const out = await runCli([
    "--config",
    config,
    "--workspace",
    ws.root,
    "tool",
    "grep",
    JSON.stringify({ pattern: "needle", path: src }),
  ]);
  assertEquals([out.code, out.stdout], [
    0,
    `${src}/a.txt:1: needle in src\n${src}/hard.txt:1: needle HARDLINKED\n`,
  ], out.stderr);
});

Deno.test("grep path rules: through rousseau mcp (the MCP router passes the check on)", async () => {
  await using ws = await project();
  const src = ws.path("src");
  const config = await srcOnlyConfig(ws);
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...CLI_ARGS, "--config", config, "--workspace", ws.root, "mcp"],
    env: {
      NO_COLOR: "1",
      XDG_CONFIG_HOME: `${TEST_HOME}/config`,
      XDG_DATA_HOME: `${TEST_HOME}/data`,
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
    },
    cwd: REPO,
    stderr: "pipe",
  });
  const client = new Client({ name: "grep-path-rules-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const result = await client.callTool({
      name: "grep",
      arguments: { pattern: "needle", path: src },
    });
    const content = result.content as { type: string; text: string }[];
    assertEquals(
      content[0]?.text,
      `${src}/a.txt:1: needle in src\n${src}/hard.txt:1: needle HARDLINKED\n`,
    );
  } finally {
    await client.close();
  }
});
