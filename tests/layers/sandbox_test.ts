import { join } from "node:path";
import { runCli } from "../_helpers/cli.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { survivors } from "../_helpers/processes.ts";

/** Runs `tool bash` under `sandbox: bwrap` with a fake HOME holding credentials. */
async function sandboxed(command: string, extra: string[] = [], config = "") {
  await using ws = await tmpWorkspace({
    outside: { "home/.ssh/id_ed25519": "PRIVATE KEY", "home/.netrc": "machine x password y" },
  });
  const file = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(file, `tools:\n  bash:\n    sandbox: bwrap\n${config}`);
  const run = await runCli(
    [
      "--config",
      file,
      "--workspace",
      ws.root,
      "tool",
      "bash",
      JSON.stringify({ command }),
      ...extra,
    ],
    { env: { HOME: join(ws.outside, "home"), PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } },
  );
  const outside = (await Array.fromAsync(Deno.readDir(ws.outside))).map((e) => e.name).sort();
  return { run, outside, ws: { root: ws.root, outside: ws.outside } };
}

Deno.test("sandbox: the workspace is writable, everything else is not", async () => {
  const { run, outside, ws } = await sandboxed(
    'echo in > inside.txt && cat inside.txt; echo out > "$OUTSIDE/escaped.txt" 2>&1; touch /etc/rousseau-probe 2>&1; echo done',
    [],
  );
  void ws;
  assertStringIncludes(run.stdout, "in\n");
  assertStringIncludes(run.stdout, "Read-only file system");
  assertStringIncludes(run.stdout, "done\n");
  assertEquals(outside.includes("escaped.txt"), false);
});

Deno.test("sandbox: credential paths are hidden", async () => {
  const { run } = await sandboxed(
    'ls -A "$HOME/.ssh" 2>/dev/null | wc -l; cat "$HOME/.netrc" 2>/dev/null | wc -c',
  );
  assertEquals(run, { code: 0, stdout: "0\n0\n", stderr: "" });
});

Deno.test("sandbox: the network is off unless tools.bash.network is true", async () => {
  // /proc/net/dev lists the interfaces of the command's own network namespace.
  const probe = "grep -c : /proc/net/dev; grep -o '^ *lo:' /proc/net/dev | tr -d ' '";
  const off = await sandboxed(probe);
  assertEquals(off.run.stdout, "1\nlo:\n");
  const on = await sandboxed(probe, [], "    network: true\n");
  assert(Number(on.run.stdout.split("\n")[0]) > 1, `interfaces with network on: ${on.run.stdout}`);
});

Deno.test("sandbox: private /tmp and its own PID namespace", async () => {
  const { run } = await sandboxed("echo $$; ls -A /tmp | grep -v '^rousseau-test-' | wc -l");
  assertEquals(run.stdout, "2\n0\n");
});

Deno.test("sandbox: background processes and a process storm do not outlive the call", async () => {
  const marker = `rousseau-storm-${crypto.randomUUID()}`;
  const { run } = await sandboxed(
    `ln -s "$(command -v sleep)" ./${marker}; for i in $(seq 40); do (./${marker} 1000 &); done; ./${marker} 1000`,
    ["--timeout", "1s"],
  );
  assertStringIncludes(run.stderr, "bash: timed out after 1s");
  // PID namespace teardown kills everything; give the kernel a moment to reap.
  assertEquals(await survivors(marker), 0);
});

Deno.test("sandbox: bwrap asked for but missing stops with a clear error", async () => {
  await using ws = await tmpWorkspace();
  const file = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(file, "tools:\n  bash:\n    sandbox: bwrap\n");
  const run = await runCli(
    ["--config", file, "--workspace", ws.root, "tool", "bash", '{"command":"true"}'],
    { env: { PATH: ws.outside } },
  );
  assertEquals(run.code, 2);
  assertStringIncludes(
    run.stderr,
    'sandbox: tools.bash.sandbox is "bwrap" but bwrap is not installed',
  );
});
