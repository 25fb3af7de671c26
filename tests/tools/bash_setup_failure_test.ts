/**
 * bash's sandbox set-up failing before the command runs: the result says the set-up failed,
 * in its own words (bwrap's stderr, the set-up's own line), and what to do — never a bare
 * `bash: exit status 1` that reads as the command's status. Each failure here is real: bwrap
 * asked to expose a file that does not exist (it refuses before anything runs), or the
 * set-up asked to join a pids cgroup that does not exist. Every shape of the set-up is run:
 * bwrap alone, the unprivileged shell's (root: setpriv → unshare → perl → bwrap), the overlay's
 * shell (setpriv → unshare → sh → bwrap), and the root overlay's perl, in-process and in the
 * tool worker (whose set-up is started ahead, `_bash_park.ts`). The set-up and the command are
 * told apart by what the shell says on the set-up's own channel once it is done, not by the
 * exit code: a command that itself exits 1 (or prints what bwrap would) keeps its own status.
 *
 * Runs as root (CI does), where every shape is available.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { resolveSandbox } from "../../cli/layers/sandbox.ts";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkerHost,
  createWorkspace,
  DEFAULT_LIMITS,
  Registry,
} from "../../mod.ts";
import { fitSandbox, type Sandbox } from "../../tools/_sandbox.ts";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/nonexistent", LC_ALL: "C" };
const MISSING = "/nonexistent-rousseau-setup-test/resolv.conf";
/** The last line, after the set-up's words; `STATUS` is how the set-up ended. */
const FAILED = "bash: the sandbox could not be set up, so the command did not run (the set-up " +
  "ended with STATUS); nothing was changed: run `rousseau doctor` to check the sandbox, and if " +
  "it passes, try the command again (the machine may have been short of processes, memory or " +
  "namespaces)";
const BWRAP_FAILED = `bwrap: Can't find source path ${MISSING}: No such file or directory\n` +
  FAILED.replace("STATUS", "exit status 1");

interface Seat extends AsyncDisposable {
  readonly root: string;
  readonly sandbox: Sandbox;
}

async function seat(): Promise<Seat> {
  const top = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-setup-fail-" }));
  const root = join(top, "ws");
  const stateDir = join(top, "state");
  await Deno.mkdir(root);
  await Deno.mkdir(stateDir);
  try {
    const report = await resolveSandbox({ values: {}, stateDir, protectedPaths: [stateDir] }, {
      PATH: ENV.PATH,
    });
    const sandbox = report.sandbox;
    assert(sandbox?.overlay !== undefined, `no overlay here: ${report.overlayProblem}`);
    assert(sandbox.identity !== undefined, `no unprivileged shell: ${report.identityProblem}`);
    return {
      root,
      sandbox,
      async [Symbol.asyncDispose]() {
        await Deno.remove(top, { recursive: true });
      },
    };
  } catch (error) {
    await Deno.remove(top, { recursive: true });
    throw error;
  }
}

/** The sandbox's shapes, each with bwrap asked to expose a file that does not exist. */
function shapes(sandbox: Sandbox): Record<string, Sandbox> {
  const { overlay: _o, identity: _i, ...plain } = sandbox;
  const { overlay: _p, ...unprivileged } = sandbox;
  const { identity: _j, ...overlaid } = sandbox;
  return {
    "bwrap alone": plain,
    "the unprivileged shell": unprivileged,
    "the overlay's shell": overlaid,
    "the root overlay": sandbox,
  };
}

function broken(sandbox: Sandbox): Sandbox {
  return { ...sandbox, expose: [...(sandbox.expose ?? []), MISSING] };
}

async function inProcess(
  root: string,
  sandbox: Sandbox,
  command: string,
): Promise<{ output: string; isError: boolean }> {
  const workspace = await createWorkspace([root]);
  const host = createInProcessHost(new Registry(createBuiltinTools()), {
    workspace,
    limits: DEFAULT_LIMITS,
    env: ENV,
    // As the worker host does: covers for the directories the unprivileged shell cannot pass.
    sandbox: fitSandbox(sandbox, workspace.roots),
  });
  return await host.call("bash", { command }, new AbortController().signal);
}

Deno.test("bash says the sandbox set-up failed, in bwrap's words, when bwrap fails before the command", async () => {
  await using s = await seat();
  for (const [shape, sandbox] of Object.entries(shapes(s.sandbox))) {
    const result = await inProcess(s.root, broken(sandbox), "echo ran > ran.txt");
    assertEquals(result.isError, true, shape);
    assertEquals(result.output, BWRAP_FAILED, shape);
    // The command never ran.
    assertEquals(await Array.fromAsync(Deno.readDir(s.root)), [], shape);
  }
});

