/**
 * `deno task bench --only overlay --quick` runs the overlay rows end to end (a 1,000-file git
 * repository, every variant once) and writes the table and the JSON it promises. Figures are
 * not asserted: speed is measured by the bench itself, side by side in one run.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assertEquals, assertStringIncludes } from "../../_helpers/assert.ts";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));

Deno.test("bench --only overlay --quick writes bench/overlay.md and .json with every variant", async () => {
  const out = await Deno.makeTempDir({ prefix: "rousseau-bench-out-" });
  const dir = await Deno.makeTempDir({ prefix: "rousseau-bench-dir-" });
  try {
    const result = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        join(REPO, "deno.json"),
        join(REPO, "scripts", "bench", "main.ts"),
        "--quick",
        "--only",
        "overlay",
        "--out",
        out,
        "--dir",
        dir,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(result.code, 0, new TextDecoder().decode(result.stderr));
    const json = JSON.parse(await Deno.readTextFile(join(out, "overlay.json")));
    assertEquals(json.rows.map((r: { command: string }) => r.command), [
      "true",
      "touch",
      "write_1000",
    ]);
    for (const row of json.rows) {
      for (const key of ["overlay", "mirror", "bwrap", "sh"]) {
        assertEquals(typeof row[key], "number", JSON.stringify(row));
      }
    }
    assertStringIncludes(await Deno.readTextFile(join(out, "overlay.md")), "| overlay / bwrap |");
  } finally {
    await Deno.remove(out, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});
