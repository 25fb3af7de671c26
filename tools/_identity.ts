/**
 * The shell's identity when rousseau runs as root: an unprivileged host uid (`nobody` by
 * default), so that every host file only root may read — `/etc/shadow`, `/root`, 0600 keys
 * under `/etc` and `/var/lib` — is unreadable to the command, as it is to any normal user.
 * Dropping capabilities is not enough: a shell whose uid is 0 owns those files.
 *
 * The workspace stays writable through idmapped mounts: each root, and the home directory
 * (read-only: toolchains live there), is mounted over itself with its owner mapped to the
 * shell's uid, so the command owns what the workspace owner owns, and what it creates is
 * stored as the workspace owner's. Inside the sandbox the shell sees itself as that owner
 * (bwrap `--uid`/`--gid`), so `id -u`, git's `safe.directory` check and file listings of the
 * workspace read as before; files owned by anyone else read as `nobody`.
 *
 * The mounts need system calls no util-linux before 2.39 offers (`open_tree`,
 * `mount_setattr`, `move_mount`): a short perl program makes them (perl-base is part of
 * every Debian and Ubuntu system), inside a mount namespace of its own made by unshare(1),
 * as real root — idmapping a filesystem requires CAP_SYS_ADMIN over it.
 *
 * Hazards:
 * - Only the owner of each mapped tree is mapped: a file in the workspace owned by another
 *   uid can be read and written only as its "other" permission bits allow.
 * - The home directory's own mount is mapped, not mounts below it (they show as empty
 *   directories); the roots are mounted after it, so a root inside the home is unaffected.
 * - A hidden path or socket the shell's uid could not reach anyway is not covered (bwrap,
 *   running as that uid, could not reach it either): see `reachable`.
 *
 * @module
 */

/** How the shell is made unprivileged; present on the sandbox when it works here. */
export interface ShellIdentity {
  /** Absolute path of perl, which makes the idmapped mounts. */
  readonly perl: string;
  /** Absolute path of setpriv(1), which drops to `uid`/`gid` and kills with the parent. */
  readonly setpriv: string;
  /** Absolute path of unshare(1), which makes the mount and PID namespaces. */
  readonly unshare: string;
  /** The host uid and gid the shell runs as. */
  readonly uid: number;
  readonly gid: number;
  /** The home directory, shown read-only with its owner mapped; undefined: not mapped. */
  readonly home?: { readonly path: string; readonly uid: number; readonly gid: number };
  /** `unshare(2)` and `mount(2)` on this CPU, for the perl program. */
  readonly calls: { readonly unshare: number; readonly mount: number };
  /**
   * Directories the shell's uid could not pass through on the way to a root or the scratch
   * directory (a 0700 parent): each is covered by an empty tmpfs, and the paths below it are
   * made there, so what else it holds stays out of sight, as it was. Set per set of roots.
   */
  readonly covers?: readonly string[];
}

/** The uid and gid the shell runs as: `nobody`/`nogroup`, reserved on every Linux system. */
export const UNPRIVILEGED_ID = 65534;

/** `unshare(2)` and `mount(2)` per CPU, for the perl program (the new mount calls share one numbering). */
export const SYSTEM_CALLS: Readonly<Record<string, ShellIdentity["calls"]>> = {
  "x86_64": { unshare: 272, mount: 165 },
  aarch64: { unshare: 97, mount: 40 },
};

/**
 * perl code shared by the programs that mount trees with their owner mapped (this file's and
 * `_overlay_root.ts`'s). Needs `$uid`, `$gid`, `$unshare`, `$mount` and `fail` in scope.
 * `mapping(owner, group)` makes (once per pair) a user namespace mapping that owner to the
 * shell's uid and returns a handle on it; `take_trees(n)` takes n tree specs off `@ARGV` (each:
 * the tree's owner uid and gid, `ro` or `rw` (mapped), `bind` (as it is) or `tmpfs` (a cover;
 * no source), the source and the mount point); `clone_tree(spec)` clones one (mounted nowhere
 * yet), `place_tree(clone)` mounts it; `mount_trees(@specs)` clones all, then mounts all. All
 * trees are cloned before any is mounted, so a root inside the home directory is cloned from
 * the host's tree, not from the mapped home.
 */
