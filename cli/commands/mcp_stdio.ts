/**
 * The stdio transport of `rousseau mcp`: one JSON-RPC message per line in, one per line out,
 * with bounded memory whatever the client sends or fails to read.
 *
 * Why not the SDK's `StdioServerTransport`: it reads stdin as fast as it comes and queues
 * every answer in the stdout stream's buffer, so a client that sends calls without reading
 * the answers grows the server without limit (1,500 reads of a 256 KiB file took it from
 * 93 MB to 326 MB resident); a line over its 10 MB buffer closes the whole connection
 * without a word; and a line that is not JSON, a batch, or a request with a bad id is
 * dropped with no answer, so the client waits for ever.
 *
 * Here:
 * - A line longer than {@linkcode MCP_MAX_MESSAGE_BYTES} is skipped up to its newline (never
 *   held whole) and answered with an Invalid Request error; the next line is served.
 * - A line that is not UTF-8 or not JSON gets a Parse error (-32700), a batch or anything that
 *   is not a JSON-RPC 2.0 message an Invalid Request (-32600), with the request's id when it
 *   has a usable one and `null` otherwise (JSON-RPC 2.0, section 5).
 * - Backpressure: at most `maxRunning` tool calls run at once; calls read beyond them wait,
 *   up to {@linkcode MCP_HELD_BYTES}, and stdin is read only while fewer than that wait and
 *   fewer than {@linkcode MCP_OUTPUT_HIGH_WATER} bytes of answers wait for stdout. A client
 *   that stops reading stops the server reading; memory stays bounded by those caps.
 *   Notifications (a cancellation) pass the waiting calls.
 * - An answer of at most {@linkcode PIPE_ATOMIC_BYTES} bytes, with none waiting before it, is
 *   written at once on this thread when stdout is a pipe ({@linkcode openStdoutNow}): an
 *   asynchronous write goes through another thread and back, which cost more than the rest
 *   of a small call's answer. A full pipe refuses it whole, and it takes the asynchronous
 *   path like any other: the server never blocks on a client that does not read.
 *
 * @module
 */

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** The longest line (one message, newline excluded) the server takes: 32 MiB. */
export const MCP_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** How deep a message may nest arrays and objects; tool inputs are flat, 64 is ample. */
export const MCP_MAX_DEPTH = 64;

/** Bytes of answers waiting for stdout above which the server stops reading stdin: 4 MiB. */
export const MCP_OUTPUT_HIGH_WATER = 4 * 1024 * 1024;

/**
 * Bytes of tool calls read while {@linkcode StdioOptions.maxRunning} calls run, held until one
 * finishes: 16 MiB. Reading goes on until then, so a `notifications/cancelled` behind them
 * still arrives (it also drops a held call it names); past it, stdin waits.
 */
export const MCP_HELD_BYTES = 16 * 1024 * 1024;

/**
 * The longest write a pipe takes whole or not at all (POSIX `PIPE_BUF`, 4096 on Linux): a
 * non-blocking write of this many bytes or fewer is never cut short.
 */
export const PIPE_ATOMIC_BYTES = 4096;

/** JSON-RPC 2.0 error codes used here. */
export const JSONRPC_ERROR = {
  parse: -32700,
  invalidRequest: -32600,
  invalidParams: -32602,
} as const;

/** What the transport needs from the server around it. */
export interface StdioOptions {
  /** How many tool calls run now (entered their handler and not finished). */
  readonly running: () => number;
  /** At most this many tool calls run at once; later ones wait (see MCP_HELD_BYTES). */
  readonly maxRunning: number;
  /** Methods whose requests count as tool calls (`tools/call`). */
  readonly calls: ReadonlySet<string>;
  /**
   * Checks a request's params before it reaches the SDK (whose own schema failure answers
   * with an Internal error and a dump of its validator): a string is sent back as an
   * Invalid params error (-32602).
   */
  readonly checkParams?: (method: string, params: unknown) => string | undefined;
  /**
   * Writes a message of at most {@linkcode PIPE_ATOMIC_BYTES} bytes to the output at once,
   * without waiting: true when it is written whole, false when the output has no room now
   * (nothing written). Throws when the output is gone. Absent: every answer is written
   * asynchronously. See {@linkcode openStdoutNow}.
   */
  readonly writeNow?: (bytes: Uint8Array) => boolean;
}

