/**
 * The Anthropic Messages wire for the loopback fake server (`fake_server.ts`): `POST
 * /v1/messages` as JSON or as the SSE event stream (thinking, text and tool_use blocks,
 * `request-id` headers, `{"type":"error"}` bodies), `GET /v1/models`, and the exact error
 * bodies Anthropic sends, as reusable steps.
 *
 * @module
 */

import {
  DEFAULT_USAGE,
  type Dialect,
  type FakeServer,
  jsonPieces,
  parsedInput,
  pieces,
  startFakeServer,
  type Step,
  stopOf,
  TEXT_PIECE,
  toolArguments,
  type Turn,
} from "./fake_server.ts";

/** Starts a fake Anthropic Messages API (`POST /v1/messages`, `GET /v1/models`). */
export function startFakeAnthropic(steps: Step[]): FakeServer {
  return startFakeServer(steps, anthropicDialect());
}

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

// ---------------------------------------------------------------- real error bodies
//
// The exact bodies Anthropic sends, as reusable steps.

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
