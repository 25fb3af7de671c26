import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const RUNTIME = join(REPO, "scripts", "bench", "runtime.ts");
const ALL = join(REPO, "scripts", "bench", "main.ts");

const ROWS = [
  "cold_start",
  "cold_version",
  "cold_help",
  "cold_tool_read_floor",
  "read_calls",
  "read_calls_in_flight",
  ...["mcp", "run", "pi"].flatMap((mode) =>
    ["read", "edit", "write", "bash", "grep"].map((tool) => `peer_${mode}_${tool}`)
  ),
  "bash_true",
  "bash_true_bwrap",
  "rss_bash",
  "rss_read",
  "rss_grep",
  "agent_scripted",
  "agent_http",
  "mcp_sequential",
  "mcp_in_flight",
  ...["live", "process"].flatMap((kind) =>
    ["tree", "headers"].flatMap((tree) =>
      ["rare", "common_literal", "class", "alternation"].map((q) => `${kind}_grep_${tree}_${q}`)
    )
  ),
];

/** Parsed JSON, untyped (the report's shape is what the test checks). */
// deno-lint-ignore no-explicit-any
function json(text: string): any {
  return JSON.parse(text);
}

async function run(
  script: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", join(REPO, "deno.json"), script, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

// Only checks that the benchmark runs and reports every row; timings are never asserted. The
// peer pi is not installed (`--no-peers`: no registry in tests), its rows say so.
Deno.test("bench runtime.ts --quick writes a table and JSON with every row", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rousseau-bench-runtime-" });
  try {
    const out = join(dir, "out");
    const result = await run(RUNTIME, [
      ..."--quick --no-peers --seed 7".split(" "),
      "--out",
      out,
      "--dir",
      dir,
    ]);
    assertEquals(result.code, 0, result.stderr);
    assertStringIncludes(result.stdout, "seed 7 (`--seed 7` reproduces the tree)");
    assertEquals(json(await Deno.readTextFile(join(dir, "live-300-s7-v1.ok"))).files, 300);
    assertStringIncludes(result.stdout, "| row ");
    assertStringIncludes(result.stdout, "## read through the gate, per call (µs)");
    assertEquals(
      await Deno.readTextFile(join(out, "runtime.md")),
      result.stdout.replace(/\n$/, ""),
    );
    const report = json(await Deno.readTextFile(join(out, "runtime.json")));
    assertEquals(report.rows.map((r: { id: string }) => r.id), ROWS);
    for (const row of report.rows) {
      for (const key of ["name", "unit", "ours", "comparison", "ratio", "target", "target_met"]) {
        assert(key in row, `row ${row.id} has ${key}`);
      }
      // A row without a figure must say why (bwrap missing, the MCP server not answering).
      assert(typeof row.ours === "number" || typeof row.note === "string", `row ${row.id}`);
      assertStringIncludes(result.stdout, `\`${row.id}\``);
      if (row.id.startsWith("peer_pi_")) assertEquals(row.note, "pi not measured: `--no-peers`");
    }
    assertEquals(await Deno.stat(join(dir, "peers")).then(() => true, () => false), false);
    assert(Array.isArray(report.breakdowns) && report.breakdowns.length === 5, "5 breakdowns");

    // The same seed reuses the tree; another seed's tree replaces it.
    const again = await run(RUNTIME, [
      ..."--quick --only live_grep_tree_rare --seed 7".split(" "),
      "--out",
      out,
      "--dir",
      dir,
    ]);
    assertEquals(again.code, 0, again.stderr);
    assertEquals(again.stderr.includes("generating"), false, again.stderr);
    const other = await run(RUNTIME, [
      ..."--quick --only live_grep_tree_rare --seed 8".split(" "),
      "--out",
      out,
      "--dir",
      dir,
    ]);
    assertEquals(other.code, 0, other.stderr);
    assertStringIncludes(other.stderr, "generating");
    assertEquals(
      (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).filter((n) =>
        n.startsWith("live-")
      ).sort(),
      ["live-300-s8-v1", "live-300-s8-v1.ok"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench --only runs the selected runtime row and no grep suite", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rousseau-bench-all-" });
  try {
    const out = join(dir, "out");
    const result = await run(ALL, [
      ..."--quick --no-peers --only cold_start".split(" "),
      "--out",
      out,
      "--dir",
      dir,
    ]);
    assertEquals(result.code, 0, result.stderr);
    const json = JSON.parse(await Deno.readTextFile(join(out, "runtime.json")));
    assertEquals(json.rows.map((r: { id: string }) => r.id), ["cold_start"]);
    assertEquals(await Deno.stat(join(out, "results.json")).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bench runtime.ts rejects a seed that is not a non-negative integer", async () => {
  const result = await run(RUNTIME, ["--seed", "1.5", "--out", "/nonexistent"]);
  assertEquals(result.code, 1);
  assertStringIncludes(result.stderr, "bench: --seed: not a non-negative integer: 1.5");
});

Deno.test("bench runtime.ts rejects an unknown row", async () => {
  const result = await run(RUNTIME, ["--only", "nope", "--out", "/nonexistent"]);
  assertEquals(result.code, 1);
  assertStringIncludes(result.stderr, 'bench: unknown row "nope" (want one of cold, calls,');
});
