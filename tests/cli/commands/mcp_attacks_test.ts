/**
 * Attacks on `rousseau mcp` from outside: the real CLI process driven over its stdio with raw
 * JSON-RPC lines (no SDK client to smooth anything over), in real temp workspaces, with the
 * server's memory read from /proc/PID/status (VmHWM) and its children looked for in /proc.
 *
 * Public reports these tests stand against:
 * - modelcontextprotocol/typescript-sdk PR #2239 and PR #2245: the SDK's stdio ReadBuffer had no
 *   cap, then a 10 MB one that closes the connection on overflow (what `rousseau mcp` did with
 *   a 100 MB line: it exited without a word).
 * - modelcontextprotocol/python-sdk issue #1333, modelcontextprotocol/rust-sdk issue #1030,
 *   rust-mcp-stack/rust-mcp-sdk PR #164, agentclientprotocol/rust-sdk issue #342: unbounded
 *   stdio buffers in the other SDKs, and the skip-to-the-next-newline fix.
 * - aryamthecodebreaker/FixMap issue #637, huaweicloud/huaweicloud-devkit issues #565 and #637,
 *   BaseIntelligence/bounty-challenge issue #51392: malformed lines answered with nothing (the
 *   client hangs), with a crash, or with the wrong id instead of a -32700 with id null.
 * - openai/codex issue #20925, QwenLM/qwen-code issue #11272, anomalyco/opencode issue #24312:
 *   cancellation that leaves work running, or kills the server.
 *
 * @module
 */

import { join } from "node:path";
import { assert, assertEquals } from "../../_helpers/assert.ts";
import { CLI_ARGS, REPO, runCli, TEST_HOME } from "../../_helpers/cli.ts";
import { descendants, survivors, waitForProcess } from "../../_helpers/processes.ts";
import { tmpDir, tmpWorkspace } from "../../_helpers/tmp_workspace.ts";
import { pause, until } from "../../_helpers/until.ts";
import {
  MCP_MAX_DEPTH,
  MCP_MAX_MESSAGE_BYTES,
  PIPE_ATOMIC_BYTES,
} from "../../../cli/commands/mcp_stdio.ts";
import { MCP_MAX_CALLS } from "../../../cli/commands/mcp.ts";

const ENCODER = new TextEncoder();

// deno-lint-ignore no-explicit-any
type Message = Record<string, any>;

/** A raw line client of a `rousseau mcp` process. */
interface Raw extends AsyncDisposable {
  readonly pid: number;
  /** Every line the server wrote on stdout, parsed; a line that is not JSON fails the test. */
  readonly received: Message[];
  /** Lines on stdout that were not one JSON-RPC 2.0 object. */
  readonly garbage: string[];
  /** Writes one line (a value is JSON-encoded; bytes and strings go as they are). */
  send(message: unknown): Promise<void>;
  /** Writes raw bytes. */
  write(bytes: Uint8Array): Promise<void>;
  /** Resolves to the answer with `id`; rejects when the server's stdout ends first. */
  answer(id: unknown): Promise<Message>;
  /** Starts reading stdout (a client made with `read: false` has not yet). */
  startReading(): void;
  /** The server's peak resident memory so far, in KiB. */
  peakKiB(): Promise<number>;
  closeStdin(): Promise<void>;
  /** Resolves to the exit status once the process is gone. */
  status(): Promise<Deno.CommandStatus>;
  stderr(): string;
}

