import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";

const SCRIPT = fileURLToPath(new URL("../../../scripts/bench/grep.ts", import.meta.url));

// Only checks that the benchmark runs and reports; timings are never asserted.
Deno.test("bench grep.ts runs on a tiny tree and writes a table", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rousseau-bench-" });
  try {
    const out = join(dir, "out");
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        SCRIPT,
        "--dir",
        dir,
        "--tree-files",
        "50",
        "--runs",
        "1",
        "--headers",
        "none",
        "--out",
        out,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    assertEquals(run.code, 0, decoder.decode(run.stderr));
    const stdout = decoder.decode(run.stdout);
    assertStringIncludes(stdout, "| tree ");
    assertStringIncludes(stdout, "| files-50 ");
    assertEquals(await Deno.readTextFile(join(out, "results.md")), stdout.replace(/\n$/, ""));
    const json = JSON.parse(await Deno.readTextFile(join(out, "results.json")));
    assert(Array.isArray(json.rows) && json.rows.length === 8, "8 rows: 2 trees x 4 queries");
    for (const row of json.rows) {
      for (const key of ["name", "ours_ms", "rg_j1_ms", "rg_ms", "ratio"]) {
        assert(key in row, `row ${row.name} has ${key}`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