export const TREES_PERL = String.raw`
my %userns;
sub mapping {
  my ($owner, $group) = @_;
  my $key = "$owner:$group";
  return $userns{$key} if $userns{$key};
  pipe(my $ready_r, my $ready_w) or fail("pipe: $!");
  pipe(my $done_r, my $done_w) or fail("pipe: $!");
  my $pid = fork() // fail("fork: $!");
  if ($pid == 0) {
    close $ready_r; close $done_w;
    syscall($unshare, 0x10000000) == 0 or exit(1);
    syswrite $ready_w, "x"; close $ready_w;
    sysread $done_r, my $x, 1;
    # Killed, not exited: perl's own teardown in a forked copy writes to every page it shares
    # with its parent (a copy-on-write fault each, costly in some VMs).
    kill("KILL", $$);
  }
  close $ready_w; close $done_r;
  sysread($ready_r, my $x, 1) == 1 or fail("a user namespace for the id mapping could not be made");
  for (["uid_map", "$owner $uid 1"], ["setgroups", "deny"], ["gid_map", "$group $gid 1"]) {
    open(my $f, ">", "/proc/$pid/$_->[0]") or fail("/proc/$pid/$_->[0]: $!");
    print $f $_->[1]; close $f or fail("writing $_->[0]: $!");
  }
  open(my $ns, "<", "/proc/$pid/ns/user") or fail("/proc/$pid/ns/user: $!");
  close $done_w; waitpid($pid, 0);
  return $userns{$key} = $ns;
}
sub take_trees {
  my @specs;
  push @specs, [splice(@ARGV, 0, 5)] for 1 .. $_[0];
  return @specs;
}
# One tree cloned (not yet mounted anywhere): [fd, mount point], or [undef, mount point] for a
# cover.
sub clone_tree {
  my ($owner, $group, $mode, $src, $dst) = @{$_[0]};
  return [undef, $dst] if $mode eq "tmpfs";
  my $path = $src;
  # open_tree(AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)
  my $fd = syscall(428, -100, $path, 1 | 0x80000);
  $fd >= 0 or fail("$src cannot be cloned: $!");
  if ($mode ne "bind") {
    # MOUNT_ATTR_IDMAP | NOSUID | NODEV, and RDONLY for ro
    my $attr = pack("QQQQ", 0x00100000 | 0x2 | 0x4 | ($mode eq "ro" ? 0x1 : 0), 0, 0,
      fileno(mapping($owner, $group)));
    my $empty = "";
    # mount_setattr(fd, "", AT_EMPTY_PATH, &attr, sizeof attr)
    syscall(442, $fd, $empty, 0x1000, $attr, 32) == 0
      or fail("$src cannot be mounted with its owner mapped: $!");
  }
  return [$fd, $dst];
}
# Makes the directory $_[0] and those above it that are missing (below a cover, in its tmpfs).
sub make_dirs {
  my $at = "";
  for my $part (grep { length } split m{/}, $_[0]) {
    $at .= "/$part";
    -d $at or mkdir($at, 0755) or fail("$at cannot be made: $!");
  }
}
# Mounts a cloned tree (or a cover) at its mount point.
sub place_tree {
  my ($fd, $dst) = @{$_[0]};
  if (!defined $fd) {
    my ($type, $target, $data) = ("tmpfs", $dst, "mode=0755");
    syscall($mount, $type, $target, $type, 0x2 | 0x4, $data) == 0
      or fail("$dst cannot be covered: $!");
    return;
  }
  # Below a cover the mount point is made (in the tmpfs); elsewhere it exists.
  make_dirs($dst) unless -e $dst;
  my $empty = "";
  # move_mount(fd, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH)
  syscall(429, $fd, $empty, -100, $dst, 4) == 0 or fail("$dst cannot be mounted over: $!");
  my $h;
  open($h, "<&=", $fd) and close($h);
}
sub mount_trees {
  my @trees = map { clone_tree($_) } @_;
  place_tree($_) for @trees;
}
`;

/**
 * The perl program. Arguments: the shell's uid and gid, `unshare(2)`'s and `mount(2)`'s
 * numbers, the cgroup member list to join ("" for none), the number of mounts, then per mount
 * its spec (see {@linkcode TREES_PERL}); then `--` and the argv to exec (none: exit 0 once
 * mounted). Failures print one line, `bash: …`, on stdout (the tool's output) and exit 125.
 */
export const IDMAP_PERL = String.raw`
use strict;
# No modules (POSIX alone costs 20 ms a start): plain exit, and close through a handle.
$| = 1;
my ($uid, $gid, $unshare, $mount, $procs, $n) = splice(@ARGV, 0, 6);
sub fail { print "bash: the unprivileged shell could not be set up: $_[0]\n"; exit(125) }
` + TREES_PERL + String.raw`
mount_trees(take_trees($n));
if ($procs ne "") {
  my $f;
  open($f, ">", $procs) && print($f "$$") && close($f)
    or do { print "bash: cannot join the process-limit cgroup $procs\n"; exit(125) };
}
shift @ARGV if @ARGV && $ARGV[0] eq "--";
exit 0 unless @ARGV;
exec { $ARGV[0] } @ARGV or fail("$ARGV[0]: $!");
`;

