/**
 * The audit log rotates at a size without breaking its chain (issue 27 item 3: `audit.jsonl`
 * only grew): the next file's first line holds the hash of the last line before, the files
 * read oldest first verify as one chain, and every way of tampering with a rotated file (an
 * edit, a removal in the middle or at the start, a reorder, a cut end) still fails. Real
 * files in a temp directory; concurrent writers across rotations.
 *
 * Why the start of a pruned chain is recorded: hash-chained logs that drop old segments lose
 * the proof of where the chain began, so a deleted oldest file looks like retention; the
 * `<log>.start` file plays for the beginning the part the head plays for the end.
 */

import { basename, join } from "node:path";
import {
  type AuditEvent,
  createAuditFile,
  GENESIS,
  parseHead,
  readAuditFiles,
  rotatedFiles,
  rotatedPathOf,
  sha256,
  startPathOf,
  verifyFiles,
  verifyHead,
} from "../../approver/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";

async function tempDir(): Promise<{ readonly path: string } & AsyncDisposable> {
  const path = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-audit-rot-" }));
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

function event(n: number): AuditEvent {
  return { event: "tool.execute", tool: "bash", input: `{"command":"echo ${n}"}` };
}

/** Every file of the log, oldest first, as lines. */
async function allLines(path: string): Promise<string[][]> {
  const out: string[][] = [];
  for (const file of [...rotatedFiles(path), path]) {
    out.push((await Deno.readTextFile(file)).trimEnd().split("\n"));
  }
  return out;
}

/** The verdict on the whole log as `audit verify` reaches it. */
async function verify(path: string) {
  const snapshot = await readAuditFiles(path);
  const broken = await verifyFiles(snapshot.files, snapshot.start, path);
  if (broken !== undefined) return broken;
  const tail = [...snapshot.files].reverse().find((f) => (f.text ?? "") !== "");
  const head = await verifyHead(tail?.text ?? "", snapshot.head, `${path}.head`);
  return head === undefined ? undefined : { file: tail?.path ?? path, ...head };
}

/** A log of `count` events rotated at `maxBytes`, keeping `keep` rotated files. */
async function rotatedLog(dir: string, count: number, maxBytes: number, keep = 0) {
  const path = join(dir, "audit.jsonl");
  const audit = createAuditFile(path, { maxBytes, keep });
  for (let i = 0; i < count; i++) await audit.record(event(i));
  return path;
}

Deno.test("audit rotation: the next file starts with the previous head, and the files verify as one chain", async () => {
  await using tmp = await tempDir();
  // One line is about 270 bytes: three lines a file, the fourth rotates.
  const path = await rotatedLog(tmp.path, 10, 700);
  const rotated = rotatedFiles(path);
  assertEquals(rotated.map((p) => basename(p)), [
    "audit.jsonl.000000001",
    "audit.jsonl.000000004",
    "audit.jsonl.000000007",
  ]);
  const files = await allLines(path);
  assertEquals(files.map((lines) => lines.map((l) => JSON.parse(l).seq)), [
    [1, 2, 3],
    [4, 5, 6],
    [7, 8, 9],
    [10],
  ]);
  assertEquals(JSON.parse(files[0]![0]!).prev, GENESIS);
  for (let i = 1; i < files.length; i++) {
    assertEquals(JSON.parse(files[i]![0]!).prev, await sha256(files[i - 1]!.at(-1)!));
  }
  for (const file of rotated) assert((await Deno.stat(file)).size <= 700 + 300);
  assertEquals(await verify(path), undefined);
  // The head is the log's own, and names its last line.
  assertEquals(parseHead(await Deno.readTextFile(`${path}.head`)), {
    seq: 10,
    hash: await sha256(files[3]![0]!),
  });
});

Deno.test("audit rotation: a tampered rotated file still fails verification", async (t) => {
  await using tmp = await tempDir();
  const path = await rotatedLog(tmp.path, 10, 700);
  const [first, second, third] = rotatedFiles(path) as [string, string, string];
  const saved = new Map<string, string>();
  for (const file of [first, second, third, path]) saved.set(file, await Deno.readTextFile(file));
  const restore = async () => {
    for (const [file, text] of saved) await Deno.writeTextFile(file, text);
  };
  const lines = (file: string) => saved.get(file)!.trimEnd().split("\n");

  await t.step("a line edited in the middle of a rotated file", async () => {
    const edited = lines(second).map((l, i) => i === 1 ? l.replace("echo 4", "echo X") : l);
    await Deno.writeTextFile(second, edited.join("\n") + "\n");
    assertEquals(await verify(path), {
      file: second,
      line: 2,
      problem: "line 2 was edited: line 3 holds the hash of a different line 2",
    });
    await restore();
  });
  await t.step("the last line of a rotated file edited (only the next file can tell)", async () => {
    const edited = lines(second).map((l, i) => i === 2 ? l.replace("echo 5", "echo X") : l);
    await Deno.writeTextFile(second, edited.join("\n") + "\n");
    assertEquals(await verify(path), {
      file: third,
      line: 1,
      problem:
        "line 1 does not hold the hash of the last line of audit.jsonl.000000004: one of the two was edited",
    });
    await restore();
  });
  await t.step("the last line of a rotated file cut", async () => {
    await Deno.writeTextFile(second, lines(second).slice(0, 2).join("\n") + "\n");
    assertEquals(await verify(path), {
      file: third,
      line: 1,
      problem: "1 line was removed between audit.jsonl.000000004 and line 1 (entry 6)",
    });
    await restore();
  });
  await t.step("a rotated file in the middle removed", async () => {
    await Deno.remove(second);
    assertEquals(await verify(path), {
      file: third,
      line: 1,
      problem: "3 lines were removed between audit.jsonl.000000001 and line 1 (entries 4–6)",
    });
    await restore();
  });
  await t.step("the oldest rotated file removed by hand", async () => {
    await Deno.remove(first);
    assertEquals(await verify(path), {
      file: second,
      line: 1,
      problem: "lines were removed from the start: the file begins at entry 4",
    });
    await restore();
  });
  await t.step("two rotated files swapped", async () => {
    await Deno.writeTextFile(second, saved.get(third)!);
    await Deno.writeTextFile(third, saved.get(second)!);
    assertEquals(await verify(path), {
      file: second,
      line: 1,
      problem: "3 lines were removed between audit.jsonl.000000001 and line 1 (entries 4–6)",
    });
    await restore();
  });
  await t.step("a rotated file emptied", async () => {
    await Deno.writeTextFile(third, "");
    assertEquals(await verify(path), {
      file: path,
      line: 1,
      problem: "3 lines were removed between audit.jsonl.000000004 and line 1 (entries 7–9)",
    });
    await restore();
  });
  await t.step("untouched again, it verifies", async () => {
    assertEquals(await verify(path), undefined);
  });
});

Deno.test("audit rotation: keep removes the oldest files and records where the chain begins", async (t) => {
  await using tmp = await tempDir();
  const path = await rotatedLog(tmp.path, 16, 700, 2);
  const rotated = rotatedFiles(path);
  assertEquals(rotated.map((p) => basename(p)), ["audit.jsonl.000000010", "audit.jsonl.000000013"]);
  const oldest = (await Deno.readTextFile(rotated[0]!)).split("\n")[0]!;
  assertEquals(
    await Deno.readTextFile(startPathOf(path)),
    `{"seq":10,"prev":"${JSON.parse(oldest).prev}"}\n`,
  );
  assertEquals(await verify(path), undefined);

  await t.step("the oldest kept file removed by hand fails against the start", async () => {
    const text = await Deno.readTextFile(rotated[0]!);
    await Deno.remove(rotated[0]!);
    assertEquals(await verify(path), {
      file: rotated[1],
      line: 1,
      problem: "the log begins at entry 13, but audit.jsonl.start records that it begins at " +
        "entry 10: 3 lines were removed from the start (entries 10–12), a rotated file " +
        "deleted by hand or lines cut from the oldest one",
    });
    await Deno.writeTextFile(rotated[0]!, text);
  });
  await t.step("the start file removed: the chain no longer starts at entry 1", async () => {
    const text = await Deno.readTextFile(startPathOf(path));
    await Deno.remove(startPathOf(path));
    assertEquals(await verify(path), {
      file: rotated[0],
      line: 1,
      problem: "lines were removed from the start: the file begins at entry 10",
    });
    await Deno.writeTextFile(startPathOf(path), text);
  });
  await t.step("a damaged start file is named", async () => {
    const text = await Deno.readTextFile(startPathOf(path));
    await Deno.writeTextFile(startPathOf(path), "{");
    assertEquals(await verify(path), {
      file: rotated[0],
      line: 1,
      problem: `the start file ${startPathOf(path)} is damaged (not JSON): it was edited`,
    });
    await Deno.writeTextFile(startPathOf(path), text);
  });
  await t.step("a removal cut short (start written, oldest still there) verifies", async () => {
    // As a writer killed between writing the start and removing the oldest file leaves it.
    const audit = createAuditFile(join(tmp.path, "b.jsonl"), { maxBytes: 700 });
    for (let i = 0; i < 10; i++) await audit.record(event(i));
    const b = join(tmp.path, "b.jsonl");
    const files = rotatedFiles(b);
    const second = JSON.parse((await Deno.readTextFile(files[1]!)).split("\n")[0]!);
    await Deno.writeTextFile(
      startPathOf(b),
      JSON.stringify({ seq: second.seq, prev: second.prev }) + "\n",
    );
    assertEquals(await verify(b), undefined);
  });
});

Deno.test("audit rotation: concurrent writers across rotations keep one chain and a matching head", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  // One writer keeps its files open between lines (as `rousseau mcp` does): it still follows
  // the rotations the others make.
  const writers = [false, true, false].map((keepOpen) =>
    createAuditFile(path, { maxBytes: 1500, keep: 0, keepOpen })
  );
  using _closed = { [Symbol.dispose]: () => writers.forEach((w) => w.close()) };
  await Promise.all(Array.from({ length: 45 }, (_, i) => writers[i % 3]!.record(event(i))));
  const files = await allLines(path);
  assert(files.length > 5, `only ${files.length} files`);
  assertEquals(
    files.flat().map((l) => JSON.parse(l).seq),
    Array.from({ length: 45 }, (_, i) => i + 1),
  );
  assertEquals(await verify(path), undefined);
});

Deno.test("audit rotation: a full log whose first line is damaged is not rotated, and nothing is lost", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  await Deno.writeTextFile(path, "not json\n" + "x".repeat(800) + "\n");
  const audit = createAuditFile(path, { maxBytes: 700 });
  await audit.record(event(1));
  assertEquals(rotatedFiles(path), []);
  const lines = (await Deno.readTextFile(path)).trimEnd().split("\n");
  assertEquals([lines.length, lines[0]], [3, "not json"]);
  // A rotated name already taken is not overwritten either.
  const other = join(tmp.path, "other.jsonl");
  const writer = createAuditFile(other, { maxBytes: 300 });
  await writer.record(event(1));
  await writer.record(event(2));
  await Deno.writeTextFile(rotatedPathOf(other, 1), "someone else's\n");
  await writer.record(event(3));
  assertEquals(await Deno.readTextFile(rotatedPathOf(other, 1)), "someone else's\n");
});