Deno.test("bash says the sandbox set-up failed when the set-up cannot join the pids cgroup", async () => {
  await using s = await seat();
  const pids = { dir: "/sys/fs/cgroup/nonexistent-rousseau-setup-test", max: 64 };
  // The unprivileged shell's set-up joins the cgroup itself (perl): its own line says why.
  for (const shape of ["the unprivileged shell", "the root overlay"]) {
    const sandbox = { ...shapes(s.sandbox)[shape]!, pids };
    const result = await inProcess(s.root, sandbox, "echo ran > ran.txt");
    assertEquals(result.isError, true, shape);
    assertEquals(
      result.output,
      `bash: cannot join the process-limit cgroup ${pids.dir}/cgroup.procs\n` +
        FAILED.replace("STATUS", "exit status 125"),
      shape,
    );
    assertEquals(await Array.fromAsync(Deno.readDir(s.root)), [], shape);
  }
});

Deno.test("bash says the sandbox set-up failed when the tool worker's set-up started ahead fails", async () => {
  await using s = await seat();
  const workspace = await createWorkspace([s.root]);
  await using host = await createWorkerHost({
    workspace,
    limits: DEFAULT_LIMITS,
    env: ENV,
    sandbox: broken(s.sandbox),
  });
  // The second call takes the set-up the first one started ahead.
  for (const call of [1, 2]) {
    const result = await host.call(
      "bash",
      { command: "echo ran > ran.txt" },
      new AbortController().signal,
    );
    assertEquals(result.isError, true, `call ${call}`);
    assertEquals(result.output, BWRAP_FAILED, `call ${call}`);
  }
  assertEquals(await Array.fromAsync(Deno.readDir(s.root)), []);
});

Deno.test("bash runs the command when its sandbox set-up fails once and then works", async () => {
  await using s = await seat();
  // A bwrap that fails the first time it runs (as when a mount of the host goes away while
  // bwrap binds the host's tree), then is the real one. Reachable by the unprivileged shell.
  const dir = await Deno.makeTempDir({ prefix: "rousseau-setup-once-" });
  try {
    await Deno.chmod(dir, 0o755);
    const marks = join(dir, "marks");
    await Deno.mkdir(marks);
    await Deno.chmod(marks, 0o777);
    for (const [n, [shape, sandbox]] of Object.entries(shapes(s.sandbox)).entries()) {
      const fake = join(dir, `bwrap-${n}`);
      await Deno.writeTextFile(
        fake,
        `#!/bin/sh\nif mkdir ${marks}/${n} 2>/dev/null; then\n` +
          `  echo "bwrap: Can't bind mount /oldroot/ on /newroot/: gone" >&2; exit 1\nfi\n` +
          `exec ${s.sandbox.bwrap} "$@"\n`,
      );
      await Deno.chmod(fake, 0o755);
      const result = await inProcess(s.root, { ...sandbox, bwrap: fake }, "echo ran");
      assertEquals(result, { output: "ran\n", isError: false }, shape);
      // It did fail once.
      assertEquals((await Deno.stat(join(marks, `${n}`))).isDirectory, true, shape);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bash runs the command when a path it hides is gone with its directory before bwrap starts", async () => {
  await using s = await seat();
  // As a socket's server that removed its directory after the call's list of hidden paths
  // was made (tools/_sockets.ts): bwrap cannot make the mount point, in a read-only root.
  const gone = `/var/tmp/rousseau-gone-${crypto.randomUUID()}/late.sock`;
  for (const [shape, sandbox] of Object.entries(shapes(s.sandbox))) {
    const hide = [...sandbox.hide, { path: gone, kind: "file" as const }];
    const result = await inProcess(s.root, { ...sandbox, hide }, "echo ran");
    assertEquals(result, { output: "ran\n", isError: false }, shape);
  }
});

Deno.test("bash keeps the command's own exit status when the command fails like a set-up would", async () => {
  await using s = await seat();
  // The command prints what bwrap would, on stderr and on stdout, and exits 1 itself.
  const command =
    `echo "bwrap: Can't find source path ${MISSING}: No such file or directory" >&2; ` +
    "echo rousseau-bash-set-up-done; exit 1";
  for (const [shape, sandbox] of Object.entries(shapes(s.sandbox))) {
    const result = await inProcess(s.root, sandbox, command);
    assertEquals(result.isError, true, shape);
    assertEquals(
      result.output,
      `bwrap: Can't find source path ${MISSING}: No such file or directory\n` +
        "rousseau-bash-set-up-done\nbash: exit status 1",
      shape,
    );
  }
});
