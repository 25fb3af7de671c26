/**
 * The OpenAI Chat Completions wire for the loopback fake server (`fake_server.ts`), as OpenAI
 * and the OpenAI-compatible servers (llama.cpp's llama-server, vLLM, Ollama) speak it: `POST
 * /v1/chat/completions` as JSON or as `data:` chunks (reasoning deltas, tool-call deltas, the
 * usage chunk, `[DONE]`), `GET /v1/models`, and the exact error bodies those servers send, as
 * reusable steps.
 *
 * @module
 */

import {
  DEFAULT_USAGE,
  type Dialect,
  type FakeServer,
  jsonPieces,
  pieces,
  startFakeServer,
  type Step,
  stopOf,
  TEXT_PIECE,
  toolArguments,
  type Turn,
} from "./fake_server.ts";

/** Starts a fake OpenAI Chat Completions API (`POST /v1/chat/completions`, `GET /v1/models`). */
export function startFakeOpenAI(steps: Step[]): FakeServer {
  return startFakeServer(steps, openaiDialect());
}

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
