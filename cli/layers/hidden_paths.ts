/**
 * What the bash sandbox hides: credential paths, rousseau's own files (protected paths), the
 * unix sockets this host has bound outside it, and `/run` (masked); read in the main isolate,
 * which may read /proc/net/unix (the tool worker may not).
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import { boundSockets, DEFAULT_HIDDEN, type HiddenPath, MAX_SOCKETS } from "../../tools/hosting.ts";
import type { Config } from "../config/config.ts";

/** The part of the config what is hidden depends on. */
type HideConfig = Pick<Config, "values"> & Partial<Pick<Config, "protectedPaths">>;

/** Whether `path` is a directory or another file; undefined when it cannot be stat'd. */
export function statKind(path: string): HiddenPath["kind"] | undefined {
  try {
    return Deno.statSync(path).isDirectory ? "dir" : "file";
  } catch {
    return undefined;
  }
}

/** `path` with its links resolved, or as given when it cannot be. */
export function realPath(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/**
 * rousseau's own files. One that does not exist yet (the state directory before the first
 * session, the config directory) is made now, 0700, so it can be covered: otherwise a command
 * could create it inside a writable root and plant a config or an audit log there.
 */
function protectedPaths(paths: readonly string[]): HiddenPath[] {
  const out: HiddenPath[] = [];
  for (const path of paths) {
    if (!isAbsolute(path)) continue;
    let kind = statKind(path);
    if (kind === undefined) {
      try {
        Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
        kind = "dir";
      } catch {
        // cannot be made by us, so not by the command either (same user, fewer rights)
        continue;
      }
    }
    out.push({ path: realPath(path), kind });
  }
  return out;
}

/** Directories with sockets and runtime state, masked by an empty tmpfs: `/run`, `/var/run`. */
export function maskedDirs(): string[] {
  const out: string[] = [];
  for (const dir of ["/run", "/var/run"]) {
    try {
      if (Deno.lstatSync(dir).isDirectory) out.push(dir);
    } catch {
      // absent
    }
  }
  return out;
}

/** Paths named by variables that commonly point at a socket (agent, bus, container engine). */
function socketsInEnvironment(env: Readonly<Record<string, string>>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (name === "SSH_AUTH_SOCK" && value.startsWith("/")) out.push(value);
    for (const m of value.matchAll(/unix:(?:\/\/|path=)?(\/[^,;\s]+)/g)) out.push(m[1]!);
  }
  return out;
}

/** Filesystem sockets bound in this network namespace, and sockets mounted as files. */
function socketsOnHost(): string[] {
  const out: string[] = [];
  out.push(...boundSockets());
  try {
    // A socket bound elsewhere and bind-mounted in (docker.sock in a CI container) is not
    // in /proc/net/unix, but it is a mount point.
    for (const line of Deno.readTextFileSync("/proc/self/mountinfo").split("\n")) {
      const mount = line.split(" ")[4]?.replace(/\\040/g, " ");
      if (mount === undefined || !mount.startsWith("/")) continue;
      try {
        const info = Deno.statSync(mount);
        if (info.isSocket) out.push(mount);
      } catch {
        // gone or unreadable
      }
    }
  } catch {
    // no mountinfo
  }
  return out;
}

/** Whether `path` is `dir` or lies below it. */
export function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** Everything the sandbox hides, `/run` aside. */
export function hiddenPaths(
  config: HideConfig,
  env: Readonly<Record<string, string>>,
  masked: readonly string[],
): HiddenPath[] {
  const home = env.HOME;
  const wanted = [
    ...(home ? DEFAULT_HIDDEN.map((p) => join(home, p)) : []),
    ...(config.values.tools?.bash?.hide ?? []).map((p) =>
      p.startsWith("~/") && home ? join(home, p.slice(2)) : p
    ),
  ];
  const out = new Map<string, HiddenPath>();
  for (const path of wanted) {
    if (!isAbsolute(path)) continue;
    const kind = statKind(path);
    if (kind !== undefined) out.set(path, { path, kind });
  }
  for (const hidden of protectedPaths(config.protectedPaths ?? [])) out.set(hidden.path, hidden);
  // /tmp is private already; /run is masked.
  const covered = ["/tmp", ...masked];
  let sockets = 0;
  for (const path of [...socketsInEnvironment(env), ...socketsOnHost()]) {
    if (sockets >= MAX_SOCKETS) break;
    const real = realPath(path);
    if (out.has(real) || covered.some((dir) => under(real, dir))) continue;
    if (statKind(real) === undefined) continue;
    out.set(real, { path: real, kind: statKind(real)! });
    sockets++;
  }
  return [...out.values()];
}

/** `/etc/resolv.conf`'s target when it lies in a masked directory (systemd-resolved). */
export function resolverFiles(masked: readonly string[]): string[] {
  const real = realPath("/etc/resolv.conf");
  return real !== "/etc/resolv.conf" && masked.some((dir) => under(real, dir)) &&
      statKind(real) === "file"
    ? [real]
    : [];
}