/** Starts `rousseau --workspace ws ...args mcp` with its own state dir (its audit log). */
function startRaw(
  workspace: string,
  stateHome: string,
  args: readonly string[] = [],
  options: { read?: boolean; initialize?: boolean } = {},
): Raw {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...CLI_ARGS, "--workspace", workspace, ...args, "mcp"],
    cwd: REPO,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: {
      NO_COLOR: "1",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      XDG_CONFIG_HOME: `${TEST_HOME}/config`,
      XDG_DATA_HOME: stateHome,
    },
  }).spawn();
  const writer = child.stdin.getWriter();
  const received: Message[] = [];
  const garbage: string[] = [];
  const waiting = new Map<string, (m: Message) => void>();
  let stdoutEnded = false;
  const enders = new Set<() => void>();
  let stderr = "";
  const stderrDone = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  let reading: Promise<void> | undefined;
  const startReading = () => {
    reading ??= (async () => {
      let buffered = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        buffered += chunk;
        let at: number;
        while ((at = buffered.indexOf("\n")) !== -1) {
          const line = buffered.slice(0, at);
          buffered = buffered.slice(at + 1);
          let message: Message | undefined;
          try {
            const value = JSON.parse(line);
            if (typeof value === "object" && value !== null && value.jsonrpc === "2.0") {
              message = value;
            }
          } catch {
            // Not JSON: recorded below.
          }
          if (message === undefined) {
            garbage.push(line);
            continue;
          }
          received.push(message);
          if ("id" in message) waiting.get(JSON.stringify(message.id))?.(message);
        }
      }
      if (buffered !== "") garbage.push(buffered);
      stdoutEnded = true;
      for (const end of enders) end();
    })();
  };
  if (options.read !== false) startReading();
  const answer = (id: unknown) => {
    const key = JSON.stringify(id);
    const found = received.find((m) => "id" in m && JSON.stringify(m.id) === key);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<Message>((resolve, reject) => {
      const ended = () => new Error(`the server's stdout ended before an answer to ${key}`);
      if (stdoutEnded) return reject(ended());
      const end = () => {
        clearTimeout(timer);
        reject(ended());
      };
      // No answer in 180 s is a failure with what the server said, not a hung suite.
      const timer = setTimeout(() => {
        enders.delete(end);
        waiting.delete(key);
        reject(
          new Error(
            `no answer to ${key} in 180 s; ${received.length} messages received; ` +
              `stderr: ${stderr.slice(-2000)}`,
          ),
        );
      }, 180_000);
      enders.add(end);
      waiting.set(key, (m) => {
        clearTimeout(timer);
        enders.delete(end);
        waiting.delete(key);
        resolve(m);
      });
    });
  };
  const write = (bytes: Uint8Array) => writer.write(bytes);
  const send = (message: unknown) =>
    write(
      message instanceof Uint8Array
        ? message
        : ENCODER.encode((typeof message === "string" ? message : JSON.stringify(message)) + "\n"),
    );
  let stdinClosed = false;
  const closeStdin = async () => {
    if (stdinClosed) return;
    stdinClosed = true;
    await writer.close().catch(() => {});
  };
  const raw: Raw = {
    pid: child.pid,
    received,
    garbage,
    send,
    write,
    answer,
    startReading,
    peakKiB: () => peakKiB(child.pid),
    closeStdin,
    status: () => child.status,
    stderr: () => stderr,
    async [Symbol.asyncDispose]() {
      await closeStdin();
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await child.status;
      startReading();
      await reading;
      await stderrDone;
    },
  };
  if (options.initialize !== false) {
    void send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "attack", version: "1" },
      },
    });
    void send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  return raw;
}

async function peakKiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(/^VmHWM:\s+(\d+) kB$/m)![1]);
}

function callMessage(id: unknown, name: string, args: unknown): Message {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

/** The text of a tools/call result (one text block), or fails. */
function textOf(answer: Message): { text: string; isError: boolean } {
  assert(answer.result !== undefined, JSON.stringify(answer).slice(0, 500));
  assertEquals(answer.result.content.length, 1);
  return { text: answer.result.content[0].text, isError: answer.result.isError === true };
}

/** `rousseau audit verify FILE --json` on the test's own log. */
async function verifyAudit(stateHome: string) {
  const file = join(stateHome, "rousseau", "audit.jsonl");
  const out = await runCli(["audit", "verify", file, "--json"]);
  assertEquals(out.code, 0, out.stdout + out.stderr);
  const records = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l));
  return records as Message[];
}

/** What a stuck test needs to say: answers so far (errors quoted) and the server's stderr. */
function rawState(raw: Raw): string {
  const errors = raw.received.filter((m) => m.error !== undefined || m.result?.isError === true)
    .map((m) => JSON.stringify(m).slice(0, 300));
  return `${raw.received.length} messages received, errors: ${errors.slice(0, 10).join(" | ")}; ` +
    `stderr: ${raw.stderr().slice(-2000)}`;
}

/**
 * Waits until `read()` stops changing between two looks `ms` apart; returns its last value.
 * Throws after 120 looks (a value that never settles is a failure, not a hung suite).
 */
async function settled(read: () => number | Promise<number>, ms = 1000): Promise<number> {
  let last = await read();
  for (let look = 0; look < 120; look++) {
    await pause(ms);
    const now = await read();
    if (now === last) return now;
    last = now;
  }
  throw new Error(`a value still changed after 120 looks ${ms} ms apart (last ${last})`);
}

