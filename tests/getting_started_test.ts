/**
 * docs/getting-started.md run top to bottom as a new user would, in a fresh HOME: its own
 * command lines, in its order, against the loopback fake OpenAI-compatible server (only the
 * Ollama URL is swapped for the fake's). After §2's `init`, §4's `--allow edit run` must edit
 * (the flag beats the ask that config has), the piped `run --output json -` must succeed, and
 * §5's `policy check` must print what the page says, with its exit code. The interactive chat
 * of §3 is the README quick start's test (tests/readme_test.ts).
 */

import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "./_helpers/assert.ts";
import { CLI_ARGS, REPO } from "./_helpers/cli.ts";
import { startFakeOpenAI } from "./_helpers/fake_providers.ts";
import { tmpDir } from "./_helpers/tmp_workspace.ts";

const decoder = new TextDecoder();
const OLLAMA = "http://127.0.0.1:11434/v1";

/** The `rousseau` lines of the page's sh blocks (comments dropped), section by section. */
async function pageLines(): Promise<{ section: string; line: string; comment: string }[]> {
  const page = await Deno.readTextFile(join(REPO, "docs/getting-started.md"));
  const out: { section: string; line: string; comment: string }[] = [];
  for (const part of page.split("\n## ").slice(1)) {
    const section = part.split("\n")[0]!;
    for (const block of part.matchAll(/```sh\n([\s\S]*?)```/g)) {
      const lines = block[1]!.split("\n");
      lines.forEach((raw, i) => {
        const line = raw.replace(/\s+#.*$/, "").trim();
        if (!/(^|\| )rousseau /.test(line)) return;
        const next = lines[i + 1]?.trim() ?? "";
        out.push({ section, line, comment: next.startsWith("# ") ? next.slice(2) : "" });
      });
    }
  }
  return out;
}

async function sh(script: string, cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command("sh", {
    args: ["-c", script],
    cwd,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

Deno.test("docs/getting-started.md works as written in a fresh HOME after init", async () => {
  const lines = await pageLines();
  // The lines this test runs, as the page has them (a changed page changes this list).
  const wanted = [
    `rousseau --provider openai --base-url ${OLLAMA} --model qwen3 doctor --online`,
    `rousseau --provider openai --base-url ${OLLAMA} init`,
    'rousseau --allow edit run "fix the typo in README.md"',
    "git diff | rousseau run --output json - > result.json",
    `rousseau policy check bash '{"command":"git status; rm -rf ~"}'`,
  ];
  for (const line of wanted) {
    assert(lines.some((l) => l.line === line), `not on the page any more: ${line}`);
  }
  await using tmpHome = await tmpDir("rousseau-gs-home-");
  const home = tmpHome.path;
  const project = join(home, "src", "my-project");
  await Deno.mkdir(join(home, "bin"), { recursive: true });
  await Deno.mkdir(project, { recursive: true });
  await Deno.writeTextFile(join(project, "README.md"), "# My project\n\nThis is teh readme.\n");
  const shim = join(home, "bin", "rousseau");
  await Deno.writeTextFile(
    shim,
    `#!/bin/sh\nexec ${JSON.stringify(Deno.execPath())} ${
      CLI_ARGS.map((a) => JSON.stringify(a)).join(" ")
    } "$@"\n`,
  );
  await Deno.chmod(shim, 0o755);
  const readme = join(project, "README.md");
  await using server = startFakeOpenAI([
    { text: "pong" }, // doctor --online's probe
    {
      text: "Fixing it.",
      tools: [{ name: "edit", input: { path: readme, old_string: "teh", new_string: "the" } }],
    },
    { text: "Fixed the typo." },
    { text: "The diff fixes a typo in README.md." },
  ]);
  const { INIT_CWD: _i, NO_COLOR: _n, XDG_CONFIG_HOME: _c, XDG_DATA_HOME: _d, ...rest } = Deno.env
    .toObject();
  const env = {
    ...rest,
    HOME: home,
    PATH: `${join(home, "bin")}:${rest.PATH ?? "/usr/bin:/bin"}`,
    NO_COLOR: "1",
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    GIT_CONFIG_GLOBAL: "/dev/null",
  };
  const git = await sh(
    "git init -q && git add README.md && git -c user.name=u -c user.email=u@x commit -qm init",
    project,
    env,
  );
  assertEquals(git.code, 0, git.stderr);
  const run = (line: string) => sh(line.replaceAll(OLLAMA, server.url), project, env);

  const doctor = await run(wanted[0]!);
  assertEquals(doctor.code, 0, doctor.stdout + doctor.stderr);
  assertStringIncludes(doctor.stdout, "ok    online");

  const init = await run(wanted[1]!);
  assertEquals(init.code, 0, init.stderr);
  assertStringIncludes(init.stderr, join(home, ".config", "rousseau", "config.yaml"));

  const fix = await run(wanted[2]!);
  assertEquals(fix.code, 0, fix.stderr);
  assertEquals(fix.stdout, "Fixed the typo.\n");
  assertEquals(await Deno.readTextFile(readme), "# My project\n\nThis is the readme.\n");

  const piped = await run(wanted[3]!);
  assertEquals(piped.code, 0, piped.stderr);
  const result = JSON.parse(await Deno.readTextFile(join(project, "result.json")));
  assertEquals([result.subtype, result.result], [
    "success",
    "The diff fixes a typo in README.md.",
  ]);

  const check = await run(wanted[4]!);
  const said = lines.find((l) => l.line === wanted[4])!.comment;
  const [first, exit] = said.split(/\s{2,}exit /);
  assertEquals(check.stdout.split("\n")[0], first);
  assertEquals(String(check.code), exit);
});
