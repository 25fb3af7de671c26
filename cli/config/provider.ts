/**
 * The provider a command talks to, from flags and config (flag > environment > file).
 * The wires come from providers/wires.ts (this file names none); their SDKs load on the first
 * request.
 *
 * @module
 */

import type { Provider } from "../../providers/types.ts";
import type { WireSection } from "../../providers/wire.ts";
import { WIRE_NAMES, wireNamed, WIRES } from "../../providers/wires.ts";
import type { Config } from "./config.ts";
import { UsageError } from "../errors.ts";
import { createLogger, type LogFlags } from "../terminal/log.ts";

/** Flags that choose the provider (and the log its diagnostics go to). */
export interface ProviderFlags extends LogFlags {
  /** `--provider NAME`: one of providers/wires.ts's wires. */
  readonly provider?: string;
  /** `--model NAME`. */
  readonly model?: string;
  /** `--base-url URL`. */
  readonly baseUrl?: string;
  /** `--max-tokens N`: the output-token limit of the chosen provider. */
  readonly maxTokens?: string;
}

/** A wire's config section (`anthropic:`, `openai:`), as validated. */
export function wireSection(config: Config, name: string): WireSection | undefined {
  return (config.values as Record<string, unknown>)[name] as WireSection | undefined;
}

/** The provider's name, model and base URL as they will be used (for headers and doctor). */
export function providerSettings(config: Config, flags: ProviderFlags): {
  name: string;
  model: string;
  baseUrl?: string;
  apiKey?: string;
} {
  const name = flags.provider ?? config.values.provider ?? WIRES[0].name;
  const wire = wireNamed(name);
  if (wire === undefined) {
    throw new UsageError(
      `--provider: unknown provider ${JSON.stringify(name)} (want ${WIRE_NAMES.join(" or ")})`,
    );
  }
  const section = wireSection(config, name);
  const baseUrl = flags.baseUrl ?? section?.base_url;
  if (flags.baseUrl !== undefined && !URL.canParse(flags.baseUrl)) {
    throw new UsageError(
      `--base-url: not a URL: ${
        JSON.stringify(flags.baseUrl)
      } (want e.g. http://127.0.0.1:11434/v1)`,
    );
  }
  return {
    name,
    model: flags.model ?? section?.model ?? wire.defaultModel,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(section?.api_key ? { apiKey: section.api_key } : {}),
  };
}

/** `--max-tokens` as a number, or the configured value (flag > environment > file). */
export function maxTokensFrom(
  config: Config,
  flags: ProviderFlags,
  name: string,
): number | undefined {
  if (flags.maxTokens !== undefined) {
    const n = Number(flags.maxTokens);
    if (!/^\d+$/.test(flags.maxTokens.trim()) || !Number.isSafeInteger(n) || n < 1) {
      throw new UsageError(
        `--max-tokens: want a whole number of at least 1, got ${JSON.stringify(flags.maxTokens)}`,
      );
    }
    return n;
  }
  return wireSection(config, name)?.max_tokens;
}

/** Tokens the context manager keeps free for `name`'s reply: the limit, else the wire's own. */
export function replyReserveFrom(config: Config, flags: ProviderFlags, name: string): number {
  return maxTokensFrom(config, flags, name) ?? wireOf(name).replyReserve;
}

/** The wire of a name `providerSettings` accepted. */
function wireOf(name: string) {
  const wire = wireNamed(name);
  if (wire === undefined) throw new Error(`no provider wire named ${JSON.stringify(name)}`);
  return wire;
}

/** The provider for a command; a missing key is an error that says where to put one. */
export function providerFrom(
  config: Config,
  flags: ProviderFlags,
  /** `{ maxRetries: 0 }` for a probe that must answer at once (doctor). */
  retry: { readonly maxRetries?: number } = {},
): Provider {
  const settings = providerSettings(config, flags);
  const maxTokens = maxTokensFrom(config, flags, settings.name);
  // The SDKs' own lines and raw error pages go to the debug log, never straight to stderr.
  const log = createLogger(flags, config.values.log ?? {});
  const debug = (message: string) => log.log("debug", `${settings.name}: ${message}`);
  return wireOf(settings.name).create({
    ...retry,
    debug,
    model: settings.model,
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
    ...(settings.baseUrl === undefined ? {} : { baseUrl: settings.baseUrl }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    section: wireSection(config, settings.name) ?? {},
  });
}
