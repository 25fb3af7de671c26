/**
 * The bubblewrap sandbox for bash: `/` read-only, the workspace roots read-write, a private
 * `/tmp` and `/run`, credential paths, rousseau's own files and unix sockets hidden, no network
 * unless allowed (and then a network namespace of its own, see `_usernet.ts`), its own PID namespace (so nothing the command starts outlives it), dying
 * with its parent, in a new session.
 *
 * The shell holds no capability, also when rousseau runs as root: it runs in a user namespace
 * with every capability dropped and no_new_privs set, and (bwrap ≥ 0.8) cannot create another
 * user namespace to regain them. Without that, root in the sandbox keeps CAP_SYS_ADMIN and
 * simply unmounts what hides a path, remounts `/` read-write, or enters other namespaces.
 *
 * @module
 */

import type { OverlaySetup } from "./_overlay.ts";
import {
  blockedAt,
  dropArgv,
  idmapArgv,
  insideIds,
  namespaceArgv,
  type ShellIdentity,
} from "./_identity.ts";
import { READY_FD, RESOLV_FD, type UserNet, userNetArgv } from "./_usernet.ts";
import { type Cover, PARKED_SECCOMP_FD } from "./_overlay_root.ts";

/** A path to hide, already resolved by the caller. */
export interface HiddenPath {
  /** Absolute path. */
  readonly path: string;
  /** Directories are covered by an empty read-only tmpfs, anything else by /dev/null. */
  readonly kind: "dir" | "file";
}

/** A pids cgroup every sandboxed command joins before it runs (see `tools/_pids.ts`). */
export interface PidsLimit {
  /** The cgroup directory (created by the caller, `pids.max` already written). */
  readonly dir: string;
  /** The limit written to `pids.max`, for people. */
  readonly max: number;
}

/** How bash is sandboxed; absent from the context means not at all. */
export interface Sandbox {
  /** Absolute path of the bwrap binary. */
  readonly bwrap: string;
  /** Whether the command may use the network. */
  readonly network: boolean;
  /** Paths to hide (only those that exist): covered after the roots are bound. */
  readonly hide: readonly HiddenPath[];
  /**
   * System directories holding sockets and runtime state (`/run`): covered by an empty tmpfs
   * before the roots are bound, so a root below one stays visible. @default []
   */
  readonly mask?: readonly string[];
  /**
   * Files re-exposed read-only inside a masked directory (the resolver configuration that
   * `/etc/resolv.conf` links to under `/run`). @default []
   */
  readonly expose?: readonly string[];
  /** bwrap can forbid user namespaces inside the sandbox (`--disable-userns`, bwrap ≥ 0.8). */
  readonly disableUserns?: boolean;
  /** The pids cgroup that bounds how many processes the command may have. */
  readonly pids?: PidsLimit;
  /**
   * When set, each command runs over overlays of the roots and its changes reach them only
   * once judged (see `_overlay.ts`); otherwise the roots are bound read-write.
   */
  readonly overlay?: OverlaySetup;
  /**
   * When set (rousseau runs as root), the shell runs as an unprivileged host uid, the roots
   * mapped to it (see `_identity.ts`); otherwise it keeps rousseau's uid.
   */
  readonly identity?: ShellIdentity;
  /**
   * The seccomp filter bwrap loads (`--seccomp 0`, fed on the command's stdin): the kernel
   * keyring calls refused (see `_seccomp.ts`). Absent: no filter.
   */
  readonly seccomp?: Uint8Array;
  /**
   * With the network on: the command's own network namespace, linked out by slirp4netns (see
   * `_usernet.ts`). Absent: it shares the host's, and reaches the host's 127.0.0.1.
   */
  readonly userNet?: UserNet;
  /**
   * With the network on in the host's namespace (no `userNet`): perl, when the kernel's
   * Landlock can scope abstract unix sockets; the shell then enters such a domain before it
   * runs the command (see `_landlock.ts`). In a namespace of its own the command has its own
   * abstract sockets: no scope is needed.
   */
  readonly scopeAbstract?: string;
}

