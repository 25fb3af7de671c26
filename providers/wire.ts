/**
 * What the CLI needs to know about one provider wire (its name, defaults, config keys and
 * their words, environment variables, reachability probe, and how to build it), in one
 * descriptor per wire; `wires.ts` lists them. docs/add-a-provider.md says how to add one.
 *
 * @module
 */

import type { ZodType } from "zod";
import type { RetryOptions } from "./_retry.ts";
import type { DiagnosticOptions, Provider } from "./types.ts";

/** The zod module, handed in by the config loader (which loads it on demand). */
export type ZodModule = typeof import("zod");

/**
 * A wire's validated config section (`anthropic:`, `openai:`). Every wire takes the four
 * common keys; the others are the wire's own (its `configSchema` states their types).
 */
export interface WireSection {
  readonly "api_key"?: string;
  readonly model?: string;
  readonly "base_url"?: string;
  readonly "max_tokens"?: number;
  readonly [key: string]: unknown;
}

/** The reference words of one key of the section (docs/configuration.md). */
export interface WireKeyDoc {
  /** The default as the reference shows it (markdown); none prints `—`. */
  readonly default?: string;
  readonly text: string;
}

/** The settings a wire is built from, resolved by the CLI (flag > environment > file). */
export interface WireSettings extends RetryOptions, DiagnosticOptions {
  readonly model: string;
  readonly apiKey?: string;
  readonly baseUrl?: string;
  /** `--max-tokens` or the section's `max_tokens`; unset, the wire's own default applies. */
  readonly maxTokens?: number;
  /** The whole section, for the wire's own keys. */
  readonly section: WireSection;
}

/** One provider wire, as data the CLI reads instead of naming providers. */
export interface ProviderWire {
  /** `--provider NAME`, the config section's key and the start of every error it raises. */
  readonly name: string;
  /** The model used when none is configured. */
  readonly defaultModel: string;
  /** The endpoint used when no base URL is configured (doctor shows and probes it). */
  readonly defaultBaseUrl: string;
  /** Tokens the context manager keeps free for a reply when no `max_tokens` is set. */
  readonly replyReserve: number;
  /**
   * Variables read besides `ROUSSEAU_*`, as section key to variable name, in the order the
   * reference lists them (`{ api_key: "ANTHROPIC_API_KEY" }`); they override `ROUSSEAU_*`.
   */
  readonly environment: Readonly<Record<string, string>>;
  /** The section's schema: a strict object of optional keys, the common four included. */
  configSchema(z: ZodModule): ZodType;
  /** Words for every key of the section (a test fails when one is missing or extra). */
  readonly keyDocs: Readonly<Record<string, WireKeyDoc>>;
  /** `doctor --online`'s model-list request at `baseUrl` (no trailing slash). */
  modelsRequest(
    baseUrl: string,
    apiKey: string | undefined,
  ): { readonly url: string; readonly headers: Record<string, string> };
  /**
   * True when `doctor --online`'s tool probe must keep the configured output limit instead
   * of asking for a few tokens (Anthropic's thinking budget needs room below it).
   */
  probeKeepsLimit?(section: WireSection): boolean;
  /** The provider; throws an error that says what to set when something is missing. */
  create(settings: WireSettings): Provider;
}
