/**
 * The parts of chat that need no terminal: the bracketed-paste splitter, the markdown block
 * boundaries, the price table, the retry label and the prompt history file.
 */

import { assertEquals } from "../../_helpers/assert.ts";
import { pasteSplitter } from "../../../cli/terminal/chat_input.ts";
import {
  completeBlocks,
  markdownRenderer,
  markdownStream,
} from "../../../cli/terminal/markdown.ts";
import { costOf, priceOf } from "../../../cli/terminal/prices.ts";
import { HISTORY_LINES, loadHistory, retryLabel } from "../../../cli/commands/chat.ts";

Deno.test("pasteSplitter: a paste split across chunks, markers included, arrives whole", () => {
  const typed: string[] = [];
  const pasted: string[] = [];
  const feed = pasteSplitter((t) => typed.push(t), (p) => pasted.push(p));
  for (const chunk of ["ab\x1b[2", "00~one\r", "two\rthr", "ee\r\x1b[20", "1~cd"]) feed(chunk);
  assertEquals(pasted, ["one\ntwo\nthree\n"]);
  assertEquals(typed.join(""), "abcd");
  // An escape that is not a paste marker (an arrow key) passes through once complete.
  feed("\x1b[A");
  assertEquals(typed.join(""), "abcd\x1b[A");
});

Deno.test("completeBlocks: a blank line ends a block, except inside a code fence", () => {
  assertEquals(completeBlocks("one\n\ntw"), 5);
  assertEquals(completeBlocks("no blank line yet\n"), 0);
  assertEquals(completeBlocks("```\ncode\n\nmore\n"), 0);
  assertEquals(completeBlocks("```\ncode\n\nmore\n```\n\nafter"), 20);
});

Deno.test("markdownStream: blocks come out as they complete, separated by one blank line", () => {
  const out: string[] = [];
  const stream = markdownStream(
    markdownRenderer({ color: false, width: () => 80 }),
    (t) => out.push(t),
  );
  stream.push("First para");
  assertEquals(out, []);
  stream.push("graph.\n\n- a\n");
  assertEquals(out, ["First paragraph.\n"]);
  stream.push("- b");
  stream.flush();
  assertEquals(out.join(""), "First paragraph.\n\n- a\n- b\n");
});

Deno.test("prices: dated snapshots take their family's price; unknown models have none", () => {
  assertEquals(priceOf("claude-sonnet-4-5-20250929"), priceOf("claude-sonnet-4-5"));
  assertEquals(priceOf("gpt-4.1-mini")?.input, 0.4);
  assertEquals(priceOf("qwen3"), undefined);
  assertEquals(priceOf("gpt-4.1-turbo"), undefined);
  const usage = {
    inputTokens: 1_000_000,
    outputTokens: 1_000_000,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  assertEquals(costOf("claude-sonnet-4-5", usage), 18);
  assertEquals(costOf("llama", usage), undefined);
});

Deno.test("retryLabel: the status when there is one, else the reason's start", () => {
  assertEquals(retryLabel(2000, "anthropic: rate limited; status 429"), "retrying in 2s (429)");
  assertEquals(retryLabel(400, "openai: connection reset"), "retrying in 1s (connection reset)");
});

Deno.test("loadHistory: chat_history is cut back to the newest prompts instead of growing forever", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rousseau-history-" });
  try {
    const path = `${dir}/chat_history`;
    const prompts = Array.from({ length: 2 * HISTORY_LINES + 1 }, (_, i) => `prompt ${i}`);
    await Deno.writeTextFile(path, prompts.join("\n") + "\n");
    const loaded = await loadHistory(path);
    assertEquals(loaded.length, HISTORY_LINES);
    assertEquals(loaded[0], `prompt ${2 * HISTORY_LINES}`);
    const kept = (await Deno.readTextFile(path)).trimEnd().split("\n");
    assertEquals(kept, prompts.slice(-HISTORY_LINES));
    // Below twice the kept lines the file is left as it is.
    await Deno.writeTextFile(path, prompts.slice(0, 600).join("\n") + "\n");
    await loadHistory(path);
    assertEquals((await Deno.readTextFile(path)).trimEnd().split("\n").length, 600);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
