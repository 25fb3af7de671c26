/**
 * With the network on but no namespace of its own (slirp4netns missing or unusable: see
 * `_usernet.ts`, which otherwise isolates all of this), the command shares the host's network
 * namespace, and with it the
 * host's abstract unix sockets (X11's `@/tmp/.X11-unix/X0`, D-Bus, containerd's shims), which
 * no file permission or mount can cover. Landlock (Linux 6.12+, ABI 6) scopes them: a process
 * in a Landlock domain cannot connect to an abstract socket bound outside it. The shell
 * enters such a domain — restricting nothing else — just before it execs the command: after
 * bwrap has made its mounts, which a Landlock domain would forbid.
 *
 * The host's 127.0.0.1 stays reachable with the network on: Landlock restricts TCP by port,
 * not by address.
 *
 * @module
 */

/**
 * The perl program: enters a Landlock domain scoped for abstract unix sockets (no_new_privs
 * is already set by bwrap), then execs its arguments. Exits 125 with a line on stdout when
 * it cannot.
 */
export const SCOPE_ABSTRACT_PERL = String.raw`
$| = 1;
# struct landlock_ruleset_attr { handled_access_fs; handled_access_net; scoped } with
# LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
my $attr = pack("QQQ", 0, 0, 1);
# landlock_create_ruleset(attr, size, 0)
my $fd = syscall(444, $attr, 24, 0);
if ($fd < 0) { print "bash: abstract sockets could not be scoped: $!\n"; exit 125 }
# landlock_restrict_self(fd, 0)
if (syscall(446, $fd + 0, 0) != 0) { print "bash: abstract sockets could not be scoped: $!\n"; exit 125 }
exec { $ARGV[0] } @ARGV or do { print "bash: $ARGV[0]: $!\n"; exit 125 };
`;

/** The Landlock ABI this kernel offers (0: none), asked through `perl`. */
export async function landlockAbi(perl: string): Promise<number> {
  try {
    const out = await new Deno.Command(perl, {
      // landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
      args: ["-e", "print syscall(444, 0, 0, 1)"],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      clearEnv: true,
    }).output();
    const abi = Number(new TextDecoder().decode(out.stdout).trim());
    return Number.isInteger(abi) && abi > 0 ? abi : 0;
  } catch {
    return 0;
  }
}

/** The first Landlock ABI with abstract unix socket scoping. */
export const ABI_SCOPES_ABSTRACT = 6;
