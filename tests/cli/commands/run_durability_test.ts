/**
 * `rousseau run` keeps a reply that asks for tool calls on disk before the calls change
 * anything, seen from the outside: the real CLI under strace against a loopback model.
 */

import { join } from "node:path";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { CLI_ARGS, REPO, TEST_HOME } from "../../_helpers/cli.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

Deno.test("run: a reply asking for a write is synced to disk before the write touches the workspace", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "before\n" } });
  const file = ws.path("a.txt");
  await using server = startFakeAnthropic([
    { tools: [{ name: "write", input: { path: file, content: "after\n" } }] },
    { tools: [{ name: "write", input: { path: file, content: "again\n" } }] },
    { text: "done" },
  ]);
  const state = await Deno.makeTempDir({ dir: TEST_HOME, prefix: "durable-" });
  try {
    // The trace goes to a file of its own: on stderr, the CLI's lines would split its lines.
    const traced = join(state, "trace");
    const out = await new Deno.Command("strace", {
      args: [
        "-o",
        traced,
        "-f",
        "-y",
        "-tt",
        "-e",
        "trace=openat,fsync,fdatasync,sendto",
        "-e",
        "signal=none",
        // Every fdatasync starts 300 ms late: a write that did not wait for the session's
        // sync would open its file while the sync is still under way.
        "-e",
        "inject=fdatasync:delay_enter=300000",
        Deno.execPath(),
        ...CLI_ARGS,
        "--workspace",
        ws.root,
        "--allow",
        "write",
        "run",
        "--output",
        "json",
        "write it",
      ],
      cwd: REPO,
      env: {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: "test-key",
        NO_COLOR: "1",
        XDG_CONFIG_HOME: `${state}/config`,
        XDG_DATA_HOME: `${state}/data`,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const trace = await Deno.readTextFile(traced);
    assertEquals(out.code, 0, new TextDecoder().decode(out.stderr).slice(-3000));
    assertEquals(await Deno.readTextFile(file), "again\n");
    // Each write opens a temporary file beside its target. Before the k-th, the session's
    // log (sessions.db-wal) has been synced k times since the first request to the model,
    // each sync complete. A sync shows as one line, or as `<unfinished ...>` and, on its
    // thread, `<... fdatasync resumed>` once it returns.
    const lines = trace.split("\n");
    const pending = new Set<string>();
    const synced: number[] = [];
    lines.forEach((line, i) => {
      const thread = /^(?:\[pid\s+)?(\d+)/.exec(line)?.[1] ?? "";
      if (/\bf(data)?sync\(\d+<[^>]*sessions\.db-wal>/.test(line)) {
        if (line.includes("<unfinished ...>")) pending.add(thread);
        else if (/\) = 0( \(DELAYED\))?$/.test(line)) synced.push(i);
      } else if (/<\.\.\. f(data)?sync resumed>\) = 0( \(DELAYED\))?$/.test(line)) {
        if (pending.delete(thread)) synced.push(i);
      }
    });
    const asked = lines.findIndex((line) => /sendto\(.*POST \/v1\/messages/.test(line));
    assert(asked >= 0, trace.slice(-3000));
    const writes = lines.flatMap((line, i) =>
      line.includes("openat(") && line.includes("O_CREAT") && line.includes(".rousseau.tmp")
        ? [i]
        : []
    );
    assertEquals(writes.length, 2, trace.slice(-3000));
    writes.forEach((at, k) => {
      const before = synced.filter((i) => i > asked && i < at).length;
      assert(
        before >= k + 1,
        `${before} syncs of the session log returned before write ${k + 1} (line ${at}):\n` +
          lines.slice(Math.max(0, at - 30), at + 1).join("\n"),
      );
    });
  } finally {
    await Deno.remove(state, { recursive: true });
  }
});