/** How many processes with `marker` in their command line are left after up to `seconds`. */
async function gone(marker: string, seconds: number): Promise<number> {
  let left = 1;
  for (let i = 0; i < seconds / 5 && left > 0; i++) left = await survivors(marker);
  return left;
}

/** How many `/bin/sh -c -- COMMAND...` shells whose command starts with `command` run. */
async function shells(command: string): Promise<number> {
  const ps = await new Deno.Command("pgrep", {
    args: ["-f", `^/bin/sh -c -- ${command}`],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(ps.stdout).trim().split("\n").filter(Boolean).length;
}

Deno.test("mcp answers every malformed line with a JSON-RPC error and keeps serving", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n" } });
  await using raw = startRaw(ws.root, join(ws.outside, "state"), [], { initialize: false });
  // A call before initialize is served (MCP asks clients not to; the approver gates it the same).
  const early = await (raw.send(callMessage(1, "read", { path: ws.path("a.txt") })), raw.answer(1));
  assertEquals(textOf(early), { text: "alpha\n", isError: false });
  await raw.send({
    jsonrpc: "2.0",
    id: 2,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "a", version: "1" },
    },
  });
  assertEquals((await raw.answer(2)).result.serverInfo.name, "rousseau");

  const deep = "[".repeat(100_000) + "]".repeat(100_000);
  const cases: [
    string | Uint8Array,
    { id: string | number | null; code: number; message: string },
  ][] = [
    ["{not json", {
      id: null,
      code: -32700,
      message: `Parse error: Expected property name or '}' in JSON at position 1 (line 1 column 2)`,
    }],
    [JSON.stringify([{ jsonrpc: "2.0", id: 3, method: "ping" }]), {
      id: null,
      code: -32600,
      message: "Invalid Request: JSON-RPC batches are not supported (MCP dropped them in " +
        "protocol version 2025-06-18); send one message per line",
    }],
    ["42", { id: null, code: -32600, message: "Invalid Request: not a JSON object" }],
    [JSON.stringify({ jsonrpc: "2.0", id: {}, method: "ping" }), {
      id: null,
      code: -32600,
      message: `Invalid Request: "id" must be a string or an integer, got {}`,
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "ping" }), {
      id: null,
      code: -32600,
      message: `Invalid Request: "id" must be a string or an integer, got 1.5`,
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: null, method: "ping" }), {
      id: null,
      code: -32600,
      message: `Invalid Request: "id" must be a string or an integer, got null`,
    }],
    [JSON.stringify({ jsonrpc: "1.0", id: 4, method: "ping" }), {
      id: 4,
      code: -32600,
      message: `Invalid Request: "jsonrpc" must be "2.0"`,
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: 5, method: 5 }), {
      id: 5,
      code: -32600,
      message: `Invalid Request: "method" must be a string`,
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: 6, method: "tools/call", params: "x" }), {
      id: 6,
      code: -32600,
      message: `Invalid Request: "params" must be an object`,
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: 7 } }), {
      id: 7,
      code: -32602,
      message: "Invalid params: tools/call needs params.name, the tool's name as a string",
    }],
    [JSON.stringify(callMessage(8, "read", [1])), {
      id: 8,
      code: -32602,
      message: "Invalid params: tools/call params.arguments must be an object, got an array",
    }],
    [JSON.stringify(callMessage("nine", "read", "x")), {
      id: "nine",
      code: -32602,
      message: "Invalid params: tools/call params.arguments must be an object, got string",
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: 10, method: "no/such/method" }), {
      id: 10,
      code: -32601,
      message: "Method not found",
    }],
    [deep, {
      id: null,
      code: -32600,
      message: "Invalid Request: JSON-RPC batches are not supported (MCP dropped them in " +
        "protocol version 2025-06-18); send one message per line",
    }],
    [
      `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"read",` +
      `"arguments":{"path":"x","deep":${deep}}}}`,
      {
        id: 11,
        code: -32600,
        message: `Invalid Request: the message nests arrays and objects deeper than ` +
          `${MCP_MAX_DEPTH} levels`,
      },
    ],
    ["\u0000\u0000", {
      id: null,
      code: -32700,
      message: `Parse error: Unexpected token '\u0000', "\u0000\u0000" is not valid JSON`,
    }],
    [new Uint8Array([0xff, 0xfe, 0x7b, 0x0a]), {
      id: null,
      code: -32700,
      message: "Parse error: the line is not valid UTF-8",
    }],
    [JSON.stringify({ jsonrpc: "2.0", id: 12, method: "ping", extra: true }), {
      id: 12,
      code: -32600,
      message: `Invalid Request: unknown member "extra"`,
    }],
    [JSON.stringify({ jsonrpc: "2.0", method: "ping", params: { _meta: "x" } }), {
      id: null,
      code: -32600,
      message: "Invalid Request: not a JSON-RPC 2.0 message MCP accepts: Invalid input",
    }],
  ];
  let ping = 1000;
  for (const [line, expected] of cases) {
    const before = raw.received.length;
    await raw.send(line);
    // The next valid call is still served, and the error (if any) came before its answer.
    await raw.send({ jsonrpc: "2.0", id: ++ping, method: "ping" });
    assertEquals((await raw.answer(ping)).result, {});
    const errors = raw.received.slice(before).filter((m) => m.error !== undefined);
    assertEquals(
      errors,
      [{
        jsonrpc: "2.0",
        id: expected.id,
        error: { code: expected.code, message: expected.message },
      }],
      typeof line === "string" ? line.slice(0, 80) : "bytes",
    );
  }
  // NUL and a lone surrogate inside a path: tool errors, never a crash.
  await raw.send(callMessage(20, "read", { path: ws.path("a\u0000.txt") }));
  assertEquals(textOf(await raw.answer(20)), {
    text: `read: open ${ws.path("a\u0000.txt")}: invalid argument`,
    isError: true,
  });
  await raw.send(callMessage(21, "read", { path: ws.path("a\ud800.txt") }));
  assertEquals(textOf(await raw.answer(21)), {
    text: `read: open ${ws.path("a\ud800.txt")}: no such file or directory`,
    isError: true,
  });
  await raw.send(callMessage(22, "nope", {}));
  assertEquals(textOf(await raw.answer(22)), { text: "unknown tool: nope", isError: true });
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  assertEquals(raw.garbage, []);
});

