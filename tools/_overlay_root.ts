/**
 * bash in an overlay as root, with an unprivileged shell: one perl process does the whole
 * set-up that otherwise takes six programs (setpriv → unshare → the idmapping perl → `/bin/sh`
 * → mount(8) → setpriv), each start costing milliseconds. It runs in two parts.
 *
 * The set-up, from its arguments alone (nothing of the call), so it can be started before the
 * call (`_bash_park.ts`):
 * 1. leads a new session (the runtime's own `detached` would fork the whole runtime to make
 *    one: milliseconds a call), so a terminal's signals reach none of it, and takes the
 *    parent-death signal (SIGKILL): it dies with rousseau, however rousseau ends;
 * 2. makes the user namespaces that map each tree's owner to the shell's uid (in the host's
 *    PID namespace, whose `/proc` it sees);
 * 3. makes a mount and a PID namespace and forks their init, which dies with it (a parent
 *    already gone is seen through a pipe); it passes on how the init ended;
 * 4. in the init: makes every mount private, mounts a /proc of the new PID namespace (as
 *    `unshare --mount-proc` does), clones every tree (the roots' clones are checked
 *    to be the very directories named, by device and inode), then mounts the covers, the home
 *    directory (mapped, read-only) and the scratch base (as it is) — none of them an overlay
 *    of the workspace; forks the runner, which joins the pids cgroup and closes every
 *    descriptor rousseau inherited (each costs milliseconds: not on the call's time) and waits
 *    for its part of the call on a pipe; then waits for the call on stdin.
 *
 * The call, on stdin: its length in bytes and a NUL byte, then (read as soon as it is all
 * there, not when stdin ends) the scratch directory; `1` when the argv is bwrap's own, told to
 * read the seccomp filter at descriptor 3 and to say at descriptor 4 how the command ended
 * (`--json-status-fd`, which bwrap writes only once the command was started: its set-up is
 * done), `0` when the argv's shell says so itself; `1` to drop to the shell's ids
 * before the exec (`0` when the argv drops itself: the network set-up runs as root and drops
 * later); the argv (its length, then each argument); each field ending in a NUL byte; then the
 * seccomp filter bwrap loads, if any.
 * 5. mounts the roots' clones as the lower layers in the scratch directory and each root's
 *    overlay over the root itself (only now: a change below a mounted overlay is undefined
 *    for overlayfs), writes `ready`, and hands the runner the rest of the call;
 * 6. the runner: with bwrap's own argv, stdin /dev/null, stderr its stdout (the command's
 *    output: bwrap's own failures land there too, and only there), the filter at descriptor 3
 *    and the status channel at 4 (bwrap closes both before the command runs); otherwise stdin
 *    the filter (bwrap `--seccomp 0` reads it; the command's own stdin is then /dev/null:
 *    `bash.ts` redirects it) or /dev/null. It drops to the shell's uid and gid with no other
 *    groups (when asked) and execs the argv (bwrap);
 * 7. once it has ended (bwrap returns only when its PID namespace is gone: nothing the command
 *    started is alive), with bwrap's own argv writes the set-up's end mark (its argument) on
 *    stderr when bwrap said how the command ended (see `STARTED` in `bash.ts`), writes each
 *    root's deletion listing, exactly as `_overlay.ts`'s shell does, closes its output, says
 *    the runner's status (128 + n for a signal, as a shell says it) to the parent and exits
 *    with it; the parent waits for it (see there) and exits with its status. Nothing of the
 *    command is alive by then. Both end with `exit_group` (see `quit`).
 *
 * Failures before the overlays print one line `bash: …` on stdout and exit 125, as the
 * idmapping program's do; a failed overlay mount is written to the scratch directory's
 * `error` file (see `setupProblem`) and exits 125. Stdin ending with no call: exit 125,
 * silently (a chain parked and never used).
 *
 * @module
 */

import { type ShellIdentity, TREES_PERL, treeSpecs } from "./_identity.ts";

/**
 * What the set-up writes on its stderr once the command was started: every namespace, mount,
 * filter and cgroup in place. Written by the shell inside the sandbox just before it runs the
 * command, or, when bwrap runs the command itself, by this program once bwrap said how the
 * command ended (see `bash.ts`, which reads it).
 */
export const SET_UP_DONE = "rousseau-bash-set-up-done";

