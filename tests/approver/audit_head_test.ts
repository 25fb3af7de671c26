/**
 * The head file beside the audit log: two checksummed records, one rewritten in place per
 * line, and what a crash, a record cut short, an edit, a head of the previous format or a
 * link planted under its name leads to.
 */

import { join } from "node:path";
import {
  type AuditEvent,
  createAuditFile,
  headPathOf,
  parseHead,
  readAuditLog,
  sha256,
  verifyChain,
  verifyHead,
} from "../../approver/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";

async function tempDir(): Promise<{ readonly path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "rousseau-audit-head-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

function event(n: number): AuditEvent {
  return { event: "tool.execute", tool: "bash", input: `{"command":"echo ${n}"}` };
}

const FIXED = new Date("2024-05-01T12:00:00.000Z");

/** The head file's record of entry `seq` whose line hashes to `hash`: 128 bytes. */
async function headRecord(seq: number, hash: string): Promise<string> {
  const check = (await sha256(JSON.stringify({ seq, hash }))).slice(0, 16);
  return JSON.stringify({ seq, hash, check }).padEnd(127, " ") + "\n";
}

/** The log's lines. */
async function linesOf(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path)).trimEnd().split("\n");
}

/** What `audit verify` says of the log's end against its head (undefined: they agree). */
async function headProblem(path: string): Promise<string | undefined> {
  const snapshot = await readAuditLog(path);
  assertEquals(await verifyChain(snapshot.text ?? ""), undefined);
  return (await verifyHead(snapshot.text ?? "", snapshot.head, "H"))?.problem;
}

/** Writes `bytes` over the start of `file` at `offset`, in place (no truncation). */
async function overwrite(file: string, offset: number, bytes: Uint8Array): Promise<void> {
  using handle = await Deno.open(file, { write: true });
  await handle.seek(offset, Deno.SeekMode.Start);
  await handle.write(bytes);
}

Deno.test("audit: the head beside the log names the last line and the one before, updated with every line", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const audit = createAuditFile(path, { clock: () => FIXED });
  for (let i = 0; i < 3; i++) await audit.record(event(i));
  const lines = await linesOf(path);
  assertEquals(headPathOf(path), `${path}.head`);
  // Entry N's record in slot N % 2: entry 2 first, then entry 3.
  assertEquals(
    await Deno.readTextFile(`${path}.head`),
    (await headRecord(2, await sha256(lines[1]!))) + (await headRecord(3, await sha256(lines[2]!))),
  );
  assertEquals((await Deno.stat(`${path}.head`)).mode! & 0o777, 0o600);
  const names = [];
  for await (const entry of Deno.readDir(tmp.path)) names.push(entry.name);
  assertEquals(names.sort(), ["audit.jsonl", "audit.jsonl.head"]); // no temporary left
  const snapshot = await readAuditLog(path);
  assertEquals(snapshot.head, { seq: 3, hash: await sha256(lines[2]!) });
  assertEquals(await verifyHead(snapshot.text!, snapshot.head, "H"), undefined);
});

Deno.test("audit: each line rewrites the head in place, not by a new file renamed over it", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const audit = createAuditFile(path);
  await audit.record(event(0));
  const first = await Deno.stat(`${path}.head`);
  for (let i = 1; i < 6; i++) {
    await audit.record(event(i));
    const now = await Deno.stat(`${path}.head`);
    assertEquals([now.dev, now.ino], [first.dev, first.ino], `after line ${i + 1}`);
  }
  assertEquals(await headProblem(path), undefined);
});

Deno.test("audit: a head record cut short by a crash is not taken; the record before it stands and the next line continues", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const head = `${path}.head`;
  const audit = createAuditFile(path);
  for (let i = 0; i < 4; i++) await audit.record(event(i));
  const beforeFifth = await Deno.readFile(head); // slot 0: entry 4; slot 1: entry 3
  await audit.record(event(4)); // entry 5 goes to slot 1
  const lines = await linesOf(path);
  // The write of entry 5's record cut short: its first 40 bytes new, the rest entry 3's.
  const torn = beforeFifth.slice(128, 256);
  torn.set(new TextEncoder().encode(await headRecord(5, await sha256(lines[4]!))).slice(0, 40));
  await overwrite(head, 128, torn);
  const text = await Deno.readTextFile(head);
  assertEquals(parseHead(text), { seq: 4, hash: await sha256(lines[3]!) });
  assertEquals(
    await headProblem(path),
    "line 5 comes after the head (entry 4): appended by something other than rousseau, or " +
      "rousseau stopped between writing a line and its head",
  );
  // Another process goes on from line 5, and the log verifies again.
  await createAuditFile(path).record(event(5));
  assertEquals((await linesOf(path)).length, 6);
  assertEquals(await headProblem(path), undefined);
});

Deno.test("audit: a head whose two records both fail is reported damaged, not taken", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const head = `${path}.head`;
  const audit = createAuditFile(path);
  for (let i = 0; i < 3; i++) await audit.record(event(i));
  const bytes = await Deno.readFile(head);
  bytes[20] = bytes[20] === 0x61 ? 0x62 : 0x61; // a hex digit of entry 2's hash
  bytes.set(new TextEncoder().encode("{{{"), 128);
  await Deno.writeFile(head, bytes);
  const expected = "neither record is intact (first: fails its check; second: not JSON)";
  assertEquals(parseHead(await Deno.readTextFile(head)), expected);
  assertEquals(
    await headProblem(path),
    `the head file H is damaged (${expected}): it was edited`,
  );
});