Deno.test("mcp skips a 100 MB line with an Invalid Request error and keeps its memory", async () => {
  await using ws = await tmpWorkspace();
  await using raw = startRaw(ws.root, join(ws.outside, "state"));
  await raw.answer("init");
  const base = await raw.peakKiB();
  const chunk = ENCODER.encode(
    `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` +
      "a".repeat(1024 * 1024 - 60),
  );
  for (let sent = 0; sent < 100 * 1024 * 1024; sent += chunk.length) await raw.write(chunk);
  await raw.send(`"}}`);
  await raw.send({ jsonrpc: "2.0", id: 2, method: "ping" });
  assertEquals((await raw.answer(2)).result, {});
  assertEquals(raw.received.filter((m) => m.error !== undefined), [{
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32600,
      message: `Invalid Request: the message is longer than ${MCP_MAX_MESSAGE_BYTES} bytes ` +
        "(the limit of rousseau mcp); send smaller messages",
    },
  }]);
  // Never held whole: the peak grew by less than the line (a server that buffers it grows by
  // at least its 100 MiB; this one holds at most the 32 MiB cap, plus what the GC lets lie).
  const grown = (await raw.peakKiB()) - base;
  assert(grown < 96 * 1024, `the server grew by ${grown} KiB for a 100 MiB line`);
  // A line just under the cap is taken whole.
  await raw.send({ jsonrpc: "2.0", id: 3, method: "ping", params: { x: "b".repeat(8 << 20) } });
  assertEquals((await raw.answer(3)).result, {});
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  assertEquals(raw.garbage, []);
});

Deno.test("mcp answers 5,000 concurrent reads once each, in bounded memory, audited", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++) files[`f${i}.txt`] = `file ${i}\n`.repeat(100 * (i + 1));
  await using ws = await tmpWorkspace({ files });
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state);
  await raw.answer("init");
  const base = await raw.peakKiB();
  const total = 5000;
  const lines = Array.from(
    { length: total },
    (_, i) => JSON.stringify(callMessage(i, "read", { path: ws.path(`f${i % 10}.txt`) })),
  );
  // All of them in one write: every call is in flight before the first answer.
  await raw.write(ENCODER.encode(lines.join("\n") + "\n"));
  await until(
    `${total} answers`,
    () => raw.received.filter((m) => typeof m.id === "number").length >= total,
    { limitMs: 180_000, state: () => rawState(raw) },
  );
  const grown = (await raw.peakKiB()) - base;
  await raw.send({ jsonrpc: "2.0", id: "last", method: "ping" });
  await raw.answer("last");
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  const answers = raw.received.filter((m) => typeof m.id === "number");
  assertEquals(answers.length, total);
  const seen = new Set<number>();
  let wrong = 0;
  for (const answer of answers) {
    assert(!seen.has(answer.id), `answered twice: ${answer.id}`);
    seen.add(answer.id);
    const got = textOf(answer);
    if (got.isError || got.text !== files[`f${answer.id % 10}.txt`]) wrong++;
  }
  assertEquals(wrong, 0);
  assertEquals(raw.garbage, []);
  assert(grown < 200 * 1024, `the server grew by ${grown} KiB`);
  const records = await verifyAudit(state);
  assertEquals(records.filter((r) => r.event === "tool.done" && r.tool === "read").length, total);
});

