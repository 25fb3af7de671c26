/**
 * Proofs a call leaves to its host (`LaterProofs` in tools/_workspace.ts, `proveLater` in
 * tools/_later_proofs.ts): `rousseau mcp` proves where a read's descriptor leads once the call
 * is done, with the result in hand, instead of asking its host mid-call. The result must still
 * never carry a byte of a file outside the workspace or of a protected one, whatever was
 * swapped in before the open or done to the descriptor's number after it.
 *
 * The swap race is the one of google-gemini/gemini-cli#1121 (TOCTOU between a path check and
 * the open) and anomalyco/opencode#7515 (https://github.com/anomalyco/opencode/pull/7515, a
 * resolved-path check documented as racy).
 */

import { join } from "node:path";
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { createWorkerHost, createWorkspace, DEFAULT_LIMITS } from "../../mod.ts";
import { closeOpened, LaterProofs, openConfinedStatSync } from "../../tools/_workspace.ts";
import { proveLater } from "../../tools/_later_proofs.ts";
import type { Workspace } from "../../tools/types.ts";

const SECRET = "the secret outside the workspace\n";

/** A call's proofs, for a workspace whose roots are all on their devices. */
function laterFor(workspace: Workspace): LaterProofs {
  return new LaterProofs(workspace, new Set(workspace.roots.map((r) => Deno.statSync(r).dev)));
}

/** Opens `path` as read does with `later`, releases it, and returns the proofs to make. */
function readLater(workspace: Workspace, path: string, real: string) {
  const later = laterFor(workspace);
  const { fd } = openConfinedStatSync("read", path, real, workspace, constants.O_RDONLY, later);
  closeOpened(fd, later);
  return later.seal();
}

/** The number of descriptors this process has open. */
/**
 * Descriptors of this process open on files under `dirs`: only the test's own files count
 * (other test modules run in this process and open and close theirs meanwhile).
 */
function openDescriptors(dirs: readonly string[]): number {
  let count = 0;
  for (const { name } of Deno.readDirSync("/proc/self/fd")) {
    try {
      const target = Deno.readLinkSync(`/proc/self/fd/${name}`);
      if (dirs.some((dir) => target.startsWith(`${dir}/`))) count++;
    } catch { /* closed meanwhile */ }
  }
  return count;
}

Deno.test("later proofs: a file opened through a directory swapped to outside is refused by the host", async () => {
  await using ws = await tmpWorkspace({
    files: { "real/f.txt": "inside\n" },
    outside: { "f.txt": SECRET },
  });
  // Confined when `d` was the inside directory; opened once `d` leads outside.
  const path = ws.path("d", "f.txt");
  await Deno.symlink(ws.outside, ws.path("d"));
  const sealed = readLater(ws.workspace, path, path);
  assertEquals(sealed.refusal, undefined);
  assertEquals(sealed.proofs.length, 1, "a regular file on the root's device is left to the host");
  const fd = sealed.proofs[0]!.fd;
  assertEquals(
    proveLater(sealed.proofs[0]!, ws.workspace, closeSync),
    `read: ${path} is outside the workspace`,
  );
  // The host closed it.
  let closed = false;
  try {
    fstatSync(fd);
  } catch {
    closed = true;
  }
  assert(closed, "the host closes the descriptor it proved");
});

Deno.test("later proofs: a descriptor number reused by another file since the read is refused", async () => {
  await using ws = await tmpWorkspace({
    files: { "inside.txt": "inside\n" },
    outside: { "f.txt": SECRET },
  });
  const path = join(ws.outside, "f.txt");
  const sealed = readLater(ws.workspace, path, path);
  const proof = sealed.proofs[0]!;
  // Something closes the number and an inside file takes it: the path alone would pass.
  closeSync(proof.fd);
  const again = openSync(ws.path("inside.txt"), constants.O_RDONLY);
  try {
    assertEquals(again, proof.fd, "the lowest free number is reused");
    assertEquals(
      proveLater(proof, ws.workspace, () => {}),
      `read: ${path}: cannot prove the opened file is inside the workspace: its descriptor ` +
        "no longer holds it",
    );
  } finally {
    closeSync(again);
  }
});

Deno.test("later proofs: a hard link in the workspace to a protected file is refused by the host", async () => {
  await using ws = await tmpWorkspace({ outside: { "config.yaml": "approver: {}\n" } });
  const config = join(ws.outside, "config.yaml");
  const workspace = await createWorkspace([ws.root], [config]);
  const link = ws.path("config-link.yaml");
  await Deno.link(config, link);
  const sealed = readLater(workspace, link, link);
  assertEquals(
    proveLater(sealed.proofs[0]!, workspace, closeSync),
    `read: ${link} is rousseau's own configuration or state`,
  );
});

Deno.test("later proofs: a descriptor still in use when the call ends is proven at once", async () => {
  await using ws = await tmpWorkspace({ outside: { "f.txt": SECRET } });
  const path = join(ws.outside, "f.txt");
  const later = laterFor(ws.workspace);
  const { fd } = openConfinedStatSync("read", path, path, ws.workspace, constants.O_RDONLY, later);
  try {
    // A call given up after a cancellation ends while its tool still holds the descriptor.
    const sealed = later.seal();
    assertEquals(sealed.proofs, []);
    assertEquals(sealed.refusal, `read: ${path} is outside the workspace`);
  } finally {
    closeOpened(fd, later);
  }
});

Deno.test("later proofs: the worker host proves reads with their results, closes every descriptor, and never leaks a swapped file", async () => {
  await using ws = await tmpWorkspace({
    files: { "real/f.txt": "inside\n", "plain.txt": "inside\n" },
    outside: { "secret.txt": SECRET, "f.txt": SECRET },
  });
  await using host = await createWorkerHost({
    workspace: ws.workspace,
    limits: DEFAULT_LIMITS,
    env: {},
    proveLater: true,
  });
  const signal = new AbortController().signal;
  // Warm: the worker's own descriptors are open before counting.
  assertEquals(await host.call("read", { path: ws.path("plain.txt") }, signal), {
    output: "inside\n",
    isError: false,
  });
  const before = openDescriptors([ws.root, ws.outside]);
  for (let i = 0; i < 50; i++) {
    assertEquals(await host.call("read", { path: ws.path("plain.txt") }, signal), {
      output: "inside\n",
      isError: false,
    });
  }
  assertEquals(
    openDescriptors([ws.root, ws.outside]),
    before,
    "every descriptor left to the host is closed",
  );
  const swapper = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'cd "$0" && while [ ! -e stop ]; do ' +
      'ln -sfn "$1" d.new && mv -T d.new d; ln -sfn real d.new && mv -T d.new d; ' +
      'ln -sf "$1/secret.txt" f.new && mv f.new f.txt; ln -f plain.txt f.new && mv f.new f.txt; ' +
      "done",
      ws.root,
      ws.outside,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (let i = 0; i < 300; i++) {
      for (const path of [ws.path("f.txt"), ws.path("d", "f.txt")]) {
        const result = await host.call("read", { path }, signal);
        assert(!result.output.includes(SECRET.trim()), `read ${path} leaked: ${result.output}`);
      }
    }
  } finally {
    await Deno.writeTextFile(ws.path("stop"), "");
    await swapper.status;
  }
});