/**
 * Where bwrap reads the seccomp filter and says how the command ended (`--json-status-fd`,
 * which reports an exit code only once the command was started) when it runs the command
 * itself, with no shell before it to say so: the runner below puts them there, and bwrap
 * closes both before the command runs (`sandboxArgs` in `_sandbox.ts` names them to bwrap).
 */
export const DIRECT_FDS = { seccomp: "3", status: "4" } as const;

/**
 * The system calls the program makes besides `unshare(2)` and `mount(2)`, per CPU: the CPUs of
 * `SYSTEM_CALLS` (an unprivileged shell is set up on no other).
 */
const CALLS: Readonly<
  Record<string, {
    readonly prctl: number;
    readonly setsid: number;
    readonly setgroups: number;
    readonly setresgid: number;
    readonly setresuid: number;
    readonly dup3: number;
    readonly exitGroup: number;
    readonly close: number;
  }>
> = {
  "x86_64": {
    prctl: 157,
    setsid: 112,
    setgroups: 116,
    setresgid: 119,
    setresuid: 117,
    dup3: 292,
    exitGroup: 231,
    close: 3,
  },
  aarch64: {
    prctl: 167,
    setsid: 157,
    setgroups: 159,
    setresgid: 149,
    setresuid: 147,
    dup3: 24,
    exitGroup: 94,
    close: 57,
  },
};

/**
 * The perl program. Arguments: the shell's uid and gid; the numbers of `unshare(2)`,
 * `mount(2)`, `prctl(2)`, `setsid(2)`, `setgroups(2)`, `setresgid(2)`, `setresuid(2)`,
 * `dup3(2)`, `exit_group(2)`, `close(2)`; the set-up's end mark; the pids cgroup's member
 * list the runner joins ("" for none); how many roots; how many trees;
 * the tree specs (see `TREES_PERL`; the last one per root, its lower layer, with no mount point
 * yet); per root its path and `<device>:<inode>` (`-`: not checked, numbers past 2^53 that
 * JavaScript cannot hold exactly).
 *
 * The listing: for each directory of a non-empty upper layer (not following links) whose
 * path below is a directory, not a link, `X<dir>/<name>\0` for each name below that the
 * merged view (the root, still mounted here) lacks: a deletion. A directory that cannot be
 * read there fails the listing (`failed`): nothing is applied then.
 */
