/**
 * The network a sandboxed command gets when it may use one: a network namespace of its own,
 * linked to the outside by slirp4netns (user-mode TCP/IP, the stack rootless podman uses),
 * instead of the host's namespace. In the host's namespace the command reaches every service
 * bound to the host's 127.0.0.1 and ::1 (databases, dev servers, a local model server with its
 * key, the docker API on tcp) and every abstract unix socket (X11, D-Bus): no file permission
 * or mount covers those. In its own namespace, 127.0.0.1 and ::1 are its own loopback and the
 * abstract sockets its own, on every kernel; slirp4netns runs with `--disable-host-loopback`,
 * so its gateway (10.0.2.2) does not lead to the host's loopback either, and its DNS address
 * (10.0.2.3) leads to the host's resolver on port 53 only. IPv6 is not enabled: the command
 * has IPv4 to the outside, and `::1` is its own.
 *
 * Why slirp4netns and not pasta: pasta forwards the namespace's loopback ports to the host's
 * by default (`-T auto`) and maps its gateway to the host's loopback unless told not to, so
 * every default leaks what this file exists to close; slirp4netns needs one flag. slirp4netns
 * also takes a namespace made by someone else, which the three sandbox shapes need, since each
 * reaches bwrap differently; it runs sandboxed itself (`--enable-sandbox`, `--enable-seccomp`).
 *
 * The perl program below stands just before bwrap (as root with the unprivileged shell, before
 * the drop to its uid: slirp4netns then runs as root, outside the command's reach, and can
 * open /dev/net/tun). It forks the command's side, which makes the namespace (with a user
 * namespace when it lacks the capability for a network namespace alone) and waits; starts
 * slirp4netns on it; the command's side execs bwrap at once, which sets the sandbox up and then
 * waits (`--block-fd`) until slirp4netns says the network is configured. slirp4netns outlives
 * neither the command nor the program: it exits when its exit pipe closes (the program closes
 * it once bwrap has ended) and is killed when the program dies (a parent-death signal); the
 * program itself dies with whoever started it, and bwrap with the program. Where a PID
 * namespace holds all of it (the unprivileged shell, the overlay) its end takes slirp4netns
 * along as well.
 *
 * DNS: when the host's first nameserver is a loopback address (systemd-resolved's 127.0.0.53,
 * a local dnsmasq), the command's `/etc/resolv.conf` names 10.0.2.3 instead, which slirp4netns
 * forwards to that nameserver; bwrap mounts that text over the resolver file
 * (`--ro-bind-data`), fed through a pipe this program makes.
 *
 * @module
 */

/** How bash gets its own network namespace; present on the sandbox when it works here. */
export interface UserNet {
  /** Absolute path of slirp4netns. */
  readonly slirp4netns: string;
  /** Absolute path of perl, which runs {@linkcode USERNET_PERL}. */
  readonly perl: string;
  /** `unshare(2)` and `prctl(2)` on this CPU. */
  readonly calls: { readonly unshare: number; readonly prctl: number };
  /**
   * When the host's resolver is on its loopback: the resolver file's real path and the text
   * the command sees there instead (nameserver 10.0.2.3, the host's search and options).
   */
  readonly resolv?: { readonly path: string; readonly text: string };
}

/** `unshare(2)` and `prctl(2)` per CPU. */
export const USERNET_CALLS: Readonly<Record<string, UserNet["calls"]>> = {
  "x86_64": { unshare: 272, prctl: 157 },
  aarch64: { unshare: 97, prctl: 167 },
};

/** The address slirp4netns answers DNS on, forwarding to the host's first nameserver. */
export const SLIRP_DNS = "10.0.2.3";

/**
 * bwrap's argument that stands for the resolver pipe's descriptor (after `--ro-bind-data`):
 * the perl program puts the real number in its place.
 */
export const RESOLV_FD = "@resolv-fd@";

/**
 * bwrap's argument that stands for the descriptor it reads before it starts the command
 * (after `--block-fd`): written once slirp4netns has configured the network.
 */
export const READY_FD = "@ready-fd@";

/**
 * The perl program. Arguments: slirp4netns, `unshare(2)`'s and `prctl(2)`'s numbers, the
 * resolver text ("" for none), `--`, then the argv to exec in the new namespace. Failures
 * print one line, `bash: …`, on stdout (the tool's output) and exit 125; otherwise it exits as
 * the argv did (128 + n for a signal). slirp4netns's own messages go to stderr.
 */
