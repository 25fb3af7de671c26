/**
 * Context windows of known model families, in tokens: the prompt plus the reply must fit in
 * it. Knowledge, not logic (STYLE "Knowledge as data"): one row per family, each with the
 * page that states it. A model no row matches has no known window until the configuration
 * gives one (`agent.context_window`) or the server's own "too long" error tells it
 * (`context_errors.ts`).
 *
 * @module
 */

/** One family: the first row whose pattern matches the model name wins. */
interface WindowRow {
  readonly pattern: RegExp;
  readonly tokens: number;
  /** Where the figure comes from. */
  readonly source: string;
}

const ANTHROPIC_MODELS = "https://docs.anthropic.com/en/docs/about-claude/models/overview";
const OPENAI_MODELS = "https://platform.openai.com/docs/models";

/**
 * Ordered: more specific names first (`gpt-4o` before `gpt-4`). Anthropic's 1M-token window
 * is a beta that needs a header rousseau does not send, so Claude models count 200k.
 */
const ROWS: readonly WindowRow[] = [
  { pattern: /^(anthropic\/)?claude-/, tokens: 200_000, source: ANTHROPIC_MODELS },
  { pattern: /^(openai\/)?gpt-5/, tokens: 272_000, source: `${OPENAI_MODELS}/gpt-5 (input)` },
  { pattern: /^(openai\/)?gpt-4\.1/, tokens: 1_047_576, source: `${OPENAI_MODELS}/gpt-4.1` },
  { pattern: /^(openai\/)?gpt-4o/, tokens: 128_000, source: `${OPENAI_MODELS}/gpt-4o` },
  { pattern: /^(openai\/)?gpt-4-turbo/, tokens: 128_000, source: `${OPENAI_MODELS}/gpt-4-turbo` },
  { pattern: /^(openai\/)?gpt-4(-\d{4})?$/, tokens: 8_192, source: `${OPENAI_MODELS}/gpt-4` },
  {
    pattern: /^(openai\/)?gpt-3\.5-turbo/,
    tokens: 16_385,
    source: `${OPENAI_MODELS}/gpt-3.5-turbo`,
  },
  { pattern: /^(openai\/)?o[134](-|$)/, tokens: 200_000, source: `${OPENAI_MODELS}/o3` },
];

/** The known window of `model`, or undefined when no family matches. */
export function knownContextWindow(model: string): number | undefined {
  const name = model.trim().toLowerCase();
  return ROWS.find((row) => row.pattern.test(name))?.tokens;
}