/** A way to write stdout without waiting, and its release (see {@linkcode openStdoutNow}). */
export interface StdoutNow {
  readonly write: (bytes: Uint8Array) => boolean;
  close(): void;
}

/**
 * Opens stdout again, non-blocking, when it is a pipe (Linux): a file description of the
 * same pipe that is this process's own, so the flag changes nothing for the process at the
 * other end or for fd 1 (the asynchronous path still writes there, blocking on its thread).
 * A write of at most {@linkcode PIPE_ATOMIC_BYTES} bytes to it lands whole or fails with
 * EAGAIN having written nothing, so answers never interleave or tear. Undefined (every
 * answer written asynchronously) when stdout is not a pipe (a file, a terminal, a socket) or
 * cannot be opened so.
 */
export async function openStdoutNow(): Promise<StdoutNow | undefined> {
  // Node's fs layer: Deno's own open takes no O_NONBLOCK. Loaded here, by `mcp` only.
  const { closeSync, constants, fstatSync, openSync, writeSync } = await import("node:fs");
  let fd: number;
  try {
    if (Deno.build.os !== "linux" || !fstatSync(1).isFIFO()) return undefined;
    fd = openSync("/proc/self/fd/1", constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  let open = true;
  return {
    write(bytes) {
      if (!open || bytes.length > PIPE_ATOMIC_BYTES) return false;
      try {
        // Whole or nothing (see PIPE_ATOMIC_BYTES); Node's writeSync retries a short write,
        // which is why only atomic sizes come here.
        writeSync(fd, bytes);
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code === "EAGAIN") return false;
        throw error;
      }
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

type Id = string | number;

/**
 * A byte source read into a buffer of the caller's (`Deno.stdin`): each read is one system
 * call's worth, with none of a stream's queueing, per chunk, on top.
 */
export interface ByteReader {
  read(into: Uint8Array): Promise<number | null>;
}

/** Bytes a read from a {@linkcode ByteReader} asks for at most. */
const READ_BYTES = 64 * 1024;

const DECODER = new TextDecoder("utf-8", { fatal: true });
const ENCODER = new TextEncoder();
const NEWLINE = 0x0a;

/** A line-delimited JSON-RPC transport over a byte stream in and a writer out. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: ReadableStream<Uint8Array> | ByteReader;
  readonly #output: { write(bytes: Uint8Array): Promise<number> };
  readonly #options: StdioOptions;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #closed = false;
  /** Bytes of answers handed to `send` and not yet written. */
  #queued = 0;
  #writing: Promise<void> = Promise.resolve();
  /**
   * Tool calls handed to the server that have not yet entered their handler (and so are not
   * in `running`), by {@linkcode idKey}: each leaves when its handler says it started, when
   * its answer is sent (a call the SDK refused), or when it is cancelled.
   */
  #starting = new Set<string>();
  #wake: (() => void) | undefined;
  /** Tool calls read while the running cap was reached, oldest first, with their sizes. */
  #held: { message: JSONRPCMessage; id: Id; size: number }[] = [];
  #heldBytes = 0;
  /**
   * Requests handed to the server and not yet answered, by {@linkcode idKey}. The SDK acts on a
   * cancellation a microtask after it is handed on, and registers a request at once: a
   * cancellation read before a request with the same id (in one chunk of stdin) would cancel
   * that later request. A cancellation naming no open request is therefore dropped here.
   */
  #open = new Set<string>();
  #draining = false;
  readonly #ended = Promise.withResolvers<void>();

  /**
   * `input` is a stream, or a reader read straight into one buffer of the transport's (for
   * stdin, whose stream costs more per chunk than the line it carries).
   */
  constructor(
    input: ReadableStream<Uint8Array> | ByteReader,
    output: { write(bytes: Uint8Array): Promise<number> },
    options: StdioOptions,
  ) {
    this.#input = input;
    this.#output = output;
    this.#options = options;
  }

  /** Resolves when the input ended (the client closed its end) or the transport closed. */
  get ended(): Promise<void> {
    return this.#ended.promise;
  }

  /** How many tool calls wait for room to start. */
  get held(): number {
    return this.#held.length;
  }

  /**
   * How many requests are read and not yet answered: held, or handed to the server (which
   * starts their handlers some microtasks later, so the server's own count lags behind this).
   * A cancelled request leaves the count when its cancellation is handed on (it gets no
   * answer); once the transport is closed nothing more can be answered, and this is 0.
   */
  get unanswered(): number {
    return this.#closed ? 0 : this.#held.length + this.#open.size;
  }

  /** Resolves when every answer sent so far is written. */
  flushed(): Promise<void> {
    return this.#writing;
  }

  /**
   * Tells the transport the tool call `id` entered its handler and counts in `running` now.
   * Called by the handler once it counts the call, not before.
   */
  started(id: unknown): void {
    this.#starting.delete(idKey(id));
  }

  /** Tells the reader a tool call finished: held calls may start, stdin may be read again. */
  wake(): void {
    this.#drain();
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  start(): Promise<void> {
    if (this.#input instanceof ReadableStream) this.#reader = this.#input.getReader();
    this.#read().then(
      () => this.#ended.resolve(),
      (error) => {
        if (!this.#closed) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        }
        this.#ended.resolve();
      },
    );
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (!("method" in message) && "id" in message) {
      this.#open.delete(idKey(message.id));
      this.#starting.delete(idKey(message.id));
    }
    const bytes = ENCODER.encode(JSON.stringify(message) + "\n");
    // Nothing waits to be written before it: a small answer goes out now, in order.
    const now = this.#options.writeNow;
    if (now !== undefined && this.#queued === 0 && bytes.length <= PIPE_ATOMIC_BYTES) {
      try {
        if (now(bytes)) return Promise.resolve();
      } catch (error) {
        // The client's end is gone (a broken pipe): nothing more can reach it.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        void this.close();
        return Promise.resolve();
      }
    }
    this.#queued += bytes.length;
    const written = this.#writing.then(async () => {
      try {
        if (this.#closed) return;
        let at = 0;
        while (at < bytes.length) at += await this.#output.write(bytes.subarray(at));
      } catch (error) {
        // The client's end is gone (a broken pipe): nothing more can reach it.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        void this.close();
      } finally {
        this.#queued -= bytes.length;
        this.wake();
      }
    });
    this.#writing = written;
    return written;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.wake();
    await this.#reader?.cancel().catch(() => {});
    this.#ended.resolve();
    this.onclose?.();
  }

  /** Waits until stdin may be read: few enough answers queued and calls held. */
  async #admit(): Promise<void> {
    while (
      !this.#closed &&
      (this.#queued >= MCP_OUTPUT_HIGH_WATER || this.#heldBytes >= MCP_HELD_BYTES)
    ) {
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  /** Whether another tool call may start now: room among the running, and stdout keeps up. */
  #room(): boolean {
    return this.#options.running() + this.#starting.size < this.#options.maxRunning &&
      this.#queued < MCP_OUTPUT_HIGH_WATER;
  }

  /**
   * Counts a tool call handed to the server: it enters its handler (and `running`) a few
   * microtasks later, so it counts here until then (see {@linkcode started}).
   */
  #dispatched(id: Id): void {
    this.#starting.add(idKey(id));
  }

  /** Starts held calls while there is room, oldest first. */
  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#held.length > 0 && !this.#closed) {
        // Without room: a finished call (wake) or the settling turn drains again.
        if (!this.#room()) return;
        const next = this.#held.shift()!;
        this.#heldBytes -= next.size;
        this.#dispatched(next.id);
        this.#deliver(next.message);
      }
    } finally {
      this.#draining = false;
      // Held bytes went down: the reader may go on.
      const wake = this.#wake;
      this.#wake = undefined;
      wake?.();
    }
  }

  #deliver(message: JSONRPCMessage): void {
    if ("method" in message && "id" in message) this.#open.add(idKey(message.id));
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /**
   * The next chunk of input, or undefined at its end. From a {@linkcode ByteReader}, a view
   * of `buffer`, which the next read overwrites: what is kept past it must be copied.
   */
  async #next(buffer: Uint8Array): Promise<Uint8Array | undefined> {
    if (this.#reader !== undefined) {
      const { value, done } = await this.#reader.read();
      return done ? undefined : value;
    }
    const n = await (this.#input as ByteReader).read(buffer);
    return n === null ? undefined : buffer.subarray(0, n);
  }

  async #read(): Promise<void> {
    /** Where a ByteReader's chunks are read into; unused with a stream. */
    const buffer = new Uint8Array(this.#reader === undefined ? READ_BYTES : 0);
    /** Whether a chunk is a view of `buffer` (a piece of a line kept past it is copied). */
    const reused = this.#reader === undefined;
    /** The pieces of the line read so far, and their length. */
    let parts: Uint8Array[] = [];
    let size = 0;
    /** The current line is over the cap: its bytes are dropped until its newline. */
    let skipping = false;
    for (;;) {
      await this.#admit();
      if (this.#closed) return;
      const value = await this.#next(buffer);
      if (value === undefined || this.#closed) break;
      let from = 0;
      while (from < value.length) {
        const newline = value.indexOf(NEWLINE, from);
        const end = newline === -1 ? value.length : newline;
        if (!skipping) {
          if (size + end - from > MCP_MAX_MESSAGE_BYTES) {
            skipping = true;
            parts = [];
            size = 0;
          } else if (end > from) {
            // A line going on past this chunk keeps a copy of its piece (see #next).
            parts.push(
              reused && newline === -1 ? value.slice(from, end) : value.subarray(from, end),
            );
            size += end - from;
          }
        }
        if (newline === -1) break;
        from = newline + 1;
        if (skipping) {
          skipping = false;
          this.#reject(
            null,
            JSONRPC_ERROR.invalidRequest,
            `Invalid Request: the message is longer than ${MCP_MAX_MESSAGE_BYTES} bytes ` +
              `(the limit of rousseau mcp); send smaller messages`,
          );
        } else {
          const line = join(parts, size);
          parts = [];
          size = 0;
          this.#line(line);
        }
        if (this.#queued >= MCP_OUTPUT_HIGH_WATER || this.#heldBytes >= MCP_HELD_BYTES) {
          await this.#admit();
        }
        if (this.#closed) return;
      }
    }
    // A last line without its newline is still a message.
    if (skipping) {
      this.#reject(
        null,
        JSONRPC_ERROR.invalidRequest,
        `Invalid Request: the message is longer than ${MCP_MAX_MESSAGE_BYTES} bytes ` +
          `(the limit of rousseau mcp); send smaller messages`,
      );
    } else if (size > 0) this.#line(join(parts, size));
  }

  /** Decodes, checks and hands on one line; answers what cannot be handed on. */
  #line(bytes: Uint8Array): void {
    let text: string;
    try {
      text = DECODER.decode(bytes);
    } catch {
      this.#reject(null, JSONRPC_ERROR.parse, "Parse error: the line is not valid UTF-8");
      return;
    }
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.#reject(
        null,
        JSONRPC_ERROR.parse,
        `Parse error: ${error instanceof Error ? error.message : String(error)}`,
      );
      return;
    }
    if (Array.isArray(value)) {
      this.#reject(
        null,
        JSONRPC_ERROR.invalidRequest,
        "Invalid Request: JSON-RPC batches are not supported (MCP dropped them in protocol " +
          "version 2025-06-18); send one message per line",
      );
      return;
    }
    if (typeof value !== "object" || value === null) {
      this.#reject(null, JSONRPC_ERROR.invalidRequest, "Invalid Request: not a JSON object");
      return;
    }
    const message = value as Record<string, unknown>;
    const id = usableId(message.id);
    const problem = shapeProblem(message) ??
      (nestsDeeper(message, MCP_MAX_DEPTH)
        ? `the message nests arrays and objects deeper than ${MCP_MAX_DEPTH} levels`
        : plainRequest(message)
        ? undefined
        : schemaProblem(message));
    if (problem !== undefined) {
      this.#reject(id, JSONRPC_ERROR.invalidRequest, `Invalid Request: ${problem}`);
      return;
    }
    const method = message.method;
    if (typeof method === "string" && id !== null) {
      const bad = this.#options.checkParams?.(method, message.params);
      if (bad !== undefined) {
        this.#reject(id, JSONRPC_ERROR.invalidParams, `Invalid params: ${bad}`);
        return;
      }
      if (this.#options.calls.has(method)) {
        if (this.#held.length > 0 || !this.#room()) {
          this.#held.push({ message: message as JSONRPCMessage, id, size: bytes.length });
          this.#heldBytes += bytes.length;
          this.#drain();
          return;
        }
        this.#dispatched(id);
      }
    } else if (method === "notifications/cancelled") {
      // A held call that is cancelled never starts, and gets no answer (as a running one).
      // One naming no request read before it (never sent, answered, or cancelled already)
      // is ignored, as MCP asks; it must not reach a later request that reuses the id.
      const named = (message.params as { requestId?: unknown } | undefined)?.requestId;
      const at = this.#held.findIndex((h) => h.id === named);
      if (at !== -1) {
        this.#heldBytes -= this.#held[at]!.size;
        this.#held.splice(at, 1);
      }
      if (!this.#open.delete(idKey(named))) return;
      // A cancelled call may never reach its handler nor be answered: it counts no more.
      if (this.#starting.delete(idKey(named))) this.#drain();
    }
    this.#deliver(message as JSONRPCMessage);
  }

  #reject(id: Id | null, code: number, message: string): void {
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }
}

