/**
 * `doctor --online`'s real request: one tiny completion that offers a tool, through the same
 * provider `run` uses, without retries. A model list that answers proves little — a
 * llama-server without `--jinja` lists its model and then refuses every request with tools —
 * so this is the check that catches a server `run` cannot use.
 *
 * @module
 */

import { type ProviderFlags, providerFrom, wireSection } from "../config/provider.ts";
import { WIRES } from "../../providers/wires.ts";
import type { Config } from "../config/config.ts";

/** The probe's tool: never meant to be called; its presence is what is tested. */
const PROBE_TOOL = {
  name: "ping",
  description: "Answers pong. A connectivity probe: do not call it.",
  inputSchema: { type: "object", properties: {} },
} as const;

/** Output tokens the probe allows (a word is all it asks for). */
const PROBE_MAX_TOKENS = "16";

/** How long the probe waits for the whole reply. */
const PROBE_TIMEOUT_MS = 60_000;

/**
 * Sends one request with a tool; returns what answered, or throws the provider's error
 * (which says what to do: `--jinja`, the model name, the key, the URL).
 */
export async function toolProbe(config: Config, flags: ProviderFlags): Promise<string> {
  // With extended thinking on, the budget needs room: keep the configured limit then. Any
  // wire's section counts, the chosen one or not (as before the wires were data).
  const thinking = WIRES.some((wire) => {
    const section = wireSection(config, wire.name);
    return section !== undefined && wire.probeKeepsLimit?.(section) === true;
  });
  const provider = providerFrom(
    config,
    thinking ? flags : { ...flags, maxTokens: PROBE_MAX_TOKENS },
    { maxRetries: 0 },
  );
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  const request = {
    system: "",
    messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Reply: ok" }] }],
    tools: [PROBE_TOOL],
  };
  try {
    for await (const event of provider.complete(request, signal)) {
      if (event.type !== "message") continue;
      return `${provider.name}/${provider.model} answered a request that offers tools ` +
        `(${event.usage.inputTokens} tokens in, ${event.usage.outputTokens} out, stop ${event.stopReason})`;
    }
  } catch (error) {
    if (signal.aborted) {
      throw new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000} s to a one-word request`);
    }
    throw error;
  }
  throw new Error(`${provider.name}: the stream ended without a message`);
}
