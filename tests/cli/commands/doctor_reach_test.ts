/**
 * Issue 19 (7): `doctor` without `--online` said `ok` with nothing listening at the base URL.
 * It now connects (TCP only, nothing sent) and, when nothing answers on a loopback port,
 * says how to start the server that usually sits there.
 */

import { doctorOpenAI } from "../../_helpers/doctor.ts";
import { assertEquals, assertMatch } from "../../_helpers/assert.ts";
import { tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { reach } from "../../../cli/commands/doctor_reach.ts";

/** A loopback port that was free a moment ago (bound, then closed). */
function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("doctor: nothing listening on the base URL fails the server line with the fix", async () => {
  await using ws = await tmpWorkspace();
  const port = closedPort();
  const out = await doctorOpenAI(ws.root, `http://127.0.0.1:${port}/v1`);
  assertEquals(out.code, 1, out.stdout);
  assertMatch(
    out.stdout,
    new RegExp(`\\nFAIL  server +nothing listens on 127\\.0\\.0\\.1:${port} — start the server`),
  );
});

Deno.test("doctor: an open loopback listener passes, and is sent nothing", async () => {
  await using ws = await tmpWorkspace();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  // Every byte the doctor sends would show up here; it must send none.
  const received: number[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      const buf = new Uint8Array(64);
      for (;;) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        received.push(n);
      }
      conn.close();
    }
  })();
  try {
    const out = await doctorOpenAI(ws.root, `http://127.0.0.1:${port}/v1`);
    assertEquals(out.code, 0, out.stdout);
    assertMatch(
      out.stdout,
      new RegExp(`\\nok    server +127\\.0\\.0\\.1:${port} accepts connections`),
    );
  } finally {
    listener.close();
    await accepting;
  }
  assertEquals(received, []);
});

Deno.test("reach: the usual local servers' ports get their start command", async () => {
  // Port 11434 is ollama's; skip when something really listens there on this machine.
  const taken = await Deno.connect({ hostname: "127.0.0.1", port: 11434 }).then(
    (conn) => (conn.close(), true),
    () => false,
  );
  if (!taken) {
    const error = await reach("http://127.0.0.1:11434/v1").then(() => undefined, (e) => e);
    assertEquals(
      (error as Error).message,
      "nothing listens on 127.0.0.1:11434 — start it: ollama serve",
    );
  }
  const bad = await reach("ftp://example.test/").then(() => undefined, (e) => e);
  assertEquals(
    (bad as Error).message,
    "ftp://example.test/: want an http:// or https:// URL, got ftp:",
  );
});

Deno.test("reach: a name that does not resolve is said to be one", async () => {
  // .invalid never resolves (RFC 2606); the lookup fails fast or times out within a second.
  const error = await reach("https://rousseau-doctor.invalid/v1").then(() => undefined, (e) => e);
  assertMatch(
    (error as Error).message,
    /^rousseau-doctor\.invalid:443: cannot resolve rousseau-doctor\.invalid \(.+\); check the base URL and the network$/,
  );
});