export const OVERLAY_ROOT_PERL = String.raw`
use strict;
# No modules (POSIX alone costs 20 ms a start): plain exit, and close through a handle.
$| = 1;
my ($uid, $gid, $unshare, $mount, $prctl, $setsid, $setgroups, $setresgid, $setresuid, $dup3,
  $exit_group, $close, $mark, $procs, $nroots, $n) = splice(@ARGV, 0, 16);
# Ends the process at once, skipping perl's own teardown: in a forked copy of this program that
# writes to every page the parent shares (each a copy-on-write fault, costly in some VMs), on
# the call's time. Nothing is buffered to lose: output is unbuffered, and files are closed.
sub quit { syscall($exit_group, $_[0] + 0) }
my $dir;
sub fail { print "bash: the unprivileged shell could not be set up: $_[0]\n"; exit(125) }
sub broke {
  my $e;
  open($e, ">>", "$dir/error") and print($e "$_[0]\n") and close($e);
  exit(125);
}
` + TREES_PERL + String.raw`
my @specs = take_trees($n);
my (@roots, @ids);
for (1 .. $nroots) { push @roots, shift @ARGV; push @ids, shift @ARGV }
# A session (and process group) of its own: what rousseau kills when the call is cut short.
syscall($setsid) >= 0 or fail("setsid: $!");
# prctl(PR_SET_PDEATHSIG, SIGKILL); a parent gone before it is seen by the parent id.
my $parent = getppid();
syscall($prctl, 1, 9, 0, 0, 0) == 0 or fail("prctl: $!");
getppid() == $parent or exit(125);
# The id mappings, while /proc is this PID namespace's.
mapping($_->[0], $_->[1]) for grep { $_->[2] eq "ro" || $_->[2] eq "rw" } @specs;
# unshare(CLONE_NEWNS | CLONE_NEWPID): the next child is the PID namespace's init.
syscall($unshare, 0x00020000 | 0x20000000) == 0 or fail("unshare: $!");
pipe(my $alive_r, my $alive_w) or fail("pipe: $!");
pipe(my $done_r, my $done_w) or fail("pipe: $!");
my $init = fork() // fail("fork: $!");
if ($init) {
  close $alive_r;
  close $done_w;
  close STDIN;
  # The init says its status once its work is done (the listing written, its output closed),
  # then exits. Wait for it all the same: until it has exited, its mount namespace holds the
  # overlay, and the upper directory's blocks stay taken on the state directory's disk (a full
  # disk then refused the call's own audit line).
  my $said = <$done_r>;
  waitpid($init, 0) == $init or fail("wait: $!");
  my $status = $?;
  quit($status >> 8) unless $status & 127;
  # Ended by a signal: so does this process, as unshare(1) does.
  kill($status & 127, $$);
  exit(128 + ($status & 127));
}
close $alive_w;
close $done_r;
syscall($prctl, 1, 9, 0, 0, 0) == 0 or fail("prctl: $!");
# Its parent may have died before that: then the pipe's other end is closed (readable).
my $bits = "";
vec($bits, fileno($alive_r), 1) = 1;
select(my $seen = $bits, undef, undef, 0) == 0 or exit(125);
# mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) (a string syscall takes must be writable)
my $top = "/";
syscall($mount, 0, $top, 0, 0x4000 | 0x40000, 0) == 0 or fail("private mounts: $!");
# A /proc of the new PID namespace (MS_NOSUID | MS_NODEV | MS_NOEXEC), as unshare --mount-proc
# makes: bwrap, in a user namespace, may mount its own only where a whole one is visible, and
# the network set-up reads the pids it hands slirp4netns there.
my ($proc, $at_proc) = ("proc", "/proc");
syscall($mount, $proc, $at_proc, $proc, 0x2 | 0x4 | 0x8, 0) == 0 or fail("/proc: $!");
my @trees = map { clone_tree($_) } @specs;
my @lower = splice(@trees, @trees - $nroots);
for my $i (0 .. $#roots) {
  next if $ids[$i] eq "-";
  my @st = stat("/proc/self/fd/$lower[$i][0]");
  "$st[0]:$st[1]" eq $ids[$i] or fail("$roots[$i] was replaced while the sandbox was made");
}
place_tree($_) for @trees;
# The runner, forked ahead (a fork, and a cgroup join, cost milliseconds each): it joins the
# pids cgroup now (what it starts is counted from its first process on), then waits for its
# part of the call on a pipe; the pipe ending with nothing (the call never came, or the set-up
# failed) ends it silently. It dies with the init (the PID namespace's end), and takes the
# parent-death signal itself too.
pipe(my $go_r, my $go_w) or fail("pipe: $!");
# What bwrap says of the command (--json-status-fd): an exit code only once it was started.
pipe(my $status_r, my $status_w) or fail("pipe: $!");
my $runner = fork() // fail("fork: $!");
if ($runner == 0) {
  close $go_w;
  # The set-up's stdin is not the runner's (fd 0 stays taken: the filter is put there).
  open(STDIN, "<", "/dev/null") or fail("stdin: $!");
  syscall($prctl, 1, 9, 0, 0, 0) == 0 or fail("prctl: $!");
  if ($procs ne "") {
    my $f;
    open($f, ">", $procs) && print($f "$$") && close($f)
      or do { print "bash: cannot join the process-limit cgroup $procs\n"; exit(125) };
  }
  # Descriptors rousseau inherited without close-on-exec, from whatever started it, would reach
  # bwrap and the command (a socket, a directory outside the workspace): every one but the
  # standard three and the runner's own pipes is closed now, before the call.
  my %keep = map { $_ => 1 } (0, 1, 2, fileno($go_r), fileno($status_w));
  my $fds;
  opendir($fds, "/proc/self/fd") or fail("/proc/self/fd: $!");
  my @open = grep { /^[0-9]+$/ && !$keep{$_} && $_ != fileno($fds) } readdir($fds);
  closedir($fds);
  syscall($close, $_ + 0) for @open;
  my $part = do { local $/; <$go_r> };
  close $go_r;
  exit(125) unless defined $part && length $part;
  my $at = 0;
  my $field = sub {
    my $end = index($part, "\0", $at);
    $end >= 0 or fail("the call is cut short");
    my $value = substr($part, $at, $end - $at);
    $at = $end + 1;
    return $value;
  };
  my ($direct, $drop, $argc) = ($field->(), $field->(), $field->());
  my @argv = map { $field->() } 1 .. $argc;
  my $filter = substr($part, $at);
  # Each handle's descriptor copied to exactly the number bwrap is told, without close-on-exec
  # (copied above 9 first, so no source is one of the targets).
  my $place = sub {
    my ($h, $to) = @_;
    my $high = fcntl($h, 1030, 10) or fail("fcntl: $!");
    syscall($dup3, $high + 0, $to, 0) == $to or fail("dup3: $!");
  };
  if ($direct) {
    close $status_r;
    $place->($status_w, ${DIRECT_FDS.status});
    if (length $filter) {
      pipe(my $filter_r, my $filter_w) or fail("pipe: $!");
      syswrite($filter_w, $filter) == length($filter) or fail("the seccomp filter: $!");
      close $filter_w;
      $place->($filter_r, ${DIRECT_FDS.seccomp});
    }
    open(STDERR, ">&", \*STDOUT) or fail("stderr: $!");
  } elsif (length $filter) {
    # A few hundred bytes: they fit the pipe. bwrap reads it (--seccomp 0); the command's own
    # stdin is then /dev/null (bash.ts redirects it).
    pipe(my $filter_r, my $filter_w) or fail("pipe: $!");
    syswrite($filter_w, $filter) == length($filter) or fail("the seccomp filter: $!");
    close $filter_w;
    open(STDIN, "<&", $filter_r) or fail("stdin: $!");
    close $filter_r;
  }
  if ($drop) {
    syscall($setgroups, 0, 0) == 0 or fail("setgroups: $!");
    syscall($setresgid, $gid + 0, $gid + 0, $gid + 0) == 0 or fail("setresgid: $!");
    syscall($setresuid, $uid + 0, $uid + 0, $uid + 0) == 0 or fail("setresuid: $!");
  }
  exec { $argv[0] } @argv or fail("$argv[0]: $!");
}
close $go_r;
close $status_w;
# The call: its length, a NUL byte, then the call itself. stdin ending first (a chain parked
# and never used, or a caller gone) ends this silently.
my ($call, $want) = ("");
while (!defined $want || length($call) < $want) {
  sysread(STDIN, $call, 65536, length $call) or exit(125);
  my $end = defined $want ? -1 : index($call, "\0");
  if ($end >= 0) {
    $want = substr($call, 0, $end);
    $want =~ /^[0-9]+$/ or fail("the call's length is not a number");
    $call = substr($call, $end + 1);
  }
}
close STDIN;
exit(125) unless length $call;
my $cut = index($call, "\0");
$cut >= 0 or fail("the call is cut short");
$dir = substr($call, 0, $cut);
my $direct = substr($call, $cut + 1, 1) eq "1";
place_tree([$lower[$_][0], "$dir/$_/l"]) for 0 .. $#roots;
for my $i (0 .. $#roots) {
  my $r = $roots[$i];
  # Below a cover (a directory the unprivileged shell could not pass) the root is made there.
  if (!-d $r) {
    my $path = "";
    for my $part (grep { length } split m{/}, $r) {
      $path .= "/$part";
      -d $path or mkdir($path, 0755) or broke("mkdir: cannot create directory '$path': $!");
    }
  }
  my ($type, $options) = ("overlay", "lowerdir=$dir/$i/l,upperdir=$dir/$i/u,workdir=$dir/$i/w,userxattr");
  syscall($mount, $type, $r, $type, 0, $options) == 0
    or broke("mount: $r: the overlay cannot be mounted: $!");
}
my $ready;
open($ready, ">", "$dir/ready") and close($ready) or broke("$dir/ready: $!");
# The runner's part: a runner already gone (it could not join the cgroup) reads none of it,
# and says why itself. (SIGPIPE ignored from here on only: an ignored signal is inherited
# through exec, and the runner, forked before, must hand bwrap and the command the default.)
$SIG{PIPE} = "IGNORE";
for (my $at = $cut + 1; $at < length $call;) {
  my $wrote = syswrite($go_w, $call, length($call) - $at, $at);
  last unless $wrote;
  $at += $wrote;
}
close $go_w;
waitpid($runner, 0) == $runner or fail("wait: $!");
my $rc = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
if ($direct) {
  my $said = do { local $/; <$status_r> };
  print STDERR "$mark\n" if defined $said && $said =~ /"exit-code"/;
}
close $status_r;
sub names {
  my $h;
  opendir($h, $_[0]) or die "$_[0]: $!\n";
  my @names = grep { $_ ne "." && $_ ne ".." } readdir($h);
  closedir($h);
  return @names;
}
sub walk {
  my ($out, $u, $l, $v, $x) = @_;
  if (-d "$l/$x" && !-l "$l/$x") {
    for my $y (names("$l/$x")) {
      lstat("$v/$x/$y") or print($out "X$x/$y\0") or die "listing: $!\n";
    }
  }
  for my $name (names("$u/$x")) {
    lstat("$u/$x/$name");
    walk($out, $u, $l, $v, "$x/$name") if -d _;
  }
}
for my $i (0 .. $#roots) {
  my ($u, $l) = ("$dir/$i/u", "$dir/$i/l");
  my $out;
  my $ok = open($out, ">", "$dir/$i/listing") && eval {
    walk($out, $u, $l, $roots[$i], ".") if names($u);
    1;
  };
  ($out && close($out) && $ok) or do { my $f; open($f, ">", "$dir/$i/failed") and close($f) };
}
# Done: the output pipes closed (the call's output ends here), then the status to the parent.
close STDOUT;
close STDERR;
syswrite($done_w, "$rc\n");
quit($rc);
`;

