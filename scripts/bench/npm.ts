// deno-lint-ignore-file no-console
/**
 * `deno run -A scripts/bench/npm.ts [--runs N] [--quick] [--out DIR]`: what the npm package's
 * `rousseau` command costs at start-up beside `deno task cli`, side by side in one run. Packs
 * the package (`npm pack`, which fills its Deno cache), installs it into a fresh prefix
 * (`npm install -g --prefix`), then times `version` and `tool read` of a small file both
 * ways, median of N runs (default 7) after one warm-up. Writes `bench/npm.md` and `.json`.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string", default: "7" },
    quick: { type: "boolean", default: false },
    out: { type: "string", default: join(REPO, "bench") },
    dir: { type: "string" },
  },
});
const runs = values.quick ? 1 : Number(values.runs);

async function run(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  cwd = REPO,
): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)]! * 10) / 10;
}

async function time(call: () => Promise<unknown>): Promise<number> {
  await call();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return median(times);
}

const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-bench-npm-" }));
try {
  const home = join(base, "home");
  const prefix = join(base, "prefix");
  const ws = join(base, "ws");
  for (const dir of [home, prefix, ws]) await Deno.mkdir(dir);
  await Deno.writeTextFile(join(ws, "a.txt"), "small\n");
  const denoBin = Deno.execPath().replace(/\/[^/]+$/, "");
  const hostPath = `${denoBin}:${Deno.env.get("PATH") ?? ""}`;
  const network = { ...Deno.env.toObject(), PATH: hostPath };
  const npmCache = (await run("npm", ["config", "get", "cache"], network)).trim();
  console.error("bench: npm pack");
  const packed = await run("npm", ["pack", "--json", "--pack-destination", base], {
    ...network,
    HOME: home,
    npm_config_cache: npmCache,
  });
  const [report] = JSON.parse(packed.slice(packed.indexOf("[")));
  console.error("bench: npm install -g");
  await run("npm", ["install", "-g", "--prefix", prefix, join(base, report.filename)], {
    ...network,
    HOME: home,
    npm_config_cache: npmCache,
  }, base);
  const env = {
    PATH: `${prefix}/bin:${hostPath}`,
    HOME: home,
    NO_COLOR: "1",
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
  };
  // deno task cli runs from this machine's Deno cache, as a developer's does.
  const info = JSON.parse(await run(Deno.execPath(), ["info", "--json"], network));
  const directEnv = { ...env, DENO_DIR: info.denoDir as string };
  const bin = join(prefix, "bin", "rousseau");
  const task = (args: string[]) => () =>
    run(
      Deno.execPath(),
      ["task", "--quiet", "--config", join(REPO, "deno.json"), "cli", ...args],
      directEnv,
      ws,
    );
  const viaBin = (args: string[]) => () => run(bin, args, env, ws);
  const read = ["tool", "read", JSON.stringify({ path: join(ws, "a.txt") })];
  const rows = [
    { row: "version", bin: await time(viaBin(["version"])), task: await time(task(["version"])) },
    { row: "tool read", bin: await time(viaBin(read)), task: await time(task(read)) },
  ];
  const md = [
    "# npm package: start-up through the `rousseau` bin",
    "",
    `${new Date().toISOString().slice(0, 10)}, Deno ${Deno.version.deno}, median of ${runs} runs ` +
    "after one warm-up (`deno run -A scripts/bench/npm.ts`): process start to exit, the " +
    "installed bin (node, then the deno npm package's runtime, `--cached-only`) beside " +
    "`deno task cli`.",
    "",
    "| command | npm bin (ms) | deno task cli (ms) | bin / task |",
    "| --- | ---: | ---: | ---: |",
    ...rows.map((r) => `| \`${r.row}\` | ${r.bin} | ${r.task} | ${(r.bin / r.task).toFixed(2)}× |`),
    "",
  ].join("\n");
  console.log(md);
  await Deno.mkdir(values.out, { recursive: true });
  await Deno.writeTextFile(join(values.out, "npm.md"), md);
  await Deno.writeTextFile(
    join(values.out, "npm.json"),
    JSON.stringify(
      { date: new Date().toISOString(), deno: Deno.version.deno, runs, rows },
      null,
      2,
    ) +
      "\n",
  );
} finally {
  await Deno.remove(base, { recursive: true }).catch(() => {});
}
