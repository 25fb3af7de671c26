/**
 * The shared part of the loopback fake LLM servers: the scripted {@linkcode Step}s, the request
 * recording, and one `Deno.serve` on 127.0.0.1 that answers the model endpoint of a wire
 * {@linkcode Dialect} (`fake_anthropic.ts`, `fake_openai.ts`) step by step. A new provider
 * wire is one more dialect file beside those; tests import them through `fake_providers.ts`.
 *
 * Each POST to the model endpoint consumes the next step; a request beyond the end of the
 * script gets a 500 saying so. No timers are used: a `hang` step simply never enqueues more
 * bytes, and `close()` ends any stream still open before shutting the server down.
 *
 * @module
 */

/** A scripted tool call. `raw` replaces `JSON.stringify(input)` verbatim (malformed-JSON tests). */
export interface StepTool {
  id?: string;
  name: string;
  input?: unknown;
  raw?: string;
}

/** Provider-style error payload; `code` is OpenAI's `error.code` (defaults by status). */
export interface StepError {
  type: string;
  message: string;
  code?: string | null;
}

/** One scripted reply. */
export type Step =
  | {
    text?: string;
    tools?: StepTool[];
    /** `max_tokens` is OpenAI's `finish_reason: "length"`. */
    stop?: "end_turn" | "tool_use" | "max_tokens";
    usage?: { input: number; output: number };
    /**
     * Reasoning streamed before the text: an Anthropic `thinking` block (with `signature`,
     * default `sig_fake_<n>`), or OpenAI-compatible `reasoning_content` deltas (llama.cpp,
     * DeepSeek; `reasoningField: "reasoning"` for vLLM >= 0.10 and Ollama).
     */
    thinking?: string;
    signature?: string;
    reasoningField?: "reasoning_content" | "reasoning";
  }
  /** An HTTP error: `body` is sent verbatim; else `error` in the dialect's own error shape. */
  | { status: number; headers?: Record<string, string>; error?: StepError; body?: unknown }
  | { cut: true; text?: string }
  | { sseError: { type: string; message: string } }
  | { hang: true }
  | ((request: RecordedRequest) => Step);

