/**
 * The audit file: a hash chain of JSON lines, secrets redacted, inputs cut to 1 KiB, and
 * verifyChain finding edits, removals and reorderings.
 */

import { join } from "node:path";
import {
  type AuditEvent,
  createAuditFile,
  GENESIS,
  redact,
  sha256,
  verifyChain,
} from "../../approver/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../_helpers/assert.ts";

async function tempDir(): Promise<{ readonly path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "rousseau-audit-" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

function event(n: number, extra: Partial<AuditEvent> = {}): AuditEvent {
  return { event: "tool.execute", tool: "bash", input: `{"command":"echo ${n}"}`, ...extra };
}

const FIXED = new Date("2024-05-01T12:00:00.000Z");

/** Writes `count` events and returns the file's lines. */
async function chain(dir: string, count: number): Promise<string[]> {
  const audit = createAuditFile(join(dir, "audit.jsonl"), { clock: () => FIXED });
  for (let i = 0; i < count; i++) await audit.record(event(i));
  return (await Deno.readTextFile(audit.path)).split("\n").slice(0, -1);
}

Deno.test("audit: each line holds the SHA-256 of the line before; the first holds zeros", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const lines = await chain(dir, 4);
  assertEquals(lines.length, 4);
  assertEquals(GENESIS, "0".repeat(64));
  assertEquals(JSON.parse(lines[0]!).prev, GENESIS);
  for (let i = 1; i < lines.length; i++) {
    assertEquals(JSON.parse(lines[i]!).prev, await sha256(lines[i - 1]!));
  }
  assertEquals(JSON.parse(lines[2]!), {
    seq: 3,
    time: "2024-05-01T12:00:00.000Z",
    event: "tool.execute",
    tool: "bash",
    input: '{"command":"echo 2"}',
    prev: await sha256(lines[1]!),
  });
  assertEquals(await verifyChain(lines.join("\n") + "\n"), undefined);
});