Deno.test("mcp answers 200 concurrent bash calls once each and leaves no process", async () => {
  await using ws = await tmpWorkspace();
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state, ["--allow", "bash"]);
  await raw.answer("init");
  const total = 200;
  const marker = `mcp-bash-storm-${crypto.randomUUID()}`;
  const lines = Array.from(
    { length: total },
    (_, i) => JSON.stringify(callMessage(i, "bash", { command: `echo ${i} # ${marker}` })),
  );
  await raw.write(ENCODER.encode(lines.join("\n") + "\n"));
  await until(
    `${total} answers`,
    () => raw.received.filter((m) => typeof m.id === "number").length >= total,
    { limitMs: 180_000, state: () => rawState(raw) },
  );
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  const answers = raw.received.filter((m) => typeof m.id === "number");
  assertEquals(answers.length, total);
  assertEquals(new Set(answers.map((m) => m.id)).size, total);
  for (const answer of answers) {
    assertEquals(textOf(answer), { text: `${answer.id}\n`, isError: false });
  }
  assertEquals(raw.garbage, []);
  assertEquals(await survivors(marker), 0);
  const records = await verifyAudit(state);
  assertEquals(records.filter((r) => r.event === "tool.done" && r.tool === "bash").length, total);
});

Deno.test("mcp cancellation stops every call it names, answers none of them, serves on", async () => {
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n" } });
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state, ["--allow", "bash"]);
  await raw.answer("init");
  const cancel = (requestId: unknown) =>
    raw.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: "storm" },
    });
  // Cancelled before it is sent: an unknown id then, so the call runs. Both lines in one write
  // (one read of stdin): the SDK acts on a cancellation a microtask late, by which time it had
  // registered the request after it, and cancelled that (found as a hang under CI's load).
  await raw.write(ENCODER.encode(
    JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: "early", reason: "storm" },
    }) + "\n" + JSON.stringify(callMessage("early", "read", { path: ws.path("a.txt") })) + "\n",
  ));
  assertEquals(textOf(await raw.answer("early")), { text: "alpha\n", isError: false });
  // Cancelled after its answer, and for ids never used: ignored.
  await cancel("early");
  for (let i = 0; i < 100; i++) await cancel(`ghost-${i}`);
  await cancel(12345);
  // Twenty long calls in flight, each cancelled; more than the running cap queue behind them.
  const marker = `mcp-cancel-storm-${crypto.randomUUID()}`;
  const ids = Array.from({ length: 40 }, (_, i) => `sleep-${i}`);
  for (const id of ids) {
    await raw.send(callMessage(id, "bash", { command: `sleep 600 # ${marker} ${id}` }));
  }
  // Cancelled once every running call's shell is up (cancels that land during the sandbox's
  // start are the next test's).
  await until(
    `${MCP_MAX_CALLS} running shells`,
    async () => (await shells(`sleep 600 # ${marker}`)) >= MCP_MAX_CALLS,
    {
      limitMs: 180_000,
      state: async () => `${await shells(`sleep 600 # ${marker}`)} shells; ${rawState(raw)}`,
    },
  );
  for (const id of ids) await cancel(id);
  // Twice, as a retrying client would.
  for (const id of ids) await cancel(id);
  await raw.send(callMessage("after", "bash", { command: "echo still here" }));
  assertEquals(textOf(await raw.answer("after")), { text: "still here\n", isError: false });
  // Forty sandboxes torn down on a loaded machine may take longer than survivors' 5 s.
  assertEquals(await gone(marker, 60), 0);
  const children = descendants(raw.pid);
  const left = [];
  for (const pid of children) {
    const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "");
    if (cmdline.includes(marker)) left.push(pid);
  }
  assertEquals(left, []);
  await raw.send({ jsonrpc: "2.0", id: "ping", method: "ping" });
  await raw.answer("ping");
  // MCP: the receiver of a cancellation sends no response for the request.
  assertEquals(raw.received.filter((m) => ids.includes(m.id)), []);
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  assertEquals(raw.garbage, []);
  await verifyAudit(state);
});

