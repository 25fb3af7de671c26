/**
 * Resolving `tools.bash.sandbox` (auto | bwrap | none) into the sandbox bash runs under, with
 * what it hides (hidden_paths.ts). Done in the main isolate: finding bwrap needs PATH and a
 * trial run, and reading /proc/net/unix, which the tool worker is not allowed.
 *
 * @module
 */

import { join } from "node:path";
import {
  DEFAULT_BASH_MAX_PROCESSES,
  fitSandbox,
  keyringFilter,
  type OverlaySetup,
  type Sandbox,
  sandboxArgs,
  sandboxCommand,
  type ShellIdentity,
  spawnSandboxed,
  SYSTEM_CALLS,
  UNPRIVILEGED_ID,
  withNetwork,
} from "../../tools/hosting.ts";
import {
  ABI_SCOPES_ABSTRACT,
  landlockAbi,
  resolverText,
  type UserNet,
  USERNET_CALLS,
} from "../../tools/hosting.ts";
import type { Config } from "../config/config.ts";
import { UsageError } from "../errors.ts";
import { resolvePids } from "./pids_cgroup.ts";
import { makeProbeDir, processTag } from "./probe_dirs.ts";
import {
  hiddenPaths,
  maskedDirs,
  realPath,
  resolverFiles,
  statKind,
  under,
} from "./hidden_paths.ts";

/** What the sandbox check found, for `doctor` and the run header. */
export interface SandboxReport {
  /** The sandbox in use, if any. */
  readonly sandbox?: Sandbox;
  /** The configured mode. */
  readonly mode: "auto" | "bwrap" | "none";
  /** One line for people: what is in use and why. */
  readonly summary: string;
  /** Why there is no process limit, when there is none. */
  readonly pidsProblem?: string;
  /** Under bwrap: why bash's changes are not observed through an overlay, when they are not. */
  readonly overlayProblem?: string;
  /**
   * Under bwrap as root: why the shell keeps uid 0 (and can read host files only root may
   * read), when it does.
   */
  readonly identityProblem?: string;
  /** Under bwrap: why the kernel keyring calls are not refused, when they are not. */
  readonly keyringProblem?: string;
  /**
   * Under bwrap with the network on: why the command shares the host's network namespace
   * (and reaches the host's 127.0.0.1) instead of having its own through slirp4netns.
   */
  readonly userNetProblem?: string;
  /** Under bwrap with the network on: why the host's abstract sockets stay reachable. */
  readonly abstractProblem?: string;
  /**
   * Unsandboxed only: why rousseau's environment (the provider key) is still readable by a
   * command running as the same user; undefined when it is not (non-dumpable).
   */
  readonly environmentProblem?: string;
}

/** The part of the config the sandbox depends on. */
export type SandboxConfig =
  & Pick<Config, "values">
  & Partial<Pick<Config, "protectedPaths" | "stateDir">>;