/**
 * One tree to mount over a path with its owner mapped to the shell's uid, or (`asIs`) bound
 * unchanged: a directory of rousseau's under the home directory that must stay writable and
 * unmapped once the home is mounted over.
 */
export interface MappedTree {
  readonly src: string;
  readonly dst: string;
  readonly readOnly: boolean;
  readonly asIs?: boolean;
}

/** The owner of `path` (following links), or undefined when it cannot be read. */
function ownerOf(path: string): { uid: number; gid: number } | undefined {
  try {
    const info = Deno.statSync(path);
    return info.uid === null || info.gid === null ? undefined : { uid: info.uid, gid: info.gid };
  } catch {
    return undefined;
  }
}

/**
 * The tree specs (five arguments each, see {@linkcode TREES_PERL}) that mount `trees`: the
 * covers first, then the home directory when it is mapped and the caller did not list it.
 */
export function treeSpecs(identity: ShellIdentity, trees: readonly MappedTree[]): string[] {
  const home = identity.home;
  const all: (MappedTree & { cover?: boolean })[] = [
    ...(identity.covers ?? []).map((dst) => ({ src: "", dst, readOnly: true, cover: true })),
    ...(home === undefined || trees.some((t) => t.dst === home.path)
      ? []
      : [{ src: home.path, dst: home.path, readOnly: true }]),
    ...trees,
  ];
  const spec: string[] = [];
  for (const tree of all) {
    if (tree.cover) {
      spec.push("0", "0", "tmpfs", "-", tree.dst);
      continue;
    }
    // The home's owner was read where it may be (the tool worker may not stat it).
    const owner = (home !== undefined && tree.src === home.path ? home : ownerOf(tree.src)) ??
      { uid: 0, gid: 0 };
    spec.push(
      String(owner.uid),
      String(owner.gid),
      tree.asIs ? "bind" : tree.readOnly ? "ro" : "rw",
      tree.src,
      tree.dst,
    );
  }
  return spec;
}

/**
 * The perl argv that mounts `trees` (the home directory first when it is mapped and the
 * caller did not list it), joins `procs` when given, then execs `exec` (if any).
 */
export function idmapArgv(
  identity: ShellIdentity,
  trees: readonly MappedTree[],
  procs: string | undefined,
  exec: readonly string[],
): string[] {
  const spec = treeSpecs(identity, trees);
  return [
    identity.perl,
    "-e",
    IDMAP_PERL,
    String(identity.uid),
    String(identity.gid),
    String(identity.calls.unshare),
    String(identity.calls.mount),
    procs ?? "",
    String(spec.length / 5),
    ...spec,
    "--",
    ...exec,
  ];
}

/**
 * The argv prefix that makes a private mount and PID namespace as real root, dying with
 * rousseau (setpriv's parent-death signal) and taking everything in it along (unshare kills
 * the namespace's init when it dies).
 */
export function namespaceArgv(identity: Pick<ShellIdentity, "unshare">): string[] {
  return [
    "--pdeathsig",
    "KILL",
    "--",
    identity.unshare,
    "--mount",
    "--pid",
    "--fork",
    "--kill-child=SIGKILL",
    // A /proc of the new PID namespace: the perl program writes its helper's id maps there.
    "--mount-proc",
    "--propagation",
    "private",
  ];
}

/** The argv prefix that runs the rest as the shell's uid and gid, with no other groups. */
export function dropArgv(identity: ShellIdentity): string[] {
  return [
    identity.setpriv,
    "--reuid",
    String(identity.uid),
    "--regid",
    String(identity.gid),
    "--clear-groups",
    "--",
  ];
}

/** The uid and gid the shell sees itself as inside the sandbox: the first root's owner. */
export function insideIds(roots: readonly string[]): { uid: number; gid: number } {
  return (roots[0] === undefined ? undefined : ownerOf(roots[0])) ?? { uid: 0, gid: 0 };
}

/**
 * The first directory above `path` the shell's uid cannot pass through (not searchable by
 * others, and not in a tree mapped to the shell: `mapped`, or under a cover), or undefined
 * when it reaches `path`.
 */
export function blockedAt(path: string, mapped: readonly string[]): string | undefined {
  const parts = path.split("/").filter((p) => p !== "");
  let dir = "";
  for (let i = 0; i < parts.length - 1; i++) {
    dir += `/${parts[i]}`;
    if (mapped.some((m) => dir === m || dir.startsWith(`${m}/`))) return undefined;
    try {
      const info = Deno.statSync(dir);
      if (((info.mode ?? 0) & 0o001) === 0) return dir;
    } catch {
      return dir;
    }
  }
  return undefined;
}
