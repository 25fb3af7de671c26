/**
 * Promise (issue 26, items 1 and 2): as root, bash's shell cannot read host files only root
 * may read — it runs as an unprivileged uid, the workspace and the home directory mapped to
 * it — while the workspace stays writable and owned as before; and the kernel keyrings are
 * out of reach (seccomp). Driven from outside through `rousseau tool bash`, with the overlay
 * and without it (the mirror fallback binds the roots read-write).
 *
 * Before: `tool bash '{"command":"head -c 40 /etc/shadow"}'` printed `root:*:20228:0:…`
 * (the shell kept uid 0 in its user namespace, so it owned every root-only file), and
 * `keyctl print` read a key from the session keyring rousseau ran in. Public reports of the
 * same class: an OpenCode bubblewrap jail run with sudo keeps uid 0 and reads `/etc/shadow`
 * and the SSH host keys (review of https://github.com/0xzr/freellmpool/pull/22); an agent
 * sandbox audit finds `/etc/shadow` readable "because root reads it regardless of the
 * sandbox" (https://github.com/TNG/oh-my-agentic-coder/issues/180); a sandbox whose processes
 * run as uid 0 has no DAC at all (https://github.com/ConchSandbox/Conch/issues/135). Docker's
 * default seccomp profile refuses add_key, request_key and keyctl for the keyring reason.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../_helpers/assert.ts";
import { runCli, TEST_HOME } from "../_helpers/cli.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const asRoot = Deno.uid() === 0;
const bwrap = new Deno.Command("sh", { args: ["-c", "command -v bwrap"] }).outputSync().success;
const ignore = !asRoot || !bwrap;

/** A directory outside /tmp (the sandbox's /tmp is its own) holding one 0600 and one 0644 file. */
function outsideFiles(): { dir: string; [Symbol.dispose](): void } {
  const dir = Deno.makeTempDirSync({ dir: "/var/tmp", prefix: "rousseau-uid-test-" });
  Deno.chmodSync(dir, 0o755);
  Deno.writeTextFileSync(join(dir, "secret"), "TOPSECRET\n", { mode: 0o600 });
  Deno.writeTextFileSync(join(dir, "public"), "PUBLIC\n", { mode: 0o644 });
  return { dir, [Symbol.dispose]: () => Deno.removeSync(dir, { recursive: true }) };
}

/** `tool bash` in `root`: its exit code and what it printed (an error's output is on stderr). */
async function bash(root: string, command: string, env: Record<string, string> = {}) {
  const run = await runCli(["--workspace", root, "tool", "bash", JSON.stringify({ command })], {
    env,
  });
  return { code: run.code, stdout: run.stdout + run.stderr };
}

for (const overlay of ["auto", "off"] as const) {
  const env = { ROUSSEAU_TOOLS_BASH_OVERLAY: overlay };

  Deno.test({
    name: `as root (overlay ${overlay}): host files only root may read are unreadable, others are`,
    ignore,
    fn: async () => {
      await using ws = await tmpWorkspace({ files: { "a.txt": "a\n" } });
      using outside = outsideFiles();
      const run = await bash(
        ws.root,
        `id -u; cat ${outside.dir}/public; cat ${outside.dir}/secret; head -c 4 /etc/shadow; ` +
          "ls /root >/dev/null && echo home-listed",
        env,
      );
      assertEquals(run.code, 0, run.stdout);
      assertStringIncludes(run.stdout, "0\nPUBLIC\n");
      assert(!run.stdout.includes("TOPSECRET"), run.stdout);
      assertStringIncludes(run.stdout, `cat: ${outside.dir}/secret: Permission denied`);
      assertStringIncludes(run.stdout, "head: cannot open '/etc/shadow' for reading");
      // The home directory is readable (toolchains live there), as for a normal user.
      assertStringIncludes(run.stdout, "home-listed");
    },
  });

  Deno.test({
    name: `as root (overlay ${overlay}): the workspace stays writable and its files the owner's`,
    ignore,
    fn: async () => {
      await using ws = await tmpWorkspace({ files: { "own.txt": "own\n" } });
      await Deno.chmod(ws.path("own.txt"), 0o600);
      await new Deno.Command("git", { args: ["-C", ws.root, "init", "-q"] }).output();
      const run = await bash(
        ws.root,
        "echo more >> own.txt && mkdir -p d/e && echo new > d/e/f && ln -s own.txt link && " +
          "git status --porcelain && ls -ln own.txt",
        env,
      );
      assertEquals(run.code, 0, run.stdout);
      // git's safe.directory check passes: the repository is the shell's own.
      assertStringIncludes(run.stdout, "?? d/\n?? link\n?? own.txt\n");
      assertMatch(run.stdout, /-rw------- 1 0 0 +9 .* own\.txt/);
      assertEquals(await Deno.readTextFile(ws.path("own.txt")), "own\nmore\n");
      for (const path of ["own.txt", "d", "d/e", "d/e/f"]) {
        const info = await Deno.lstat(ws.path(path));
        assertEquals([path, info.uid, info.gid], [path, 0, 0]);
      }
      assertEquals((await Deno.lstat(ws.path("link"))).uid, 0);
    },
  });

  Deno.test({
    name: `as root (overlay ${overlay}): a workspace owned by another uid is written as that uid`,
    ignore,
    fn: async () => {
      await using ws = await tmpWorkspace({ files: { "theirs.txt": "t\n" } });
      for (const path of [ws.root, ws.path("theirs.txt")]) await Deno.chown(path, 1000, 1000);
      const run = await bash(ws.root, "id -u; id -g; echo x >> theirs.txt; : > made", env);
      assertEquals(run.code, 0, run.stdout);
      assertEquals(run.stdout, "1000\n1000\n");
      assertEquals(await Deno.readTextFile(ws.path("theirs.txt")), "t\nx\n");
      const made = await Deno.lstat(ws.path("made"));
      assertEquals([made.uid, made.gid], [1000, 1000]);
    },
  });
}