function findOnPath(name: string, path: string): string | undefined {
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      const info = Deno.statSync(candidate);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The walls bwrap can build here, strongest first; the first that runs is used. */
const TIERS = [
  { disableUserns: true, flags: ["--disable-userns", "--assert-userns-disabled"] },
  { disableUserns: false, flags: [] },
] as const;

/** Runs bwrap once with the walls of each tier; the first that works, or why none does. */
async function usable(bwrap: string): Promise<{ disableUserns: boolean } | { problem: string }> {
  let problem = "";
  for (const tier of TIERS) {
    try {
      const out = await new Deno.Command(bwrap, {
        args: [
          "--ro-bind",
          "/",
          "/",
          "--unshare-user",
          "--cap-drop",
          "ALL",
          ...tier.flags,
          "--unshare-pid",
          "--unshare-net",
          "--",
          "/bin/true",
        ],
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output();
      if (out.success) return { disableUserns: tier.disableUserns };
      problem ||= new TextDecoder().decode(out.stderr).trim() || `exit status ${out.code}`;
    } catch (error) {
      return { problem: (error as Error).message };
    }
  }
  return { problem };
}

/** Output of a sandboxed trial command, its stdin carrying the sandbox's seccomp filter. */
async function trial(
  sandbox: Sandbox,
  program: string,
  args: string[],
  cwd?: string,
  input?: Uint8Array,
): Promise<Deno.CommandOutput> {
  return await spawnSandboxed(sandbox, program, {
    args,
    ...(cwd === undefined ? {} : { cwd }),
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
  }, input).output();
}

/** The keyring filter when bwrap loads it here, or why it is not used. */
async function keyringWall(
  bwrap: string,
  disableUserns: boolean,
): Promise<{ seccomp: Uint8Array } | { problem: string }> {
  const seccomp = keyringFilter();
  if (seccomp === undefined) {
    return { problem: `no seccomp filter is known for this CPU (${Deno.build.arch})` };
  }
  const sandbox: Sandbox = { bwrap, network: false, hide: [], disableUserns, seccomp };
  try {
    // The trial line must fail the way the filter makes it: keyctl's own call refused.
    const out = await trial(sandbox, bwrap, sandboxArgs(sandbox, [], "/", ["/bin/true"]));
    if (out.success) return { seccomp };
    const text = new TextDecoder().decode(out.stderr).trim();
    return { problem: `bwrap cannot load a seccomp filter here: ${text || `exit ${out.code}`}` };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

/**
 * As root: whether the shell can run as the unprivileged uid here, checked by one trial in a
 * scratch tree owned by root: the command writes there (its owner mapped), cannot read a 0600
 * file of root's beside it, and what it made is root's on the host. The identity, or why not.
 */
async function probeIdentity(
  sandbox: Sandbox,
  config: SandboxConfig,
  env: Readonly<Record<string, string>>,
): Promise<{ identity: ShellIdentity } | { problem: string }> {
  if (Deno.uid() !== 0) return { problem: "not root" };
  if ((config.values.tools?.bash?.unprivileged ?? "auto") === "off") {
    return { problem: "tools.bash.unprivileged: off" };
  }
  const path = `${env.PATH ?? "/usr/bin:/bin"}:/usr/bin:/bin:/usr/sbin:/sbin`;
  const found = ["perl", "setpriv", "unshare"].map((name) => [name, findOnPath(name, path)]);
  const missing = found.find(([, at]) => at === undefined);
  if (missing !== undefined) {
    return {
      problem: `${missing[0]} is not installed (${
        missing[0] === "perl" ? "Debian: perl-base" : "util-linux"
      })`,
    };
  }
  const calls = SYSTEM_CALLS[Deno.build.arch];
  if (calls === undefined) {
    return { problem: `no system call numbers known for ${Deno.build.arch}` };
  }
  const [perl, setpriv, unshare] = found.map(([, at]) => at!) as [string, string, string];
  const homePath = env.HOME !== undefined && env.HOME !== "/" && statKind(env.HOME) === "dir"
    ? realPath(env.HOME)
    : undefined;
  const homeInfo = homePath === undefined ? undefined : await Deno.stat(homePath);
  const home = homeInfo === undefined
    ? undefined
    : { path: homePath!, uid: homeInfo.uid ?? 0, gid: homeInfo.gid ?? 0 };
  const identity: ShellIdentity = {
    perl,
    setpriv,
    unshare,
    uid: UNPRIVILEGED_ID,
    gid: UNPRIVILEGED_ID,
    calls,
    ...(home === undefined ? {} : { home }),
  };
  let scratch: string | undefined;
  try {
    // A root owned by uid 1, holding a 0600 file of root's: the command must be able to
    // write the root (its owner mapped to the shell) and not read root's file.
    scratch = await makeProbeDir("identity");
    await Deno.writeTextFile(join(scratch, "root-only"), "x", { mode: 0o600 });
    await Deno.chmod(scratch, 0o755);
    await Deno.chown(scratch, 1, 1);
    const probe: Sandbox = { ...sandbox, identity, hide: [], mask: [], expose: [] };
    const { program, args } = sandboxCommand(probe, [scratch], scratch, [
      "/bin/sh",
      "-c",
      "exec </dev/null; : > made || exit 3; cat root-only 2>/dev/null && exit 4; id -u",
    ]);
    const out = await trial(probe, program, args, scratch);
    const text = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) {
      const why = out.code === 3
        ? "the mapped root was not writable"
        : out.code === 4
        ? "a file only root may read was readable"
        : text.split("\n").at(-1) || new TextDecoder().decode(out.stderr).trim() ||
          `exit status ${out.code}`;
      return { problem: `the trial command failed: ${why}` };
    }
    const made = await Deno.lstat(join(scratch, "made"));
    if (made.uid !== 1 || text !== "1") {
      return {
        problem: `the trial command's file was not the root owner's (uid ${made.uid}, id ${text})`,
      };
    }
    return { identity };
  } catch (error) {
    return { problem: (error as Error).message };
  } finally {
    if (scratch !== undefined) await Deno.remove(scratch, { recursive: true }).catch(() => {});
  }
}

/** The process limit for `config`, or why there is none. */
function pidsLimit(
  config: SandboxConfig,
): { pids?: Sandbox["pids"]; problem?: string } {
  const max = config.values.tools?.bash?.max_processes ?? DEFAULT_BASH_MAX_PROCESSES;
  const result = resolvePids(max);
  return "limit" in result ? { pids: result.limit } : { problem: result.problem };
}

function unsandboxed(mode: SandboxReport["mode"], summary: string): SandboxReport {
  const problem = hideOwnEnvironment();
  return {
    mode,
    summary,
    pidsProblem: "bash is not sandboxed",
    ...(problem === undefined ? {} : { environmentProblem: problem }),
  };
}

/** The overlay's code, loaded only when bash may run (it pulls in node:fs). */
function overlayCode() {
  return import("../../tools/_overlay.ts");
}

/** Removes the scratch directories of processes that are gone (a crash, a kill -9). */
function cleanStaleScratch(base: string, removeTree: (path: string) => void): void {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(base)];
  } catch {
    return;
  }
  const alive = new Map<string, boolean>();
  for (const entry of entries) {
    const [pid, start] = entry.name.split(".");
    const tag = `${pid}.${start}`;
    if (!alive.has(tag)) alive.set(tag, processTag(Number(pid)) === tag);
    if (!alive.get(tag)) removeTree(join(base, entry.name));
  }
}

/**
 * Whether commands can run over overlays of the roots here: unshare(1) and mount(8) are
 * found, and one trial command in `sandbox` over an overlay of a scratch tree makes a file, a
 * directory and a deletion that are then read back exactly. The set-up or why it failed.
 */
async function probeOverlay(
  sandbox: Sandbox,
  base: string,
  env: Readonly<Record<string, string>>,
): Promise<{ overlay: OverlaySetup } | { problem: string }> {
  const path = `${env.PATH ?? "/usr/bin:/bin"}:/usr/bin:/bin:/usr/sbin:/sbin`;
  const found = ["setpriv", "unshare", "mount"].map((name) => [name, findOnPath(name, path)]);
  const missing = found.find(([, at]) => at === undefined);
  if (missing !== undefined) return { problem: `${missing[0]} (util-linux) is not installed` };
  const [setpriv, unshare, mount] = found.map(([, at]) => at!) as [string, string, string];
  const { collectChanges, overlayBaseProblem, prepareOverlay, removeTree, setupProblem } =
    await overlayCode();
  const baseProblem = overlayBaseProblem(base);
  if (baseProblem !== undefined) return { problem: baseProblem };
  const owner = processTag(Deno.pid);
  if (owner === undefined) return { problem: "/proc/self/stat cannot be read" };
  let lower: string | undefined;
  let scratch: string | undefined;
  try {
    await Deno.mkdir(base, { recursive: true, mode: 0o700 });
    cleanStaleScratch(base, removeTree);
    const overlay: OverlaySetup = { setpriv, unshare, mount, base, owner };
    lower = await makeProbeDir("overlay");
    await Deno.writeTextFile(join(lower, "gone"), "x");
    const fitted = fitSandbox({ ...sandbox, overlay }, [lower]);
    const prepared = prepareOverlay(overlay, [lower], {
      ...(fitted.identity === undefined ? {} : { identity: fitted.identity }),
    });
    scratch = prepared.dir;
    const bwrapArgs = sandboxArgs(fitted, [lower], lower, [
      "/bin/sh",
      "-c",
      "exec </dev/null; rm gone && mkdir made && : > made/new",
    ]);
    const wrap = (exec: readonly string[]) => withNetwork(fitted, exec);
    const args = prepared.argv(fitted.bwrap, bwrapArgs, wrap);
    const input = prepared.input?.(fitted.bwrap, bwrapArgs, wrap, fitted.seccomp);
    const out = await trial(fitted, prepared.program, args, lower, input);
    const problem = setupProblem(prepared);
    if (problem !== undefined) {
      // The unprivileged shell's set-up says why on stdout when it fails first.
      const said = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1);
      return { problem: `overlayfs cannot be mounted here: ${said || problem}` };
    }
    if (!out.success) {
      const text = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1);
      return { problem: `the trial command failed under the overlay${text ? `: ${text}` : ""}` };
    }
    const seen = collectChanges(prepared).changes.map((c) =>
      `${c.status} ${c.path.slice(lower!.length)}`
    );
    if (
      seen.join(",") !== "D /gone,A /made,A /made/new" ||
      await Deno.readTextFile(join(lower, "gone")) !== "x"
    ) {
      return {
        problem: `the trial command's changes were not read back exactly (${seen.join(", ")})`,
      };
    }
    return { overlay };
  } catch (error) {
    return { problem: (error as Error).message };
  } finally {
    if (scratch !== undefined) removeTree(scratch);
    if (lower !== undefined) removeTree(lower);
  }
}

