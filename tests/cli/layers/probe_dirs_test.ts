/**
 * The start-up probes' temporary directories (cli/layers/probe_dirs.ts): a rousseau killed by
 * SIGKILL mid-probe leaves its `rousseau-identity-probe-*` or `rousseau-overlay-probe-*`
 * directory behind; a later start removes those whose maker is provably gone, and never one
 * of a live process or one it cannot place.
 */

import { join } from "node:path";
import { assertEquals } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { tmpDir, tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

/** `<pid namespace inode>.<pid>.<start time>` of process `pid`, as the probes name it. */
function tagOf(pid: number): string {
  const ns = /^pid:\[(\d+)\]$/.exec(Deno.readLinkSync("/proc/self/ns/pid"))![1];
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return `${ns}.${pid}.${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}`;
}

/** The tag of a process that ran and is gone: a real `sleep`, killed and reaped. */
async function goneTag(): Promise<string> {
  const child = new Deno.Command("sleep", { args: ["60"], stdout: "null", stderr: "null" })
    .spawn();
  const tag = tagOf(child.pid);
  child.kill("SIGKILL");
  await child.status;
  return tag;
}

/** A probe directory as a killed probe leaves it (the identity one handed to uid 1). */
async function leftBehind(tmp: string, name: string): Promise<string> {
  const dir = join(tmp, name);
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "root-only"), "x", { mode: 0o600 });
  if (name.startsWith("rousseau-identity-probe-")) {
    await Deno.writeTextFile(join(dir, "made"), "");
    await Deno.chown(join(dir, "made"), 1, 1);
    await Deno.chown(dir, 1, 1);
  }
  return dir;
}

Deno.test("a start removes the probe directories a killed rousseau left, never a live process's", {
  ignore: Deno.uid() !== 0,
}, async () => {
  await using ws = await tmpWorkspace();
  await using tmp = await tmpDir("rousseau-probe-tmp-");
  const gone = await goneTag();
  const live = tagOf(Deno.pid);
  const names = {
    staleIdentity: `rousseau-identity-probe-${gone}-a1b2c3`,
    staleOverlay: `rousseau-overlay-probe-${gone}-d4e5f6`,
    liveIdentity: `rousseau-identity-probe-${live}-a1b2c3`,
    liveOverlay: `rousseau-overlay-probe-${live}-d4e5f6`,
    // Made by a version that did not name its maker: nothing proves it stale.
    untagged: "rousseau-identity-probe-x7y8z9",
    // Another pid namespace's (a container sharing the directory): its pids are not ours.
    otherNamespace: `rousseau-overlay-probe-1.${gone.split(".").slice(1).join(".")}-g7h8i9`,
  };
  for (const name of Object.values(names)) await leftBehind(tmp.path, name);
  // A symlink named like a stale one: never followed, never removed.
  const target = await leftBehind(tmp.path, "rousseau-target");
  await Deno.symlink(target, join(tmp.path, `rousseau-overlay-probe-${gone}-link`));

  const run = await runCli(["--workspace", ws.root, "tool", "bash", '{"command":"echo ran"}'], {
    env: { TMPDIR: tmp.path },
  });
  assertEquals(run, { code: 0, stdout: "ran\n", stderr: "" });

  const left = [];
  for await (const entry of Deno.readDir(tmp.path)) left.push(entry.name);
  assertEquals(
    left.sort(),
    [
      names.liveIdentity,
      names.liveOverlay,
      names.otherNamespace,
      `rousseau-overlay-probe-${gone}-link`,
      "rousseau-target",
      names.untagged,
    ].sort(),
  );
  assertEquals(await Deno.readTextFile(join(target, "root-only")), "x");
});
