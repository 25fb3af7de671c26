/**
 * The bubblewrap sandbox for bash: `/` read-only, the workspace roots read-write, a private
 * `/tmp` and `/run`, credential paths, rousseau's own files and unix sockets hidden, no network
 * unless allowed, its own PID namespace (so nothing the command starts outlives it), dying
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

function under(path: string, dir: string): boolean {
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

/** The name of a cgroup's member list, in v1 and v2 alike. */
export const CGROUP_PROCS = "cgroup.procs";

/**
 * The bwrap arguments that run `argv` inside the sandbox, in `cwd`. With a pids limit, the
 * cgroup's member list is the only writable file of the cgroup tree inside; `argv` must
 * write its own pid there first (`bash.ts` does), so every process it starts is counted.
 */
export function sandboxArgs(
  sandbox: Sandbox,
  roots: readonly string[],
  cwd: string,
  argv: readonly string[],
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
  // Roots after /tmp, so a workspace under /tmp stays visible; hidden paths last, so they
  // stay hidden even inside a root.
  for (const root of roots) args.push("--bind", root, root);
  for (const dir of pinned(sandbox.hide, roots)) args.push("--bind", dir, dir);
  for (const hidden of sandbox.hide) {
    // /tmp is a fresh tmpfs: outside the roots there is nothing under it to hide (and a
    // mount point made there would only show the name).
    if (under(hidden.path, "/tmp") && !roots.some((root) => under(hidden.path, root))) continue;
    if (hidden.kind === "dir") args.push("--tmpfs", hidden.path, "--remount-ro", hidden.path);
    else args.push("--ro-bind", "/dev/null", hidden.path);
  }
  if (sandbox.pids !== undefined) {
    const procs = `${sandbox.pids.dir}/${CGROUP_PROCS}`;
    args.push("--bind", procs, procs);
  }
  args.push(
    // No capability, as root too: a user namespace (uid and gid stay those of the caller),
    // every capability dropped, and no way to make a new user namespace to regain them.
    "--unshare-user",
    "--cap-drop",
    "ALL",
    ...(sandbox.disableUserns ? ["--disable-userns", "--assert-userns-disabled"] : []),
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    // A cgroup namespace would make the pids cgroup unreachable for the command's first
    // step (joining it); without a limit it only hides cgroup paths.
    ...(sandbox.pids === undefined ? ["--unshare-cgroup-try"] : []),
    ...(sandbox.network ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--new-session",
    "--chdir",
    cwd,
    "--",
    ...argv,
  );
  return args;
}
