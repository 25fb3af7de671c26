/**
 * grep's walk against a directory swapped for a symlink while it runs, through a live
 * `rousseau mcp` whose tool worker has started its prefilter worker (`tools/_grep_pool.ts`).
 *
 * The race: the walk lists `swap/d` while it is a real directory (its `secret.txt` inside the
 * workspace), and by the time a file below it is opened, `d` is a symlink to a directory
 * outside holding a `secret.txt` of its own. `O_NOFOLLOW` guards only the last component, and
 * Deno's read grant checks the path string, so the prefilter worker (read on the roots) and
 * grep's own unproved look-ahead may both read the outside file. The promise: they may only
 * drop candidates; what reaches a result was read through an fd proved inside the workspace,
 * so the outside file's text never appears in any result.
 *
 * Public reports of the same class in other agents' tools:
 * - spoj/tg-bot2#50: a checked path opened again with `O_NOFOLLOW`, which guards only the last
 *   component; a loop swapping a parent directory for a symlink to `/etc` won the race.
 * - garrytan/gstack#1420: the same check-then-open race measured at 22% over 1,000 reads.
 * - anomalyco/opencode#11415 (reverting #7501): grep following symlinks out of the project.
 */

import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { serveMcp } from "../_helpers/mcp_client.ts";
import { until } from "../_helpers/until.ts";

const SECRET = "QX7-OUTSIDE-SECRET-81f2c";
/** Files in the tree the first call walks, so that the tool worker starts its prefilter. */
const BULK_FILES = 1_100;
/** Files walked before `d` on every swap call: past grep's solo start, so chunks go out. */
const FILLER_FILES = 300;
/** Most grep calls over the swapped tree (the loop also stops after `BUDGET_MS`). */
const MAX_CALLS = 3_000;
/** Time given to the swap loop; a bound on the test's length, not an assertion. */
const BUDGET_MS = 30_000;

function threads(pid: number): number {
  return [...Deno.readDirSync(`/proc/${pid}/task`)].length;
}

async function grepText(client: Client, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name: "grep", arguments: args });
  const content = result.content as { type: string; text: string }[];
  return content.map((c) => c.text).join("");
}

Deno.test("confinement: grep never returns a file through a directory swapped for a symlink, with the prefilter worker running", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < BULK_FILES; i++) files[`bulk/f${String(i).padStart(5, "0")}.txt`] = "x\n";
  for (let i = 0; i < FILLER_FILES; i++) {
    files[`swap/a_filler/f${String(i).padStart(4, "0")}.txt`] = "filler\n";
  }
  const outside: Record<string, string> = {};
  // The same names inside and outside: the walk lists the inside ones, the open may land
  // outside. Only the outside copies hold the secret.
  for (let i = 0; i < 60; i++) {
    const name = `secret${String(i).padStart(2, "0")}.txt`;
    files[`swap/d/${name}`] = "inside, nothing to see\n";
    outside[name] = `${SECRET}\n`;
  }
  await using ws = await tmpWorkspace({ files, outside });
  await Deno.symlink(ws.outside, ws.path("swap", "d.link"));

  const served = await serveMcp(ws.root);
  const { client, pid } = served;
  let swapper: Deno.ChildProcess | undefined;
  try {
    // A first call that walks more than 1,000 files: the tool worker then starts the
    // prefilter worker, one more thread in the server process.
    const before = threads(pid);
    const first = await grepText(client, { pattern: "nothing-matches-this", path: ws.root });
    assertEquals(first, "no matches");
    await until("the prefilter worker's thread", () => threads(pid) > before, {
      limitMs: 20_000,
      everyMs: 50,
      state: () => `threads ${threads(pid)}, ${before} before`,
    });

    // rename(2) a directory and a symlink in and out at the same name, as fast as sh can.
    swapper = new Deno.Command("/bin/sh", {
      args: [
        "-c",
        'cd "$0" && while [ ! -e ../stop ]; do ' +
        "mv -T d d.real; mv -T d.link d; mv -T d d.link; mv -T d.real d; done",
        ws.path("swap"),
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();

    let calls = 0;
    let insideSeen = 0;
    const deadline = Date.now() + BUDGET_MS;
    for (; calls < MAX_CALLS && Date.now() < deadline; calls++) {
      // Mostly the swapped tree (fast); now and then the whole workspace.
      const path = calls % 50 === 49 ? ws.root : ws.path("swap");
      const text = await grepText(client, { pattern: "QX7-OUTSIDE|inside, nothing", path });
      assert(!text.includes(SECRET), `call ${calls} leaked the outside file:\n${text}`);
      if (text.includes("inside, nothing")) insideSeen++;
    }
    // The tree was really searched while it moved (rows from the inside copies came back).
    assert(insideSeen > 0, `no call found the inside files in ${calls} calls`);
    assert(calls >= 100, `only ${calls} calls ran`);
  } finally {
    await Deno.writeTextFile(ws.path("stop"), "");
    await swapper?.status;
    await served.close();
  }
  assertEquals(await Deno.readTextFile(join(ws.outside, "secret00.txt")), `${SECRET}\n`);
  assert(!served.stderr().includes(SECRET), served.stderr());
});
