/**
 * Promise: with `tools.bash.network: true` the command reaches the outside, not the host
 * itself through its loopback (issue 26, item 2). It used to share the host's network
 * namespace: every service bound to the host's 127.0.0.1 or ::1 (databases, dev servers, a
 * local model server with its key, docker's API on tcp) and every abstract unix socket
 * answered it. Now it gets a network namespace of its own, linked out by slirp4netns with
 * `--disable-host-loopback`, in each sandbox shape: the unprivileged shell (as root), with and
 * without the overlay, and a root shell (`unprivileged: off`), with and without the overlay.
 *
 * Public sources: Kilo-Org/kilocode#11651 and #11659 (the Linux sandbox's "allow" mode keeps
 * the host's network namespace, host loopback included); anthropics/claude-code#28018 (Claude
 * Code's sandbox keeps 127.0.0.1 and ::1 out of reach with the network allowed: the wall this
 * puts up); openai/codex#42925 (the same loopback listener reached through the IPv4-mapped
 * `::ffff:127.0.0.1`); archie-judd/agent-sandbox.nix#68 (pasta's gateway leads to the host's
 * loopback unless dropped: slirp4netns's 10.0.2.2 does the same without
 * `--disable-host-loopback`, and its DNS address 10.0.2.3 is probed here too).
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { CLI_ARGS, REPO, runCli } from "../_helpers/cli.ts";
import { until } from "../_helpers/until.ts";
import { has, ROOT, type Seat, seat } from "./_sandboxed.ts";
import { describeLayers, layersLine } from "../../cli/layers/grants.ts";
import { resolvePolicy } from "../../cli/config/policy.ts";
import { createWorkspace } from "../../mod.ts";

/** The sandbox shapes, as `tools.bash` lines. */
const SHAPES: readonly { name: string; bash: string }[] = [
  { name: "the unprivileged shell over the overlay", bash: "" },
  { name: "the unprivileged shell", bash: "    overlay: off\n" },
  { name: "a root shell", bash: "    unprivileged: off\n    overlay: off\n" },
  { name: "a root shell over the overlay", bash: "    unprivileged: off\n" },
];

const NETWORK = "    network: true\n";

/**
 * This process's Deno cache, for every CLI run here: a seat's HOME would otherwise give each
 * run an empty one to fill (slow), and in a namespace without a network it could not be filled.
 */
const DENO_CACHE: Record<string, string> = (() => {
  const home = Deno.env.get("HOME");
  const dir = Deno.env.get("DENO_DIR") ??
    (home === undefined ? undefined : join(home, ".cache", "deno"));
  return dir === undefined ? {} : { DENO_DIR: dir };
})();

/** The host's first non-loopback IPv4 address: what "the outside" is here. */
function outwardAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))
    ?.address;
}

/** Whether the host has IPv6 loopback. */
function hasIpv6Loopback(): boolean {
  try {
    Deno.listen({ hostname: "::1", port: 0 }).close();
    return true;
  } catch {
    return false;
  }
}

