/**
 * `audit verify` through the real CLI against a log written by real tool calls: the head kept
 * beside the log catches what the chain alone cannot (issue 15 item 3), with exact texts.
 */

import { join } from "node:path";
import { parseHead, sha256 } from "../../../approver/mod.ts";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { runCli } from "../../_helpers/cli.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";

/** `lines` with `seq` and `prev` recomputed, as someone covering their tracks would. */
async function rechain(lines: readonly string[]): Promise<string> {
  const out: string[] = [];
  for (const [i, line] of lines.entries()) {
    const entry = JSON.parse(line);
    entry.seq = i + 1;
    entry.prev = i === 0 ? "0".repeat(64) : await sha256(out[i - 1]!);
    out.push(JSON.stringify(entry));
  }
  return out.join("\n") + "\n";
}

Deno.test("audit verify: the head beside the log catches dropped, emptied and rewritten logs", async (t) => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "x\n" } });
  const state = join(ws.outside, "state");
  const config = join(ws.outside, "config.yaml");
  await Deno.writeTextFile(config, `state:\n  dir: ${state}\n`);
  const file = join(state, "audit.jsonl");
  const verify = (...extra: string[]) => runCli(["--config", config, "audit", "verify", ...extra]);

  await t.step("a fresh state directory, with neither a log nor a head, is fine", async () => {
    const out = await verify();
    assertEquals([out.code, out.stdout], [
      0,
      `audit verify: ${file}: intact, 0 lines, head ${"0".repeat(64)}\n`,
    ]);
  });

  for (let i = 0; i < 3; i++) {
    const out = await runCli([
      "--config",
      config,
      "--workspace",
      ws.root,
      "tool",
      "read",
      `{"path":"${ws.path("a.txt")}"}`,
    ]);
    assertEquals(out.code, 0, out.stderr);
  }
  const original = await Deno.readTextFile(file);
  const head = await Deno.readTextFile(`${file}.head`);
  const lines = original.trimEnd().split("\n");
  assertEquals(lines.length, 6);
  assertEquals(parseHead(head), { seq: 6, hash: await sha256(lines[5]!) });
  const restore = async () => {
    await Deno.writeTextFile(file, original);
    await Deno.writeTextFile(`${file}.head`, head);
  };
  const broken = async (problem: string, ...extra: string[]) => {
    const out = await verify(...extra);
    assertEquals([out.code, out.stdout, out.stderr], [
      1,
      `audit verify: ${file}: ${problem}\n`,
      "",
    ]);
    await restore();
  };

  await t.step("intact", async () => {
    const out = await verify();
    assertEquals([out.code, out.stdout], [
      0,
      `audit verify: ${file}: intact, 6 lines, head ${await sha256(lines[5]!)}\n`,
    ]);
  });
  await t.step("lines dropped from the end", async () => {
    await Deno.writeTextFile(file, lines.slice(0, 4).join("\n") + "\n");
    await broken(
      "line 5: the log ends at entry 4 but its head records entry 6: 2 lines were removed from " +
        "the end, or removed elsewhere and the chain after them rewritten",
    );
  });
  await t.step("an emptied log", async () => {
    await Deno.writeTextFile(file, "");
    await broken(
      "line 1: the log is empty but its head records 6 entries: the log was emptied or replaced",
    );
  });
  await t.step("a deleted log", async () => {
    await Deno.remove(file);
    await broken("line 1: the log is missing but its head records 6 entries: the log was deleted");
  });
  await t.step("a line deleted, with prev and seq recomputed after it", async () => {
    await Deno.writeTextFile(file, await rechain(lines.filter((_, i) => i !== 2)));
    await broken(
      "line 6: the log ends at entry 5 but its head records entry 6: 1 line was removed from " +
        "the end, or removed elsewhere and the chain after them rewritten",
    );
  });
  await t.step("a chain rewritten whole", async () => {
    await Deno.writeTextFile(file, await rechain(lines.map((l) => l.replace("a.txt", "b.txt"))));
    const short = (await sha256(lines[5]!)).slice(0, 12);
    await broken(
      `line 6: line 6 does not match the head (entry 6, hash ${short}…): the last line was ` +
        "edited, or the chain was rewritten",
    );
  });
  await t.step("a missing head beside a log with lines", async () => {
    await Deno.remove(`${file}.head`);
    await broken(
      `line 6: the head file ${file}.head is missing: lines may have been removed from the end ` +
        "(rousseau writes it with every line; check against a head kept elsewhere with --head)",
    );
  });
  await t.step("--head still works, and stands in for a missing head file", async () => {
    const hash = await sha256(lines[5]!);
    await Deno.remove(`${file}.head`);
    let out = await verify("--head", hash);
    assertEquals([out.code, out.stdout], [
      0,
      `audit verify: ${file}: intact, 6 lines, head ${hash}\n`,
    ]);
    out = await verify("--head", await sha256(lines[4]!), "--json");
    assertEquals(out.code, 1);
    assertEquals(JSON.parse(out.stdout), {
      file,
      lines: 6,
      intact: false,
      line: 6,
      problem: `the last line's hash is ${hash}, not the --head given: ` +
        "the last line was edited, or lines were removed from or added to the end",
    });
    await restore();
  });
  await t.step("the next tool call does not hide a dropped end", async () => {
    await Deno.writeTextFile(file, lines.slice(0, 4).join("\n") + "\n");
    const out = await runCli([
      "--config",
      config,
      "--workspace",
      ws.root,
      "tool",
      "read",
      `{"path":"${ws.path("a.txt")}"}`,
    ]);
    assertEquals(out.code, 0, out.stderr);
    const after = await verify();
    assertEquals(after.code, 1);
    assert(
      after.stdout.endsWith(": line 5: 2 lines were removed before line 5 (entries 5–6)\n"),
      after.stdout,
    );
    await restore();
  });
});
