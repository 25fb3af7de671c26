/**
 * Loopback fake LLM servers that speak the real Anthropic Messages and OpenAI Chat Completions
 * wire formats (SSE streams, error bodies, request-id headers), scripted step by step.
 *
 * Each POST to the model endpoint consumes the next {@linkcode Step}; a request beyond the end
 * of the script gets a 500 saying so. No timers are used: a `hang` step simply never enqueues
 * more bytes, and `close()` ends any stream still open before shutting the server down.
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
type Reply = Exclude<
  Resolved,
  { status: number } | { cut: true } | { sseError: unknown } | { hang: true }
>;

const DEFAULT_USAGE = { input: 10, output: 5 };
const TEXT_PIECE = 4;
const JSON_PIECES = 4;
const ENCODER = new TextEncoder();

/** Per-request context handed to a wire format. */
interface Turn {
  /** 1-based request number. */
  readonly n: number;
  readonly request: RecordedRequest;
  readonly model: string;
  readonly stream: boolean;
  /** Next tool-call id number (server-wide, 1-based). */
  nextToolId(): number;
}

/** A reply body: a JSON document, or SSE frames sent one per read. */
type Body = { json: unknown } | { frames: string[] };

/** What a provider dialect must produce. */
interface Dialect {
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

/** Starts a fake Anthropic Messages API (`POST /v1/messages`, `GET /v1/models`). */
export function startFakeAnthropic(steps: Step[]): FakeServer {
  return startFake(steps, anthropicDialect());
}

/** Starts a fake OpenAI Chat Completions API (`POST /v1/chat/completions`, `GET /v1/models`). */
export function startFakeOpenAI(steps: Step[]): FakeServer {
  return startFake(steps, openaiDialect());
}

function startFake(steps: Step[], dialect: Dialect): FakeServer {
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
function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

function jsonPieces(json: string): string[] {
  const size = Math.max(1, Math.ceil(Array.from(json).length / JSON_PIECES));
  return pieces(json, size);
}

function toolArguments(tool: StepTool): string {
  return tool.raw ?? JSON.stringify(tool.input ?? {});
}

function stopOf(step: Reply): "end_turn" | "tool_use" | "max_tokens" {
  return step.stop ?? ((step.tools?.length ?? 0) > 0 ? "tool_use" : "end_turn");
}

function parsedInput(tool: StepTool): unknown {
  if (tool.raw === undefined) return tool.input ?? {};
  try {
    return JSON.parse(tool.raw);
  } catch {
    return tool.raw;
  }
}

// ---------------------------------------------------------------- Anthropic

function anthropicDialect(): Dialect {
  function event(type: string, data: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  }
  function messageStart(turn: Turn, input: number): string {
    return event("message_start", {
      message: {
        id: `msg_fake_${turn.n}`,
        type: "message",
        role: "assistant",
        model: turn.model,
        content: [],
        "stop_reason": null,
        "stop_sequence": null,
        usage: { "input_tokens": input, "output_tokens": 1 },
      },
    });
  }
  function textBlock(index: number, text: string): string[] {
    return [
      event("content_block_start", {
        index,
        "content_block": { type: "text", text: "" },
      }),
      ...pieces(text, TEXT_PIECE).map((part) =>
        event("content_block_delta", { index, delta: { type: "text_delta", text: part } })
      ),
    ];
  }
  return {
    modelPath: "/v1/messages",
    urlSuffix: "",
    requestIdHeader: "request-id",
    models() {
      return {
        data: [{
          type: "model",
          id: "claude-fake",
          "display_name": "Claude Fake",
          "created_at": "2025-01-01T00:00:00Z",
        }],
        "has_more": false,
        "first_id": "claude-fake",
        "last_id": "claude-fake",
      };
    },
    errorBody(turn, _status, error) {
      const body: Record<string, unknown> = {
        type: "error",
        error: { type: error.type, message: error.message },
      };
      if (turn) body["request_id"] = `req_fake_${turn.n}`;
      return body;
    },
    reply(turn, step) {
      const usage = step.usage ?? DEFAULT_USAGE;
      const tools = (step.tools ?? []).map((tool) => ({
        ...tool,
        id: tool.id ?? `toolu_${turn.nextToolId()}`,
      }));
      const stop = stopOf(step);
      if (!turn.stream) {
        const content: unknown[] = [];
        if (step.text !== undefined) content.push({ type: "text", text: step.text });
        for (const tool of tools) {
          content.push({
            type: "tool_use",
            id: tool.id,
            name: tool.name,
            input: parsedInput(tool),
          });
        }
        return {
          json: {
            id: `msg_fake_${turn.n}`,
            type: "message",
            role: "assistant",
            model: turn.model,
            content,
            "stop_reason": stop,
            "stop_sequence": null,
            usage: { "input_tokens": usage.input, "output_tokens": usage.output },
          },
        };
      }
      const frames = [messageStart(turn, usage.input), event("ping", {})];
      let index = 0;
      if (step.thinking !== undefined) {
        frames.push(
          event("content_block_start", {
            index,
            "content_block": { type: "thinking", thinking: "", signature: "" },
          }),
          ...pieces(step.thinking, TEXT_PIECE).map((part) =>
            event("content_block_delta", {
              index,
              delta: { type: "thinking_delta", thinking: part },
            })
          ),
          event("content_block_delta", {
            index,
            delta: { type: "signature_delta", signature: step.signature ?? `sig_fake_${turn.n}` },
          }),
          event("content_block_stop", { index }),
        );
        index++;
      }
      if (step.text !== undefined) {
        frames.push(...textBlock(index, step.text), event("content_block_stop", { index }));
        index++;
      }
      for (const tool of tools) {
        frames.push(event("content_block_start", {
          index,
          "content_block": { type: "tool_use", id: tool.id, name: tool.name, input: {} },
        }));
        for (const part of jsonPieces(toolArguments(tool))) {
          frames.push(event("content_block_delta", {
            index,
            delta: { type: "input_json_delta", "partial_json": part },
          }));
        }
        frames.push(event("content_block_stop", { index }));
        index++;
      }
      frames.push(
        event("message_delta", {
          delta: { "stop_reason": stop, "stop_sequence": null },
          usage: { "output_tokens": usage.output },
        }),
        event("message_stop", {}),
      );
      return { frames };
    },
    streamStart(turn, text) {
      const frames = [messageStart(turn, DEFAULT_USAGE.input), event("ping", {})];
      if (text !== undefined) frames.push(...textBlock(0, text));
      return frames;
    },
    sseErrorFrames(turn, error) {
      return [
        messageStart(turn, DEFAULT_USAGE.input),
        event("error", { error: { type: error.type, message: error.message } }),
      ];
    },
  };
}

// ---------------------------------------------------------------- OpenAI

function openaiDialect(): Dialect {
  const created = Math.floor(Date.now() / 1000);
  function includeUsage(turn: Turn): boolean {
    const options = turn.request.body?.["stream_options"];
    return typeof options === "object" && options !== null && options["include_usage"] === true;
  }
  function chunk(turn: Turn, delta: Record<string, unknown>, finish: string | null): string {
    const data: Record<string, unknown> = {
      id: `chatcmpl-fake-${turn.n}`,
      object: "chat.completion.chunk",
      created,
      model: turn.model,
      choices: [{ index: 0, delta, logprobs: null, "finish_reason": finish }],
    };
    if (includeUsage(turn)) data.usage = null;
    return `data: ${JSON.stringify(data)}\n\n`;
  }
  function startFrames(turn: Turn, text: string | undefined): string[] {
    return [
      chunk(turn, { role: "assistant", content: "" }, null),
      ...pieces(text ?? "", TEXT_PIECE).map((part) => chunk(turn, { content: part }, null)),
    ];
  }
  const finishOf = { "end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length" };
  const codes: Record<number, string> = { 401: "invalid_api_key", 429: "rate_limit_exceeded" };
  return {
    modelPath: "/v1/chat/completions",
    urlSuffix: "/v1",
    requestIdHeader: "x-request-id",
    models() {
      return {
        object: "list",
        data: [{ id: "gpt-fake", object: "model", created, "owned_by": "fake" }],
      };
    },
    errorBody(_turn, status, error) {
      return {
        error: {
          message: error.message,
          type: error.type,
          param: null,
          code: error.code === undefined ? codes[status] ?? null : error.code,
        },
      };
    },
    reply(turn, step) {
      const usage = step.usage ?? DEFAULT_USAGE;
      const tools = (step.tools ?? []).map((tool) => ({
        ...tool,
        id: tool.id ?? `call_${turn.nextToolId()}`,
      }));
      const finish = finishOf[stopOf(step)];
      const usageBody = {
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
      };
      if (!turn.stream) {
        const message: Record<string, unknown> = {
          role: "assistant",
          content: step.text ?? null,
          refusal: null,
        };
        if (tools.length > 0) {
          message["tool_calls"] = tools.map((tool) => ({
            id: tool.id,
            type: "function",
            function: { name: tool.name, arguments: toolArguments(tool) },
          }));
        }
        return {
          json: {
            id: `chatcmpl-fake-${turn.n}`,
            object: "chat.completion",
            created,
            model: turn.model,
            choices: [{ index: 0, message, logprobs: null, "finish_reason": finish }],
            usage: usageBody,
          },
        };
      }
      const frames = [chunk(turn, { role: "assistant", content: "" }, null)];
      if (step.thinking !== undefined) {
        const field = step.reasoningField ?? "reasoning_content";
        frames.push(
          ...pieces(step.thinking, TEXT_PIECE).map((part) => chunk(turn, { [field]: part }, null)),
        );
      }
      frames.push(...startFrames(turn, step.text).slice(1));
      tools.forEach((tool, index) => {
        frames.push(chunk(turn, {
          "tool_calls": [{
            index,
            id: tool.id,
            type: "function",
            function: { name: tool.name, arguments: "" },
          }],
        }, null));
        for (const part of jsonPieces(toolArguments(tool))) {
          frames.push(chunk(turn, {
            "tool_calls": [{ index, function: { arguments: part } }],
          }, null));
        }
      });
      frames.push(chunk(turn, {}, finish));
      if (includeUsage(turn)) {
        frames.push(
          `data: ${
            JSON.stringify({
              id: `chatcmpl-fake-${turn.n}`,
              object: "chat.completion.chunk",
              created,
              model: turn.model,
              choices: [],
              usage: usageBody,
            })
          }\n\n`,
        );
      }
      frames.push("data: [DONE]\n\n");
      return { frames };
    },
    streamStart: startFrames,
    sseErrorFrames(turn, error) {
      return [
        chunk(turn, { role: "assistant", content: "" }, null),
        `data: ${
          JSON.stringify({
            error: { message: error.message, type: error.type, param: null, code: null },
          })
        }\n\n`,
      ];
    },
  };
}

// ---------------------------------------------------------------- real error bodies
//
// The exact bodies real servers send, as reusable steps. Each names its source.

/**
 * llama-server's answer to a prompt larger than its context (`-c`): HTTP 400 with the token
 * counts beside the message. Shape from ggml-org/llama.cpp tools/server
 * (`server_task_result_error::to_json` adds `n_prompt_tokens` and `n_ctx` for
 * ERROR_TYPE_EXCEED_CONTEXT_SIZE); the message is the current wording (older builds said
 * "request (N tokens) exceeds the available context size (M tokens), try increasing it").
 */
export function llamaCppContextOverflow(nPromptTokens: number, nCtx = 4096): Step {
  return {
    status: 400,
    body: {
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it",
        type: "exceed_context_size_error",
        "n_prompt_tokens": nPromptTokens,
        "n_ctx": nCtx,
      },
    },
  };
}

/**
 * llama-server while its model loads: `503 {"error":{"code":503,"message":"Loading model",
 * "type":"unavailable_error"}}` (quoted in mostlygeek/llama-swap#146).
 */
export function llamaCppLoadingModel(): Step {
  return {
    status: 503,
    body: { error: { code: 503, message: "Loading model", type: "unavailable_error" } },
  };
}

/**
 * llama-server started without `--jinja` (or with `--no-jinja`), to any request carrying
 * `tools`: a 500 that never goes away (ggml-org/llama.cpp `oaicompat_chat_params_parse`).
 */
export function llamaCppNoJinja(): Step {
  return {
    status: 500,
    body: {
      error: { code: 500, message: "tools param requires --jinja flag", type: "server_error" },
    },
  };
}

/**
 * vLLM started without `--enable-auto-tool-choice --tool-call-parser`, to a request with
 * tools: 400 in vLLM's error shape (`type` "BadRequestError", numeric `code`).
 */
export function vllmNoToolParser(): Step {
  return {
    status: 400,
    body: {
      error: {
        message:
          '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    },
  };
}

/**
 * OpenAI's answer to a prompt over the model's window: 400 `context_length_exceeded`, with
 * the window in the message ("This model's maximum context length is <max> tokens").
 */
export function openAiContextLengthExceeded(requested: number, max = 128000): Step {
  return {
    status: 400,
    body: {
      error: {
        message: `This model's maximum context length is ${max} tokens. However, your messages ` +
          `resulted in ${requested} tokens. Please reduce the length of the messages.`,
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    },
  };
}

/** OpenAI's unknown model: 404 `model_not_found`. */
export function openAiModelNotFound(model: string): Step {
  return {
    status: 404,
    body: {
      error: {
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
        type: "invalid_request_error",
        param: null,
        code: "model_not_found",
      },
    },
  };
}

/**
 * Ollama's OpenAI-compatible answer for a model that was never pulled: 404
 * `model "<name>" not found, try pulling it first`.
 */
export function ollamaModelNotFound(model: string): Step {
  return {
    status: 404,
    body: {
      error: {
        message: `model "${model}" not found, try pulling it first`,
        type: "api_error",
        param: null,
        code: null,
      },
    },
  };
}

/** Ollama, for a model without tool support: 400 `<model> does not support tools`. */
export function ollamaNoTools(model: string): Step {
  return {
    status: 400,
    body: {
      error: {
        message: `registry.ollama.ai/library/${model} does not support tools`,
        type: "api_error",
        param: null,
        code: null,
      },
    },
  };
}

/**
 * Anthropic's answer to a prompt over the window: 400 `invalid_request_error`
 * "prompt is too long: <n> tokens > <max> maximum", with the request id in the body.
 */
export function anthropicPromptTooLong(tokens: number, max = 200000): Step {
  return {
    status: 400,
    error: {
      type: "invalid_request_error",
      message: `prompt is too long: ${tokens} tokens > ${max} maximum`,
    },
  };
}

/** Anthropic overloaded: 529 `overloaded_error` "Overloaded". */
export function anthropicOverloaded(retryAfter = "0"): Step {
  return {
    status: 529,
    headers: { "retry-after": retryAfter },
    error: { type: "overloaded_error", message: "Overloaded" },
  };
}