function join(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const line = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    line.set(part, at);
    at += part.length;
  }
  return line;
}

/** A request id as a set key: `1` and `"1"` are different requests. */
function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** A JSON-RPC id the answer can carry: a string or an integer (MCP forbids null). */
function usableId(id: unknown): Id | null {
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null;
}

/** What makes `message` no JSON-RPC 2.0 message MCP accepts, in words; undefined if nothing. */
function shapeProblem(message: Record<string, unknown>): string | undefined {
  if (message.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0"`;
  if ("id" in message && usableId(message.id) === null) {
    return `"id" must be a string or an integer, got ${JSON.stringify(message.id) ?? "nothing"}`;
  }
  if ("method" in message) {
    if (typeof message.method !== "string") return `"method" must be a string`;
    if (
      "params" in message &&
      (typeof message.params !== "object" || message.params === null ||
        Array.isArray(message.params))
    ) {
      return `"params" must be an object`;
    }
    const extra = Object.keys(message).filter((k) =>
      !["jsonrpc", "id", "method", "params"].includes(k)
    );
    if (extra.length > 0) return `unknown member ${JSON.stringify(extra[0])}`;
    return undefined;
  }
  if (!("id" in message)) return `a message needs "method" (a request or notification) or "id"`;
  const hasResult = "result" in message;
  const hasError = "error" in message;
  if (hasResult === hasError) return `a response carries exactly one of "result" and "error"`;
  if (hasResult && (typeof message.result !== "object" || message.result === null)) {
    return `"result" must be an object`;
  }
  if (hasError) {
    const error = message.error as Record<string, unknown> | null;
    if (
      typeof error !== "object" || error === null || !Number.isInteger(error.code) ||
      typeof error.message !== "string"
    ) {
      return `"error" must be an object with an integer "code" and a string "message"`;
    }
  }
  return undefined;
}

/**
 * Whether `message`, which passed {@linkcode shapeProblem}, is a request without `params._meta`:
 * then the SDK's schema has nothing left to find (its request is exactly `jsonrpc`, an `id`
 * that is a string or an integer, a string `method` and an object `params`, all checked
 * already; only `_meta` has a shape of its own), and its parse, the costliest step of a small
 * call's line, is skipped.
 */
function plainRequest(message: Record<string, unknown>): boolean {
  if (!("method" in message) || !("id" in message)) return false;
  const params = message.params;
  return params === undefined || !Object.hasOwn(params as object, "_meta");
}

/** What the SDK's own message schema finds wrong with `message` (a backstop for the rest). */
function schemaProblem(message: Record<string, unknown>): string | undefined {
  const parsed = JSONRPCMessageSchema.safeParse(message);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
  return `not a JSON-RPC 2.0 message MCP accepts${where}: ${issue?.message ?? "invalid"}`;
}

/** Whether `value` nests arrays and objects deeper than `limit` (walked without recursion). */
function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
