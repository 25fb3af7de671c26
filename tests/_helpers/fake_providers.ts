/**
 * Loopback fake LLM servers that speak the real Anthropic Messages and OpenAI Chat Completions
 * wire formats (SSE streams, error bodies, request-id headers), scripted step by step: the one
 * import for tests and benches. The shared server and the step types live in `fake_server.ts`,
 * each wire in its own file (`fake_anthropic.ts`, `fake_openai.ts`).
 *
 * @module
 */

export type { FakeServer, RecordedRequest, Step, StepError, StepTool } from "./fake_server.ts";
export {
  anthropicOverloaded,
  anthropicPromptTooLong,
  startFakeAnthropic,
} from "./fake_anthropic.ts";
export {
  llamaCppContextOverflow,
  llamaCppLoadingModel,
  llamaCppNoJinja,
  ollamaModelNotFound,
  ollamaNoTools,
  openAiContextLengthExceeded,
  openAiModelNotFound,
  startFakeOpenAI,
  vllmNoToolParser,
} from "./fake_openai.ts";
