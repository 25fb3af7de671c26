/**
 * bash's set-up started ahead (`tools/_bash_park.ts`): as root under the overlay, the tool
 * worker starts the next call's perl set-up once a call is over, and the next call hands it
 * the command. These tests run it as the CLI does (a real worker, real bwrap, real overlays)
 * and look at the processes: one parked set-up serves one call only; what is written to the
 * workspace while it waits (on disk, by the write tool, a root replaced) is what the command
 * sees; it dies with the worker and with a killed process; nothing is left in the scratch
 * directory or $TMPDIR.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { descendants } from "../_helpers/processes.ts";
import { serveMcp } from "../_helpers/mcp_client.ts";
import { resolveSandbox } from "../../cli/layers/sandbox.ts";
import { createWorkerHost, createWorkspace, DEFAULT_LIMITS } from "../../tools/mod.ts";
import type { ChangeSet } from "../../tools/types.ts";
import { ENDED, OVERLAY_ROOT_PERL } from "../../tools/_overlay_root.ts";
import { STARTED } from "../../tools/bash.ts";
import { prepareOverlay, removeTree } from "../../tools/_overlay.ts";
import { fitSandbox, procsToJoinOutside, type Sandbox, sandboxArgs } from "../../tools/_sandbox.ts";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/nonexistent", LC_ALL: "C" };

/** The argv of a live process, or undefined once it is gone. */
function argvOf(pid: number): string[] | undefined {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
  } catch {
    return undefined;
  }
}

/**
 * The root overlay set-ups (perl, parent and init) running below `pid`, for the scratch base
 * `scratch` when given (test files run side by side in one process).
 */
function setUps(pid: number, scratch?: string): number[] {
  return descendants(pid).filter((p) => {
    const argv = argvOf(p);
    return argv?.[2] === OVERLAY_ROOT_PERL && (scratch === undefined || argv.includes(scratch));
  });
}

/** Whether `pid` is alive (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/**
 * Whether one of `pids` is a set-up that has cloned its trees and waits for the call: its
 * mount table holds the scratch base, mounted after every tree was cloned.
 */
function waiting(pids: readonly number[], scratch: string): boolean {
  return pids.some((pid) => {
    try {
      return Deno.readTextFileSync(`/proc/${pid}/mountinfo`).split("\n").some((line) =>
        line.split(" ")[4] === scratch
      );
    } catch {
      return false;
    }
  });
}

/** Polls `probe` until it returns something truthy; throws with `what` after 30 s. */
async function until<T>(what: string, probe: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`waited 30 s for ${what}`);
}

interface Bench extends AsyncDisposable {
  readonly root: string;
  readonly scratch: string;
  /** The $TMPDIR the commands and their set-up are given. */
  readonly tmp: string;
  readonly host: Awaited<ReturnType<typeof createWorkerHost>>;
  bash(command: string, signal?: AbortSignal): Promise<{ output: string; isError: boolean }>;
}

/**
 * In the temp dir `top`: a root `ws` owned by root, a state directory, and the CLI's sandbox for
 * them (overlay, unprivileged shell).
 */
async function rootSandbox(
  top: string,
  inside: (root: string) => Promise<string[]> = () => Promise.resolve([]),
): Promise<{ root: string; sandbox: Sandbox }> {
  await Deno.chmod(top, 0o755);
  const root = join(top, "ws");
  const stateDir = join(top, "state");
  await Deno.mkdir(root, { mode: 0o755 });
  await Deno.mkdir(stateDir);
  const report = await resolveSandbox(
    { values: {}, stateDir, protectedPaths: [stateDir, ...await inside(root)] },
    { PATH: ENV.PATH },
  );
  assert(report.sandbox?.overlay !== undefined, `no overlay here: ${report.overlayProblem}`);
  assert(report.sandbox.identity !== undefined, `not unprivileged: ${report.identityProblem}`);
  return { root, sandbox: report.sandbox };
}

/**
 * A root owned by root, the CLI's sandbox for it (overlay, unprivileged shell), a worker;
 * `inside` makes paths in the root that the sandbox hides (as rousseau's own files are).
 */
async function bench(inside?: (root: string) => Promise<string[]>): Promise<Bench> {
  const top = await Deno.makeTempDir({ prefix: "rousseau-test-" });
  try {
    const { root, sandbox } = await rootSandbox(top, inside);
    const tmp = join(top, "tmp");
    await Deno.mkdir(tmp);
    const workspace = await createWorkspace([root]);
    const host = await createWorkerHost({
      workspace,
      limits: DEFAULT_LIMITS,
      env: { ...ENV, TMPDIR: tmp },
      sandbox,
    });
    const scratch = sandbox.overlay!.base;
    return {
      root,
      scratch,
      tmp,
      host,
      async bash(command, signal = new AbortController().signal) {
        return await host.call("bash", { command }, signal);
      },
      async [Symbol.asyncDispose]() {
        host.close();
        await until("the set-ups to end", () => setUps(Deno.pid, scratch).length === 0);
        await Deno.remove(top, { recursive: true });
      },
    };
  } catch (error) {
    await Deno.remove(top, { recursive: true });
    throw error;
  }
}

