/**
 * A full disk under the real CLI: the workspace and the state directory on a small tmpfs
 * (mounted here, as root, and unmounted in a finally), filled by the test, by bash, or by a
 * write bigger than the space left. The promises: no half-written file, no torn audit line
 * that breaks `audit verify` for good, a clear error that names the disk and what to do, a
 * session store that still opens, nothing left behind.
 *
 * Public reports of the same failures in other agents:
 * - can1357/oh-my-pi#8596 (fixed by #8598): an append cut short by ENOSPC left a torn line,
 *   and the next append fused onto it; the fix truncates a failed append back, as here.
 * - anomalyco/opencode#7607: a disk that ran out mid-session left 0-byte JSON files and the
 *   session would not open again.
 * - anthropics/claude-code#49876: an interrupted append left a block in the session file that
 *   silently cut the resumed context.
 */

import { join } from "node:path";
import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
} from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { INTERRUPTED } from "../../../agent/session_store.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { fill, smallDisk } from "../../_helpers/small_disk.ts";
import { serveMcp } from "../../_helpers/mcp_client.ts";

/** Names in `dir` ending in `.tmp` (a write's temporary that a failure left behind). */
async function temporaries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.endsWith(".tmp")) out.push(entry.name);
  }
  return out;
}

function envOf(disk: string): Record<string, string> {
  return { XDG_DATA_HOME: join(disk, "data"), XDG_CONFIG_HOME: join(disk, "config") };
}

const ENOSPC_HINT = "no space left on device; free space on that file system, or move the " +
  "state directory elsewhere with state.dir, then run again (the log itself is intact)";

Deno.test("write: a full disk leaves the target's old content and no temporary file", async () => {
  await using disk = await smallDisk("1m");
  const ws = join(disk.dir, "ws");
  await Deno.mkdir(ws);
  const target = join(ws, "target.txt");
  await Deno.writeTextFile(target, "old content\n");
  const out = await runCli(
    ["--workspace", ws, "--allow", "write", "tool", "write", "-"],
    {
      stdin: JSON.stringify({ path: target, content: "x".repeat(3 * 1024 * 1024) }),
      env: envOf(disk.dir),
    },
  );
  assertEquals(out.code, 1, out.stderr);
  assertEquals(out.stdout, "");
  assertEquals(out.stderr, `write: write ${target}: no space left on device\n`);
  assertEquals(await Deno.readTextFile(target), "old content\n");
  assertEquals(await temporaries(ws), []);
});

Deno.test("audit: a line cut short by a full disk is taken back; audit verify stays intact", async () => {
  await using disk = await smallDisk("2m");
  const ws = join(disk.dir, "ws");
  await Deno.mkdir(ws);
  const file = join(ws, "a.txt");
  await Deno.writeTextFile(file, "a\n");
  const env = envOf(disk.dir);
  const log = join(disk.dir, "data", "rousseau", "audit.jsonl");
  const read = (pad: string) =>
    runCli(["--workspace", ws, "tool", "read", JSON.stringify({ path: file, pad })], { env });
  // Steer the log's end so that the next line starts in the last page's free room and cannot
  // end there: once no page is free, its write is cut short (tmpfs counts whole pages).
  assertEquals((await read("")).code, 0);
  let lines = (await Deno.readTextFile(log)).trimEnd().split("\n");
  const executeLength = lines.at(-2)!.length + 1; // the read's tool.execute line, pad ""
  let room = 0;
  for (let i = 0; i < 8; i++) {
    room = 4096 - (await Deno.stat(log)).size % 4096;
    if (room >= 64 && room <= executeLength + 700) break;
    assertEquals((await read("p".repeat(300))).code, 0);
  }
  assert(room >= 64 && room <= executeLength + 700, `room ${room}`);
  const before = await Deno.readFile(log);
  await fill(disk.dir);

  const cut = await read("q".repeat(Math.max(0, room - executeLength + 120)));
  assertEquals(cut.code, 1, cut.stderr);
  assertEquals(cut.stdout, "");
  // Not a byte of the line stays, and no empty head beside it.
  assertEquals(await Deno.readFile(log), before);
  assertEquals(cut.stderr, `rousseau: audit log ${log}: cannot record the call: ${ENOSPC_HINT}\n`);
  assertEquals(await temporaries(join(disk.dir, "data", "rousseau")), []);

  await Deno.remove(join(disk.dir, "fill"));
  assertEquals((await read("after")).code, 0);
  const verify = await runCli(["audit", "verify"], { env });
  assertEquals(verify.code, 0, verify.stdout + verify.stderr);
  lines = (await Deno.readTextFile(log)).trimEnd().split("\n");
  assertStringIncludes(verify.stdout + verify.stderr, `intact, ${lines.length} lines`);
});

