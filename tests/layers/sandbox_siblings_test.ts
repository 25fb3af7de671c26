/**
 * Siblings of issue 15's escapes, from public reports against other sandboxes: each case names
 * the promise it protects and cites where the attack comes from. All run as the CI runs: as
 * root, through the CLI, against real bwrap.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { has, ROOT, seat } from "./_sandboxed.ts";
import { REPO } from "../_helpers/cli.ts";

Deno.test({
  name: "no terminal injection: TIOCSTI has no controlling terminal to push into",
  ignore: !has("perl"),
  async fn() {
    // Source: containers/bubblewrap#142 (CVE-2017-5226, bwrap escape via the TIOCSTI ioctl;
    // fixed by --new-session, which rousseau passes).
    await using s = await seat();
    const run = await s.bash(
      'perl -e \'open(my $t, "+<", "/dev/tty") or print "NOTTY $!\\n"; ' +
        'my $c = "x"; ioctl(STDIN, 0x5412, $c) or print "STDIN $!\\n"\'; ' +
        'awk \'{print "sid=" ($6 == $1 ? "self" : "other")}\' /proc/$$/stat',
    );
    assert(run.stdout.includes("NOTTY No such device or address"), run.stdout);
    assert(/STDIN /.test(run.stdout), run.stdout);
  },
});

Deno.test("no binary overwrite: /proc/self/exe and /proc/1/exe (bwrap) cannot be written", async () => {
  // Source: rapid7/metasploit-framework#15107 (CVE-2019-5736: a container overwrote the
  // host's runc through /proc/self/exe).
  await using s = await seat();
  const bwrap = "/usr/bin/bwrap";
  const before = await Deno.readFile(bwrap);
  const run = await s.bash(
    "echo pwned > /proc/1/exe; echo pwned > /proc/self/exe; cp /bin/true /proc/1/exe; " +
      "(exec 3<> /proc/1/exe) 2>/dev/null && echo OPENED; echo end",
  );
  assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
  assertEquals(run.stdout.includes("OPENED"), false, run.stdout);
  assertEquals(await Deno.readFile(bwrap), before);
});

Deno.test("no way out through /proc/<pid>/root or /proc/<pid>/cwd: the same read-only view", async () => {
  await using s = await seat();
  const target = join(s.outside, "via-proc-root.txt");
  const run = await s.bash(
    `echo x > /proc/1/root${target}; echo x > /proc/self/root${target}; ` +
      `cd /proc/1/cwd && pwd -P; ls /proc/1/root${s.home}/.ssh | wc -l; echo end`,
  );
  assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
  let written = true;
  await Deno.stat(target).catch(() => written = false);
  assertEquals(written, false);
  assert(run.stdout.includes("\n0\nend\n"), run.stdout);
});

Deno.test({
  name: "no ptrace of anything outside: pid 1 of the sandbox is bwrap and cannot be attached",
  ignore: !has("perl"),
  async fn() {
    await using s = await seat();
    // PTRACE_ATTACH = 16; syscall 101 on x86_64, 117 on aarch64.
    const nr = Deno.build.arch === "x86_64" ? 101 : 117;
    const run = await s.bash(
      `perl -e '$r = syscall(${nr}, 16, 1, 0, 0); print $r == -1 ? "EPERM-ish $!\\n" : "ATTACHED\\n"'`,
    );
    assertEquals(run.stdout.includes("ATTACHED"), false, run.stdout);
  },
});

Deno.test({
  name: "network off: /dev/tcp to 127.0.0.1 and to the outside fails",
  ignore: !has("bash"),
  async fn() {
    await using s = await seat();
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    let accepted = 0;
    const loop = (async () => {
      for await (const conn of listener) {
        accepted++;
        conn.close();
      }
    })();
    try {
      const run = await s.bash(
        `bash -c 'echo > /dev/tcp/127.0.0.1/${port} && echo LOCAL; ` +
          "echo > /dev/tcp/1.1.1.1/53 && echo REMOTE'; echo end",
      );
      assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
      assertEquals(run.stdout.includes("LOCAL") || run.stdout.includes("REMOTE"), false);
      assertEquals(accepted, 0);
    } finally {
      listener.close();
      await loop.catch(() => {});
    }
  },
});

Deno.test("no shared memory or FUSE with the host: /dev is the sandbox's own", async () => {
  await using s = await seat();
  const name = `rousseau-shm-${crypto.randomUUID()}`;
  const run = await s.bash(
    `echo x > /dev/shm/${name}; [ -e /dev/fuse ] && echo FUSE; ` +
      "mount -t tmpfs none /mnt && echo MOUNTED; ls /dev | wc -l; echo end",
  );
  assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
  assertEquals(run.stdout.includes("FUSE") || run.stdout.includes("MOUNTED"), false, run.stdout);
  let shared = true;
  await Deno.stat(`/dev/shm/${name}`).catch(() => shared = false);
  assertEquals(shared, false, "a file written to /dev/shm inside appeared on the host");
});

Deno.test({
  name: "process limit cannot be raised or left from inside",
  ignore: !ROOT,
  async fn() {
    await using s = await seat({ bash: "    max_processes: 50\n" });
    const run = await s.bash(
      'c=$(sed -n "s/^[0-9]*:pids://p" /proc/self/cgroup); d=/sys/fs/cgroup/pids$c; ' +
        'echo max > "$d/pids.max" && echo RAISED; ' +
        "echo $$ > /sys/fs/cgroup/pids/cgroup.procs && echo LEFT; " +
        'mkdir "$d/escape" && echo MADE; cat "$d/pids.max"',
    );
    for (const marker of ["RAISED", "LEFT", "MADE"]) {
      assertEquals(run.stdout.includes(marker), false, run.stdout);
    }
    assert(run.stdout.endsWith("50\n"), run.stdout + run.stderr);
  },
});

Deno.test("no descriptor of rousseau's leaks in: no file, socket or directory is open but /dev/null", async () => {
  await using s = await seat();
  const run = await s.bash("for f in /proc/$$/fd/*; do readlink $f; done | sort -u");
  const targets = run.stdout.trim().split("\n");
  assert(targets.every((t) => /^(\/dev\/null|pipe:\[\d+\])$/.test(t)), run.stdout);
});

Deno.test("the command holds none of the set-up's descriptors: not the filter's, not the call's pipe", async () => {
  await using s = await seat();
  // As root under the overlay bwrap is started ahead of the call, told to read the seccomp
  // filter at descriptor 3 (`PARKED_SECCOMP_FD`), its shell reading the call on stdin: the
  // filter's descriptor must be closed and stdin be /dev/null when the command runs.
  const run = await s.bash(
    'for n in 3 4 5 6 7 8 9; do [ -e "/proc/$$/fd/$n" ] && echo "open: $n"; done; ' +
      'in=$(readlink /proc/$$/fd/0); [ "$in" = /dev/null ] || echo "stdin: $in"; echo checked',
  );
  assertEquals(run.stdout, "checked\n", run.stderr);
});

Deno.test("no descriptor rousseau inherited reaches the command: one its parent left open on a file outside stays out", async () => {
  await using s = await seat();
  const secret = join(s.outside, "inherited.txt");
  await Deno.writeTextFile(secret, "inherited-secret\n");
  // rousseau started by a shell that leaves descriptor 7 open on that file (no close-on-exec),
  // as a CI runner or a wrapper may: the command must not find it open.
  const command = 'for n in 5 6 7 8 9; do [ -e "/proc/$$/fd/$n" ] && echo "open: $n"; done; ' +
    "{ cat <&7; } 2>/dev/null; echo checked";
  const run = await new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'exec 7<"$1"; shift; exec "$@"',
      "sh",
      secret,
      ...s.argv(command),
    ],
    clearEnv: true,
    env: s.env,
    cwd: REPO,
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(run.stdout);
  assertEquals(stdout, "checked\n", new TextDecoder().decode(run.stderr));
});

Deno.test("killing everything inside does not touch rousseau: the call returns", async () => {
  await using s = await seat();
  // kill(-1) reaches every process the shell may signal: inside the PID namespace, that is
  // only the sandbox's own.
  const run = await s.bash("kill -9 -1; echo still-here");
  assertEquals(run.code, 0, run.stderr);
  assert(run.stdout.endsWith("still-here\n"), run.stdout);
});