/** Resolves the sandbox; throws a `UsageError` when bwrap is required but cannot run. */
export async function resolveSandbox(
  config: SandboxConfig,
  env: Readonly<Record<string, string>> = Deno.env.toObject(),
): Promise<SandboxReport> {
  const mode = config.values.tools?.bash?.sandbox ?? "auto";
  const network = config.values.tools?.bash?.network ?? false;
  if (mode === "none") return unsandboxed(mode, "none (tools.bash.sandbox: none)");
  const bwrap = findOnPath("bwrap", env.PATH ?? "/usr/bin:/bin");
  const found = bwrap === undefined ? { problem: "bwrap is not installed" } : await usable(bwrap);
  if ("problem" in found) {
    if (mode === "bwrap") {
      throw new UsageError(
        `sandbox: tools.bash.sandbox is "bwrap" but ${
          bwrap === undefined ? found.problem : `bwrap cannot run here: ${found.problem}`
        }; install bubblewrap (Debian: apt-get install bubblewrap) and allow user namespaces, ` +
          "or set tools.bash.sandbox: none",
      );
    }
    return unsandboxed(mode, `none (auto: ${found.problem}; bash runs unsandboxed)`);
  }
  const mask = maskedDirs();
  const { pids, problem } = pidsLimit(config);
  const keyring = await keyringWall(bwrap!, found.disableUserns);
  const plain: Sandbox = {
    bwrap: bwrap!,
    network,
    hide: hiddenPaths(config, env, mask),
    mask,
    expose: resolverFiles(mask),
    disableUserns: found.disableUserns,
    ...(pids === undefined ? {} : { pids }),
    ...("seccomp" in keyring ? { seccomp: keyring.seccomp } : {}),
  };
  const unprivileged = await probeIdentity(plain, config, env);
  const shaped: Sandbox = {
    ...plain,
    ...("identity" in unprivileged ? { identity: unprivileged.identity } : {}),
  };
  const own = network ? await probeUserNet(shaped, env) : undefined;
  // In the host's namespace, Landlock keeps the host's abstract sockets out of reach where
  // it can; in one of its own the command has none of the host's to reach.
  const scope = network && (own === undefined || "problem" in own)
    ? await abstractScope(env)
    : undefined;
  const sandbox: Sandbox = {
    ...shaped,
    ...(own !== undefined && "userNet" in own ? { userNet: own.userNet } : {}),
    ...(scope !== undefined && "scopeAbstract" in scope
      ? { scopeAbstract: scope.scopeAbstract }
      : {}),
  };
  const overlayMode = config.values.tools?.bash?.overlay ?? "auto";
  const probed = overlayMode === "off"
    ? { problem: "tools.bash.overlay: off" }
    : config.stateDir === undefined
    ? { problem: "no state directory to hold the upper layers" }
    : await probeOverlay(sandbox, join(config.stateDir, "overlay"), env);
  const overlay = "overlay" in probed ? probed.overlay : undefined;
  return {
    mode,
    sandbox: overlay === undefined ? sandbox : { ...sandbox, overlay },
    summary:
      `bwrap (${bwrap}; network ${
        !network
          ? "off"
          : sandbox.userNet !== undefined
          ? "on, its own (slirp4netns)"
          : "on, the host's: its 127.0.0.1 reachable"
      }; ${sandbox.hide.length} ` +
      `paths hidden; ${overlay === undefined ? "changes predicted" : "changes observed"})`,
    ...(problem === undefined ? {} : { pidsProblem: problem }),
    ...("problem" in probed ? { overlayProblem: probed.problem } : {}),
    ...("problem" in unprivileged ? { identityProblem: unprivileged.problem } : {}),
    ...("problem" in keyring ? { keyringProblem: keyring.problem } : {}),
    ...(own !== undefined && "problem" in own ? { userNetProblem: own.problem } : {}),
    ...(scope !== undefined && "problem" in scope ? { abstractProblem: scope.problem } : {}),
  };
}