Deno.test("audit: a running mcp server stops a call at the audit once the disk is full, and serves again once there is room", async () => {
  // The server keeps its room probe open between lines (approver/audit/_head.ts): it must
  // still need a new block for every line, not keep one a filled disk cannot take.
  await using disk = await smallDisk("2m");
  const ws = join(disk.dir, "ws");
  await Deno.mkdir(ws);
  const file = join(ws, "a.txt");
  await Deno.writeTextFile(file, "a\n");
  const env = envOf(disk.dir);
  const state = join(disk.dir, "data", "rousseau");
  const log = join(state, "audit.jsonl");
  await using served = await serveMcp(ws, [], { env });
  const read = async (pad: string) => {
    const result = await served.client.callTool({ name: "read", arguments: { path: file, pad } });
    return (result.content as { text: string }[])[0]!.text;
  };
  assertEquals(await read(""), "a\n");
  // Steer the log's end so that the next line fits in its last page: only the room probe can
  // refuse it then (tmpfs counts whole pages).
  let room = 0;
  for (let i = 0; i < 24; i++) {
    room = 4096 - (await Deno.stat(log)).size % 4096;
    if (room >= 1024) break;
    assertEquals(await read("p".repeat(300)), "a\n");
  }
  assert(room >= 1024, `room ${room}`);
  const before = await Deno.readFile(log);
  await fill(disk.dir);

  const refused = await assertRejects(() => read(""));
  assertStringIncludes(refused.message, `audit log ${log}: cannot record the call: ${ENOSPC_HINT}`);
  // The line was taken back, and nothing is left beside the log.
  assertEquals(await Deno.readFile(log), before);
  assertEquals(await temporaries(state), []);

  await Deno.remove(join(disk.dir, "fill"));
  assertEquals(await read("after"), "a\n");
  assertEquals(await served.close(), 0, served.stderr());
  const verify = await runCli(["audit", "verify"], { env });
  assertEquals(verify.code, 0, verify.stdout + verify.stderr);
  assertEquals(await temporaries(state), []);
});

Deno.test("audit: a bash call that fills the disk under the state directory ends with a clear error and a log that verifies", async () => {
  await using disk = await smallDisk("2m");
  const ws = join(disk.dir, "ws");
  await Deno.mkdir(ws);
  const env = envOf(disk.dir);
  const state = join(disk.dir, "data", "rousseau");
  const bash = (command: string) =>
    runCli(["--workspace", ws, "--allow", "bash", "tool", "bash", JSON.stringify({ command })], {
      env,
    });
  assertEquals((await bash("echo ready")).code, 0);
  const full = await bash("head -c 10M /dev/zero > big; echo done");
  assertEquals(full.code, 1, full.stderr);
  assertEquals(full.stdout, "");
  // Whatever the call left, the chain holds as it is, before any cleanup or next run.
  const verify = await runCli(["audit", "verify"], { env });
  assertEquals(verify.code, 0, verify.stdout + verify.stderr);
  assertEquals(await temporaries(state), []);
  assertStringIncludes(
    full.stderr,
    `rousseau: audit log ${join(state, "audit.jsonl")}: cannot record the call: ${ENOSPC_HINT}`,
  );
  await Deno.remove(join(ws, "big")).catch(() => {});
  const next = await bash("echo again");
  assertEquals(next.code, 0, next.stderr);
  assertEquals(next.stdout, "again\n");
  assertEquals((await runCli(["audit", "verify"], { env })).code, 0);
  // The overlay's scratch is gone once the call ended.
  assertEquals(await Array.fromAsync(Deno.readDir(join(state, "overlay")), (e) => e.name), []);
});

