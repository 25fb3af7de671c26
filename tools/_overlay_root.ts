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
 *    descriptor rousseau inherited (each costs milliseconds: not on the call's time). Given
 *    bwrap's argv (bwrap started ahead: nothing of the call in it, the sandbox's shell reads
 *    the call), each root is first bound onto itself and made shared, so that what is mounted
 *    on it later reaches bwrap's mount namespace; the runner then puts the seccomp filter at
 *    `PARKED_SECCOMP_FD` and the pipe to bwrap's shell on its stdin, drops to the shell's
 *    ids and execs bwrap, which makes the whole sandbox and waits in that shell. Otherwise
 *    the runner waits for its part of the call on that pipe. Then the init waits for the call
 *    on stdin.
 *
 * The call, on stdin: its length in bytes and a NUL byte, then (read as soon as it is all
 * there, not when stdin ends) the scratch directory; the covers inside the roots (their
 * number, then each one's kind and path: see `Cover`); each field ending in a NUL byte; then
 * the runner's part: with bwrap started ahead, the script its shell runs; otherwise `1` to
 * drop to the shell's ids before the exec (`0` when the argv drops itself: the network set-up
 * runs as root and drops later), the argv (its length, then each argument), each ending in a
 * NUL byte, then the seccomp filter bwrap loads from stdin, if any.
 * 5. mounts the roots' clones as the lower layers in the scratch directory and each root's
 *    overlay over the root itself (only now: a change below a mounted overlay is undefined
 *    for overlayfs), then the covers over the overlays (with bwrap started ahead, they and the
 *    overlays reach the sandbox's copies of the roots; bwrap's own covers would lie under the
 *    overlay), writes `ready`, and hands the runner (or bwrap's shell) the rest of the call;
 * 6. the runner, without bwrap started ahead: stdin the filter (bwrap `--seccomp 0` reads it;
 *    the command's own stdin is then /dev/null: `bash.ts` redirects it) or /dev/null; it
 *    drops to the shell's uid and gid with no other groups (when asked) and execs the argv;
 * 7. once the runner has ended (bwrap returns only when its PID namespace is gone: nothing the
 *    command started is alive), writes each root's deletion listing, exactly as
 *    `_overlay.ts`'s shell does, says the runner's status (128 + n for a signal, as a shell
 *    says it) on stderr (`ENDED`), closes its output (the parent closed its own copies when it
 *    forked it), says the status to the parent and exits with it; the parent waits for it
 *    (see there) and exits with its status. Nothing of the command is alive by then. Both end
 *    with `exit_group` (see `quit`).
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
 * Where bwrap started ahead reads the seccomp filter (`--seccomp`): the runner puts it there,
 * and bwrap closes it before its shell runs (`sandboxArgs` in `_sandbox.ts` names it to bwrap).
 */
export const PARKED_SECCOMP_FD = "3";

/**
 * The set-up's last line on its own channel (stderr), `ENDED <status>`: the runner's status
 * (128 + n for a signal), said once nothing of the command is alive and the deletion listings
 * are written, just before its output pipes close. Its processes exit a few milliseconds later
 * (the mount namespace's teardown): `bash.ts` need not wait for that.
 */
export const ENDED = "rousseau-bash-set-up-ended";

/** bwrap started ahead, with the set-up: its argv (its shell reads the call) and filter. */
export interface Ahead {
  readonly argv: readonly string[];
  readonly filter: Uint8Array | undefined;
}

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
 * `dup3(2)`, `exit_group(2)`, `close(2)`; the pids cgroup's member list the runner joins
 * ("" for none); the seccomp filter of bwrap started ahead, in hexadecimal ("" for none);
 * how many roots; how many trees;
 * the tree specs (see `TREES_PERL`; the last one per root, its lower layer, with no mount point
 * yet); per root its path and `<device>:<inode>` (`-`: not checked, numbers past 2^53 that
 * JavaScript cannot hold exactly); then the argv of bwrap started ahead, if it is.
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
  $exit_group, $close, $procs, $filter, $nroots, $n) = splice(@ARGV, 0, 16);
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
# What is left is bwrap's argv when bwrap is started ahead (see step 4): none, at the call.
my @ahead = @ARGV;
# A pipe's read end holding the seccomp filter $_[0], its write end closed (a few hundred
# bytes: they fit the pipe).
sub filled {
  pipe(my $r, my $w) or fail("pipe: $!");
  syswrite($w, $_[0]) == length($_[0]) or fail("the seccomp filter: $!");
  close $w;
  return $r;
}
# One NUL-ended field of the text $_[0] refers to, from the offset $_[1] refers to (moved past it).
sub field {
  my ($text, $at) = @_;
  my $end = index($$text, "\0", $$at);
  $end >= 0 or fail("the call is cut short");
  my $value = substr($$text, $$at, $end - $$at);
  $$at = $end + 1;
  return $value;
}
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
  # Only the init's copies of the output pipes are left: they end when it says it is done (see
  # ENDED), not when this process has exited.
  close STDIN;
  close STDOUT;
  close STDERR;
  # The init says its status once its work is done (the listing written, its output closed),
  # then exits. Wait for it all the same: until it has exited, its mount namespace holds the
  # overlay, and the upper directory's blocks stay taken on the state directory's disk (a full
  # disk then refused the call's own audit line).
  my $said = <$done_r>;
  waitpid($init, 0) == $init or exit(125);
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
# Below a cover (a directory the unprivileged shell could not pass) a root is made there.
-d $_ or make_dirs($_) for @roots;
# With bwrap started ahead, each root becomes a mount point of its own, shared: bwrap's mount
# namespace receives what is mounted on it later (bwrap makes its copies slaves), so the
# call's overlay, and the covers over it, reach the sandbox already made (MS_BIND, then
# MS_SHARED; every other mount stays private).
if (@ahead) {
  for my $r (@roots) {
    my $root = $r;
    syscall($mount, $root, $root, 0, 0x1000, 0) == 0 or fail("$r cannot be bound: $!");
    syscall($mount, 0, $root, 0, 0x100000, 0) == 0 or fail("$r cannot be shared: $!");
  }
}
# The runner, forked ahead (a fork, and a cgroup join, cost milliseconds each): it joins the
# pids cgroup now (what it starts is counted from its first process on). With bwrap's argv
# given ahead it starts bwrap now, whose shell then waits for the call on the pipe; otherwise
# it waits for its part of the call on that pipe, then starts it. The pipe ending with nothing
# (the call never came, or the set-up failed) ends either silently. It dies with the init (the
# PID namespace's end), and takes the parent-death signal itself too.
pipe(my $go_r, my $go_w) or fail("pipe: $!");
my $runner = fork() // fail("fork: $!");
if ($runner == 0) {
  close $go_w;
  # The set-up's stdin is not the runner's (fd 0 stays taken: the filter, or the pipe to
  # bwrap's shell, is put there).
  open(STDIN, "<", "/dev/null") or fail("stdin: $!");
  syscall($prctl, 1, 9, 0, 0, 0) == 0 or fail("prctl: $!");
  if ($procs ne "") {
    my $f;
    open($f, ">", $procs) && print($f "$$") && close($f)
      or do { print "bash: cannot join the process-limit cgroup $procs\n"; exit(125) };
  }
  # Descriptors rousseau inherited without close-on-exec, from whatever started it, would reach
  # bwrap and the command (a socket, a directory outside the workspace): every one but the
  # standard three and the runner's own pipe is closed now, before the call.
  my %keep = map { $_ => 1 } (0, 1, 2, fileno($go_r));
  my $fds;
  opendir($fds, "/proc/self/fd") or fail("/proc/self/fd: $!");
  my @open = grep { /^[0-9]+$/ && !$keep{$_} && $_ != fileno($fds) } readdir($fds);
  closedir($fds);
  syscall($close, $_ + 0) for @open;
  my ($drop, @argv, $filter_r) = (1);
  if (@ahead) {
    # bwrap's shell reads the call from stdin; the filter is at the descriptor bwrap is told
    # (copied above 9 first, so the pipe's own number is never the target; the handle stays
    # open until the exec, which closes its own copy).
    @argv = @ahead;
    open(STDIN, "<&", $go_r) or fail("stdin: $!");
    close $go_r;
    if (length $filter) {
      $filter_r = filled(pack("H*", $filter));
      my $high = fcntl($filter_r, 1030, 10) or fail("fcntl: $!");
      syscall($dup3, $high + 0, ${PARKED_SECCOMP_FD}, 0) == ${PARKED_SECCOMP_FD} or fail("dup3: $!");
    }
  } else {
    my $part = do { local $/; <$go_r> };
    close $go_r;
    exit(125) unless defined $part && length $part;
    my $at = 0;
    ($drop, my $argc) = (field(\$part, \$at), field(\$part, \$at));
    @argv = map { field(\$part, \$at) } 1 .. $argc;
    my $bytes = substr($part, $at);
    if (length $bytes) {
      # bwrap reads it (--seccomp 0); the command's own stdin is then /dev/null (bash.ts
      # redirects it).
      my $pipe_r = filled($bytes);
      open(STDIN, "<&", $pipe_r) or fail("stdin: $!");
      close $pipe_r;
    }
  }
  if ($drop) {
    syscall($setgroups, 0, 0) == 0 or fail("setgroups: $!");
    syscall($setresgid, $gid + 0, $gid + 0, $gid + 0) == 0 or fail("setresgid: $!");
    syscall($setresuid, $uid + 0, $uid + 0, $uid + 0) == 0 or fail("setresuid: $!");
  }
  exec { $argv[0] } @argv or fail("$argv[0]: $!");
}
close $go_r;
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
my $at = 0;
$dir = field(\$call, \$at);
my @covers = map { [field(\$call, \$at), field(\$call, \$at)] } 1 .. field(\$call, \$at);
place_tree([$lower[$_][0], "$dir/$_/l"]) for 0 .. $#roots;
for my $i (0 .. $#roots) {
  my $r = $roots[$i];
  my ($type, $options) = ("overlay", "lowerdir=$dir/$i/l,upperdir=$dir/$i/u,workdir=$dir/$i/w,userxattr");
  syscall($mount, $type, $r, $type, 0, $options) == 0
    or broke("mount: $r: the overlay cannot be mounted: $!");
}
# The covers inside the roots, over the overlays (see callCovers in _sandbox.ts), outermost
# first. A path gone since the call was made has nothing left to hide; one that is now a
# link was changed meanwhile (the caller resolved links): mounting would follow it.
for my $c (@covers) {
  my ($kind, $path) = @$c;
  lstat($path) or next;
  !-l _ && ($kind eq "file" ? !-d _ : -d _) or broke("$path was changed while the sandbox was made");
  if ($kind eq "pin") {
    syscall($mount, $path, $path, 0, 0x1000, 0) == 0 or broke("mount: $path cannot be bound: $!");
  } elsif ($kind eq "dir") {
    # MS_RDONLY | MS_NOSUID | MS_NODEV, owned by the shell (bwrap's --tmpfs is its user's)
    my ($type, $data) = ("tmpfs", "mode=0755,uid=$uid,gid=$gid");
    syscall($mount, $type, $path, $type, 0x1 | 0x2 | 0x4, $data) == 0
      or broke("mount: $path cannot be covered: $!");
  } else {
    # /dev/null, read-only before it is attached (a remount would not reach the copies)
    my $null = "/dev/null";
    my $fd = syscall(428, -100, $null, 1 | 0x80000);
    $fd >= 0 or broke("/dev/null cannot be cloned: $!");
    my ($attr, $empty) = (pack("QQQQ", 0x1, 0, 0, 0), "");
    syscall(442, $fd, $empty, 0x1000, $attr, 32) == 0 or broke("/dev/null cannot be made read-only: $!");
    syscall(429, $fd, $empty, -100, $path, 4) == 0 or broke("mount: $path cannot be covered: $!");
    syscall($close, $fd + 0);
  }
}
my $ready;
open($ready, ">", "$dir/ready") and close($ready) or broke("$dir/ready: $!");
# The rest goes to the runner, or to bwrap's shell: a runner already gone (it could not join
# the cgroup, bwrap failed) reads none of it, and says why itself. (SIGPIPE ignored from here
# on only: an ignored signal is inherited through exec, and the runner, forked before, must
# hand bwrap and the command the default.)
$SIG{PIPE} = "IGNORE";
while ($at < length $call) {
  my $wrote = syswrite($go_w, $call, length($call) - $at, $at);
  last unless $wrote;
  $at += $wrote;
}
close $go_w;
waitpid($runner, 0) == $runner or fail("wait: $!");
my $rc = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
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
# Done: the status on the set-up's channel, the output pipes closed (the call's output ends
# here), then the status to the parent.
print STDERR "${ENDED} $rc\n";
close STDOUT;
close STDERR;
syswrite($done_w, "$rc\n");
quit($rc);
`;

/**
 * The perl arguments (after the program) of the set-up for `roots` under the scratch `base`,
 * the runner joining the pids cgroup whose member list is `procs`, and starting bwrap `ahead`
 * when given: nothing of the call, so the same arguments mean the same set-up
 * (`_bash_park.ts` compares them). Throws when a root cannot be read.
 */
export function rootOverlayArgs(
  identity: ShellIdentity,
  base: string,
  roots: readonly string[],
  procs: string | undefined,
  ahead?: Ahead,
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
    procs ?? "",
    ahead?.filter === undefined ? "" : hex(ahead.filter),
    String(roots.length),
    String(specs.length / 5),
    ...specs,
    ...ids,
    ...(ahead?.argv ?? []),
  ];
}

/** `<device>:<inode>` of `root`, or `-` when either is past what a number holds exactly. */
function rootId(root: string): string {
  const { dev, ino } = Deno.statSync(root);
  return Number.isSafeInteger(dev) && Number.isSafeInteger(ino) ? `${dev}:${ino}` : "-";
}

/** The bytes as hexadecimal digits (perl's `pack("H*")` reads them back). */
function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A cover the set-up mounts over the overlay at the call (see `callCovers` in `_sandbox.ts`). */
export interface Cover {
  /** `pin`: a directory bound onto itself; `dir`: an empty read-only tmpfs; `file`: /dev/null. */
  readonly kind: "pin" | "dir" | "file";
  readonly path: string;
}

/**
 * The call, as the program reads it on stdin: its length, then the scratch directory `dir`,
 * the covers (how many, then each kind and path), then the runner's part — with bwrap started
 * ahead, the script its shell reads (`script`); otherwise whether to drop to the shell's ids,
 * the argv and the seccomp filter bwrap loads from its stdin.
 */
export function rootOverlayCall(
  dir: string,
  covers: readonly Cover[],
  part: { readonly script: string } | {
    readonly drop: boolean;
    readonly argv: readonly string[];
    readonly filter: Uint8Array | undefined;
  },
): Uint8Array {
  const fields = [dir, String(covers.length), ...covers.flatMap((c) => [c.kind, c.path])];
  if (!("script" in part)) {
    fields.push(part.drop ? "1" : "0", String(part.argv.length), ...part.argv);
  }
  for (const field of "script" in part ? [...fields, part.script] : fields) {
    if (field.includes("\0")) throw new Error("an argument holds a NUL byte");
  }
  const encoder = new TextEncoder();
  const head = encoder.encode(fields.map((f) => `${f}\0`).join(""));
  const tail = "script" in part ? encoder.encode(part.script) : part.filter;
  const length = head.length + (tail?.length ?? 0);
  const prefix = encoder.encode(`${length}\0`);
  const out = new Uint8Array(prefix.length + length);
  out.set(prefix);
  out.set(head, prefix.length);
  if (tail !== undefined) out.set(tail, prefix.length + head.length);
  return out;
}
