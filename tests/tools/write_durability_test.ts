/**
 * When `write` and `edit` sync a file's data before naming it: always for a new file; for a
 * replacement, unless the file system orders the data before the rename itself
 * (tools/_replace_durability.ts). The table is tested on mountinfo texts; the tools under
 * strace, with the workspace's list of such devices set both ways.
 */

import { join } from "node:path";
import { deviceNumber, replaceSafeDevices } from "../../tools/_replace_durability.ts";
import { assertEquals } from "../_helpers/assert.ts";
import { callsBetweenMarks } from "../_helpers/strace_marks.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const MOD = new URL("../../mod.ts", import.meta.url).href;

Deno.test("replace durability: ext4 with its defaults orders a replaced file's data; other file systems and options do not", () => {
  const mountinfo = [
    "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict,resuid=65534,resgid=65534",
    "30 26 254:16 / /srv rw,relatime shared:5 - ext4 /dev/vdb rw,data=journal",
    "31 26 254:32 / /a rw - ext4 /dev/vdc rw,noauto_da_alloc",
    "32 26 254:48 / /b rw - ext4 /dev/vdd rw,data=writeback",
    "33 26 259:300 / /c rw - xfs /dev/nvme0n1p1 rw,attr2,inode64",
    "34 26 0:22 / /dev/shm rw - tmpfs tmpfs rw,size=24683748k",
    "35 26 0:40 / /d rw - btrfs /dev/sda1 rw,ssd",
    // The same device under two types (never in practice) counts as neither.
    "36 26 254:64 / /e rw - ext4 /dev/vde rw",
    "37 26 254:64 / /f rw - fuseblk /dev/vde rw",
    "garbage line",
    "",
  ].join("\n");
  assertEquals(replaceSafeDevices(mountinfo).sort((a, b) => a - b), [
    deviceNumber(254, 0),
    deviceNumber(254, 16),
  ]);
  // glibc's makedev, as `stat` reports st_dev.
  assertEquals(deviceNumber(254, 0), 65024);
  assertEquals(deviceNumber(259, 300), 1114924);
  assertEquals(deviceNumber(0, 22), 22);
});

/**
 * fdatasync calls on temporary files of ours, per tool call, in a child process running the
 * built-in tools in-process on `root`, whose workspace lists `safe` as replace-safe devices.
 */
async function syncsPerCall(
  root: string,
  safe: readonly number[],
  calls: readonly { tool: string; input: unknown }[],
): Promise<number[]> {
  const script = `
    import { createBuiltinTools, createInProcessHost, createWorkspace, DEFAULT_LIMITS, Registry } from ${
    JSON.stringify(MOD)
  };
    const workspace = { ...await createWorkspace([${JSON.stringify(root)}]), replaceSafeDevices: ${
    JSON.stringify(safe)
  } };
    const host = createInProcessHost(new Registry(createBuiltinTools()), { workspace, limits: DEFAULT_LIMITS, env: {} });
    for (const { tool, input } of ${JSON.stringify(calls)}) {
      Deno.stderr.writeSync(new TextEncoder().encode("MARK\\n"));
      const result = await host.call(tool, input, new AbortController().signal);
      if (result.isError) throw new Error(result.output);
    }
    Deno.stderr.writeSync(new TextEncoder().encode("MARK\\n"));
  `;
  return await callsBetweenMarks(script, /\bf(data)?sync\(\d+<[^>]*\.rousseau\.tmp>/);
}

Deno.test("write and edit sync a replacement before naming it unless its file system orders the data; a new file always", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "one\n" } });
  const dev = (await Deno.stat(ws.root)).dev;
  const calls = [
    { tool: "write", input: { path: join(ws.root, "a.txt"), content: "two\n" } },
    { tool: "edit", input: { path: join(ws.root, "a.txt"), old_string: "two", new_string: "3" } },
    { tool: "write", input: { path: join(ws.root, "new.txt"), content: "new\n" } },
  ];
  // The workspace's device listed: replacements are not synced, the new file is.
  assertEquals(await syncsPerCall(ws.root, [dev], calls), [0, 0, 1]);
  assertEquals(await Deno.readTextFile(ws.path("a.txt")), "3\n");
  await Deno.remove(ws.path("new.txt"));
  // Not listed (another file system, or none known): every call syncs.
  assertEquals(await syncsPerCall(ws.root, [dev + 1], calls), [1, 1, 1]);
});
