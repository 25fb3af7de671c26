/**
 * What a stored session row may hold, checked when it is loaded. A resumed session's messages
 * go to the model as they are, so a row that is not JSON, holds a role other than `user` or
 * `assistant` (an OpenAI-compatible server takes a `system` message in the list as a system
 * prompt), a block of an unknown kind, or fields of the wrong type, is damaged: it is named,
 * never sent, never silently dropped. The same for the context records (compactions, learned
 * windows), which decide what the model is shown.
 *
 * Nothing a row holds can change what a turn may do: the approver's rules, the roots, the
 * tools and the sandbox come from the config and the command line only.
 *
 * @module
 */

import type { ContextRecord } from "./context.ts";
import type { ContentBlock, Message } from "../providers/types.ts";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function optionalString(value: unknown): boolean {
  return value === undefined || typeof value === "string";
}

/** Why `value` is not a content block, or undefined. */
function blockFault(value: unknown): string | undefined {
  if (!isObject(value)) return "a block that is not an object";
  switch (value.type) {
    case "text":
      return typeof value.text === "string" ? undefined : "a text block without text";
    case "thinking":
      return typeof value.text === "string" && optionalString(value.signature) &&
          optionalString(value.redacted)
        ? undefined
        : "a malformed thinking block";
    case "tool_use":
      return typeof value.id === "string" && typeof value.name === "string" &&
          "input" in value && optionalString(value.inputError) && optionalString(value.rawInput)
        ? undefined
        : "a malformed tool call";
    case "tool_result":
      return typeof value.toolUseId === "string" && typeof value.content === "string" &&
          typeof value.isError === "boolean"
        ? undefined
        : "a malformed tool result";
    default:
      return `a block of unknown type ${JSON.stringify(value.type)}`;
  }
}

/** The message of a stored row; throws a `TypeError` saying what is wrong with it. */
export function messageFromRow(role: unknown, content: unknown): Message {
  if (role !== "user" && role !== "assistant") {
    throw new TypeError(`role ${JSON.stringify(role)}, want user or assistant`);
  }
  if (typeof content !== "string") throw new TypeError("its content is not text");
  let blocks: unknown;
  try {
    blocks = JSON.parse(content);
  } catch (error) {
    throw new TypeError(`not JSON: ${error instanceof Error ? error.message : error}`);
  }
  if (!Array.isArray(blocks)) throw new TypeError("its content is not a list of blocks");
  for (const block of blocks) {
    const fault = blockFault(block);
    if (fault !== undefined) throw new TypeError(fault);
  }
  return { role, content: blocks as ContentBlock[] };
}

function count(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** The context record of a stored row; throws a `TypeError` saying what is wrong with it. */
export function contextRecordFromRow(text: unknown): ContextRecord {
  let value: unknown;
  try {
    value = JSON.parse(String(text));
  } catch (error) {
    throw new TypeError(`not JSON: ${error instanceof Error ? error.message : error}`);
  }
  if (!isObject(value)) throw new TypeError("not a JSON object");
  if (value.type === "window") {
    if (count(value.at) && typeof value.model === "string" && count(value.tokens)) {
      return value as unknown as ContextRecord;
    }
    throw new TypeError("a malformed window record");
  }
  if (value.type === "compaction") {
    const summary = value.summary;
    if (
      count(value.at) && ["threshold", "overflow", "manual"].includes(value.reason as string) &&
      Array.isArray(value.elided) && value.elided.every((id) => typeof id === "string") &&
      (summary === undefined ||
        (isObject(summary) && count(summary.through) && typeof summary.text === "string")) &&
      count(value.tokensBefore) && count(value.tokensAfter)
    ) {
      return value as unknown as ContextRecord;
    }
    throw new TypeError("a malformed compaction record");
  }
  throw new TypeError(`a record of unknown type ${JSON.stringify(value.type)}`);
}