Deno.test({
  name: "as root: the home directory is read-only inside, and its credentials stay hidden",
  ignore,
  fn: async () => {
    await using ws = await tmpWorkspace({ files: {} });
    const home = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "rousseau-uid-home-" });
    try {
      await Deno.chmod(home, 0o700);
      await Deno.writeTextFile(join(home, "tool.txt"), "TOOL\n", { mode: 0o600 });
      await Deno.mkdir(join(home, ".ssh"), { mode: 0o700 });
      await Deno.writeTextFile(join(home, ".ssh", "id_ed25519"), "PRIVATEKEY\n", { mode: 0o600 });
      const run = await bash(
        ws.root,
        `cat ${home}/tool.txt; cat ${home}/.ssh/id_ed25519; : > ${home}/planted`,
        // Deno's cache stays where it is (it defaults to $HOME/.cache/deno).
        { HOME: home, DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno` },
      );
      assertEquals(run.code, 1, run.stdout);
      assertStringIncludes(run.stdout, "TOOL\n");
      assert(!run.stdout.includes("PRIVATEKEY"), run.stdout);
      assertStringIncludes(run.stdout, "Read-only file system");
      assertEquals(
        (await Array.fromAsync(Deno.readDir(home))).some((e) => e.name === "planted"),
        false,
      );
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test({
  name: "as root: tools.bash.unprivileged: off keeps uid 0, and doctor says what it exposes",
  ignore,
  fn: async () => {
    await using ws = await tmpWorkspace({ files: {} });
    using outside = outsideFiles();
    const env = { ROUSSEAU_TOOLS_BASH_UNPRIVILEGED: "off" };
    const run = await bash(ws.root, `cat ${outside.dir}/secret`, env);
    assertEquals([run.code, run.stdout], [0, "TOPSECRET\n"]);
    const doctor = await runCli(["--workspace", ws.root, "doctor"], { env });
    assertStringIncludes(
      doctor.stdout,
      "warn  sandbox uid   0 (no unprivileged shell: tools.bash.unprivileged: off): host files " +
        "only root may read (/etc/shadow, /root, keys under /etc and /var/lib) are readable inside",
    );
    const on = await runCli(["--workspace", ws.root, "doctor"]);
    assertMatch(
      on.stdout,
      /ok {4}sandbox uid {3}65534 on the host \(the workspace owner inside; the roots and .* mapped to it\): host files only root may read are unreadable/,
    );
    assertStringIncludes(
      on.stdout,
      "ok    sandbox keys  kernel keyrings out of reach: add_key, request_key and keyctl " +
        "refused (seccomp)",
    );
  },
});

const keyctl = new Deno.Command("sh", { args: ["-c", "command -v keyctl"] }).outputSync().success;

Deno.test({
  name: "the session keyring rousseau runs in is out of the sandbox's reach",
  // keyutils is installed by .ci/run; say so rather than pass quietly without it.
  ignore: !bwrap,
  fn: async () => {
    assert(keyctl, "keyctl is not installed (Debian: apt-get install keyutils; .ci/run does)");
    await using ws = await tmpWorkspace({ files: {} });
    // A fresh session keyring holding one key, as a login or a Kerberos kinit leaves one;
    // rousseau runs inside it, and the key is readable there (the control).
    const script = "keyctl add user rousseau-test KEYSECRET @s >/dev/null && " +
      'keyctl print %user:rousseau-test && exec "$@"';
    const child = new Deno.Command("keyctl", {
      args: [
        "session",
        "-",
        "sh",
        "-c",
        script,
        "sh",
        Deno.execPath(),
        "task",
        "--quiet",
        "cli",
        "--workspace",
        ws.root,
        "tool",
        "bash",
        JSON.stringify({ command: "keyctl print %user:rousseau-test; keyctl show @s" }),
      ],
      cwd: new URL("../../", import.meta.url).pathname,
      env: {
        NO_COLOR: "1",
        XDG_CONFIG_HOME: `${TEST_HOME}/config`,
        XDG_DATA_HOME: `${TEST_HOME}/data`,
      },
      stdout: "piped",
      stderr: "piped",
    });
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    // The key is printed outside; the failed call's output (inside) is on stderr.
    assertEquals(stdout, "KEYSECRET\n");
    const inside = new TextDecoder().decode(out.stderr);
    assert(!inside.includes("KEYSECRET"), inside);
    assertStringIncludes(inside, "Operation not permitted");
  },
});