export const USERNET_PERL = String.raw`
use strict;
$| = 1;
my ($slirp, $unshare, $prctl, $resolv) = splice(@ARGV, 0, 4);
shift @ARGV if @ARGV && $ARGV[0] eq "--";
sub fail { print "bash: the command's network could not be set up: $_[0]\n"; exit(125) }
sub status { my $s = shift; ($s & 127) ? 128 + ($s & 127) : $s >> 8 }
# Puts a descriptor's number in place of its token: the first value of bwrap's option.
sub fill {
  my ($option, $token, $fd) = @_;
  for my $i (0 .. $#ARGV - 1) {
    if ($ARGV[$i] eq $option && $ARGV[$i + 1] eq $token) { $ARGV[$i + 1] = $fd; return }
  }
  fail("bwrap's $option $token is missing");
}
my $parent = getppid();
# prctl(PR_SET_PDEATHSIG, SIGKILL): die with whoever started us (rousseau, or the set-up).
syscall($prctl, 1, 9) == 0 or fail("prctl: $!");
getppid() == $parent or exit(125);
pipe(my $pid_r, my $pid_w) or fail("pipe: $!");
pipe(my $go_r, my $go_w) or fail("pipe: $!");
my $child = fork() // fail("fork: $!");
if ($child == 0) {
  close $pid_r; close $go_w;
  my ($uid, $gid) = ($<, $( + 0);
  # CLONE_NEWNET; without the capability, with CLONE_NEWUSER, our ids mapped to themselves.
  if (syscall($unshare, 0x40000000) != 0) {
    syscall($unshare, 0x50000000) == 0 or fail("a network namespace cannot be made: $!");
    for (["uid_map", "$uid $uid 1"], ["setgroups", "deny"], ["gid_map", "$gid $gid 1"]) {
      open(my $f, ">", "/proc/self/$_->[0]") or fail("/proc/self/$_->[0]: $!");
      print $f $_->[1]; close $f or fail("writing $_->[0]: $!");
    }
  }
  # Held open until the exec (a lexical inside the block would be closed at its end).
  my ($r, $w);
  if ($resolv ne "") {
    pipe($r, $w) or fail("pipe: $!");
    syswrite($w, $resolv) == length($resolv) or fail("the resolver text: $!");
    close $w;
    # F_SETFD 0: bwrap inherits it.
    fcntl($r, 2, 0) or fail("fcntl: $!");
    fill("--ro-bind-data", '@resolv-fd@', fileno($r));
  }
  # bwrap sets the sandbox up meanwhile, and holds the command (--block-fd) until the
  # network is up: slirp4netns's start and bwrap's mounts overlap.
  fcntl($go_r, 2, 0) or fail("fcntl: $!");
  fill("--block-fd", '@ready-fd@', fileno($go_r));
  # Our pid as the /proc slirp4netns reads counts it (it may be an outer PID namespace's).
  my $self = readlink("/proc/self") // fail("/proc/self: $!");
  syswrite $pid_w, "$self\n"; close $pid_w;
  exec { $ARGV[0] } @ARGV or fail("$ARGV[0]: $!");
}
close $pid_w; close $go_r;
my $target = readline($pid_r);
if (!defined $target) { waitpid($child, 0); exit(status($?)) }
close $pid_r;
chomp $target;
pipe(my $ready_r, my $ready_w) or fail("pipe: $!");
pipe(my $exit_r, my $exit_w) or fail("pipe: $!");
my $helper = fork() // fail("fork: $!");
if ($helper == 0) {
  close $ready_r; close $exit_w; close $go_w;
  syscall($prctl, 1, 9);
  fcntl($ready_w, 2, 0); fcntl($exit_r, 2, 0);
  open(STDIN, "<", "/dev/null"); open(STDOUT, ">&", \*STDERR);
  exec { $slirp } $slirp, "--configure", "--mtu=65520", "--disable-host-loopback",
    "--enable-sandbox", "--enable-seccomp", "--ready-fd=" . fileno($ready_w),
    "--exit-fd=" . fileno($exit_r), $target, "tap0";
  print STDERR "$slirp: $!\n";
  exit(127);
}
close $ready_w; close $exit_r;
if ((sysread($ready_r, my $ok, 1) // 0) != 1) {
  kill 9, $child; waitpid($child, 0); waitpid($helper, 0);
  fail("slirp4netns ended before the network was up (exit status " . status($?) . ")");
}
close $ready_r;
syswrite $go_w, "x"; close $go_w;
waitpid($child, 0);
my $status = $?;
# slirp4netns ends on its own once its exit pipe closes, and is killed as we exit (its
# parent-death signal): its teardown (the tap device, the namespace) is not waited for.
close $exit_w;
exit(status($status));
`;

/** The argv that runs `exec` in a network namespace of its own, linked out by slirp4netns. */
export function userNetArgv(net: UserNet, exec: readonly string[]): string[] {
  return [
    net.perl,
    "-e",
    USERNET_PERL,
    net.slirp4netns,
    String(net.calls.unshare),
    String(net.calls.prctl),
    net.resolv?.text ?? "",
    "--",
    ...exec,
  ];
}

/** Whether `address` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127.x). */
export function isLoopback(address: string): boolean {
  const a = address.toLowerCase().replace(/%.*$/, "");
  return /^127\./.test(a) || a === "::1" || /^(0*:)*:?0*:?ffff:127\./.test(a) ||
    /^0*(:0*){6}:0*1$/.test(a);
}

/**
 * The resolver text the command needs in its own namespace, or undefined when the host's
 * file serves (its first nameserver is reachable through slirp4netns): nameserver 10.0.2.3
 * and the host's other lines, when that nameserver is on the host's loopback or there is none
 * (the C library then asks 127.0.0.1).
 */
export function resolverText(hostText: string): string | undefined {
  const lines = hostText.split("\n");
  const first = lines.map((l) => /^\s*nameserver\s+(\S+)/.exec(l)?.[1]).find((a) => a);
  if (first !== undefined && !isLoopback(first)) return undefined;
  const rest = lines.filter((l) => !/^\s*nameserver\s/.test(l) && l.trim() !== "");
  return [`nameserver ${SLIRP_DNS}`, ...rest].join("\n") + "\n";
}