Deno.test("mcp: a bash call cancelled at any moment of its sandbox's start leaves nothing running", async () => {
  // The race the storm above steps around: a cancellation that reached the sandbox's mount
  // wrapper after it forked, before its child took its parent-death signal, left the wrapper's
  // child (and bwrap and the command under it) running for good. Cancels land from the first
  // millisecond of the start to well after the command runs.
  await using ws = await tmpWorkspace({ files: { "a.txt": "alpha\n" } });
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state, ["--allow", "bash"]);
  await raw.answer("init");
  const marker = `mcp-cancel-start-${crypto.randomUUID()}`;
  for (let i = 0; i < 40; i++) {
    const id = `start-${i}`;
    await raw.send(callMessage(id, "bash", { command: `sleep 600 # ${marker} ${id}` }));
    await new Promise((resolve) => setTimeout(resolve, (i % 20) * 8));
    await raw.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: id, reason: "start race" },
    });
  }
  await raw.send(callMessage("after", "bash", { command: "echo still here" }));
  assertEquals(textOf(await raw.answer("after")), { text: "still here\n", isError: false });
  assertEquals(await gone(marker, 60), 0);
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
});

Deno.test("mcp confines every path argument with the tools' own texts", async () => {
  await using ws = await tmpWorkspace({
    files: { "a.txt": "alpha\n", "sub/b.txt": "beta\n" },
    outside: { "secret.txt": "secret\n" },
  });
  await Deno.symlink(join(ws.outside, "secret.txt"), ws.path("link"));
  await Deno.symlink(ws.outside, ws.path("dirlink"));
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state, ["--approver", "allow_all"]);
  await raw.answer("init");
  const secret = join(ws.outside, "secret.txt");
  const dotdot = ws.path("sub", "..", "..", "outside", "secret.txt");
  const long = ws.path("x".repeat(5000));
  const cases: [string, Record<string, unknown>, string][] = [
    ["read", { path: dotdot }, `read: ${dotdot} is outside the workspace`],
    ["read", { path: ws.path("link") }, `read: ${ws.path("link")} is outside the workspace`],
    [
      "read",
      { path: ws.path("dirlink", "secret.txt") },
      `read: ${ws.path("dirlink", "secret.txt")} is outside the workspace`,
    ],
    [
      "read",
      { path: "/proc/self/root" + secret },
      `read: /proc/self/root${secret} is outside the workspace`,
    ],
    ["read", { path: "/proc/self/environ" }, "read: /proc/self/environ is outside the workspace"],
    [
      "read",
      { path: "a.txt" },
      `read: path must be absolute, got "a.txt"; use "${ws.path("a.txt")}"`,
    ],
    ["write", { path: dotdot, content: "x" }, `write: ${dotdot} is outside the workspace`],
    [
      "write",
      { path: ws.path("link"), content: "x" },
      `write: ${ws.path("link")} is outside the workspace`,
    ],
    [
      "write",
      { path: ws.path("dirlink", "new.txt"), content: "x" },
      `write: ${ws.path("dirlink", "new.txt")} is outside the workspace`,
    ],
    [
      "edit",
      { path: ws.path("link"), "old_string": "secret", "new_string": "x" },
      `edit: ${ws.path("link")} is outside the workspace`,
    ],
    [
      "edit",
      { path: dotdot, "old_string": "secret", "new_string": "x" },
      `edit: ${dotdot} is outside the workspace`,
    ],
    [
      "grep",
      { pattern: "secret", path: ws.outside },
      `grep: ${ws.outside} is outside the workspace`,
    ],
    [
      "grep",
      { pattern: "secret", path: ws.path("dirlink") },
      `grep: ${ws.path("dirlink")} is outside the workspace`,
    ],
  ];
  let id = 0;
  for (const [tool, input, expected] of cases) {
    await raw.send(callMessage(++id, tool, input));
    assertEquals(
      textOf(await raw.answer(id)),
      { text: expected, isError: true },
      `${tool} ${JSON.stringify(input).slice(0, 120)}`,
    );
  }
  // Include globs that climb out find nothing outside; a symlinked file is not followed out.
  for (const include of ["../**", "../outside/*", "/**/secret.txt", "**/*"]) {
    await raw.send(callMessage(++id, "grep", { pattern: "secret", path: ws.root, include }));
    const got = textOf(await raw.answer(id));
    assert(!got.text.includes("secret.txt:"), `${include}: ${got.text}`);
  }
  // NUL and very long paths: errors naming the path, nothing written.
  await raw.send(callMessage(++id, "write", { path: ws.path("n\u0000ul.txt"), content: "x" }));
  const nul = textOf(await raw.answer(id));
  assertEquals(nul.isError, true);
  assert(nul.text.startsWith("write: "), nul.text);
  await raw.send(callMessage(++id, "write", { path: long, content: "x" }));
  const tooLong = textOf(await raw.answer(id));
  assertEquals(tooLong.isError, true);
  assert(tooLong.text.startsWith("write: "), tooLong.text.slice(0, 200));
  await raw.send(callMessage(++id, "read", { path: long }));
  const readLong = textOf(await raw.answer(id));
  assertEquals(readLong.isError, true);
  assertEquals(await Deno.readTextFile(secret), "secret\n");
  assertEquals((await Array.fromAsync(Deno.readDir(ws.outside))).map((e) => e.name).sort(), [
    "secret.txt",
    "state",
  ]);
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  assertEquals(raw.garbage, []);
});