/**
 * With the network on: the command's own network namespace through slirp4netns, checked by
 * one trial command in `sandbox` (its default route leads out through slirp4netns's tap0),
 * or why the command shares the host's namespace.
 */
async function probeUserNet(
  sandbox: Sandbox,
  env: Readonly<Record<string, string>>,
): Promise<{ userNet: UserNet } | { problem: string }> {
  const path = `${env.PATH ?? "/usr/bin:/bin"}:/usr/bin:/bin:/usr/sbin:/sbin`;
  const slirp4netns = findOnPath("slirp4netns", path);
  if (slirp4netns === undefined) {
    return { problem: "slirp4netns is not installed" };
  }
  const perl = findOnPath("perl", path);
  if (perl === undefined) return { problem: "perl is not installed (Debian: perl-base)" };
  const calls = USERNET_CALLS[Deno.build.arch];
  if (calls === undefined) {
    return { problem: `no system call numbers known for ${Deno.build.arch}` };
  }
  const resolv = hostResolver();
  const userNet: UserNet = {
    slirp4netns,
    perl,
    calls,
    ...(resolv === undefined ? {} : { resolv }),
  };
  try {
    const trialBox: Sandbox = { ...sandbox, userNet, network: true };
    const { program, args } = sandboxCommand(fitSandbox(trialBox, []), [], "/", [
      "/bin/sh",
      "-c",
      // The default route (destination 00000000) leaves through tap0.
      "exec </dev/null; grep -q '^tap0[[:space:]]00000000[[:space:]]' /proc/net/route",
    ]);
    const out = await trial(trialBox, program, args);
    if (out.success) return { userNet };
    // Our own line (stdout), else bwrap's or slirp4netns's complaint, not its chatter.
    const errors = new TextDecoder().decode(out.stderr).split("\n").filter((line) =>
      /^bwrap: |^open\(|^setpriv: |[Ee]rror|[Ff]ailed/.test(line)
    );
    const said = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ||
      errors.at(0);
    return {
      problem: `the trial command got no network of its own: ${said || `exit status ${out.code}`}`,
    };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

/**
 * The resolver file the command sees in its own namespace, when the host's does not serve
 * there (its first nameserver is on the host's loopback); see `resolverText`.
 */
function hostResolver(): UserNet["resolv"] {
  const path = realPath("/etc/resolv.conf");
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  const wanted = resolverText(text);
  return wanted === undefined ? undefined : { path, text: wanted };
}

/** With the network on: perl when Landlock can scope abstract unix sockets here, or why not. */
async function abstractScope(
  env: Readonly<Record<string, string>>,
): Promise<{ scopeAbstract: string } | { problem: string }> {
  const perl = findOnPath("perl", `${env.PATH ?? "/usr/bin:/bin"}:/usr/bin:/bin`);
  if (perl === undefined) return { problem: "perl is not installed" };
  const abi = await landlockAbi(perl);
  return abi >= ABI_SCOPES_ABSTRACT ? { scopeAbstract: perl } : {
    problem: `the kernel's Landlock ABI is ${
      abi || "absent"
    }; scoping needs ${ABI_SCOPES_ABSTRACT} (Linux 6.12)`,
  };
}

/**
 * The sandbox for `roots`: the overlay is left out (with the reason) when it cannot stand in
 * for them: a filesystem mounted below a root (an overlay of the root would not show it), a
 * root inside another (its writes would be seen by two overlays), or the scratch directory and
 * a root inside one another.
 */
export function sandboxForRoots(
  sandbox: Sandbox,
  roots: readonly string[],
): { sandbox: Sandbox; overlayProblem?: string } {
  sandbox = fitSandbox(sandbox, roots);
  const overlay = sandbox.overlay;
  if (overlay === undefined) return { sandbox };
  const nested = roots.find((root) => under(overlay.base, root) || under(root, overlay.base));
  let problem = nested === undefined
    ? undefined
    : `the state directory and the root ${nested} lie inside one another`;
  const inner = roots.find((root) => roots.some((other) => other !== root && under(root, other)));
  if (problem === undefined && inner !== undefined) {
    problem = `the root ${inner} lies inside another root`;
  }
  if (problem === undefined) {
    const mounted = mountPointsBelow(roots);
    if (mounted !== undefined) problem = `${mounted} is a mount point inside a root`;
  }
  if (problem === undefined) return { sandbox };
  const { overlay: _, ...rest } = sandbox;
  return { sandbox: rest, overlayProblem: problem };
}

/** The first mount point strictly inside one of `roots` (from /proc/self/mountinfo). */
function mountPointsBelow(roots: readonly string[]): string | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync("/proc/self/mountinfo");
  } catch {
    return undefined;
  }
  for (const line of text.split("\n")) {
    const field = line.split(" ")[4];
    if (field === undefined) continue;
    // mountinfo writes space, tab, newline and backslash as octal escapes.
    const point = field.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
    if (roots.some((root) => point !== root && under(point, root))) return point;
  }
  return undefined;
}

/** What a trial command inside the sandbox found: the walls as the command sees them. */
export interface SandboxProbe {
  /** CapEff of the shell, hex. */
  readonly capEff: string;
  /** no_new_privs of the shell. */
  readonly noNewPrivs: boolean;
  /** Whether the shell could make a new user namespace (undefined: no `unshare` to try). */
  readonly userns?: boolean;
  /** pids.max of the cgroup the shell joined, if it joined one. */
  readonly pidsMax?: string;
  /** Hidden paths the shell could still read something from. */
  readonly visible: readonly string[];
  /** Entries left in the masked directories (the re-exposed resolver file's aside). */
  readonly maskedEntries: number;
  /** Whether the shell could read /etc/shadow (undefined: the host has none). */
  readonly shadowReadable?: boolean;
}

/** Runs one command in `sandbox` over `roots` and reports what it could see and do. */
export async function probeSandbox(
  given: Sandbox,
  roots: readonly string[],
): Promise<SandboxProbe> {
  const sandbox = fitSandbox(given, roots);
  const script = [
    "exec 2>/dev/null",
    'case "$1" in j:*) echo $$ > "${1#j:}" || echo pids=failed ;; esac',
    "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status",
    "if command -v unshare >/dev/null; then unshare -U true && echo userns=yes || echo userns=no; fi",
    '[ -n "$1" ] && echo pidsmax=$(cat "$(dirname "${1#?:}")/pids.max")',
    "[ -e /etc/shadow ] && { head -c 1 /etc/shadow >/dev/null && echo shadow=readable || echo shadow=unreadable; }",
    'shift; for p in "$@"; do case "$p" in',
    '  d:*) [ -z "$(ls -A "${p#d:}")" ] || echo "visible=${p#d:}" ;;',
    '  f:*) [ -z "$(head -c 1 "${p#f:}")" ] || echo "visible=${p#f:}" ;;',
    '  m:*) echo masked=$(ls -A "${p#m:}" | wc -l) ;;',
    "esac; done",
    "true",
  ].join("\n");
  // `j:` the shell joins the pids cgroup itself; `r:` the set-up joined it (unprivileged).
  const procs = sandbox.pids === undefined
    ? ""
    : `${sandbox.identity === undefined ? "j" : "r"}:${sandbox.pids.dir}/cgroup.procs`;
  const checks = [
    ...sandbox.hide.map((h) => `${h.kind === "dir" ? "d" : "f"}:${h.path}`),
    ...(sandbox.mask ?? []).map((m) => `m:${m}`),
  ];
  const { program, args } = sandboxCommand(sandbox, roots, roots[0] ?? "/", [
    "/bin/sh",
    "-c",
    `exec </dev/null\n${script}`,
    "/bin/sh",
    procs,
    ...checks,
  ]);
  const out = await trial(sandbox, program, args);
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `the trial command failed: ${new TextDecoder().decode(out.stderr).trim() || text}`,
    );
  }
  const field = (name: string) => new RegExp(`^${name}[:=]\\s*(.*)$`, "m").exec(text)?.[1];
  const exposedTops = new Set((sandbox.expose ?? []).map((p) => p.split("/")[2]));
  const userns = field("userns");
  const pidsMax = field("pidsmax");
  return {
    capEff: field("CapEff") ?? "unknown",
    noNewPrivs: field("NoNewPrivs") === "1",
    ...(userns === undefined ? {} : { userns: userns === "yes" }),
    ...(pidsMax === undefined || pidsMax === "" ? {} : { pidsMax }),
    ...(field("shadow") === undefined ? {} : { shadowReadable: field("shadow") === "readable" }),
    visible: [...text.matchAll(/^visible=(.*)$/gm)].map((m) => m[1]!),
    maskedEntries: [...text.matchAll(/^masked=(\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0) -
      exposedTops.size,
  };
}

/**
 * Without the sandbox, makes this process non-dumpable (prctl PR_SET_DUMPABLE 0): its
 * /proc/<pid>/environ, mem and fd then belong to root, so a command running as the same
 * non-root user cannot read the provider key from them (removing the key from the
 * environment does not help: Deno.env.delete leaves /proc/<pid>/environ as it was). Root
 * (CAP_SYS_PTRACE) still can. Returns why it could not be done, if it could not.
 */
export function hideOwnEnvironment(): string | undefined {
  try {
    const libc = Deno.dlopen("libc.so.6", {
      prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
    });
    try {
      const PR_SET_DUMPABLE = 4;
      return libc.symbols.prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n) === 0
        ? undefined
        : "prctl(PR_SET_DUMPABLE) failed";
    } finally {
      libc.close();
    }
  } catch (error) {
    return (error as Error).message;
  }
}
