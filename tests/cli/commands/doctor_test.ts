import { join } from "node:path";
import { REPO, runCli } from "../../_helpers/cli.ts";
import { assert, assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { DOCTOR_KEY, doctorWithServer } from "../../_helpers/doctor.ts";
import { startFakeAnthropic } from "../../_helpers/fake_providers.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

const KEY = DOCTOR_KEY;

Deno.test("doctor lists every layer and exits 0 when all checks pass", async () => {
  await using ws = await tmpWorkspace();
  const run = await doctorWithServer(ws.root);
  assertEquals(run.code, 0, run.stdout);
  const names = run.stdout.trimEnd().split("\n").map((line) => line.split(/\s{2,}/)[1]);
  assertEquals(names, [
    "config",
    "provider",
    "server",
    "approver",
    "workspace",
    "instructions",
    "context",
    "sandbox",
    "sandbox caps",
    "sandbox pids",
    "sandbox hide",
    "sandbox uid",
    "sandbox keys",
    "bash changes",
    "layers run",
    "layers chat",
    "layers mcp",
    "worker",
    "bash network",
    "state",
    "retention",
  ]);
  assertMatch(
    run.stdout,
    /ok +provider +anthropic · model claude-sonnet-4-5 · API key set \(not shown\)/,
  );
  assert(!run.stdout.includes(KEY.ANTHROPIC_API_KEY), "doctor printed the key");
  // The default run policy never allows write, edit or bash: no write and no run grant.
  assertMatch(
    run.stdout,
    new RegExp(
      `ok +layers run +policy read=allow grep=allow write=never edit=never bash=never → ` +
        `worker read=${ws.root},/proc/self/fd write=none run=none\n`,
    ),
  );
  assertMatch(
    run.stdout,
    new RegExp(
      `ok +layers chat +policy read=allow grep=allow write=ask edit=ask bash=ask → ` +
        `worker read=${ws.root},(\\S+/overlay,)?/proc/self/fd write=${ws.root}(,\\S+/overlay)? ` +
        `run=\\S+\n`,
    ),
  );
  // On this machine (root, bwrap, overlayfs in a user namespace) bash's changes are observed.
  assertMatch(run.stdout, /ok +bash changes +observed: each command runs over an overlay/);
  assertMatch(run.stdout, /no net, env, ffi, sys or import/);
});

Deno.test("doctor: a missing key fails and says what to set; --online reaches the server", async () => {
  await using ws = await tmpWorkspace();
  const missing = await runCli(["--workspace", ws.root, "doctor"], {
    env: { ANTHROPIC_API_KEY: "" },
  });
  assertEquals(missing.code, 1);
  assertMatch(missing.stdout, /FAIL +provider +anthropic: no API key: set ANTHROPIC_API_KEY/);
  await using server = startFakeAnthropic([{ text: "ok" }]);
  const online = await runCli(["--workspace", ws.root, "doctor", "--online"], {
    env: { ...KEY, ANTHROPIC_BASE_URL: server.url },
  });
  assertEquals(online.code, 0, online.stdout);
  assertMatch(
    online.stdout,
    new RegExp(`ok +online +${server.url}/v1/models: HTTP 200, key accepted`),
  );
  const down = await runCli(["--workspace", ws.root, "doctor", "--online"], {
    env: { ...KEY, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
  });
  assertEquals(down.code, 1);
  assertMatch(down.stdout, /FAIL +online +http:\/\/127.0.0.1:9\/v1\/models: not reachable/);
});

Deno.test("doctor exits 1 and says FAIL for a bad config and for a missing required sandbox", async () => {
  await using ws = await tmpWorkspace();
  const bad = join(ws.outside, "bad.yaml");
  await Deno.writeTextFile(bad, "agent:\n  approver:\n    mode: maybe\n");
  const policy = await runCli(["--config", bad, "--workspace", ws.root, "doctor"], { env: KEY });
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

Deno.test("doctor: configured MCP servers are started and counted; one that cannot start fails", async () => {
  await using ws = await tmpWorkspace();
  const echo = join(REPO, "tests", "testdata", "mcp_echo_server.ts");
  const config = join(ws.outside, "mcp.yaml");
  await Deno.writeTextFile(
    config,
    `mcp_servers:\n  echo:\n    command: ${Deno.execPath()}\n    args: [run, --quiet, -A, ${echo}]\n`,
  );
  await using server = startFakeAnthropic([]);
  const env = { ...KEY, ANTHROPIC_BASE_URL: server.url };
  let out = await runCli(["--config", config, "--workspace", ws.root, "doctor"], { env });
  assertEquals(out.code, 0, out.stdout);
  assertMatch(out.stdout, /ok +mcp servers +echo: \d+ tools \(operator-configured processes/);
  await Deno.writeTextFile(config, "mcp_servers:\n  gone:\n    command: /nonexistent/server\n");
  out = await runCli(["--config", config, "--workspace", ws.root, "doctor"], { env });
  assertEquals(out.code, 1);
  assertMatch(out.stdout, /FAIL +mcp servers +mcp: server "gone" is unavailable: cannot start/);
});

Deno.test("doctor probes the sandbox from inside: no capabilities, the process limit, hidden paths", async () => {
  await using ws = await tmpWorkspace();
  const run = await doctorWithServer(ws.root, {
    dir: ws.outside,
    name: "walls.yaml",
    text: "tools:\n  bash:\n    sandbox: bwrap\n    max_processes: 77\n",
  });
  assertEquals(run.code, 0, run.stdout);
  assertMatch(
    run.stdout,
    /\nok +sandbox caps +none \(CapEff 0000000000000000\), no_new_privs set, no new user namespace\n/,
  );
  if (Deno.uid() === 0) {
    assertMatch(run.stdout, /\nok +sandbox pids +at most 77 processes \(pids cgroup \//);
  } else {
    assertMatch(run.stdout, /\nwarn +sandbox pids +no process limit: /);
  }
  assertMatch(run.stdout, /\nok +sandbox hide +\d+ paths empty inside \(credentials, rousseau's/);
});

Deno.test("doctor: without the sandbox it says what an unconfined bash can still do", async () => {
  await using ws = await tmpWorkspace();
  const run = await doctorWithServer(ws.root, {
    dir: ws.outside,
    name: "none.yaml",
    text: "tools:\n  bash:\n    sandbox: none\n",
  });
  assertEquals(run.code, 0, run.stdout);
  assertMatch(
    run.stdout,
    /\nwarn +bash walls +none: bash runs as rousseau's user with its rights; a process that detaches \(setsid, double fork\) can outlive the call unless rousseau is root on cgroup v2 \(each call then has a cgroup of its own, killed with it\); rousseau's environment \(the API key\) is kept from the same user \(not dumpable\), but not from root\n/,
  );
});