Deno.test("audit: a head of the previous format still verifies, and the next line replaces it", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const head = `${path}.head`;
  const audit = createAuditFile(path);
  for (let i = 0; i < 3; i++) await audit.record(event(i));
  const lines = await linesOf(path);
  // What rousseau wrote before the two records: one line, `{"seq":N,"hash":"…"}`.
  await Deno.writeTextFile(head, `{"seq":3,"hash":"${await sha256(lines[2]!)}"}\n`);
  assertEquals(await headProblem(path), undefined);
  await Deno.writeTextFile(head, `{"seq":4,"hash":"${await sha256(lines[2]!)}"}\n`);
  assertEquals(
    await headProblem(path),
    "the log ends at entry 3 but its head records entry 4: 1 line was removed from the end, " +
      "or removed elsewhere and the chain after them rewritten",
  );
  await Deno.writeTextFile(head, `{"seq":3,"hash":"${await sha256(lines[2]!)}"}\n`);
  await createAuditFile(path).record(event(3));
  const now = await linesOf(path);
  assertEquals(
    await Deno.readTextFile(head),
    (await headRecord(4, await sha256(now[3]!))).repeat(2),
  );
  assertEquals(await headProblem(path), undefined);
});

Deno.test("audit: a record the chain did not write is replaced with the next line, not kept beside it", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const head = `${path}.head`;
  const audit = createAuditFile(path);
  for (let i = 0; i < 3; i++) await audit.record(event(i));
  // Slot 1 (entry 3's, the last line's) made to claim entry 8, with a check that holds.
  await overwrite(head, 128, new TextEncoder().encode(await headRecord(8, "a".repeat(64))));
  assertEquals(
    await headProblem(path),
    "the log ends at entry 3 but its head records entry 8: 5 lines were removed from the end, " +
      "or removed elsewhere and the chain after them rewritten",
  );
  // Entry 4 goes to slot 0; written in place there, the record of entry 8 would outlive it in
  // slot 1 and misname the head for good. The file is replaced whole instead.
  await audit.record(event(3));
  const lines = await linesOf(path);
  assertEquals(
    await Deno.readTextFile(head),
    (await headRecord(4, await sha256(lines[3]!))).repeat(2),
  );
  assertEquals(await headProblem(path), undefined);
});

for (const keepOpen of [false, true]) {
  Deno.test(`audit: a symlink, a hard link or a FIFO under the head's name is not written through (keepOpen: ${keepOpen})`, async (t) => {
    await plantedUnderHead(t, keepOpen);
  });
}

/** Links planted under the head's name, for a writer that keeps its files open or not. */
async function plantedUnderHead(t: Deno.TestContext, keepOpen: boolean): Promise<void> {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const head = `${path}.head`;
  const victim = join(tmp.path, "victim");
  const audit = createAuditFile(path, { keepOpen });
  using _closed = { [Symbol.dispose]: () => audit.close() };
  await audit.record(event(0));
  await audit.record(event(1));
  /** Plants `plant` under the head's name, holding a copy of the real head; checks a line. */
  const check = async (plant: () => Promise<void>) => {
    // A copy of the real head: a file a writer would rewrite in place, were it followed.
    await Deno.copyFile(head, victim);
    const before = await Deno.readFile(victim);
    await Deno.remove(head);
    await plant();
    await audit.record(event(9));
    assertEquals(await Deno.readFile(victim), before);
    const now = await Deno.lstat(head);
    assert(now.isFile && now.nlink === 1, "the head is a plain file of its own again");
    assertEquals(await headProblem(path), undefined);
    await Deno.remove(victim);
  };
  await t.step("a symlink to a file", () => check(() => Deno.symlink(victim, head)));
  await t.step("a hard link to a file", () => check(() => Deno.link(victim, head)));
  await t.step("a FIFO", async () => {
    await Deno.copyFile(head, victim);
    await Deno.remove(head);
    const made = await new Deno.Command("mkfifo", { args: [head] }).output();
    assert(made.success, "mkfifo");
    await audit.record(event(10));
    assert((await Deno.lstat(head)).isFile);
    assertEquals(await headProblem(path), undefined);
    await Deno.remove(victim);
  });
}

Deno.test("audit: events recorded together resolve only once their line and head record are written", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  for (const keepOpen of [false, true]) {
    const audit = createAuditFile(path, { keepOpen });
    using _closed = { [Symbol.dispose]: () => audit.close() };
    const before = keepOpen ? (await linesOf(path)).length : 0;
    // Recorded in one turn: one group commit (or several); each promise is checked the moment
    // it resolves, against what the files hold then.
    const seen: string[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) =>
      audit.record(event(i)).then(() => {
        const lines = Deno.readTextFileSync(path).trimEnd().split("\n");
        const mine = lines.findIndex((l) =>
          l.includes(`echo ${i}\\"`) && l.includes(`"seq":${before + i + 1},`)
        );
        const head = parseHead(Deno.readTextFileSync(headPathOf(path)));
        if (mine === -1) seen.push(`event ${i}: its line is not in the log yet`);
        else if (typeof head !== "object" || head.seq < before + i + 1) {
          seen.push(`event ${i}: the head is at ${typeof head === "object" ? head.seq : head}`);
        }
      })));
    assertEquals(seen, []);
    assertEquals(await headProblem(path), undefined);
  }
});
