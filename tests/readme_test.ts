/**
 * The README's quick start, run as a new user would: in a fresh copy of the repository, with
 * a home of its own, the block's own lines — `deno task install`, the PATH export, `chat` —
 * with only the model server swapped for the loopback fake OpenAI-compatible one. The
 * installed `rousseau` must pass the `doctor` line the README names, and `chat` (in a real
 * pseudo-terminal) must get from a typed request to an edited file after one `y`.
 */

import { dirname, join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "./_helpers/assert.ts";
import { REPO } from "./_helpers/cli.ts";
import { startFakeOpenAI } from "./_helpers/fake_providers.ts";
import { type TmpDir, tmpDir } from "./_helpers/tmp_workspace.ts";
import { until } from "./_helpers/until.ts";

const decoder = new TextDecoder();
const WAIT_LIMIT_MS = 90_000;

/** The command lines of the README's "Quick start" shell block. */
async function quickStart(): Promise<string[]> {
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const section = readme.split("\n## Quick start\n")[1]?.split("\n## ")[0] ?? "";
  const block = section.match(/```sh\n([\s\S]*?)```/)?.[1];
  assert(block !== undefined, "README.md: no sh block under ## Quick start");
  return block.split("\n").map((line) => line.replace(/\s+#.*$/, "").trim()).filter(Boolean);
}

/** The repository's files as a user's clone has them (tracked and new, not ignored). */
async function freshCopy(): Promise<TmpDir> {
  const listed = await new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: REPO,
    stdout: "piped",
  }).output();
  assert(listed.success, "git ls-files failed");
  const copy = await tmpDir("rousseau-clone-");
  const target = copy.path;
  try {
    for (const file of decoder.decode(listed.stdout).split("\0").filter(Boolean)) {
      const from = join(REPO, file);
      if (!await Deno.stat(from).then((s) => s.isFile, () => false)) continue; // deleted, unstaged
      await Deno.mkdir(dirname(join(target, file)), { recursive: true });
      await Deno.copyFile(from, join(target, file));
    }
  } catch (error) {
    await copy[Symbol.asyncDispose]();
    throw error;
  }
  return copy;
}

/** Deno's cache as this process uses it, so the new home does not download every package. */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  return JSON.parse(decoder.decode(out.stdout)).denoDir;
}

async function userEnv(home: string, baseUrl: string): Promise<Record<string, string>> {
  const { INIT_CWD: _, NO_COLOR: _c, TMUX: _t, TMUX_PANE: _p, DENO_INSTALL_ROOT: _d, ...rest } =
    Deno.env.toObject();
  return {
    ...rest,
    HOME: home,
    DENO_DIR: await denoDir(),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    OPENAI_BASE_URL: baseUrl,
    NO_COLOR: "1",
    TERM: "xterm-256color",
  };
}

Deno.test("README quick start: install, doctor passes and chat edits a file, in a fresh copy", async () => {
  const lines = await quickStart();
  const exports = lines.filter((line) => line.startsWith("export "));
  const commands = lines.filter((line) => !line.startsWith("export "));
  assertEquals(exports.map((line) => line.split("=")[0]), [
    "export PATH",
    "export OPENAI_BASE_URL",
  ]);
  // From a fresh clone: one command to install, one to chat.
  assertEquals(commands, ["deno task install", "rousseau --provider openai --model qwen3 chat"]);
  const readme = await Deno.readTextFile(join(REPO, "README.md"));
  const doctorLine = "rousseau --provider openai --model qwen3 doctor";
  assertStringIncludes(readme, "`" + doctorLine + "`");
  // The PATH line runs as written; the base URL is the fake's (the environment has it).
  const prelude = exports.filter((line) => line.startsWith("export PATH=")).join("\n");

  await using copy = await freshCopy();
  const clone = copy.path;
  await using tmpHome = await tmpDir("rousseau-home-");
  const home = tmpHome.path;
  const target = join(clone, "hello.txt");
  await using server = startFakeOpenAI([
    {
      text: "I'll create it.",
      tools: [{ name: "write", input: { path: target, content: "hi\n" } }],
    },
    { text: "Created hello.txt." },
  ]);
  const env = await userEnv(home, server.url);
  const socket = join(home, "tmux.sock");
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", {
      args: ["-S", socket, ...args],
      env,
      clearEnv: true,
      stdout: "piped",
    })
      .output();
  try {
    const install = await new Deno.Command("sh", {
      args: ["-c", commands[0]!],
      cwd: clone,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assertEquals(install.code, 0, decoder.decode(install.stderr));
    const doctor = await new Deno.Command("sh", {
      args: ["-c", `${prelude}\n${doctorLine}`],
      cwd: clone,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const report = decoder.decode(doctor.stdout);
    assertEquals(doctor.code, 0, report + decoder.decode(doctor.stderr));
    assertStringIncludes(report, `ok    workspace     confined to ${clone}`);

    const conf = join(home, "tmux.conf");
    const statusFile = join(home, "chat.status");
    await Deno.writeTextFile(conf, "set -g remain-on-exit on\nset -g status off\n");
    const started = await tmux(
      "-f",
      conf,
      "new-session",
      "-d",
      "-x",
      "120",
      "-y",
      "40",
      "-c",
      clone,
      "sh",
      "-c",
      `${prelude}\n${commands[1]!}\necho "$?" > ${JSON.stringify(statusFile)}`,
    );
    assert(started.success, "tmux did not start");
    const screen = async () =>
      decoder.decode((await tmux("capture-pane", "-p", "-J", "-S", "-")).stdout);
    const waitFor = (text: string) =>
      until(`${JSON.stringify(text)} on the screen`, async () => (await screen()).includes(text), {
        limitMs: WAIT_LIMIT_MS,
        everyMs: 150,
        state: async () => `the screen:\n${await screen()}`,
      });
    await waitFor("›");
    await tmux("send-keys", "-l", "create hello.txt saying hi");
    await tmux("send-keys", "Enter");
    await waitFor("[y] allow once");
    await tmux("send-keys", "y", "Enter");
    await waitFor("Created hello.txt.");
    assertEquals(await Deno.readTextFile(target), "hi\n");
    await tmux("send-keys", "-l", "/exit");
    await tmux("send-keys", "Enter");
    // The exit status comes from the shell that ran the README's line: tmux's own record of
    // a dead pane's status is not always filled in.
    let status = "";
    await until(
      "the chat to exit",
      async () => (status = await Deno.readTextFile(statusFile).catch(() => "")) !== "",
      { limitMs: WAIT_LIMIT_MS, everyMs: 150, state: async () => `the screen:\n${await screen()}` },
    );
    status = status.trim();
    assertEquals(status, "0", await screen());
    assertEquals(server.requests[0]!.body.model, "qwen3");
  } finally {
    await tmux("kill-server");
  }
});