/** Credential paths hidden by default, relative to the home directory. */
export const DEFAULT_HIDDEN: readonly string[] = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/rousseau",
  ".netrc",
  ".docker",
  ".kube",
  ".config/gh",
  ".config/gcloud",
  ".azure",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".cargo/credentials.toml",
];

/** Whether `path` is `dir` or lies below it. */
export function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/**
 * The directories strictly between a root and a hidden path inside it, outermost first.
 * Bound onto themselves they become mount points, which the command cannot rename or
 * remove: without that, `mv .github x; mkdir .github` would let it plant the config file
 * the next run reads (the hidden file itself is a mount point already).
 */
function pinned(hide: readonly HiddenPath[], roots: readonly string[]): string[] {
  const out = new Set<string>();
  for (const { path } of hide) {
    for (const root of roots) {
      const prefix = root.endsWith("/") ? root : `${root}/`;
      if (!path.startsWith(prefix)) continue;
      const parts = path.slice(prefix.length).split("/").filter((p) => p !== "");
      for (let i = 1; i < parts.length; i++) out.add(prefix + parts.slice(0, i).join("/"));
    }
  }
  return [...out].sort((a, b) => a.split("/").length - b.split("/").length);
}

/**
 * With an unprivileged shell, the sandbox fitted to `roots`: each directory its uid cannot
 * pass through on the way to a root or the scratch directory is covered (see
 * `ShellIdentity.covers`), and hidden paths it could not reach are dropped — bwrap runs as
 * that uid, and could no more cover such a path than the command could read it (under a
 * cover, only what the set-up mounts there is left to hide).
 */
export function fitSandbox(sandbox: Sandbox, roots: readonly string[]): Sandbox {
  const identity = sandbox.identity;
  if (identity === undefined) return sandbox;
  const home = identity.home === undefined ? [] : [identity.home.path];
  const mounted = [
    ...roots,
    ...home,
    ...(sandbox.overlay === undefined ? [] : [sandbox.overlay.base]),
  ];
  const covers: string[] = [];
  for (const path of mounted) {
    const blocked = blockedAt(path, [...home, ...covers]);
    if (blocked !== undefined && !covers.includes(blocked)) covers.push(blocked);
  }
  const fitted: Sandbox = {
    ...sandbox,
    identity: { ...identity, ...(covers.length === 0 ? {} : { covers }) },
  };
  return { ...fitted, hide: sandbox.hide.filter((h) => mustCover(fitted, roots, h.path)) };
}

/**
 * Whether the sandbox (fitted to `roots`) must cover `path` itself: always without an
 * unprivileged shell; with one, when its uid could reach the path — inside a root or the
 * home directory, or on a way open to anyone; under a cover, only what the set-up mounts
 * there (a root, the home directory, the scratch directory) and their parents are left.
 */
export function mustCover(sandbox: Sandbox, roots: readonly string[], path: string): boolean {
  const identity = sandbox.identity;
  if (identity === undefined) return true;
  const home = identity.home === undefined ? [] : [identity.home.path];
  const open = [...roots, ...home];
  if ((identity.covers ?? []).some((c) => under(path, c))) {
    const mounted = [...open, ...(sandbox.overlay === undefined ? [] : [sandbox.overlay.base])];
    return open.some((tree) => under(path, tree)) || mounted.some((tree) => under(tree, path));
  }
  return blockedAt(path, open) === undefined;
}

/** The name of a cgroup's member list, in v1 and v2 alike. */
export const CGROUP_PROCS = "cgroup.procs";

/**
 * The pids cgroup's member list when the command must join it from inside the sandbox; an
 * unprivileged shell cannot (the cgroup tree is root's), so the namespace set-up joins it
 * before dropping to the shell's uid, and everything it starts is counted from there.
 */
export function procsToJoinInside(sandbox: Sandbox | undefined): string | undefined {
  return sandbox?.pids === undefined || sandbox.identity !== undefined
    ? undefined
    : `${sandbox.pids.dir}/${CGROUP_PROCS}`;
}