Deno.test("run: a model that fills the disk is stopped with a clear error; session, undo and audit log stay usable", async () => {
  await using disk = await smallDisk("4m");
  const ws = join(disk.dir, "ws");
  await Deno.mkdir(ws);
  const keep = join(ws, "keep.txt");
  await Deno.writeTextFile(keep, "kept\n");
  const env = envOf(disk.dir);
  const log = join(disk.dir, "data", "rousseau", "audit.jsonl");
  await using server = startFakeAnthropic([
    { tools: [{ name: "write", input: { path: keep, content: "changed once\n" } }] },
    { tools: [{ name: "bash", input: { command: "head -c 10M /dev/zero > big; echo $?" } }] },
    { text: "continued" },
  ]);
  const withModel = { ...env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key" };
  const args = ["--workspace", ws, "--allow", "write", "--allow", "bash", "run"];
  const out = await runCli([...args, "--output", "json", "fill it"], { env: withModel });
  assertEquals(out.code, 1, out.stderr);
  // stdout stays one JSON object, naming the disk and what to do.
  const result = JSON.parse(out.stdout);
  assertEquals(result.subtype, "error");
  assertEquals(result.result, `audit log ${log}: cannot record the call: ${ENOSPC_HINT}`);
  assertEquals(server.requests.length, 2);

  // The session store opens and lists the run, while the disk is still full.
  const list = await runCli(["--workspace", ws, "session", "list", "--json"], { env });
  assertEquals(list.code, 0, list.stderr);
  assertStringIncludes(list.stdout, result.session_id);

  await Deno.remove(join(ws, "big")).catch(() => {});
  const verify = await runCli(["audit", "verify"], { env });
  assertEquals(verify.code, 0, verify.stdout + verify.stderr);
  // The turn's changes come back whole (the undo store holds no cut copy).
  const undo = await runCli(["--workspace", ws, "undo"], { env });
  assertEquals(undo.code, 0, undo.stdout + undo.stderr);
  assertEquals(await Deno.readTextFile(keep), "kept\n");
  // And the session continues.
  const next = await runCli([...args, "-c", "go on"], { env: withModel });
  assertEquals(next.code, 0, next.stderr);
  assertEquals(next.stdout, "continued\n");
  // The bash call did run (its file was there): the model is not told it did not.
  const answered = server.requests[2]!.body.messages.at(-2).content[0];
  assertEquals(answered.type, "tool_result");
  assertEquals(answered.is_error, true);
  assertEquals(answered.content, INTERRUPTED);
  assertEquals((await runCli(["audit", "verify"], { env })).code, 0);
});

Deno.test("overlay: a bash call that fills the scratch under the state directory sees ENOSPC; the scratch is emptied, the log verifies", async () => {
  await using disk = await smallDisk("2m");
  await using ws = await tmpWorkspace({ files: { "keep.txt": "kept\n" } });
  const env = envOf(disk.dir);
  const state = join(disk.dir, "data", "rousseau");
  const out = await runCli([
    "--workspace",
    ws.root,
    "--allow",
    "bash",
    "tool",
    "bash",
    JSON.stringify({ command: "head -c 10M /dev/zero > big; echo status $?; cat keep.txt" }),
  ], { env });
  // The workspace's disk has room; the overlay's upper directory (on the state disk) has not.
  assertEquals(out.code, 0, out.stderr);
  assertEquals(
    out.stdout,
    "head: error writing 'standard output': No space left on device\nstatus 1\nkept\n",
  );
  assertEquals(await Deno.readTextFile(ws.path("keep.txt")), "kept\n");
  assertEquals(await Array.fromAsync(Deno.readDir(join(state, "overlay")), (e) => e.name), []);
  assertEquals((await runCli(["audit", "verify"], { env })).code, 0);
  const next = await runCli(
    ["--workspace", ws.root, "--allow", "bash", "tool", "bash", '{"command":"echo again"}'],
    { env },
  );
  assertEquals(next.stdout, "again\n", next.stderr);
});