/**
 * Sends `total` read calls of `path` (ids 0 to total - 1), one after another, as the server
 * takes them: `sent()` counts those written so far, `done` resolves once all are.
 */
function sendReads(raw: Raw, path: string, total: number) {
  let sent = 0;
  const done = (async () => {
    for (; sent < total; sent++) await raw.send(callMessage(sent, "read", { path }));
  })();
  return { sent: () => sent, done };
}

/** Every call 0 to total - 1 was answered exactly once, none with an error, nothing else. */
function assertAnsweredOnce(raw: Raw, total: number): void {
  const answers = raw.received.filter((m) => typeof m.id === "number");
  assertEquals(new Set(answers.map((m) => m.id)).size, total, rawState(raw));
  assertEquals(answers.length, total);
  assertEquals(answers.filter((m) => textOf(m).isError), []);
  assertEquals(raw.garbage, []);
}

Deno.test("mcp stops reading when its client stops reading, in bounded memory", async () => {
  // One file of 256 KiB (read's cap): 3,000 calls answer ~750 MiB.
  await using ws = await tmpWorkspace({
    files: { "big.txt": ("x".repeat(99) + "\n").repeat(2621) },
  });
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state, [], { read: false });
  const audit = join(state, "rousseau", "audit.jsonl");
  const done = async () =>
    (await Deno.readTextFile(audit).catch(() => "")).split('"event":"tool.done"').length - 1;
  // The baseline: the server up, its worker loaded, one call answered (into the pipe).
  await raw.send(callMessage("warm", "read", { path: ws.path("big.txt") }));
  await until(
    "the first call's audit record",
    async () => (await done()) === 1,
    { limitMs: 180_000, state: () => rawState(raw) },
  );
  const base = await settled(() => raw.peakKiB());
  const total = 3000;
  const sending = sendReads(raw, ws.path("big.txt"), total);
  // The client writes until the server stops taking its lines (the 3,000 fit in the calls it
  // holds); then the server stops running calls (the audit log stops growing), its answers
  // waiting in a pipe nobody reads. A server without backpressure runs them all.
  await settled(sending.sent, 2000);
  const ran = (await settled(done, 3000)) - 1;
  const grown = (await raw.peakKiB()) - base;
  // A server that buffers every answer grows by ~750 MiB here; this one by its caps.
  assert(grown < 200 * 1024, `the server grew by ${grown} KiB (${ran} calls ran) unread`);
  assert(ran < total, `all ${total} calls ran while their answers were not read`);
  // Reading again: every call is answered, once.
  raw.startReading();
  await sending.done;
  await until(
    `${total} answers`,
    () => raw.received.filter((m) => typeof m.id === "number").length >= total,
    { limitMs: 180_000, state: () => rawState(raw) },
  );
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  assertAnsweredOnce(raw, total);
});