/** The pids cgroup's member list the namespace set-up joins (unprivileged shell only). */
export function procsToJoinOutside(sandbox: Sandbox): string | undefined {
  return sandbox.pids === undefined || sandbox.identity === undefined
    ? undefined
    : `${sandbox.pids.dir}/${CGROUP_PROCS}`;
}

/**
 * The program and arguments that run `argv` in the sandbox without an overlay: bwrap itself,
 * or, with an unprivileged shell, setpriv → unshare → the idmapping perl program (the roots
 * mapped read-write in place) → setpriv dropping to the shell's uid → bwrap.
 */
export function sandboxCommand(
  sandbox: Sandbox,
  roots: readonly string[],
  cwd: string,
  argv: readonly string[],
): { program: string; args: string[] } {
  const args = sandboxArgs(sandbox, roots, cwd, argv);
  const identity = sandbox.identity;
  if (identity === undefined) {
    const [program, ...rest] = withNetwork(sandbox, [sandbox.bwrap, ...args]);
    return { program: program!, args: rest };
  }
  return {
    program: identity.setpriv,
    args: [
      ...namespaceArgv(identity),
      ...idmapArgv(
        identity,
        roots.map((root) => ({ src: root, dst: root, readOnly: false })),
        procsToJoinOutside(sandbox),
        withNetwork(sandbox, [...dropArgv(identity), sandbox.bwrap, ...args]),
      ),
    ],
  };
}

/**
 * `exec` (the drop to the unprivileged uid, if any, then bwrap) as it must run: in a network
 * namespace of its own when the command has the network through slirp4netns, otherwise as
 * it is. (With the unprivileged shell, the namespace is made before the drop: slirp4netns
 * runs as root, out of the command's reach.)
 */
export function withNetwork(sandbox: Sandbox, exec: readonly string[]): string[] {
  return sandbox.network && sandbox.userNet !== undefined
    ? userNetArgv(sandbox.userNet, exec)
    : [...exec];
}

/**
 * Starts a sandboxed command (`program`/`options` from {@linkcode sandboxCommand} or the
 * overlay): with a seccomp filter, stdin is a pipe that carries the filter to bwrap and then
 * ends (the command's own stdin is /dev/null: `bash.ts` redirects it). With `input` (the root
 * overlay's program: see `PreparedOverlay.input`, which holds the filter), stdin carries that.
 */
export function spawnSandboxed(
  sandbox: Sandbox,
  program: string,
  options: Omit<Deno.CommandOptions, "stdin">,
  input?: Uint8Array,
): Deno.ChildProcess {
  const filter = input ?? sandbox.seccomp;
  const child = new Deno.Command(program, {
    ...options,
    stdin: filter === undefined ? "null" : "piped",
  }).spawn();
  if (filter !== undefined) feed(child, filter);
  return child;
}

/**
 * Writes `bytes` to the child's stdin, then closes it; settles once closed (or failed: a child
 * gone early has nothing to read). A filter is a few hundred bytes: it fits the pipe, so this
 * never waits on bwrap; the root overlay's set-up reads a call as soon as it is whole (its
 * length comes first), not when stdin ends.
 */
export function feed(child: Deno.ChildProcess, bytes: Uint8Array): Promise<void> {
  const writer = child.stdin.getWriter();
  return writer.write(bytes).then(() => writer.close()).catch(() => {});
}

/**
 * The covers bwrap started ahead leaves to the root overlay's set-up (see `_overlay_root.ts`),
 * which mounts them over the overlays at the call, outermost first: the directories between a
 * root and a hidden path inside it (see `pinned`), then the hidden paths inside a root.
 */
export function callCovers(sandbox: Sandbox, roots: readonly string[]): Cover[] {
  return [
    ...pinned(sandbox.hide, roots).map((path) => ({ kind: "pin" as const, path })),
    ...sandbox.hide.filter((h) => inRoot(h.path, roots)).map((h) => ({
      kind: h.kind,
      path: h.path,
    })),
  ];
}

