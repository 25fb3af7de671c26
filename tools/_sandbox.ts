/**
 * The bubblewrap sandbox for bash: `/` read-only, the workspace roots read-write, a private
 * `/tmp`, credential paths hidden, no network unless allowed, its own PID namespace (so
 * nothing the command starts outlives it), dying with its parent, in a new session.
 *
 * @module
 */

/** A credential path to hide, already resolved by the caller. */
export interface HiddenPath {
  /** Absolute path. */
  readonly path: string;
  /** Directories are covered by an empty tmpfs, files by /dev/null. */
  readonly kind: "dir" | "file";
}

/** How bash is sandboxed; absent from the context means not at all. */
export interface Sandbox {
  /** Absolute path of the bwrap binary. */
  readonly bwrap: string;
  /** Whether the command may use the network. */
  readonly network: boolean;
  /** Paths to hide (only those that exist). */
  readonly hide: readonly HiddenPath[];
}

/** Credential paths hidden by default, relative to the home directory. */
export const DEFAULT_HIDDEN: readonly string[] = [
  ".ssh",
  ".aws",
  ".gnupg",
  ".config/rousseau",
  ".netrc",
];

/** The bwrap arguments that run `argv` inside the sandbox, in `cwd`. */
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
  // Roots after /tmp, so a workspace under /tmp stays visible; hidden paths last, so they
  // stay hidden even inside a root.
  for (const root of roots) args.push("--bind", root, root);
  for (const hidden of sandbox.hide) {
    if (hidden.kind === "dir") args.push("--tmpfs", hidden.path);
    else args.push("--ro-bind", "/dev/null", hidden.path);
  }
  args.push(
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
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