/**
 * The perl arguments (after the program) of the set-up for `roots` under the scratch `base`,
 * the runner joining the pids cgroup whose member list is `procs`: nothing of the call, so the same arguments mean the same set-up (`_bash_park.ts` compares
 * them). Throws when a root cannot be read.
 */
export function rootOverlayArgs(
  identity: ShellIdentity,
  base: string,
  roots: readonly string[],
  procs: string | undefined,
): string[] {
  const calls = CALLS[Deno.build.arch];
  if (calls === undefined) {
    throw new Error(`no system call numbers known for ${Deno.build.arch}`);
  }
  const specs = treeSpecs(identity, [
    // The scratch base first: it may lie in the home directory, which is mounted over
    // read-only; each call's lower layers are then mounted inside it.
    { src: base, dst: base, readOnly: false, asIs: true },
    // The lower layers last (mounted at the call, in its scratch directory).
    ...roots.map((root) => ({ src: root, dst: "-", readOnly: true })),
  ]);
  const ids = roots.flatMap((root) => [root, rootId(root)]);
  return [
    "-e",
    OVERLAY_ROOT_PERL,
    String(identity.uid),
    String(identity.gid),
    String(identity.calls.unshare),
    String(identity.calls.mount),
    String(calls.prctl),
    String(calls.setsid),
    String(calls.setgroups),
    String(calls.setresgid),
    String(calls.setresuid),
    String(calls.dup3),
    String(calls.exitGroup),
    String(calls.close),
    SET_UP_DONE,
    procs ?? "",
    String(roots.length),
    String(specs.length / 5),
    ...specs,
    ...ids,
  ];
}