/** A TCP listener counting the connections it accepted. */
function tcpServer(hostname: string): {
  port: number;
  accepted: () => number;
  close: () => Promise<void>;
} {
  const listener = Deno.listen({ hostname, port: 0 });
  let accepted = 0;
  const loop = (async () => {
    for await (const conn of listener) {
      accepted++;
      conn.close();
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    accepted: () => accepted,
    close: async () => {
      listener.close();
      await loop.catch(() => {});
    },
  };
}

/**
 * A perl server (`code` prints `up <detail>` once bound, then `ACCEPTED` per connection or
 * datagram): `detail` is what it said when up, `accepted` counts (and stops it).
 */
async function perlServer(
  code: string,
  args: readonly string[],
): Promise<{ detail: string; accepted: () => Promise<number> } & AsyncDisposable> {
  const server = new Deno.Command("perl", {
    args: ["-e", code, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/^up.*\n/m.test(seen)) {
    const next = await reader.read();
    if (next.done) break;
    seen += next.value;
  }
  return {
    detail: /^up ?(.*)$/m.exec(seen)?.[1] ?? "",
    async accepted() {
      server.kill("SIGKILL");
      await server.status;
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        seen += next.value;
      }
      return seen.split("\n").filter((l) => l === "ACCEPTED").length;
    },
    async [Symbol.asyncDispose]() {
      try {
        server.kill("SIGKILL");
      } catch { /* gone */ }
      await server.status;
      await reader.cancel().catch(() => {});
    },
  };
}

/** An abstract unix socket bound by a perl process (Deno binds none). */
function abstractServer(name: string) {
  return perlServer(
    'use IO::Socket::UNIX; $|=1; my $s = IO::Socket::UNIX->new(Local=>"\\0".$ARGV[0], ' +
      'Listen=>5) or die; print "up\\n"; while (my $c = $s->accept) { print "ACCEPTED\\n"; close $c }',
    [name],
  );
}

/** A UDP server on the host's 127.0.0.1 (Deno's datagrams are unstable), answering each one. */
function udpServer() {
  return perlServer(
    'use IO::Socket::INET; $|=1; my $s = IO::Socket::INET->new(LocalAddr=>"127.0.0.1", ' +
      'LocalPort=>0, Proto=>"udp") or die; print "up ", $s->sockport, "\\n"; ' +
      'while (my $peer = $s->recv(my $d, 512)) { print "ACCEPTED\\n"; $s->send("pong", 0, $peer) }',
    [],
  );
}

/**
 * A command that sends a datagram to each `tag,host,port` target and prints
 * `ANSWERED <tag>` for each that replies within 2 s.
 */
function sendEach(targets: readonly string[]): string {
  return `perl -MIO::Socket::INET -e 'for (@ARGV) { my ($t, $h, $p) = split /,/; ` +
    `my $s = IO::Socket::INET->new(PeerAddr=>$h, PeerPort=>$p, Proto=>"udp") or next; ` +
    `$s->send("ping"); my $r = ""; eval { local $SIG{ALRM} = sub { die }; alarm 2; ` +
    `$s->recv($r, 64); alarm 0 }; print "ANSWERED $t\n" if $r eq "pong" }' ` +
    targets.map((t) => `'${t}'`).join(" ");
}

/**
 * A command that tries each `tag,host,port` target over TCP and prints `CONNECTED <tag>` for
 * each that answers, then `end`.
 */
function connectEach(targets: readonly string[]): string {
  return `perl -MIO::Socket::IP -e 'for (@ARGV) { my ($t, $h, $p) = split /,/; ` +
    `IO::Socket::IP->new(PeerHost=>$h, PeerPort=>$p, Timeout=>5) and print "CONNECTED $t\\n" }' ` +
    targets.map((t) => `'${t}'`).join(" ") + "; echo end";
}

/** A name /etc/hosts gives an address, other than localhost, if there is one. */
function hostsName(): string {
  for (const line of Deno.readTextFileSync("/etc/hosts").split("\n")) {
    const fields = line.replace(/#.*/, "").trim().split(/\s+/);
    const name = fields.slice(1).find((n) => n !== "" && !n.startsWith("localhost"));
    if (fields[0] !== undefined && /^\d+\./.test(fields[0]) && name !== undefined) return name;
  }
  return "localhost";
}

for (const shape of SHAPES) {
  Deno.test({
    name: `network: the host's 127.0.0.1, ::1 and abstract sockets are unreachable, the outside ` +
      `reachable, with the network on in ${shape.name}`,
    ignore: !ROOT || !has("perl") || !has("slirp4netns"),
    async fn() {
      const outward = outwardAddress();
      assert(outward !== undefined, "this host has no non-loopback IPv4 address to reach");
      await using s = await seat({ bash: NETWORK + shape.bash, env: DENO_CACHE });
      const v4 = tcpServer("127.0.0.1");
      const v6 = hasIpv6Loopback() ? tcpServer("::1") : undefined;
      const out = tcpServer(outward);
      const abstractName = `rousseau-net-${crypto.randomUUID()}`;
      await using abstract = await abstractServer(abstractName);
      await using udp = await udpServer();
      try {
        const targets = [
          `loopback,127.0.0.1,${v4.port}`,
          `mapped,::ffff:127.0.0.1,${v4.port}`,
          `any,0.0.0.0,${v4.port}`,
          `gateway,10.0.2.2,${v4.port}`,
          `dns-alias,10.0.2.3,${v4.port}`,
          ...(v6 === undefined ? [] : [`loopback6,::1,${v6.port}`]),
          `outside,${outward},${out.port}`,
        ];
        const name = hostsName();
        const run = await s.bash(
          `${connectEach(targets)}; ` +
            `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer=>"\\0".$ARGV[0]) and print "CONNECTED abstract\\n"' ${abstractName}; ` +
            `${
              sendEach(
                ["udp,127.0.0.1", "udp-gateway,10.0.2.2", "udp-dns-alias,10.0.2.3"].map((t) =>
                  `${t},${udp.detail}`
                ),
              )
            }; ` +
            `getent hosts ${name} >/dev/null && echo "resolved ${name}"`,
        );
        assertEquals(run.code, 0, run.stdout + run.stderr);
        // The outside answers (so the probe works and the network is on) ...
        assertStringIncludes(run.stdout, "CONNECTED outside\n");
        assertEquals(out.accepted(), 1);
        assertStringIncludes(run.stdout, `resolved ${name}\n`);
        // ... and nothing of the host's loopback does.
        const reached = run.stdout.split("\n").filter((l) =>
          l.startsWith("CONNECTED ") && l !== "CONNECTED outside"
        );
        assertEquals(reached, [], run.stdout);
        assertEquals(v4.accepted(), 0);
        assertEquals(v6?.accepted() ?? 0, 0);
        assertEquals(await abstract.accepted(), 0);
        assertEquals(run.stdout.includes("ANSWERED"), false, run.stdout);
        assertEquals(await udp.accepted(), 0);
      } finally {
        await v4.close();
        await v6?.close();
        await out.close();
      }
    },
  });
}

/** The variable that tags one test's slirp4netns processes (they inherit the environment). */
const TAG = "NETWORK_TEST_TAG";

/** The live slirp4netns processes carrying `tag` in their environment. */
function helpersTagged(tag: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      if (Deno.readTextFileSync(`/proc/${entry.name}/comm`).trim() !== "slirp4netns") continue;
      const environ = Deno.readTextFileSync(`/proc/${entry.name}/environ`).split("\0");
      if (environ.includes(`${TAG}=${tag}`)) found.push(Number(entry.name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * Runs `sleep 60` through a seat's bash with `extra` flags, its slirp4netns tagged with a
 * fresh tag; once one runs (the search for it must see it), calls `check`. Whatever `check`
 * did, any tagged helper left is killed and rousseau's pipes drained.
 */
async function whileSlirpRuns(
  shape: { bash: string },
  extra: string[],
  check: (running: Deno.ChildProcess, tag: string) => Promise<void>,
): Promise<void> {
  const tag = crypto.randomUUID();
  await using s = await seat({
    bash: NETWORK + shape.bash,
    env: { ...DENO_CACHE, [TAG]: tag },
  });
  const running = s.spawn("sleep 60", extra);
  try {
    // It runs while the command does (so the search after `check` finds it) ...
    await until("a slirp4netns", () => helpersTagged(tag).length > 0, {
      limitMs: 30_000,
      everyMs: 50,
    });
    await check(running, tag);
  } finally {
    for (const pid of helpersTagged(tag)) Deno.kill(pid, "SIGKILL");
    await running.stdout.cancel().catch(() => {});
    await running.stderr.cancel().catch(() => {});
  }
}

/** Waits until no slirp4netns tagged `tag` runs; throws naming the survivors after 10 s. */
function slirpGone(tag: string): Promise<void> {
  return until("slirp4netns to be gone", () => helpersTagged(tag).length === 0, {
    limitMs: 10_000,
    everyMs: 50,
    state: () => `slirp4netns survived: ${helpersTagged(tag)}`,
  });
}

const LIFETIME_SHAPES = [SHAPES[0]!, SHAPES[2]!];

for (const shape of LIFETIME_SHAPES) {
  Deno.test({
    name: `network: slirp4netns does not outlive a timed-out call, in ${shape.name}`,
    ignore: !ROOT || !has("slirp4netns"),
    async fn() {
      await whileSlirpRuns(shape, ["--timeout", "3s"], async (running, tag) => {
        // A helper left holding rousseau's pipes would keep it from ending: bounded, not hung.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const ended = await Promise.race([
          running.status,
          new Promise<undefined>((resolve) => timer = setTimeout(() => resolve(undefined), 60_000)),
        ]);
        clearTimeout(timer);
        if (ended === undefined) {
          running.kill("SIGKILL");
          await running.status;
        }
        assertEquals(ended?.code, 1, "rousseau did not end after its call timed out");
        // ... and is gone with it.
        await slirpGone(tag);
      });
    },
  });

  Deno.test({
    name: `network: slirp4netns does not outlive rousseau killed outright, in ${shape.name}`,
    ignore: !ROOT || !has("slirp4netns"),
    async fn() {
      await whileSlirpRuns(shape, [], async (running, tag) => {
        running.kill("SIGKILL");
        await running.status;
        await slirpGone(tag);
      });
    },
  });
}

/**
 * A DNS server for one name (`probe.rousseau.test` → 192.0.2.123; NODATA for other types of
 * it, NXDOMAIN for every other name) on 127.0.0.1:53 over UDP; touches `$ARGV[0]` once bound
 * and logs each question to stdout.
 */
const DNS_PERL = String.raw`
use Socket;
$| = 1;
socket(my $s, PF_INET, SOCK_DGRAM, 0) or die "socket: $!";
bind($s, pack_sockaddr_in(53, inet_aton("127.0.0.1"))) or die "bind: $!";
open(my $up, ">", $ARGV[0]) or die; close $up;
while (my $peer = recv($s, my $q, 512, 0)) {
  my ($id) = unpack("n", $q);
  my ($i, @labels) = (12);
  while ((my $n = ord(substr($q, $i, 1))) != 0) { push @labels, lc substr($q, $i + 1, $n); $i += 1 + $n }
  my $question = substr($q, 12, $i + 5 - 12);
  my $type = unpack("n", substr($q, $i + 1, 2));
  my $name = join(".", @labels);
  print "QUERY $name $type\n";
  my $ours = $name eq "probe.rousseau.test";
  my $answer = $ours && $type == 1 ? pack("nnnNnC4", 0xc00c, 1, 1, 60, 4, 192, 0, 2, 123) : "";
  send($s, pack("nnnnnn", $id, 0x8180 | ($ours ? 0 : 3), 1, $answer ne "" ? 1 : 0, 0, 0) .
    $question . $answer, 0, $peer);
}
`;

Deno.test({
  name: "network: with the host's resolver on its loopback, names resolve through slirp4netns's " +
    "10.0.2.3",
  ignore: !ROOT || !has("perl") || !has("slirp4netns") || !has("ip") || !has("unshare"),
  async fn() {
    // The whole rousseau runs in a network and mount namespace of the test's own, whose
    // /etc/resolv.conf names 127.0.0.1 and whose 127.0.0.1:53 answers: nothing of the
    // machine's network or resolver configuration is touched.
    await using s = await seat({ bash: NETWORK, env: DENO_CACHE });
    await Deno.writeTextFile(
      join(s.outside, "resolv.conf"),
      "nameserver 127.0.0.1\noptions ndots:1\n",
    );
    await Deno.writeTextFile(join(s.outside, "dns.pl"), DNS_PERL);
    const script =
      'o=$1; shift; ip link set lo up && mount --bind "$o/resolv.conf" /etc/resolv.conf &&' +
      ' { perl "$o/dns.pl" "$o/dns-up" > "$o/dns.log" 2>&1 & } &&' +
      ' while [ ! -e "$o/dns-up" ]; do sleep 0.05; done && exec "$@"';
    const command = new Deno.Command("unshare", {
      args: [
        "--net",
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        script,
        "/bin/sh",
        s.outside,
        ...s.argv("cat /etc/resolv.conf; getent ahostsv4 probe.rousseau.test | head -n 1"),
      ],
      cwd: REPO,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      clearEnv: true,
      env: { ...Deno.env.toObject(), ...seatEnv(s), NO_COLOR: "1" },
    });
    const { code, stdout, stderr } = await command.output();
    const text = new TextDecoder().decode(stdout);
    assertEquals(code, 0, text + new TextDecoder().decode(stderr));
    // The command is told slirp4netns's resolver, the host's options kept ...
    assertStringIncludes(text, "nameserver 10.0.2.3\noptions ndots:1\n");
    // ... and its question reached the resolver on the (test namespace's) loopback.
    assertMatch(text, /^192\.0\.2\.123\s+STREAM\s+probe\.rousseau\.test$/m);
    assertStringIncludes(
      await Deno.readTextFile(join(s.outside, "dns.log")),
      "QUERY probe.rousseau.test 1\n",
    );
  },
});

/** The environment a seat's CLI runs get (HOME and the XDG directories under its home). */
function seatEnv(s: Seat): Record<string, string> {
  return {
    ...DENO_CACHE,
    HOME: s.home,
    PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
    XDG_CONFIG_HOME: join(s.home, ".config"),
    XDG_DATA_HOME: join(s.home, ".local", "share"),
  };
}

/**
 * Runs the CLI with slirp4netns hidden (a mount namespace where its path is /dev/null, not
 * an executable), as a host without the package is.
 */
async function withoutSlirp(s: Seat, args: readonly string[]): Promise<string> {
  const slirp = ["/usr/bin/slirp4netns", "/usr/local/bin/slirp4netns", "/usr/sbin/slirp4netns"]
    .filter((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
  const command = new Deno.Command("unshare", {
    args: [
      "--mount",
      "--propagation",
      "private",
      "--",
      "/bin/sh",
      "-c",
      'n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind /dev/null "$1" || exit 99; shift; ' +
      'n=$((n - 1)); done; exec "$@"',
      "/bin/sh",
      String(slirp.length),
      ...slirp,
      Deno.execPath(),
      ...CLI_ARGS,
      "--config",
      s.config,
      "--workspace",
      s.root,
      ...args,
    ],
    cwd: REPO,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { ...Deno.env.toObject(), ...seatEnv(s), NO_COLOR: "1" },
  });
  const { stdout, stderr } = await command.output();
  return new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
}

Deno.test({
  name: "network: without slirp4netns the network still works, and doctor says the host's " +
    "127.0.0.1 is reachable",
  ignore: !ROOT || !has("unshare") || !has("slirp4netns"),
  async fn() {
    await using s = await seat({ bash: NETWORK, env: DENO_CACHE });
    const doctor = await withoutSlirp(s, ["doctor"]);
    assertMatch(
      doctor,
      /^warn +bash network +on \(tools\.bash\.network: true\), in the host's network namespace: services on its 127\.0\.0\.1 and ::1 are reachable from bash \(slirp4netns is not installed\); install slirp4netns \(Debian: apt-get install slirp4netns\) or set tools\.bash\.network: false$/m,
    );
    assertMatch(
      doctor,
      /^ok +sandbox +bwrap \(.*; network on, the host's: its 127\.0\.0\.1 reachable;/m,
    );
    // Where it is installed, the same line says the command has a namespace of its own.
    const own = await runCli(["--config", s.config, "--workspace", s.root, "doctor"], {
      env: seatEnv(s),
    });
    assertMatch(
      own.stdout,
      /^ok +bash network +on \(tools\.bash\.network: true\), in a network namespace of its own, linked out by \S*slirp4netns: the host's 127\.0\.0\.1, ::1 and abstract unix sockets unreachable; DNS through /m,
    );
    const run = await withoutSlirp(s, [
      "tool",
      "bash",
      JSON.stringify({ command: "grep -c '^tap0' /proc/net/route; echo ran" }),
    ]);
    assertStringIncludes(run, "0\nran\n");
  },
});

Deno.test("network: the header says when the command shares the host's network namespace", async () => {
  const workspace = await createWorkspace([Deno.cwd()]);
  const policy = resolvePolicy("tool", undefined, {});
  const sandbox = { bwrap: "/usr/bin/bwrap", network: true, hide: [] };
  assertStringIncludes(
    layersLine(describeLayers(policy, workspace, null, sandbox)),
    " · net=on (the host's network namespace: its 127.0.0.1 and ::1 reachable, see doctor)",
  );
  const userNet = {
    slirp4netns: "/usr/bin/slirp4netns",
    perl: "/usr/bin/perl",
    calls: { unshare: 272, prctl: 157 },
  };
  assert(
    layersLine(describeLayers(policy, workspace, null, { ...sandbox, userNet })).endsWith(
      " · net=on",
    ),
  );
});