Deno.test("mcp answers every call read before stdin closed, also those it held back for room", async () => {
  // Calls held back while stdout was full start when it drains; one started as the last
  // running call finishes reaches its handler some microtasks later. The end of stdin must
  // wait for it too, not only for the calls already in their handlers.
  await using ws = await tmpWorkspace({
    files: { "big.txt": ("x".repeat(99) + "\n").repeat(2621) },
  });
  const state = join(ws.outside, "state");
  await using raw = startRaw(ws.root, state, [], { read: false });
  const total = 1500;
  const sending = sendReads(raw, ws.path("big.txt"), total);
  await settled(sending.sent, 2000);
  raw.startReading();
  await sending.done;
  await raw.closeStdin();
  assertEquals((await raw.status()).code, 0);
  assertAnsweredOnce(raw, total);
});

Deno.test("mcp writes an answer to a full stdout pipe whole or not at all, never waiting on it", async () => {
  // The server writes small answers at once, through its own non-blocking description of
  // the stdout pipe (openStdoutNow). A client that stops reading must leave no torn line in
  // the pipe and no server blocked in a write: a refused answer takes the asynchronous path.
  await using dir = await tmpDir("rousseau-stdout-");
  const script = join(dir.path, "writer.ts");
  const module = join(REPO, "cli", "commands", "mcp_stdio.ts");
  await Deno.writeTextFile(
    script,
    `import { openStdoutNow } from ${JSON.stringify(module)};
const now = await openStdoutNow();
if (now === undefined) {
  console.error("not a pipe");
} else {
  const line = new TextEncoder().encode("x".repeat(682) + "\\n");
  let whole = 0;
  while (now.write(line)) whole++;
  const larger = now.write(new Uint8Array(${PIPE_ATOMIC_BYTES + 1}).fill(0x79));
  now.close();
  console.error(JSON.stringify({ whole, larger }));
}
`,
  );
  const deno = [Deno.execPath(), "run", "--quiet", "--config", `${REPO}deno.json`, "-A", script];
  // Nobody reads the pipe until the writer has exited: it must not wait for room.
  const child = new Deno.Command(deno[0]!, {
    args: deno.slice(1),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  assertEquals((await child.status).code, 0, stderr);
  const { whole, larger } = JSON.parse(stderr) as { whole: number; larger: boolean };
  const out = new TextDecoder().decode(await new Response(child.stdout).arrayBuffer());
  assert(whole > 0, stderr);
  assertEquals(larger, false, "a write that a pipe may cut short is never made at once");
  assertEquals(out, ("x".repeat(682) + "\n").repeat(whole), "only whole lines reached the pipe");
  // stdout a file: not opened again (a second description would write at its own offset).
  const quoted = deno.map((a) => `'${a}'`).join(" ");
  const toFile = await new Deno.Command("sh", {
    args: ["-c", `${quoted} > '${join(dir.path, "out.txt")}'`],
    stderr: "piped",
  }).output();
  assertEquals(new TextDecoder().decode(toFile.stderr), "not a pipe\n");
  assertEquals(await Deno.readTextFile(join(dir.path, "out.txt")), "");
});

for (const how of ["stdin closed", "SIGTERM", "SIGINT"] as const) {
  Deno.test(`mcp leaves no process and a valid audit log when ${how} mid-call`, async () => {
    await using ws = await tmpWorkspace();
    const state = join(ws.outside, "state");
    await using raw = startRaw(ws.root, state, ["--allow", "bash"]);
    await raw.answer("init");
    const marker = `mcp-end-${crypto.randomUUID()}`;
    const seconds = how === "stdin closed" ? 2 : 600;
    for (let i = 0; i < 5; i++) {
      await raw.send(
        callMessage(i, "bash", { command: `sleep ${seconds}; echo ${i} # ${marker}` }),
      );
    }
    await waitForProcess(marker);
    if (how === "stdin closed") await raw.closeStdin();
    else Deno.kill(raw.pid, how);
    const status = await raw.status();
    if (how === "stdin closed") {
      // The calls already sent finish and are answered, then the server exits 0.
      assertEquals(status.code, 0);
      for (let i = 0; i < 5; i++) {
        assertEquals(textOf(await raw.answer(i)), { text: `${i}\n`, isError: false });
      }
    } else {
      assertEquals(status.signal, null, "the server handles the signal and exits by itself");
      assertEquals(status.code, how === "SIGTERM" ? 143 : 130);
    }
    assertEquals(await survivors(marker), 0);
    await raw[Symbol.asyncDispose]();
    assertEquals(raw.garbage, []);
    await verifyAudit(state);
  });
}