Deno.test("a parked bash set-up serves one call only: the call after it gets another one", async () => {
  await using b = await bench();
  assertEquals(await b.bash("true"), { output: "", isError: false });
  const first = await until(
    "a parked set-up",
    () => setUps(Deno.pid, b.scratch).length > 0 && setUps(Deno.pid, b.scratch),
  );
  // The next call runs in one of them: its command appears below it.
  const cut = new AbortController();
  const pending = b.bash("sleep 300", cut.signal);
  const used = await until(
    "the command below a parked set-up",
    () =>
      first.find((pid) =>
        descendants(pid).some((d) => argvOf(d)?.[0] === "sleep" || argvOf(d)?.[0] === "/bin/sleep")
      ),
  );
  cut.abort();
  const result = await pending;
  assert(result.isError && result.output.endsWith("bash: cancelled"), result.output);
  await until("the used set-up to end", () => !alive(used));
  // It is never parked again; the next call runs in another, which ends after it.
  const second = await until("a parked set-up", () => {
    const now = setUps(Deno.pid, b.scratch);
    return now.length > 0 && now;
  });
  assert(!second.includes(used));
  assertEquals(await b.bash("echo again"), { output: "again\n", isError: false });
  await until("a set-up to end after the call", () => second.some((pid) => !alive(pid)));
});

Deno.test("a parked bash set-up shows the workspace as it is at the call, not as it was parked", async () => {
  await using b = await bench();
  await Deno.writeTextFile(join(b.root, "kept.txt"), "before\n");
  await Deno.writeTextFile(join(b.root, "gone.txt"), "x\n");
  assertEquals(await b.bash("cat kept.txt"), { output: "before\n", isError: false });
  const parked = await until(
    "a parked set-up",
    () => waiting(setUps(Deno.pid, b.scratch), b.scratch) && setUps(Deno.pid, b.scratch),
  );
  await Deno.writeTextFile(join(b.root, "kept.txt"), "changed on disk\n");
  await Deno.writeTextFile(join(b.root, "disk.txt"), "written on disk\n");
  await Deno.remove(join(b.root, "gone.txt"));
  const wrote = await b.host.call(
    "write",
    { path: join(b.root, "tool.txt"), content: "written by the write tool\n" },
    new AbortController().signal,
  );
  assert(!wrote.isError, wrote.output);
  assertEquals(await b.bash("cat kept.txt disk.txt tool.txt; ls"), {
    output: "changed on disk\nwritten on disk\nwritten by the write tool\n" +
      "disk.txt\nkept.txt\ntool.txt\n",
    isError: false,
  });
  // That call was the parked set-up's.
  await until("a parked set-up to be used", () => parked.some((pid) => !alive(pid)));
  // A root replaced by another directory at its path while a set-up waits: the call sees the
  // new one (the parked set-up, holding the old one, is not used).
  await until("a parked set-up", () => waiting(setUps(Deno.pid, b.scratch), b.scratch));
  await Deno.rename(b.root, `${b.root}.old`);
  await Deno.mkdir(b.root, { mode: 0o755 });
  await Deno.writeTextFile(join(b.root, "new-root.txt"), "the new root\n");
  assertEquals(await b.bash("ls; cat new-root.txt"), {
    output: "new-root.txt\nthe new root\n",
    isError: false,
  });
});

Deno.test("a parked bash sandbox hides the protected paths inside the workspace: not readable, not writable, not replaceable", async () => {
  // The sandbox is made before the call, the workspace then still without its overlay: the
  // covers inside it are mounted over the overlay at the call. Without them the command would
  // see the files; mounted by bwrap ahead they would lie under the overlay (issue 15, item 2;
  // google-gemini/gemini-cli#29216: a settings directory with credentials mounted into the
  // sandbox).
  await using b = await bench(async (root) => {
    await Deno.mkdir(join(root, ".github"));
    await Deno.writeTextFile(join(root, ".github", "rousseau.yaml"), "secret-config\n");
    await Deno.mkdir(join(root, ".rousseau"));
    await Deno.writeTextFile(join(root, ".rousseau", "audit.jsonl"), "secret-audit\n");
    return [join(root, ".github", "rousseau.yaml"), join(root, ".rousseau")];
  });
  assertEquals(await b.bash("true"), { output: "", isError: false });
  const parked = await until(
    "a parked set-up",
    () => waiting(setUps(Deno.pid, b.scratch), b.scratch) && setUps(Deno.pid, b.scratch),
  );
  const run = await b.bash(
    [
      "cat .github/rousseau.yaml .rousseau/audit.jsonl",
      "ls -A .rousseau",
      "echo planted > .github/rousseau.yaml",
      "echo planted > .rousseau/audit.jsonl",
      "mv .github .github.old",
      "mv .rousseau .rousseau.old",
      "rm -rf .github .rousseau",
      "echo end",
    ].join("; "),
  );
  await until("a parked set-up to be used", () => parked.some((pid) => !alive(pid)));
  assert(run.output.includes("end\n"), run.output);
  assert(!run.output.includes("secret-"), run.output);
  assertEquals(
    await Deno.readTextFile(join(b.root, ".github", "rousseau.yaml")),
    "secret-config\n",
  );
  assertEquals(await Deno.readTextFile(join(b.root, ".rousseau", "audit.jsonl")), "secret-audit\n");
  const names = (await Array.fromAsync(Deno.readDir(b.root))).map((e) => e.name).sort();
  assertEquals(names, [".github", ".rousseau"]);
});

