/**
 * The release workflow's steps, run as the runner runs them (tests/_helpers/actions.ts): the
 * compile step for each target of the matrix with a recording stand-in for `deno` (the real
 * compile needs denort from dl.deno.land, which these machines cannot reach), the checksum
 * and sums steps for real on stand-in files, the pack and publish steps with a recording
 * stand-in for `npm` (tests/dist/npm_package_test.ts packs for real).
 *
 * @module
 */

import { join } from "node:path";
import { compileArgs, SOURCE_DIRS, TARGETS } from "../../scripts/compile.ts";
import { GREP_V8_FLAGS } from "../../tools/grep.ts";
import { readYaml, runStep, type YamlStep } from "../_helpers/actions.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";
import { REPO } from "../_helpers/cli.ts";

interface Workflow {
  jobs: Record<string, { steps: YamlStep[]; strategy?: { matrix: { target: string[] } } }>;
}

async function workflow(): Promise<Workflow> {
  return await readYaml(join(REPO, ".github", "workflows", "release.yml")) as unknown as Workflow;
}

function step(flow: Workflow, job: string, name: string): YamlStep {
  const found = flow.jobs[job]?.steps.find((s) => s.name === name);
  if (found === undefined) throw new Error(`release.yml: job ${job} has no step ${name}`);
  return found;
}

/** A directory with stand-ins that append their argv, one line, to `<dir>/<name>.log`. */
async function recorders(dir: string, names: string[]): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin, { recursive: true });
  for (const name of names) {
    await Deno.writeTextFile(
      join(bin, name),
      `#!/bin/sh\nprintf '%s\\n' "$*" >> '${join(dir, `${name}.log`)}'\n`,
    );
    await Deno.chmod(join(bin, name), 0o755);
  }
  return bin;
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("release.yml builds the five targets deno task compile knows, with its arguments", async () => {
  const flow = await workflow();
  const targets = flow.jobs.build?.strategy?.matrix.target ?? [];
  assertEquals([...targets].sort(), [...TARGETS].sort());
  const dir = await Deno.makeTempDir({ prefix: "rousseau-release-" });
  try {
    const bin = await recorders(dir, ["deno"]);
    for (const target of targets) {
      const ran = await runStep(step(flow, "build", "compile"), {
        cwd: dir,
        env: { PATH: `${bin}:${Deno.env.get("PATH") ?? ""}` },
        values: { "matrix.target": target },
        runnerTemp: dir,
      });
      assertEquals(ran.code, 0, ran.stderr);
    }
    const calls = (await Deno.readTextFile(join(dir, "deno.log"))).trim().split("\n");
    assertEquals(
      calls,
      targets.map((target) => {
        const suffix = target.includes("windows") ? ".exe" : "";
        return `task compile --target ${target} --output dist/rousseau-${target}${suffix}`;
      }),
    );
    // What `deno task compile --target T --output O` hands deno compile.
    for (const target of targets) {
      const args = compileArgs(target, "dist/out");
      const flags = args.slice(0, 4);
      assertEquals(flags, ["compile", "--quiet", "-P=cli", "--no-prompt"]);
      // The binary runs grep's patterns with V8's linear-time fallback (tools/grep.ts).
      assertEquals(args[4], `--v8-flags=${GREP_V8_FLAGS}`);
      assertEquals(args.slice(args.indexOf("--target"), args.indexOf("--target") + 4), [
        "--target",
        target,
        "--output",
        "dist/out",
      ]);
      for (const source of SOURCE_DIRS) assert(args.includes(`${REPO}${source}`), source);
      assertEquals(args.at(-1), `${REPO}main.ts`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("release.yml checksums every binary and the npm tarball, and SHA256SUMS checks", async () => {
  const flow = await workflow();
  const dir = await Deno.makeTempDir({ prefix: "rousseau-release-" });
  try {
    const names = [
      "rousseau-x86_64-unknown-linux-gnu",
      "rousseau-x86_64-pc-windows-msvc.exe",
      "rousseau-0.1.0.tgz",
    ];
    // Each job checksums its own dist/, then publish merges them.
    const jobs: [string, string][] = [["build", names[0]!], ["build", names[1]!], [
      "npm",
      names[2]!,
    ]];
    for (const [job, name] of jobs) {
      const jobDir = join(dir, job + name);
      await Deno.mkdir(join(jobDir, "dist"), { recursive: true });
      await Deno.writeTextFile(join(jobDir, "dist", name), `contents of ${name}\n`);
      const ran = await runStep(step(flow, job, "checksum"), {
        cwd: jobDir,
        env: { PATH: Deno.env.get("PATH") ?? "" },
        values: {},
        runnerTemp: dir,
      });
      assertEquals(ran.code, 0, ran.stderr);
      await Deno.mkdir(join(dir, "merged", "dist"), { recursive: true });
      for (const file of [name, `${name}.sha256`]) {
        await Deno.copyFile(join(jobDir, "dist", file), join(dir, "merged", "dist", file));
      }
    }
    const sums = await runStep(step(flow, "publish", "sums"), {
      cwd: join(dir, "merged"),
      env: { PATH: Deno.env.get("PATH") ?? "" },
      values: {},
      runnerTemp: dir,
    });
    assertEquals(sums.code, 0, sums.stderr);
    const lines = (await Deno.readTextFile(join(dir, "merged", "dist", "SHA256SUMS"))).trim()
      .split("\n").sort();
    const expected = await Promise.all(
      names.map(async (name) => `${await sha256(join(dir, "merged", "dist", name))}  ${name}`),
    );
    assertEquals(lines, expected.sort());
    // And a damaged file fails the sums step.
    await Deno.writeTextFile(join(dir, "merged", "dist", names[2]!), "tampered\n");
    const damaged = await runStep(step(flow, "publish", "sums"), {
      cwd: join(dir, "merged"),
      env: { PATH: Deno.env.get("PATH") ?? "" },
      values: {},
      runnerTemp: dir,
    });
    assertEquals(damaged.code, 1);
    assertStringIncludes(damaged.stdout, `${names[2]}: FAILED`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("release.yml packs with npm pack and publishes the packed tarball", async () => {
  const flow = await workflow();
  const dir = await Deno.makeTempDir({ prefix: "rousseau-release-" });
  try {
    const bin = await recorders(dir, ["npm"]);
    const env = { PATH: `${bin}:${Deno.env.get("PATH") ?? ""}` };
    const pack = await runStep(step(flow, "npm", "pack"), {
      cwd: dir,
      env,
      values: {},
      runnerTemp: dir,
    });
    assertEquals(pack.code, 0, pack.stderr);
    await Deno.writeTextFile(join(dir, "dist", "rousseau-0.1.0.tgz"), "packed\n");
    const publish = await runStep(step(flow, "publish", "npm publish"), {
      cwd: dir,
      env,
      values: { "secrets.NPM_TOKEN": "npm-test-token" },
      runnerTemp: dir,
    });
    assertEquals(publish.code, 0, publish.stderr);
    assertEquals((await Deno.readTextFile(join(dir, "npm.log"))).trim().split("\n"), [
      "pack --pack-destination dist",
      "publish --provenance --access public dist/rousseau-0.1.0.tgz",
    ]);
    // The package version is the CLI's version.
    const pkg = JSON.parse(await Deno.readTextFile(join(REPO, "package.json")));
    const deno = JSON.parse(await Deno.readTextFile(join(REPO, "deno.json")));
    assertEquals(pkg.version, deno.version);
    assertEquals(pkg.optionalDependencies, { deno: "2.9.6" });
    assertEquals(pkg.scripts.prepack.includes("scripts/npm_cache.ts"), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
