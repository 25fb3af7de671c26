import { join } from "node:path";
import { runCli } from "../_helpers/cli.ts";
import { assertEquals, assertMatch } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

Deno.test("doctor lists every layer and exits 0 when all checks pass", async () => {
  await using ws = await tmpWorkspace();
  const run = await runCli(["--workspace", ws.root, "doctor"]);
  assertEquals(run.code, 0);
  const names = run.stdout.trimEnd().split("\n").map((line) => line.split(/\s{2,}/)[1]);
  assertEquals(names, ["config", "approver", "workspace", "sandbox", "worker", "bash network"]);
  assertMatch(
    run.stdout,
    new RegExp(`ok +worker +read=${ws.root},/proc/self/fd write=${ws.root} run=`),
  );
  assertMatch(run.stdout, /no net, env, ffi, sys or import/);
});

Deno.test("doctor exits 1 and says FAIL for a bad config and for a missing required sandbox", async () => {
  await using ws = await tmpWorkspace();
  const bad = join(ws.outside, "bad.yaml");
  await Deno.writeTextFile(bad, "agent:\n  approver:\n    mode: maybe\n");
  const policy = await runCli(["--config", bad, "--workspace", ws.root, "doctor"]);
  assertEquals(policy.code, 1);
  assertMatch(policy.stdout, /FAIL +approver +approver: unknown mode "maybe"/);
  const sandbox = join(ws.outside, "sandbox.yaml");
  await Deno.writeTextFile(sandbox, "tools:\n  bash:\n    sandbox: bwrap\n");
  const missing = await runCli(["--config", sandbox, "--workspace", ws.root, "doctor"], {
    env: { PATH: ws.outside },
  });
  assertEquals(missing.code, 1);
  assertMatch(
    missing.stdout,
    /FAIL +sandbox +sandbox: tools.bash.sandbox is "bwrap" but bwrap is not installed/,
  );
});