/** A request the fake received. */
export interface RecordedRequest {
  readonly path: string;
  /** Lower-cased header names. */
  readonly headers: Record<string, string>;
  /** Parsed JSON body (the raw text when it was not JSON). */
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

/** A running fake provider. */
export interface FakeServer extends AsyncDisposable {
  /** Base URL for the SDK: anthropic `http://127.0.0.1:PORT`, openai `http://127.0.0.1:PORT/v1`. */
  readonly url: string;
  /** Every model request (the step-consuming POSTs), in order. */
  readonly requests: RecordedRequest[];
  /** Resolves once at least `count` model requests have arrived. */
  waitForRequest(count: number): Promise<void>;
  /** Ends open streams and stops the server; idempotent. */
  close(): Promise<void>;
}

/** A step with no function left to call. */
type Resolved = Exclude<Step, (request: RecordedRequest) => Step>;

/** A normal scripted reply. */
export type Reply = Exclude<
  Resolved,
  { status: number } | { cut: true } | { sseError: unknown } | { hang: true }
>;

/** Usage reported when a step gives none. */
export const DEFAULT_USAGE = { input: 10, output: 5 };
/** Code points per streamed text delta. */
export const TEXT_PIECE = 4;
const JSON_PIECES = 4;
const ENCODER = new TextEncoder();

/** Per-request context handed to a wire format. */
export interface Turn {
  /** 1-based request number. */
  readonly n: number;
  readonly request: RecordedRequest;
  readonly model: string;
  readonly stream: boolean;
  /** Next tool-call id number (server-wide, 1-based). */
  nextToolId(): number;
}

/** A reply body: a JSON document, or SSE frames sent one per read. */
export type Body = { json: unknown } | { frames: string[] };

/** What a provider dialect must produce. */
export interface Dialect {
  /** Path of the model endpoint (`POST`). */
  readonly modelPath: string;
  /** Suffix the SDK's base URL carries. */
  readonly urlSuffix: string;
  readonly requestIdHeader: string;
  models(): unknown;
  errorBody(turn: Turn | undefined, status: number, error: StepError): unknown;
  reply(turn: Turn, step: Reply): Body;
  /** Frames for a stream that is then cut / hangs / errors. */
  streamStart(turn: Turn, text: string | undefined): string[];
  sseErrorFrames(turn: Turn, error: { type: string; message: string }): string[];
}

/** Starts a loopback server that answers `dialect`'s model endpoint with `steps`, in order. */
export function startFakeServer(steps: Step[], dialect: Dialect): FakeServer {
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
  let toolIds = 0;
  let closing: Promise<void> | undefined;

  function notify(): void {
    for (const waiter of [...waiters]) {
      if (requests.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  /** A body that yields `frames` one per pull, then ends as `end` says. */
  function frameStream(
    frames: string[],
    end: "close" | "cut" | "hang",
  ): ReadableStream<Uint8Array> {
    let next = 0;
    let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
    return new ReadableStream<Uint8Array>({
      start(controller) {
        controllerRef = controller;
        open.add(controller);
      },
      pull(controller) {
        const frame = frames[next++];
        if (frame !== undefined) {
          controller.enqueue(ENCODER.encode(frame));
          return;
        }
        if (end === "hang") return;
        open.delete(controller);
        if (end === "cut") {
          controller.error(
            new Error(
              "fake server: connection cut on purpose (a scripted `cut` step; this trace is expected)",
            ),
          );
        } else controller.close();
      },
      cancel() {
        if (controllerRef) open.delete(controllerRef);
      },
    }, { highWaterMark: 0 });
  }

  function errorResponse(turn: Turn | undefined, status: number, error: StepError, extra = {}) {
    const headers: Record<string, string> = { "content-type": "application/json", ...extra };
    if (turn) headers[dialect.requestIdHeader] = `req_fake_${turn.n}`;
    return Response.json(dialect.errorBody(turn, status, error), { status, headers });
  }

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/v1/models") {
      return Response.json(dialect.models());
    }
    if (req.method !== "POST" || path !== dialect.modelPath) {
      return errorResponse(undefined, 404, {
        type: "not_found_error",
        message: `fake server: no route for ${req.method} ${path}`,
      });
    }
    const text = await req.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // recorded as text; answered below
    }
    const request: RecordedRequest = {
      path,
      headers: Object.fromEntries(req.headers),
      body,
    };
    requests.push(request);
    notify();
    const n = requests.length;
    const record = typeof body === "object" && body !== null ? body as Record<string, unknown> : {};
    const turn: Turn = {
      n,
      request,
      model: typeof record.model === "string" ? record.model : "fake-model",
      stream: record.stream === true,
      nextToolId: () => ++toolIds,
    };
    if (typeof body !== "object" || body === null) {
      return errorResponse(turn, 400, {
        type: "invalid_request_error",
        message: "fake server: request body is not a JSON object",
      });
    }
    const scripted = steps[n - 1];
    if (scripted === undefined) {
      return errorResponse(turn, 500, {
        type: "api_error",
        message: `fake server: script exhausted after ${steps.length} steps`,
      });
    }
    const step = resolveStep(scripted, request);
    const sse = {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      [dialect.requestIdHeader]: `req_fake_${n}`,
    };
    if ("status" in step) {
      if (step.body !== undefined) {
        return Response.json(step.body, {
          status: step.status,
          headers: {
            "content-type": "application/json",
            [dialect.requestIdHeader]: `req_fake_${n}`,
            ...step.headers,
          },
        });
      }
      return errorResponse(
        turn,
        step.status,
        step.error ?? defaultError(step.status),
        step.headers ?? {},
      );
    }
    if ("sseError" in step) {
      if (!turn.stream) return errorResponse(turn, 500, step.sseError);
      return new Response(frameStream(dialect.sseErrorFrames(turn, step.sseError), "close"), {
        headers: sse,
      });
    }
    if ("cut" in step) {
      const frames = turn.stream
        ? dialect.streamStart(turn, step.text)
        : [`{"id":"partial_${n}","content":[`];
      return new Response(frameStream(frames, "cut"), {
        headers: turn.stream ? sse : { "content-type": "application/json" },
      });
    }
    if ("hang" in step) {
      const frames = turn.stream ? dialect.streamStart(turn, undefined) : [];
      return new Response(frameStream(frames, "hang"), {
        headers: turn.stream ? sse : { "content-type": "application/json" },
      });
    }
    const reply = dialect.reply(turn, step);
    if ("json" in reply) {
      return Response.json(reply.json, { headers: { [dialect.requestIdHeader]: `req_fake_${n}` } });
    }
    return new Response(frameStream(reply.frames, "close"), { headers: sse });
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handle);

  const fake: FakeServer = {
    url: `http://127.0.0.1:${server.addr.port}${dialect.urlSuffix}`,
    requests,
    waitForRequest(count) {
      if (requests.length >= count) return Promise.resolve();
      const { promise, resolve } = Promise.withResolvers<void>();
      waiters.push({ count, resolve });
      return promise;
    },
    close() {
      closing ??= (async () => {
        for (const controller of open) {
          try {
            controller.close();
          } catch {
            // already closed or errored
          }
        }
        open.clear();
        await server.shutdown();
      })();
      return closing;
    },
    [Symbol.asyncDispose]() {
      return fake.close();
    },
  };
  return fake;
}

function resolveStep(step: Step, request: RecordedRequest): Resolved {
  let current = step;
  while (typeof current === "function") current = current(request);
  return current;
}

function defaultError(status: number): StepError {
  const types: Record<number, string> = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
  };
  return { type: types[status] ?? "api_error", message: `fake server: HTTP ${status}` };
}

/** Splits by code points into pieces of `size`. */
export function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

/** Splits a JSON text into the few partial-JSON deltas a stream carries. */
export function jsonPieces(json: string): string[] {
  const size = Math.max(1, Math.ceil(Array.from(json).length / JSON_PIECES));
  return pieces(json, size);
}

/** The arguments text of a scripted tool call (`raw` verbatim). */
export function toolArguments(tool: StepTool): string {
  return tool.raw ?? JSON.stringify(tool.input ?? {});
}

/** The stop reason of a reply: scripted, else `tool_use` when it calls tools. */
export function stopOf(step: Reply): "end_turn" | "tool_use" | "max_tokens" {
  return step.stop ?? ((step.tools?.length ?? 0) > 0 ? "tool_use" : "end_turn");
}

/** The input object of a scripted tool call (`raw` parsed when it is JSON). */
export function parsedInput(tool: StepTool): unknown {
  if (tool.raw === undefined) return tool.input ?? {};
  try {
    return JSON.parse(tool.raw);
  } catch {
    return tool.raw;
  }
}
