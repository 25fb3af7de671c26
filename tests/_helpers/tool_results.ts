/**
 * What a fake model was sent back: the tool results in one of its recorded requests, read
 * from either wire format (Anthropic `tool_result` blocks, OpenAI `role: "tool"` messages).
 *
 * @module
 */

import type { RecordedRequest } from "./fake_providers.ts";

/** One tool result as the model received it. */
export interface SentResult {
  readonly text: string;
  readonly isError: boolean;
}

/** The tool results in request `i` (none when there was no such request), in message order. */
export function toolResults(
  server: { readonly requests: readonly RecordedRequest[] },
  i: number,
): SentResult[] {
  const out: SentResult[] = [];
  for (const message of server.requests[i]?.body.messages ?? []) {
    // The OpenAI wire carries no error flag: its errors are told in the text.
    if (message.role === "tool") out.push({ text: message.content, isError: false });
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === "tool_result") {
        out.push({ text: String(block.content), isError: block.is_error === true });
      }
    }
  }
  return out;
}
