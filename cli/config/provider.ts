/**
 * The provider a command talks to, from flags and config (flag > environment > file).
 * Only the provider modules are imported here; their SDKs load on the first request.
 *
 * @module
 */

import { createAnthropicProvider } from "../../providers/anthropic.ts";
import { createOpenAiProvider } from "../../providers/openai.ts";
import type { Provider } from "../../providers/types.ts";
import type { Config } from "./config.ts";
import { UsageError } from "../errors.ts";
import { createLogger, type LogFlags } from "../terminal/log.ts";

/** Flags that choose the provider (and the log its diagnostics go to). */
export interface ProviderFlags extends LogFlags {
  /** `--provider anthropic|openai`. */
  readonly provider?: string;
  /** `--model NAME`. */
  readonly model?: string;
  /** `--base-url URL`. */
  readonly baseUrl?: string;
  /** `--max-tokens N`: the output-token limit of the chosen provider. */
  readonly maxTokens?: string;
}

/** Models used when none is configured. */
export const DEFAULT_MODELS = { anthropic: "claude-sonnet-4-5", openai: "gpt-4.1" } as const;

/** Anthropic's default reply budget. */
export const DEFAULT_MAX_TOKENS = 8192;

/** The provider's name, model and base URL as they will be used (for headers and doctor). */
export function providerSettings(config: Config, flags: ProviderFlags): {
  name: "anthropic" | "openai";
  model: string;
  baseUrl?: string;
  apiKey?: string;
} {
  const name = flags.provider ?? config.values.provider ?? "anthropic";
  if (name !== "anthropic" && name !== "openai") {
    throw new UsageError(
      `--provider: unknown provider ${JSON.stringify(name)} (want anthropic or openai)`,
    );
  }
  const section = name === "anthropic" ? config.values.anthropic : config.values.openai;
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
    model: flags.model ?? section?.model ?? DEFAULT_MODELS[name],
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(section?.api_key ? { apiKey: section.api_key } : {}),
  };
}

/** `--max-tokens` as a number, or the configured value (flag > environment > file). */
export function maxTokensFrom(
  config: Config,
  flags: ProviderFlags,
  name: "anthropic" | "openai",
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
  return name === "anthropic"
    ? config.values.anthropic?.max_tokens
    : config.values.openai?.max_tokens;
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
  if (settings.name === "anthropic") {
    if (settings.apiKey === undefined) {
      throw new Error(
        "anthropic: no API key: set ANTHROPIC_API_KEY or anthropic.api_key in the config file " +
          "(or use --provider openai with a local OpenAI-compatible server)",
      );
    }
    const budget = config.values.anthropic?.thinking_budget;
    const limit = maxTokens ?? DEFAULT_MAX_TOKENS;
    if (budget !== undefined && budget >= limit) {
      throw new Error(
        `anthropic.thinking_budget (${budget}) must be below the output-token limit (${limit}): ` +
          "raise anthropic.max_tokens (--max-tokens) or lower the budget",
      );
    }
    return createAnthropicProvider({
      ...retry,
      debug,
      apiKey: settings.apiKey,
      model: settings.model,
      maxTokens: limit,
      ...(budget === undefined ? {} : { thinkingBudget: budget }),
      ...(settings.baseUrl === undefined ? {} : { baseUrl: settings.baseUrl }),
    });
  }
  if (settings.apiKey === undefined && settings.baseUrl === undefined) {
    throw new Error(
      "openai: no API key: set OPENAI_API_KEY, or point --base-url (OPENAI_BASE_URL) at a " +
        "local server such as Ollama (http://127.0.0.1:11434/v1)",
    );
  }
  return createOpenAiProvider({
    ...retry,
    debug,
    apiKey: settings.apiKey ?? "",
    model: settings.model,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(settings.baseUrl === undefined ? {} : { baseUrl: settings.baseUrl }),
  });
}
