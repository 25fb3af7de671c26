/**
 * Promise: the bash sandbox holds as root. The shell has no capability, so it cannot undo the
 * mounts that make the sandbox (issue 15, item 1: with CapEff 000001fffeffffff an attacker
 * unmounted the tmpfs over ~/.ssh, remounted / read-write, unmounted /proc to read rousseau's
 * environment, and nsenter'ed its network namespace). Each case replays one step of that
 * sequence and checks its effect on the host, not just an error text.
 *
 * Public source for the class: containers/bubblewrap#287 ("Contrary to documentation
 * Bubblewrap leaves mount capability available": as uid 0 bwrap keeps every capability unless
 * told `--cap-drop ALL`; `mount -o bind,remount,rw` then writes through a --ro-bind).
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { finished } from "../_helpers/cli.ts";
import { API_KEY, has, leaked, ROOT, seat, SSH_KEY } from "./_sandboxed.ts";

Deno.test("no capabilities: the shell's effective, permitted and bounding sets are empty, no_new_privs is set", async () => {
  await using s = await seat();
  const run = await s.bash(
    "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status",
  );
  assertEquals(
    run.stdout,
    [
      "CapInh:\t0000000000000000",
      "CapPrm:\t0000000000000000",
      "CapEff:\t0000000000000000",
      "CapBnd:\t0000000000000000",
      "CapAmb:\t0000000000000000",
      "NoNewPrivs:\t1",
      "",
    ].join("\n"),
    run.stderr,
  );
});

Deno.test("no capabilities: unmounting the tmpfs over ~/.ssh fails and the key stays unreadable", async () => {
  await using s = await seat();
  const run = await s.bash(
    'umount "$HOME/.ssh"; umount -l "$HOME/.ssh"; cat "$HOME/.ssh/id_ed25519"; ls -A "$HOME/.ssh"; echo end',
  );
  assertEquals(leaked([run.stdout, run.stderr]), []);
  assert(run.stdout.endsWith("end\n"), run.stdout);
  assert(/umount: .*(permitted|denied|must be superuser)/i.test(run.stdout), run.stdout);
});

Deno.test("no capabilities: remounting / read-write fails; nothing is written outside the workspace", async () => {
  await using s = await seat();
  const target = join(s.outside, "escaped.txt");
  const run = await s.bash(
    `mount -o remount,rw /; mount -o bind,remount,rw /; mount -o remount,rw ${s.outside}; ` +
      `echo pwned > ${target}; touch /etc/rousseau-escape-probe; echo end`,
  );
  assert(run.stdout.endsWith("end\n"), run.stdout);
  let exists = true;
  await Deno.stat(target).catch(() => exists = false);
  assertEquals(exists, false, `${target} was written from the sandbox`);
  exists = true;
  await Deno.stat("/etc/rousseau-escape-probe").catch(() => exists = false);
  assertEquals(exists, false);
});

Deno.test("no capabilities: unmounting /proc does not expose rousseau's environment (the API key)", async () => {
  await using s = await seat();
  const run = await s.bash(
    "umount /proc; umount -l /proc; " +
      "for f in /proc/[0-9]*/environ; do cat \"$f\"; echo; done 2>&1 | tr '\\0' '\\n'; " +
      "ls -d /proc/[0-9]* | wc -l; echo end",
  );
  assertEquals(leaked([run.stdout, run.stderr], [API_KEY]), []);
  // Only the sandbox's own processes are there: bwrap, the shell and its children.
  const count = Number(run.stdout.trim().split("\n").at(-2));
  assert(count > 0 && count < 10, `processes visible: ${count}\n${run.stdout}`);
});

Deno.test({
  name:
    "no capabilities: with the network off, neither nsenter nor a new namespace reaches 127.0.0.1",
  ignore: !has("nsenter") || !has("perl"),
  async fn() {
    await using s = await seat();
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    let accepted = 0;
    const accepting = (async () => {
      for await (const conn of listener) {
        accepted++;
        conn.close();
      }
    })();
    const connect =
      `perl -MIO::Socket::INET -e 'IO::Socket::INET->new(PeerAddr=>"127.0.0.1:${port}") and print "CONNECTED\\n"'`;
    try {
      const run = await s.bash(
        "umount /proc; " +
          "for p in /proc/[0-9]*; do nsenter --net=$p/ns/net " + connect + "; " +
          "nsenter -t ${p#/proc/} -n " + connect + "; done; " +
          "nsenter -t 1 -a " + connect + "; " + connect + "; echo end",
      );
      assert(run.stdout.endsWith("end\n"), run.stdout);
      assertEquals(run.stdout.includes("CONNECTED"), false, run.stdout);
      assertEquals(accepted, 0);
    } finally {
      listener.close();
      await accepting.catch(() => {});
    }
  },
});

Deno.test({
  name: "no capabilities: no new user namespace to regain them (unshare -U, unshare -r)",
  ignore: !has("unshare"),
  async fn() {
    await using s = await seat();
    // Source: anthropic-experimental/sandbox-runtime#498 (an empty bounding set means a nested
    // user namespace cannot grant capabilities); bwrap ≥ 0.8 also forbids making one at all.
    const run = await s.bash(
      "unshare -U true && echo USERNS; unshare -r id && echo ROOTMAP; " +
        "unshare -rm sh -c 'umount $HOME/.ssh && cat $HOME/.ssh/id_ed25519' && echo MOUNTNS; " +
        "cat /proc/sys/user/max_user_namespaces; echo end",
    );
    assert(run.stdout.endsWith("end\n"), run.stdout);
    for (const marker of ["USERNS", "ROOTMAP", "MOUNTNS"]) {
      assertEquals(run.stdout.includes(marker), false, run.stdout);
    }
    assertEquals(leaked([run.stdout]), []);
  },
});

Deno.test("no capabilities: the workspace stays writable for the mapped user, as root too", async () => {
  await using s = await seat();
  const run = await s.bash(
    "echo in > made.txt && mkdir -p sub/dir && mv made.txt sub/dir/ && id -u",
  );
  assertEquals(run.code, 0, run.stdout + run.stderr);
  assertEquals(run.stdout, `${ROOT ? 0 : Deno.uid()}\n`);
  assertEquals(await Deno.readTextFile(join(s.root, "sub/dir/made.txt")), "in\n");
  const owner = (await Deno.stat(join(s.root, "sub/dir/made.txt"))).uid;
  assertEquals(owner, Deno.uid(), "files made in the sandbox belong to the caller");
});

Deno.test("no capabilities: /proc/<rousseau's pid>/environ is out of reach (own PID namespace)", async () => {
  await using s = await seat();
  // The command learns rousseau's host pid from a file the test writes once it knows it.
  const child = s.spawn(
    "i=0; while [ ! -s pid ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; p=$(cat pid); " +
      "echo pid=$p; cat /proc/$p/environ; cat /proc/$p/cmdline; ls /proc/$p/root/ 2>&1 | head -3; " +
      "echo end",
  );
  await Deno.writeTextFile(join(s.root, "pid"), String(child.pid));
  const run = await finished(child);
  assertEquals(leaked([run.stdout, run.stderr], [API_KEY, SSH_KEY]), []);
  assert(run.stdout.startsWith(`pid=${child.pid}\n`), run.stdout);
  assert(run.stdout.endsWith("end\n"), run.stdout);
});
