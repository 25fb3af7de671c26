/**
 * The npm package end to end: the real `npm pack` (its `prepack` fills the Deno cache), the
 * real `npm install -g` of the tarball into a fresh prefix with its own HOME, then the
 * installed `rousseau` with no network at all (`unshare --net`) or, where a loopback model
 * must be reachable, with every registry and proxy pointed at a loopback tripwire that fails
 * the test if anything asks it for a byte. Each command is compared with the same command
 * run as `deno task cli` runs it. One pack and one install serve every step.
 *
 * npm's download cache is the machine's own (`npm config get cache`), so a second run does
 * not download the deno runtime again; the prefix, HOME and everything rousseau reads are
 * fresh.
 *
 * @module
 */

import { join } from "node:path";
import { sourceModules } from "../../scripts/npm_cache.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { CLI_ARGS, REPO } from "../_helpers/cli.ts";
import { startFakeAnthropic } from "../_helpers/fake_providers.ts";

const DECODER = new TextDecoder();

interface Ran {
  readonly code: number;
  readonly signal: Deno.Signal | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function output(child: Deno.ChildProcess): Promise<Ran> {
  const { code, signal, stdout, stderr } = await child.output();
  return { code, signal, stdout: DECODER.decode(stdout), stderr: DECODER.decode(stderr) };
}

function spawn(
  command: string,
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string },
): Deno.ChildProcess {
  return new Deno.Command(command, {
    args: [...args],
    cwd: options.cwd ?? REPO,
    clearEnv: true,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

function run(
  command: string,
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string },
): Promise<Ran> {
  return output(spawn(command, args, options));
}

/** The Deno cache `deno task cli` uses here (the direct runs need it; the package has its own). */
async function hostDenoDir(): Promise<string> {
  const info = await run(Deno.execPath(), ["info", "--json"], {
    env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
  });
  return JSON.parse(info.stdout).denoDir;
}

/** The argv prefix that runs a command with no network namespace access at all. */
async function noNetwork(): Promise<string[]> {
  for (const prefix of [["unshare", "--net"], ["unshare", "--map-root-user", "--net"]]) {
    const probe = await new Deno.Command(prefix[0]!, {
      args: [...prefix.slice(1), "true"],
      stdout: "null",
      stderr: "null",
    }).output().catch(() => ({ code: 1 }));
    if (probe.code === 0) return prefix;
  }
  throw new Error(
    "npm_package_test: cannot start a process without network (unshare --net failed as root " +
      "and as a mapped user): the offline promise cannot be proven here",
  );
}

/** A loopback server that answers 503 to anything and remembers what was asked. */
function startTripwire(): { url: string; hits: string[]; server: Deno.HttpServer } {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    hits.push(`${request.method} ${request.url}`);
    return new Response("tripwire: nothing may be fetched after install\n", { status: 503 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/`, hits, server };
}

Deno.test("npm package: packed, installed into a fresh prefix, runs offline like deno task cli", async (t) => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-npm-" }));
  const tripwire = startTripwire();
  try {
    const home = join(base, "home");
    const prefix = join(base, "prefix");
    const ws = join(base, "ws");
    await Deno.mkdir(home);
    await Deno.mkdir(ws);
    await Deno.writeTextFile(join(ws, "a.txt"), "packed and offline\n");
    const denoBinDir = Deno.execPath().replace(/\/[^/]+$/, "");
    const hostPath = `${denoBinDir}:${Deno.env.get("PATH") ?? ""}`;
    // Packing and installing use the network: they keep this machine's settings for it (its
    // CA bundle, a proxy); the runs after install get none of them.
    const networkEnv = { ...Deno.env.toObject(), PATH: hostPath };
    const npmCache = (await run("npm", ["config", "get", "cache"], { env: networkEnv })).stdout
      .trim();
    // What rousseau sees, through the bin or directly: nothing from the developer's setup.
    const env: Record<string, string> = {
      PATH: `${prefix}/bin:${hostPath}`,
      HOME: home,
      NO_COLOR: "1",
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
    };
    const directEnv = { ...env, DENO_DIR: await hostDenoDir() };
    const bin = join(prefix, "bin", "rousseau");
    let tgz = "";

    await t.step(
      "npm pack ships the CLI's modules, its config and lock, the cache, nothing else",
      async () => {
        const packed = await run("npm", ["pack", "--json", "--pack-destination", base], {
          env: { ...networkEnv, HOME: home, npm_config_cache: npmCache },
        });
        assertEquals(packed.code, 0, packed.stderr);
        const [report] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("[")));
        tgz = join(base, report.filename);
        const paths: string[] = report.files.map((file: { path: string }) => file.path);
        const shipped = paths.filter((path) => !path.startsWith("deno_dir/")).sort();
        const expected = [
          "README.md",
          "bin/rousseau.cjs",
          "deno.json",
          "deno.lock",
          "main.ts",
          "package.json",
          ...(await sourceModules()),
        ].sort();
        assertEquals(shipped, expected);
        const cache = paths.filter((path) => path.startsWith("deno_dir/"));
        assert(cache.length > 0, "the package has no Deno cache");
        assertEquals(cache.filter((path) => !path.startsWith("deno_dir/npm/")), []);
        for (
          const name of ["commander", "@anthropic-ai/sdk", "openai", "@modelcontextprotocol/sdk"]
        ) {
          assert(
            cache.some((path) => path.startsWith(`deno_dir/npm/registry.npmjs.org/${name}/`)),
            `the cache lacks ${name}`,
          );
        }
      },
    );

    await t.step("npm install -g of the tarball puts rousseau on the PATH", async () => {
      const installed = await run("npm", ["install", "-g", "--prefix", prefix, tgz], {
        env: { ...networkEnv, HOME: home, npm_config_cache: npmCache, NO_COLOR: "1" },
        cwd: base,
      });
      assertEquals(installed.code, 0, installed.stderr);
      const stat = await Deno.lstat(bin);
      assert(stat.isSymlink || stat.isFile, `${bin} is missing`);
    });

    const offline = await noNetwork();
    const file = join(ws, "a.txt");
    const commands: [string, string[]][] = [
      ["--version", ["--version"]],
      ["version", ["version"]],
      ["tools", ["tools"]],
      ["tools --json", ["tools", "--json"]],
      ["tool read", ["tool", "read", JSON.stringify({ path: file })]],
      ["tool read of a missing file (exit 1)", [
        "tool",
        "read",
        JSON.stringify({ path: `${file}x` }),
      ]],
      ["a bad flag (exit 2)", ["tools", "--no-such-flag"]],
      ["doctor", ["doctor"]],
    ];
    for (const [name, args] of commands) {
      await t.step(
        `with no network, rousseau ${name} prints and exits as deno task cli does`,
        async () => {
          const viaBin = await run(offline[0]!, [...offline.slice(1), bin, ...args], {
            env,
            cwd: ws,
          });
          const direct = await run(
            offline[0]!,
            [...offline.slice(1), Deno.execPath(), ...CLI_ARGS, ...args],
            { env: directEnv, cwd: ws },
          );
          // doctor names its pids cgroup `<pid>-<PID namespace>-<random>` (cli/layers/pids_cgroup.ts).
          const pids = (text: string) =>
            text.replace(/(\/pids\/rousseau\/)\d+-\w+-[0-9a-f]+/g, "$1NAME");
          assertEquals(pids(viaBin.stdout), pids(direct.stdout));
          assertEquals(viaBin.stderr, direct.stderr);
          assertEquals(viaBin.code, direct.code);
          if (name === "tool read") assertEquals(viaBin.stdout, "packed and offline\n");
        },
      );
    }

    // The model must be reachable on loopback, so here the network is there but every way to
    // the registry goes to the tripwire: a fetch would show up in `hits`.
    const fenced = {
      ...env,
      NPM_CONFIG_REGISTRY: tripwire.url,
      HTTP_PROXY: tripwire.url,
      HTTPS_PROXY: tripwire.url,
      NO_PROXY: "127.0.0.1,localhost",
    };

    await t.step("rousseau run against a loopback model fetches nothing", async () => {
      await using fake = startFakeAnthropic([
        { tools: [{ name: "read", input: { path: file } }] },
        { text: "read it" },
      ]);
      const ran = await run(bin, ["run", "--output", "json", "read a.txt"], {
        env: { ...fenced, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "test-key" },
        cwd: ws,
      });
      assertEquals(ran.code, 0, ran.stderr);
      const result = JSON.parse(ran.stdout);
      assertEquals([result.subtype, result.result], ["success", "read it"]);
      assertStringIncludes(JSON.stringify(fake.requests[1]?.body), "packed and offline");
      assertEquals(tripwire.hits, []);
    });

    await t.step("programs bash starts get the caller's DENO_DIR, not the package's", async () => {
      const command = JSON.stringify({ command: 'printf %s "${DENO_DIR-unset}"' });
      const unset = await run(bin, ["tool", "bash", command], { env: fenced, cwd: ws });
      assertEquals([unset.stdout, unset.code], ["unset", 0], unset.stderr);
      const own = await run(bin, ["tool", "bash", command], {
        env: { ...fenced, DENO_DIR: join(home, "my-deno-dir") },
        cwd: ws,
      });
      assertEquals([own.stdout, own.code], [join(home, "my-deno-dir"), 0], own.stderr);
      assertEquals(tripwire.hits, []);
    });

    for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
      await t.step(
        `${signal} sent to the bin reaches run and its exit status comes back`,
        async () => {
          const statuses: Ran[] = [];
          for (
            const [command, args, runEnv] of [
              [bin, [], fenced],
              [Deno.execPath(), CLI_ARGS, directEnv],
            ] as const
          ) {
            await using fake = startFakeAnthropic([{ hang: true }]);
            const child = spawn(command, [...args, "run", "wait for me"], {
              env: { ...runEnv, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "test-key" },
              cwd: ws,
            });
            // The model has the request, so run is in its turn; a run that died first fails here.
            const started = await Promise.race([
              fake.waitForRequest(1).then(() => true),
              child.status.then(() => false),
            ]);
            if (!started) {
              const early = await output(child);
              throw new Error(
                `${command} exited ${early.code} before asking the model: ${early.stderr}`,
              );
            }
            child.kill(signal);
            statuses.push(await output(child));
          }
          const [viaBin, direct] = statuses;
          assertEquals([viaBin!.code, viaBin!.signal], [code, null], viaBin!.stderr);
          assertEquals([viaBin!.code, viaBin!.signal], [direct!.code, direct!.signal]);
          assertEquals(viaBin!.stderr, direct!.stderr);
        },
      );
    }
  } finally {
    await tripwire.server.shutdown();
    await Deno.remove(base, { recursive: true });
  }
});
