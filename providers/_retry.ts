/**
 * Retries for transient provider failures (429, 5xx, 529 overloaded, connection resets),
 * with exponential backoff that honours `retry-after`. A stream that already showed text or
 * a tool call is never retried: the consumer has seen part of a reply, and a second reply
 * would contradict it.
 *
 * @module
 */

import { isHtmlPage } from "./_errors.ts";
import { ProviderError, type StreamEvent } from "./types.ts";

/** How a provider's failure is described and whether it may be retried. */
export interface Failure {
  readonly transient: boolean;
  /** What went wrong, without the provider name. */
  readonly detail: string;
  readonly status?: number;
  readonly requestId?: string;
  /** From `retry-after` / `retry-after-ms`, when the server said. */
  readonly retryAfterMs?: number;
  /** The provider's error type or code, as sent. */
  readonly errorType?: string;
  /** The provider's message, as sent. */
  readonly providerMessage?: string;
  /** The parsed error body. */
  readonly body?: unknown;
  /**
   * A failure that is known to pass with time (a server loading its model) gets more retries,
   * each wait capped lower, unless the caller fixed `maxRetries` itself.
   */
  readonly patience?: { readonly retries: number; readonly maxDelayMs: number };
}

/** Retry tuning. */
export interface RetryOptions {
  /** Retries after the first attempt (default 4). */
  readonly maxRetries?: number;
  /** First backoff delay (default 500 ms), doubled per retry, with jitter. */
  readonly baseDelayMs?: number;
  /** Longest single wait, `retry-after` included (default 60 s). */
  readonly maxDelayMs?: number;
}

/** `failure`, with its provider text sent to `debug` when that is an HTML page. */
export function noted(failure: Failure, debug: ((message: string) => void) | undefined): Failure {
  const body = failure.providerMessage;
  if (body !== undefined && isHtmlPage(body)) debug?.(`${failure.detail}: the body was: ${body}`);
  return failure;
}

/** `retry-after-ms`, then `retry-after` (seconds or an HTTP date), in milliseconds. */
export function retryAfterMs(headers: Headers | undefined | null): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The final error text: provider, what failed, status, request id, attempts. */
export function failureMessage(provider: string, failure: Failure, attempts: number): string {
  const parts = [`${provider}: ${failure.detail}`];
  if (failure.status !== undefined) parts.push(`status ${failure.status}`);
  if (failure.requestId) parts.push(`request id ${failure.requestId}`);
  if (attempts > 1) parts.push(`gave up after ${attempts} attempts`);
  return parts.join("; ");
}

/**
 * Runs `attempt` until it succeeds, fails for good, or retries run out. Yields a `retry`
 * event before each wait. Cancellation is rethrown as the signal's reason.
 */
export async function* withRetries(
  provider: string,
  attempt: () => AsyncIterable<StreamEvent>,
  classify: (error: unknown) => Failure,
  signal: AbortSignal,
  options: RetryOptions = {},
): AsyncGenerator<StreamEvent> {
  const maxRetries = options.maxRetries ?? 4;
  const base = options.baseDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 60_000;
  for (let tries = 1;; tries++) {
    let shown = false;
    try {
      for await (const event of attempt()) {
        if (event.type === "text" || event.type === "thinking" || event.type === "tool_use_start") {
          shown = true;
        }
        yield event;
      }
      return;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof ProviderError) throw error;
      const failure = classify(error);
      const patience = options.maxRetries === undefined ? failure.patience : undefined;
      if (!failure.transient || shown || tries > (patience?.retries ?? maxRetries)) {
        const detail = shown && failure.transient
          ? { ...failure, detail: `${failure.detail} (the reply was cut off part way)` }
          : failure;
        throw new ProviderError(failureMessage(provider, detail, tries), {
          ...(failure.status === undefined ? {} : { status: failure.status }),
          ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
          ...(failure.errorType === undefined ? {} : { errorType: failure.errorType }),
          ...(failure.providerMessage === undefined
            ? {}
            : { providerMessage: failure.providerMessage }),
          ...(failure.body === undefined ? {} : { body: failure.body }),
          transient: failure.transient,
          cause: error,
        });
      }
      const backoff = base * 2 ** (tries - 1) * (0.75 + Math.random() * 0.25);
      const limit = Math.min(cap, patience?.maxDelayMs ?? cap);
      const delayMs = Math.round(Math.min(limit, failure.retryAfterMs ?? backoff));
      yield {
        type: "retry",
        attempt: tries,
        delayMs,
        reason: failureMessage(provider, failure, 1),
      };
      await sleep(delayMs, signal);
    }
  }
}
