/**
 * Promise: a fork bomb in sandboxed bash is contained and the call returns (issue 15, item 6:
 * a function named `ls` got past the approver and forked without bound). Where a pids cgroup
 * can be made (root, as in CI), every sandboxed command joins it first; the timeout then kills
 * what is left, and nothing survives the call.
 *
 * Public source: anthropics/claude-code#35986 (commands started with `setsid`, `nohup` or `&`
 * die with the sandbox: the PID namespace and --die-with-parent hold).
 *
 * @module
 */

import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { survivors } from "../_helpers/processes.ts";
import { ROOT, seat } from "./_sandboxed.ts";

/**
 * Sets `$cg` to the shell's pids cgroup directory (one fork, before any bomb), and prints
 * its limit and count with builtins only (a saturated cgroup has no fork to spare).
 */
const FIND_CGROUP = 'c=$(sed -n "s/^[0-9]*:pids://p" /proc/self/cgroup); cg=; ' +
  "for d in /sys/fs/cgroup/pids /sys/fs/cgroup /sys/fs/cgroup/unified; do " +
  '[ -f "$d$c/pids.max" ] && { cg=$d$c; break; }; done; ';
const SHOW_LIMIT = 'read max < "$cg/pids.max"; read cur < "$cg/pids.current"; ' +
  "echo max=$max current=$cur";

Deno.test({
  name: "process limit: sandboxed bash runs in a pids cgroup limited to tools.bash.max_processes",
  ignore: !ROOT,
  async fn() {
    await using s = await seat({ bash: "    max_processes: 64\n" });
    const run = await s.bash(FIND_CGROUP + SHOW_LIMIT);
    assertEquals(run.code, 0, run.stdout + run.stderr);
    assertStringIncludes(run.stdout, "max=64 current=");
  },
});

Deno.test({
  name: "process limit: a fork bomb (the issue's `ls` function) is contained and the call returns",
  ignore: !ROOT,
  async fn() {
    await using s = await seat({ bash: "    max_processes: 64\n" });
    const marker = `rousseau-bomb-${crypto.randomUUID()}`;
    // A marked sleeper first (to look for survivors), then the bomb in the background; the
    // shell counts, with builtins only, what its cgroup holds while the bomb pushes against
    // the limit, and spins (no fork needed) into the timeout.
    const run = await s.bash(
      `ln -s "$(command -v sleep)" ./${marker}; ./${marker} 1000 & ${FIND_CGROUP}` +
        "ls() { ls | ls & }; (ls) 2>/dev/null; " +
        // Two seconds by /proc/uptime, read by a builtin.
        "read t0 r < /proc/uptime; t0=${t0%.*}; t=$t0; " +
        "while [ $t -lt $((t0 + 2)) ]; do read t r < /proc/uptime; t=${t%.*}; done; " +
        `${SHOW_LIMIT}; while :; do :; done`,
      ["--timeout", "10s"],
    );
    assertStringIncludes(run.stderr, "bash: timed out after 10s");
    const current = Number(/current=(\d+)/.exec(run.stderr + run.stdout)?.[1] ?? "NaN");
    assert(current > 1 && current <= 64, `processes in the cgroup: ${current}\n${run.stderr}`);
    assertEquals(await survivors(marker), 0);
  },
});

Deno.test({
  name:
    "process limit: nothing of a call stays in the cgroup after it, so the next call has the whole limit",
  ignore: !ROOT,
  async fn() {
    await using s = await seat({ bash: "    max_processes: 64\n" });
    const run = await s.bash(
      `${FIND_CGROUP}i=0; while [ $i -lt 40 ]; do sleep 1000 & i=$((i+1)); done; ${SHOW_LIMIT}`,
    );
    assertEquals(run.code, 0, run.stdout + run.stderr);
    const current = Number(/current=(\d+)/.exec(run.stdout)?.[1] ?? "NaN");
    assert(current >= 41 && current <= 64, run.stdout);
    const again = await s.bash(FIND_CGROUP + SHOW_LIMIT);
    // A new rousseau process has its own cgroup; within one, the PID namespace's teardown
    // empties it. Either way only this shell (and the sed it runs) is counted — and, with
    // the unprivileged shell (root), bwrap's own two processes (its set-up joins before bwrap)
    // and the next call's sandbox, made ahead beside this call: bwrap's two and its shell.
    assert(Number(/current=(\d+)/.exec(again.stdout)?.[1]) <= 7, again.stdout);
  },
});

Deno.test({
  name: "process limit: a rousseau never removes the pids cgroup of one in another PID namespace",
  ignore: !ROOT,
  async fn() {
    // A rousseau in another PID namespace (a container sharing the cgroup tree, `unshare
    // --pid`) has pids this one cannot see. Its cgroup, empty between two calls, looked like a
    // dead process's and was swept, so its next sandboxed call failed to join it.
    await using s = await seat();
    const first = await s.bash(FIND_CGROUP + 'echo "cg=$cg"');
    assertEquals(first.code, 0, first.stdout + first.stderr);
    const own = /cg=(\S+)\/\d+-\d+-[0-9a-f]+\n/.exec(first.stdout);
    assert(own !== null, first.stdout);
    const parent = own[1]!;
    const namespace = (await Deno.stat("/proc/self/ns/pid")).ino!;
    // Pids past any pid_max: dead in every namespace.
    const other = `${parent}/99999999-${namespace + 1}`;
    const dead = `${parent}/99999998-${namespace}`;
    await Deno.mkdir(other);
    await Deno.mkdir(dead);
    try {
      const second = await s.bash("true");
      assertEquals(second.code, 0, second.stdout + second.stderr);
      assert(await exists(other), "the other namespace's cgroup was swept");
      assert(!(await exists(dead)), "a dead process of this namespace kept its cgroup");
    } finally {
      for (const dir of [other, dead]) await Deno.remove(dir).catch(() => {});
    }
  },
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
