/**
 * An in-process provider that replays scripted replies and records every request, for loop
 * tests that need no HTTP.
 *
 * @module
 */

import type {
  CompletionRequest,
  ContentBlock,
  Provider,
  StopReason,
  StreamEvent,
} from "../../providers/types.ts";

/** One scripted reply, or a function computing it from the request. */
export type Reply =
  | {
    text?: string;
    tools?: { id?: string; name: string; input?: unknown; inputError?: string }[];
    stop?: StopReason;
  }
  | { error: Error }
  | { hang: true }
  | ((request: CompletionRequest) => Reply);

/** The provider and what it saw. */
export interface ScriptedProvider extends Provider {
  /** Requests, with the messages copied as they were at call time. */
  readonly requests: CompletionRequest[];
}

/** Replays `replies` in order; past the end it throws. */
export function scriptedProvider(replies: Reply[]): ScriptedProvider {
  const requests: CompletionRequest[] = [];
  let n = 0;
  return {
    name: "scripted",
    model: "scripted-1",
    requests,
    async *complete(request, signal): AsyncGenerator<StreamEvent> {
      requests.push(structuredClone(request));
      let reply = replies[n++];
      if (reply === undefined) throw new Error(`scripted: no reply left after ${n - 1}`);
      while (typeof reply === "function") reply = reply(request);
      if ("error" in reply) throw reply.error;
      if ("hang" in reply) {
        await new Promise((_, reject) => {
          if (signal.aborted) reject(signal.reason);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
        return;
      }
      const content: ContentBlock[] = [];
      if (reply.text) {
        for (const part of reply.text.match(/.{1,4}/gs) ?? []) yield { type: "text", text: part };
        content.push({ type: "text", text: reply.text });
      }
      for (const [i, tool] of (reply.tools ?? []).entries()) {
        const id = tool.id ?? `toolu_${n}_${i}`;
        yield { type: "tool_use_start", id, name: tool.name };
        content.push({
          type: "tool_use",
          id,
          name: tool.name,
          input: tool.input ?? {},
          ...(tool.inputError === undefined ? {} : { inputError: tool.inputError }),
        });
      }
      yield {
        type: "message",
        message: { role: "assistant", content },
        stopReason: reply.stop ?? (reply.tools?.length ? "tool_use" : "end_turn"),
        usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
      };
    },
  };
}