/** `<device>:<inode>` of `root`, or `-` when either is past what a number holds exactly. */
function rootId(root: string): string {
  const { dev, ino } = Deno.statSync(root);
  return Number.isSafeInteger(dev) && Number.isSafeInteger(ino) ? `${dev}:${ino}` : "-";
}

/**
 * The call, as the program reads it on stdin: its length, then the scratch directory `dir`,
 * whether the argv is bwrap's own with the filter at descriptor 3 and the status channel at 4
 * (`direct`), whether to drop to the shell's ids, the argv, the seccomp filter.
 */
export function rootOverlayCall(
  dir: string,
  direct: boolean,
  drop: boolean,
  argv: readonly string[],
  filter: Uint8Array | undefined,
): Uint8Array {
  const fields = [dir, direct ? "1" : "0", drop ? "1" : "0", String(argv.length), ...argv];
  for (const field of fields) {
    if (field.includes("\0")) throw new Error("an argument holds a NUL byte");
  }
  const head = new TextEncoder().encode(fields.map((f) => `${f}\0`).join(""));
  const length = head.length + (filter?.length ?? 0);
  const prefix = new TextEncoder().encode(`${length}\0`);
  const out = new Uint8Array(prefix.length + length);
  out.set(prefix);
  out.set(head, prefix.length);
  if (filter !== undefined) out.set(filter, prefix.length + head.length);
  return out;
}