function inRoot(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => under(path, root));
}

/**
 * The bwrap arguments that run `argv` inside the sandbox, in `cwd`. With a pids limit, the
 * cgroup's member list is the only writable file of the cgroup tree inside; `argv` must
 * write its own pid there first (`bash.ts` does), so every process it starts is counted.
 * With `ahead` (bwrap started before the call: see `_overlay_root.ts`), the filter is at
 * `PARKED_SECCOMP_FD` and the covers inside the roots are left out (`callCovers` are mounted
 * over the overlays at the call); otherwise the filter is on stdin.
 */
export function sandboxArgs(
  sandbox: Sandbox,
  roots: readonly string[],
  cwd: string,
  argv: readonly string[],
  ahead = false,
): string[] {
  const args = [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
  ];
  // Masks before the roots, so a root below one stays visible.
  for (const dir of sandbox.mask ?? []) args.push("--tmpfs", dir, "--remount-ro", dir);
  for (const file of sandbox.expose ?? []) args.push("--ro-bind", file, file);
  // In its own network namespace the host's loopback resolver is out of reach: the command
  // is told slirp4netns's instead (the pipe's number is put in by `_usernet.ts`).
  const resolv = sandbox.network ? sandbox.userNet?.resolv : undefined;
  if (resolv !== undefined) args.push("--ro-bind-data", RESOLV_FD, resolv.path);
  // Roots after /tmp, so a workspace under /tmp stays visible; hidden paths last, so they
  // stay hidden even inside a root.
  for (const root of roots) args.push("--bind", root, root);
  if (!ahead) { for (const dir of pinned(sandbox.hide, roots)) args.push("--bind", dir, dir); }
  for (const hidden of sandbox.hide) {
    const inside = inRoot(hidden.path, roots);
    if (ahead && inside) continue;
    // /tmp is a fresh tmpfs: outside the roots there is nothing under it to hide (and a
    // mount point made there would only show the name).
    if (under(hidden.path, "/tmp") && !inside) continue;
    if (hidden.kind === "dir") args.push("--tmpfs", hidden.path, "--remount-ro", hidden.path);
    else args.push("--ro-bind", "/dev/null", hidden.path);
  }
  const procs = procsToJoinInside(sandbox);
  if (procs !== undefined) args.push("--bind", procs, procs);
  // An unprivileged shell sees itself as the workspace owner (its uid is mapped to that).
  const ids = sandbox.identity === undefined ? undefined : insideIds(roots);
  args.push(
    // No capability, as root too: a user namespace (uid and gid stay those of the caller),
    // every capability dropped, and no way to make a new user namespace to regain them.
    "--unshare-user",
    ...(ids === undefined ? [] : ["--uid", String(ids.uid), "--gid", String(ids.gid)]),
    "--cap-drop",
    "ALL",
    ...(sandbox.disableUserns ? ["--disable-userns", "--assert-userns-disabled"] : []),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    // A cgroup namespace would make the pids cgroup unreachable for the command's first
    // step (joining it); without a limit it only hides cgroup paths.
    // (Joined outside, by the unprivileged shell's set-up, the same holds: the command and
    // `doctor` read their limit through /proc/self/cgroup.)
    ...(sandbox.pids === undefined ? ["--unshare-cgroup-try"] : []),
    // With the network on, the namespace is the host's or (`userNet`) one made already,
    // whose link the command waits for (the number is put in by `_usernet.ts`).
    ...(sandbox.network ? [] : ["--unshare-net"]),
    ...(sandbox.network && sandbox.userNet !== undefined ? ["--block-fd", READY_FD] : []),
    ...(sandbox.seccomp === undefined ? [] : ["--seccomp", ahead ? PARKED_SECCOMP_FD : "0"]),
    "--die-with-parent",
    "--new-session",
    "--chdir",
    cwd,
    "--",
    ...argv,
  );
  return args;
}
