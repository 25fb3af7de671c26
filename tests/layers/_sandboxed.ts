/**
 * An attacker's seat for the sandbox suite: a workspace, a fake HOME holding a fake SSH key,
 * a provider key in rousseau's own environment, and `rousseau tool bash` under
 * `tools.bash.sandbox: bwrap`, run as the CLI is run (CI runs as root; so do these).
 *
 * Everything lives under /var/tmp, not /tmp: the sandbox gives the command a private /tmp, so
 * a target under /tmp would be out of reach for the wrong reason and the test would prove
 * nothing.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { CLI_ARGS, cliEnv, type CliRun, runCli, spawnCli } from "../_helpers/cli.ts";

/** The fake private key and the provider key: neither may ever reach the command's output. */
export const SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY----- rousseau-fake-ssh-key";
export const API_KEY = "sk-ant-rousseau-sandbox-suite-secret";

/** The seat: paths, and a way to run a command in the sandbox. */
export interface Seat extends AsyncDisposable {
  /** The workspace root. */
  readonly root: string;
  /** A directory outside the workspace, on the host's read-only root inside the sandbox. */
  readonly outside: string;
  /** The fake HOME (with `.ssh/id_ed25519`). */
  readonly home: string;
  /** The config file in use. */
  readonly config: string;
  /** The state directory in use (sessions, audit log). */
  readonly state: string;
  /** Runs `command` with `rousseau tool bash`; `args` go after the JSON (e.g. `--timeout`). */
  bash(command: string, args?: readonly string[]): Promise<CliRun>;
  /** Starts the same as one process (its pid is rousseau's); collect it with `finished`. */
  spawn(command: string, args?: readonly string[]): Deno.ChildProcess;
  /**
   * The same as a program and its arguments (the runtime, then `deno run`'s), and the
   * environment it needs: for a test that starts rousseau some other way.
   */
  readonly argv: (command: string) => string[];
  readonly env: Record<string, string>;
}

/** Options of `seat`. */
export interface SeatOptions {
  /** YAML lines added under `tools.bash:` (indented by four spaces). */
  readonly bash?: string;
  /** YAML added at the top level of the config. */
  readonly top?: string;
  /** Where the config file lives, relative to the base dir (default `outside/config.yaml`). */
  readonly configAt?: string;
  /** Where the state dir lives, relative to the base dir (default `outside/state`). */
  readonly stateAt?: string;
  /** The workspace, relative to the base dir (default `ws`; `home` makes it the fake HOME). */
  readonly workspaceAt?: string;
  /** More environment for the CLI. */
  readonly env?: Record<string, string>;
  /** Files to create, relative to the base dir. */
  readonly files?: Readonly<Record<string, string>>;
}

/** Makes a seat; dispose it with `await using`. */
export async function seat(options: SeatOptions = {}): Promise<Seat> {
  const base = await Deno.realPath(
    await Deno.makeTempDir({ dir: "/var/tmp", prefix: "rousseau-attack-" }),
  );
  const root = join(base, options.workspaceAt ?? "ws");
  const outside = join(base, "outside");
  const home = join(base, "home");
  const config = join(base, options.configAt ?? "outside/config.yaml");
  const state = join(base, options.stateAt ?? "outside/state");
  const files: Record<string, string> = {
    "home/.ssh/id_ed25519": SSH_KEY,
    "home/.netrc": "machine example.com password rousseau-netrc-secret",
    ...options.files,
  };
  for (const dir of [root, outside, home]) await Deno.mkdir(dir, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    await Deno.mkdir(dirname(join(base, rel)), { recursive: true });
    await Deno.writeTextFile(join(base, rel), text);
  }
  await Deno.mkdir(dirname(config), { recursive: true });
  await Deno.writeTextFile(
    config,
    `state:\n  dir: ${state}\n${options.top ?? ""}tools:\n  bash:\n    sandbox: bwrap\n${
      options.bash ?? ""
    }`,
  );
  const env = {
    HOME: home,
    PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
    ANTHROPIC_API_KEY: API_KEY,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    ...options.env,
  };
  const cli = (command: string, args: readonly string[]) => [
    "--config",
    config,
    "--workspace",
    root,
    "tool",
    "bash",
    JSON.stringify({ command }),
    ...args,
  ];
  return {
    root,
    outside,
    home,
    config,
    state,
    bash: (command, args = []) => runCli(cli(command, args), { env }),
    spawn: (command, args = []) => spawnCli(cli(command, args), { env }),
    argv: (command) => [Deno.execPath(), ...CLI_ARGS, ...cli(command, [])],
    env: cliEnv(env),
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true }).catch(() => {});
    },
  };
}

/** Whether `name` is an executable on the usual system path (some attacks need a tool). */
export function has(name: string): boolean {
  return ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"].some((dir) => {
    try {
      return Deno.statSync(join(dir, name)).isFile;
    } catch {
      return false;
    }
  });
}

/** Whether this process is root (the sandbox must hold for root first: CI runs as root). */
export const ROOT = Deno.uid() === 0;

/** Asserts that none of `secrets` occurs in any of `texts`. */
export function leaked(texts: readonly string[], secrets = [SSH_KEY, API_KEY]): string[] {
  return secrets.filter((secret) => texts.some((text) => text.includes(secret)));
}
