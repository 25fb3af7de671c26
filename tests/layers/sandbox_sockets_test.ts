/**
 * Promise: unix sockets outside the workspace are out of reach of sandboxed bash (issue 15,
 * item 7: the network namespace does not isolate filesystem sockets; $SSH_AUTH_SOCK,
 * /run/user/<uid>/bus and docker.sock were reachable). /run and /var/run are masked, and every
 * socket this host has bound (and any named in the environment) is covered. With the network
 * off, abstract sockets are out of reach too (they belong to the network namespace).
 *
 * Public source: HamedMP/matrix-os#895 (a sandboxed Claude Code bash could reach
 * /var/run/docker.sock and escape through the Docker daemon).
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { has, seat } from "./_sandboxed.ts";

/** A listening unix socket at `path` (or abstract, for a name starting with NUL). */
function listen(path: string): { accepted: () => number; close: () => Promise<void> } {
  const listener = Deno.listen({ transport: "unix", path });
  let accepted = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  return {
    accepted: () => accepted,
    close: async () => {
      listener.close();
      await loop.catch(() => {});
    },
  };
}

/** A command that prints `CONNECTED <path>` if it can connect to the socket at `path`. */
function CONNECT(path: string): string {
  return `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>$ARGV[0]) and print "CONNECTED $ARGV[0]\\n"' '${path}'`;
}

Deno.test({
  name:
    "sockets: an agent socket named by SSH_AUTH_SOCK and a socket under the home dir are unreachable",
  ignore: !has("perl"),
  async fn() {
    const agent = `/var/tmp/rousseau-agent-${crypto.randomUUID()}.sock`;
    const a = listen(agent);
    await using s = await seat({ env: { SSH_AUTH_SOCK: agent } });
    const docker = join(s.home, "docker.sock");
    const d = listen(docker);
    try {
      const probe = await s.bash(`${CONNECT(agent)}; ${CONNECT(docker)}; echo end`);
      assert(probe.stdout.endsWith("end\n"), probe.stdout + probe.stderr);
      assertEquals(probe.stdout.includes("CONNECTED"), false, probe.stdout);
      assertEquals(a.accepted() + d.accepted(), 0);
    } finally {
      await a.close();
      await d.close();
      await Deno.remove(agent).catch(() => {});
    }
  },
});

Deno.test("sockets: /run and /var/run are empty inside (bus, docker.sock, runtime dirs)", async () => {
  await using s = await seat();
  const run = await s.bash(
    "ls -A /run | grep -v '^systemd$' | wc -l; ls -A /var/run/ | grep -v '^systemd$' | wc -l; " +
      "ls /run/user /var/run/docker.sock 2>&1 | wc -l; touch /run/x 2>&1 | grep -c 'Read-only'",
  );
  assertEquals(run.stdout, "0\n0\n2\n1\n", run.stderr);
});

/** The Landlock ABI of this kernel (abstract sockets are scoped from 6 on). */
const landlock = has("perl")
  ? Number(
    new TextDecoder().decode(
      new Deno.Command("perl", { args: ["-e", "print syscall(444, 0, 0, 1)"] }).outputSync()
        .stdout,
    ),
  )
  : 0;

for (const network of [false, true]) {
  Deno.test({
    name: `sockets: with the network ${
      network ? "on (own network namespace, or Landlock scope)" : "off"
    }, an abstract unix socket of the host is unreachable`,
    // With the network on it holds in the command's own network namespace (slirp4netns; see
    // sandbox_network_test.ts), or else where Landlock scopes abstract sockets (Linux 6.12+);
    // doctor says so where neither does.
    ignore: !has("perl") || (network && !has("slirp4netns") && landlock < 6),
    fn: () => abstractUnreachable(network),
  });
}

async function abstractUnreachable(network: boolean): Promise<void> {
  {
    await using s = await seat(network ? { bash: "    network: true\n" } : {});
    const name = `rousseau-abstract-${crypto.randomUUID()}`;
    const server = new Deno.Command("perl", {
      args: [
        "-MIO::Socket::UNIX",
        "-e",
        '$|=1; my $s = IO::Socket::UNIX->new(Local=>"\\0".$ARGV[0], Listen=>5) or die; print "up\\n"; ' +
        'while (my $c = $s->accept) { print "ACCEPTED\\n"; close $c }',
        name,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    try {
      assertEquals((await reader.read()).value, "up\n");
      const run = await s.bash(
        `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>"\\0".$ARGV[0]) and print "CONNECTED\\n"' ${name}; echo end`,
      );
      assert(run.stdout.endsWith("end\n"), run.stdout + run.stderr);
      assertEquals(run.stdout.includes("CONNECTED"), false, run.stdout);
    } finally {
      server.kill("SIGKILL");
      await server.status;
      await reader.cancel();
    }
  }
}