Deno.test("audit: sha256 is lower-case hex of the UTF-8 bytes", async () => {
  assertEquals(
    await sha256("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});

Deno.test("audit: appending to an existing file continues its chain", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = join(dir, "audit.jsonl");
  await createAuditFile(path).record(event(1));
  await createAuditFile(path).record(event(2));
  const text = await Deno.readTextFile(path);
  assertEquals(text.split("\n").length, 3);
  assertEquals(await verifyChain(text), undefined);
});

Deno.test("audit: the directory and file are private", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = join(dir, "state", "rousseau", "audit.jsonl");
  await createAuditFile(path).record(event(1));
  if (Deno.build.os !== "windows") {
    assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
    assertEquals((await Deno.stat(join(dir, "state", "rousseau"))).mode! & 0o777, 0o700);
  }
});

Deno.test("audit: secrets never reach the file", async (t) => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = join(dir, "audit.jsonl");
  const secrets = ["hunter2-very-secret", 'pa"ss\\word-99', "short"];
  const audit = createAuditFile(path, { secrets });
  const cases: Array<[string, string, string[]]> = [
    [
      "an Anthropic key",
      JSON.stringify({ command: "curl -H 'x-api-key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz'" }),
      ["sk-ant-api03-abcdefghijklmnopqrstuvwxyz"],
    ],
    [
      "an OpenAI key",
      JSON.stringify({ command: "export OPENAI_API_KEY=sk-proj-ABCDEFGHIJKLMNOP1234" }),
      ["sk-proj-ABCDEFGHIJKLMNOP1234", "ABCDEFGHIJKLMNOP1234"],
    ],
    [
      "a given secret value",
      JSON.stringify({ command: "echo hunter2-very-secret" }),
      ["hunter2-very-secret"],
    ],
    [
      "a given secret value with quotes and backslashes, as canonical JSON escapes it",
      JSON.stringify({ command: 'echo pa"ss\\word-99' }),
      ['pa\\"ss\\\\word-99', "ss\\\\word-99"],
    ],
    [
      "api_key=... in a command",
      JSON.stringify({ command: "curl https://x.test/?api_key=abcdef123456" }),
      ["abcdef123456"],
    ],
    [
      "an api_key field in the input",
      JSON.stringify({ path: "/a", content: 'api_key: "zyxwvu987654"' }),
      ["zyxwvu987654"],
    ],
    [
      "a token= value",
      JSON.stringify({ command: "deploy --token=tok_live_0123456789" }),
      ["tok_live_0123456789"],
    ],
    [
      "a bearer token",
      JSON.stringify({ command: "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30'" }),
      ["eyJhbGciOiJIUzI1NiJ9.e30"],
    ],
    [
      "a GitHub token",
      JSON.stringify({ command: "gh auth login --with-token ghp_abcdefghijklmnopqrstuvwxyz0123" }),
      ["ghp_abcdefghijklmnopqrstuvwxyz0123"],
    ],
  ];
  for (const [name, input, leaks] of cases) {
    await t.step(name, async () => {
      await audit.record({ event: "tool.denied", tool: "bash", input, reason: `saw ${input}` });
      const last = (await Deno.readTextFile(path)).trimEnd().split("\n").at(-1)!;
      for (const leak of leaks) {
        assert(!last.includes(leak), `${JSON.stringify(leak)} leaked: ${last}`);
      }
      const entry = JSON.parse(last);
      assertStringIncludes(entry.input, "[REDACTED]");
      assertStringIncludes(entry.reason, "[REDACTED]");
    });
  }
  await t.step("values shorter than 6 characters are not treated as secrets", () => {
    assertEquals(redact("a short word", secrets), "a short word");
  });
  await t.step("redacted lines still chain", async () => {
    assertEquals(await verifyChain(await Deno.readTextFile(path)), undefined);
  });
});

Deno.test("audit: inputs are cut to 1 KiB", async (t) => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = join(dir, "audit.jsonl");
  const audit = createAuditFile(path);
  const stored = async (input: string): Promise<string> => {
    await audit.record({ event: "tool.execute", tool: "write", input });
    return JSON.parse((await Deno.readTextFile(path)).trimEnd().split("\n").at(-1)!).input;
  };
  const bytes = (text: string) => new TextEncoder().encode(text).length;
  await t.step("1024 bytes are kept whole", async () => {
    const input = "a".repeat(1024);
    assertEquals(await stored(input), input);
  });
  await t.step("longer ASCII input keeps 1024 bytes and marks the cut", async () => {
    assertEquals(await stored("b".repeat(5000)), "b".repeat(1024) + "…");
  });
  await t.step("multi-byte input is cut by bytes, on a character boundary", async () => {
    const kept = await stored("a" + "😀".repeat(400));
    assertEquals(kept, "a" + "😀".repeat(255) + "…");
    assertEquals(bytes(kept.slice(0, -1)), 1021);
    const accents = await stored("é".repeat(2000));
    assertEquals(accents, "é".repeat(512) + "…");
  });
  await t.step("a long secret is redacted before the cut", async () => {
    const kept = await stored("x".repeat(1000) + " sk-ant-abcdefghijklmnopqrstuvwxyz0123456789");
    assert(!kept.includes("sk-ant-"), kept);
  });
});