Deno.test("a parked bash set-up dies with its worker and leaves nothing in the scratch directory or $TMPDIR", async () => {
  await using b = await bench();
  assertEquals(await b.bash("echo x > made.txt; echo ok"), { output: "ok\n", isError: false });
  const parked = await until(
    "a parked set-up",
    () => waiting(setUps(Deno.pid, b.scratch), b.scratch) && setUps(Deno.pid, b.scratch),
  );
  b.host.close();
  await until("the parked set-up to end", () => parked.every((pid) => !alive(pid)));
  // The set-up is given this $TMPDIR (the command's /tmp is its own tmpfs); the call's
  // scratch directory was removed after it, and a parked set-up holds none.
  assertEquals((await Array.fromAsync(Deno.readDir(b.tmp))).map((e) => e.name), []);
  assertEquals((await Array.fromAsync(Deno.readDir(b.scratch))).map((e) => e.name), []);
});

Deno.test("a parked bash set-up dies with a rousseau mcp killed outright", async () => {
  const top = await Deno.makeTempDir({ prefix: "rousseau-test-" });
  try {
    await Deno.chmod(top, 0o755);
    const served = await serveMcp(top, ["--approver", "allow_all"]);
    try {
      const result = await served.client.callTool({ name: "bash", arguments: { command: "true" } });
      assert(!result.isError, JSON.stringify(result));
      const parked = await until("a parked set-up", () => {
        const found = setUps(served.pid);
        return found.length > 0 && found;
      });
      Deno.kill(served.pid, "SIGKILL");
      await until("the parked set-up to end", () => parked.every((pid) => !alive(pid)));
    } finally {
      await served.close().catch(() => {});
    }
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});

Deno.test("a parked bash set-up hands the command the default SIGPIPE, fresh and parked", async () => {
  // The set-up ignores SIGPIPE while it hands the runner its part of the call; an ignored
  // signal is inherited through exec, so a runner forked after that would give the command a
  // shell where `yes | head -1` never ends on its own.
  await using b = await bench();
  const command = "sh -c 'kill -PIPE $$; echo survived'; echo status=$?";
  for (const call of ["fresh", "parked"]) {
    assertEquals(await b.bash(command), { output: "status=141\n", isError: false }, call);
  }
});

/** The root overlay's set-up program, started as bash starts it as root (bwrap ahead). */
interface SetUp {
  readonly root: string;
  readonly child: Deno.ChildProcess;
  /** Hands it the call whose sandboxed shell runs `script` (stdin stays open). */
  call(script: string): Promise<void>;
  /** Its stdout up to and including `text` (to its end without), waiting at most 30 s. */
  readUntil(text?: string): Promise<string>;
}

/** Runs `body` with a set-up started in a temp directory; kills and removes it all after. */
async function withSetUp(body: (setUp: SetUp) => Promise<void>): Promise<void> {
  const top = await Deno.makeTempDir({ prefix: "rousseau-test-" });
  let child: Deno.ChildProcess | undefined;
  let dir: string | undefined;
  let timeout: ReturnType<typeof setTimeout> | undefined;
  try {
    const made = await rootSandbox(top);
    const root = made.root;
    const roots = [root];
    const sandbox = fitSandbox(made.sandbox, roots);
    const procs = procsToJoinOutside(sandbox);
    const prepared = prepareOverlay(sandbox.overlay!, roots, {
      identity: sandbox.identity!,
      ...(procs === undefined ? {} : { procs }),
    });
    dir = prepared.dir;
    // bwrap started ahead, as bash does it as root: its shell reads the script.
    const bwrapArgs = sandboxArgs(sandbox, roots, "/", ["/bin/sh", "-s"], true);
    child = new Deno.Command(prepared.program, {
      args: prepared.argv(sandbox.bwrap, bwrapArgs, undefined, { filter: sandbox.seccomp }),
      cwd: root,
      clearEnv: true,
      env: ENV,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const started = child;
    const writer = started.stdin.getWriter();
    const timer = new Promise<"late">((resolve) => timeout = setTimeout(resolve, 30_000, "late"));
    await body({
      root,
      child: started,
      call: (script) =>
        writer.write(
          prepared.input!(sandbox.bwrap, bwrapArgs, undefined, sandbox.seccomp, {
            covers: [],
            script,
          }),
        ),
      async readUntil(text) {
        const reader = started.stdout.getReader();
        let out = "";
        const decoder = new TextDecoder();
        try {
          while (text === undefined || !out.includes(text)) {
            const next = await Promise.race([reader.read(), timer]);
            if (next === "late") {
              throw new Error(`waited 30 s for the command's output; got: ${out}`);
            }
            if (next.done) break;
            out += decoder.decode(next.value);
          }
        } finally {
          reader.releaseLock();
        }
        return out;
      },
    });
    await writer.close().catch(() => {});
    await started.status;
    child = undefined;
  } finally {
    clearTimeout(timeout);
    try {
      child?.kill("SIGKILL");
      await child?.status;
    } catch {
      // already gone
    }
    if (dir !== undefined) removeTree(dir);
    await Deno.remove(top, { recursive: true });
  }
}

Deno.test("the root overlay's set-up runs a call as soon as the call is whole, with its stdin still open", async () => {
  // The call says its length first: the set-up must not wait for its stdin to end (the worker
  // closes it only after a turn of its event loop, which the next set-up's start may hold).
  await withSetUp(async ({ root, child, call, readUntil }) => {
    await call(`cd ${root} && echo ${STARTED} >&2 && exec 2>&1 /bin/sh -c 'echo framed'\n`);
    // stdin stays open: the command's output must come all the same.
    assertEquals(await readUntil("framed\n"), "framed\n");
    await child.stdin.close().catch(() => {});
    const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
    assertEquals(status.code, 0, stderr);
    assertEquals(stderr, `${STARTED}\n${ENDED} 0\n`);
  });
});

Deno.test("the root overlay's set-up says how the command ended and ends its output before it exits itself", async () => {
  // bash returns on the set-up's last words (ENDED, then the end of its output), not on its
  // exit, which waits for its mount namespace's teardown. The set-up's parent is stopped here:
  // it cannot exit, and its output must end all the same, with the command's status.
  await withSetUp(async ({ root, child, call, readUntil }) => {
    // The parent closes its copies of the output once it has forked the init, which then waits
    // for the call: stopped from here on, it cannot exit before the call is over.
    await until("the set-up's parent without stdout and stderr", () => {
      const fds = [...Deno.readDirSync(`/proc/${child.pid}/fd`)].map((e) => e.name);
      return !fds.includes("1") && !fds.includes("2");
    });
    Deno.kill(child.pid, "SIGSTOP");
    try {
      await call(`cd ${root} && echo ${STARTED} >&2 && exec 2>&1 /bin/sh -c 'echo ran; exit 3'\n`);
      const [out, stderr] = await Promise.all([
        readUntil(),
        new Response(child.stderr).text(),
      ]);
      assertEquals(out, "ran\n");
      assertEquals(stderr, `${STARTED}\n${ENDED} 3\n`);
      assert(argvOf(child.pid) !== undefined, "the stopped parent is still there");
    } finally {
      Deno.kill(child.pid, "SIGCONT");
    }
    await child.stdin.close().catch(() => {});
    assertEquals((await child.status).code, 3);
  });
});

Deno.test("the worker asks the host about an empty change set only when the host judges one", async () => {
  await using b = await bench();
  const asked: number[] = [];
  const scope = (appliesEmpty: boolean) => ({
    settleChanges: (set: ChangeSet) => {
      asked.push(set.changes.length);
      return Promise.resolve({ apply: true as const });
    },
    ...(appliesEmpty ? { appliesEmpty: true } : {}),
  });
  const call = (command: string, appliesEmpty: boolean) =>
    b.host.call("bash", { command }, new AbortController().signal, scope(appliesEmpty));
  // A host that applies an empty set as it is (no preview): asked only about a real change.
  assertEquals(await call("echo nothing", true), { output: "nothing\n", isError: false });
  assertEquals(asked, []);
  assertEquals(await call("echo x > made.txt", true), { output: "", isError: false });
  assertEquals(asked, [1]);
  assertEquals(await Deno.readTextFile(join(b.root, "made.txt")), "x\n");
  // One that judges every set (a preview shows the output first): asked about an empty one too.
  assertEquals(await call("echo nothing", false), { output: "nothing\n", isError: false });
  assertEquals(asked, [1, 0]);
});