Deno.test("audit: verifyChain finds edits, removals and reordering", async (t) => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const lines = await chain(dir, 5);
  const text = (ls: string[]) => ls.join("\n") + "\n";
  await t.step("intact", async () => {
    assertEquals(await verifyChain(text(lines)), undefined);
    assertEquals(await verifyChain(""), undefined);
  });
  await t.step("an edited line breaks the link after it", async () => {
    const edited = [...lines];
    edited[1] = edited[1]!.replace("echo 1", "echo X");
    assertEquals(await verifyChain(text(edited)), {
      line: 2,
      problem: "line 2 was edited: line 3 holds the hash of a different line 2",
    });
  });
  await t.step("an edit that breaks the JSON is reported on its own line", async () => {
    const edited = [...lines];
    edited[3] = edited[3]!.slice(0, -1);
    assertEquals(await verifyChain(text(edited)), {
      line: 4,
      problem: "not a JSON object: the line was edited or cut",
    });
  });
  await t.step("a re-chained edit still breaks the next link", async () => {
    // Editing a line and fixing its own prev does not help: the next line holds its hash.
    const edited = [...lines];
    const entry = JSON.parse(edited[2]!);
    entry.tool = "read";
    edited[2] = JSON.stringify(entry);
    assertEquals(await verifyChain(text(edited)), {
      line: 3,
      problem: "line 3 was edited: line 4 holds the hash of a different line 3",
    });
  });
  await t.step("a removed line", async () => {
    const removed = lines.filter((_, i) => i !== 2);
    assertEquals(await verifyChain(text(removed)), {
      line: 3,
      problem: "1 line was removed before line 3 (entry 3)",
    });
    const two = lines.filter((_, i) => i !== 1 && i !== 2);
    assertEquals(await verifyChain(text(two)), {
      line: 2,
      problem: "2 lines were removed before line 2 (entries 2–3)",
    });
  });
  await t.step("a removed first line", async () => {
    assertEquals(await verifyChain(text(lines.slice(1))), {
      line: 1,
      problem: "lines were removed from the start: the file begins at entry 2",
    });
  });
  await t.step("swapped lines", async () => {
    const swapped = [lines[0]!, lines[2]!, lines[1]!, lines[3]!, lines[4]!];
    assertEquals(await verifyChain(text(swapped)), {
      line: 2,
      problem: "lines were reordered: line 2 follows line 3 in the chain",
    });
  });
  await t.step("a line inserted in the middle", async () => {
    const inserted = [...lines.slice(0, 2), lines[0]!, ...lines.slice(2)];
    assertEquals(await verifyChain(text(inserted)), {
      line: 3,
      problem: "lines were reordered or copied: line 3 is entry 1, after entry 2",
    });
  });
  await t.step("a file without a trailing newline is read the same", async () => {
    assertEquals(await verifyChain(lines.join("\n")), undefined);
  });
});

Deno.test("audit: concurrent record() calls keep the chain valid", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const path = join(dir, "audit.jsonl");
  const writers = [createAuditFile(path), createAuditFile(path)];
  await Promise.all(
    Array.from({ length: 40 }, (_, i) => writers[i % 2]!.record(event(i, { tool: `t${i}` }))),
  );
  const text = await Deno.readTextFile(path);
  const lines = text.trimEnd().split("\n");
  assertEquals(lines.length, 40);
  assertEquals(new Set(lines.map((l) => JSON.parse(l).tool)).size, 40);
  assertEquals(await verifyChain(text), undefined);
});

Deno.test("audit: a file rotated away between records starts a new chain", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const audit = createAuditFile(path);
  await audit.record(event(1));
  await audit.record(event(2));
  await Deno.rename(path, `${path}.1`);
  await audit.record(event(3));
  const rotated = (await Deno.readTextFile(`${path}.1`)).trimEnd().split("\n");
  const fresh = (await Deno.readTextFile(path)).trimEnd().split("\n");
  assertEquals(rotated.map((l) => JSON.parse(l).seq), [1, 2]);
  assertEquals(fresh.map((l) => [JSON.parse(l).seq, JSON.parse(l).prev]), [[1, GENESIS]]);
});

Deno.test("audit: a line another writer appended is chained onto, not overwritten", async () => {
  await using tmp = await tempDir();
  const path = join(tmp.path, "audit.jsonl");
  const mine = createAuditFile(path);
  await mine.record(event(1));
  await createAuditFile(path).record(event(2)); // another process, as far as `mine` knows
  await mine.record(event(3));
  const text = await Deno.readTextFile(path);
  assertEquals(text.trimEnd().split("\n").map((l) => JSON.parse(l).seq), [1, 2, 3]);
  assertEquals(await verifyChain(text), undefined);
});
