/**
 * Runs the CLI against a loopback fake model and parses the JSON it prints: the set-up the
 * `run` tests share (which wire, which environment, which flags select it).
 *
 * @module
 */

import { type CliRun, runCli } from "./cli.ts";
import {
  type FakeServer,
  startFakeAnthropic,
  startFakeOpenAI,
  type Step,
} from "./fake_providers.ts";

/** The wire format a fake model speaks. */
export type Wire = "anthropic" | "openai";

/** Starts a fake model speaking `wire`; dispose it with `await using`. */
export function startFake(wire: Wire, steps: Step[]): FakeServer {
  return (wire === "anthropic" ? startFakeAnthropic : startFakeOpenAI)(steps);
}

/** The environment that points the CLI at a fake model at `url`, with a test key. */
export function providerEnv(wire: Wire, url: string): Record<string, string> {
  return wire === "anthropic"
    ? { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "test-key" }
    : { OPENAI_BASE_URL: url, OPENAI_API_KEY: "test-key" };
}

/** The global flags that select `wire` (the OpenAI wire needs a model name). */
export function providerArgs(wire: Wire): string[] {
  return wire === "openai" ? ["--provider", "openai", "--model", "local-model"] : [];
}

/** A CLI run against a fake model, with its stdout read as JSON. */
export interface ModelRun extends CliRun {
  /** The one JSON object stdout holds (`--output json`); undefined unless it is exactly one. */
  // deno-lint-ignore no-explicit-any
  readonly json: any;
  /** Every stdout line that starts with `{`, parsed (`--output stream-json`). */
  // deno-lint-ignore no-explicit-any
  readonly objects: any[];
  /** The last of `objects` (the result event of a stream), null when there is none. */
  // deno-lint-ignore no-explicit-any
  readonly last: any;
}

/** Runs `rousseau <wire flags> ...args` against `server`; `env` is added to the provider's. */
export async function runWithModel(
  wire: Wire,
  server: Pick<FakeServer, "url">,
  args: string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<ModelRun> {
  const out = await runCli([...providerArgs(wire), ...args], {
    env: { ...providerEnv(wire, server.url), ...options.env },
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });
  const trimmed = out.stdout.trim();
  const single = trimmed.startsWith("{") && !trimmed.includes("\n");
  // Parsed when read: a text-mode answer may well start with `{` without being JSON.
  const objects = () =>
    trimmed.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return {
    ...out,
    json: single ? JSON.parse(out.stdout) : undefined,
    get objects() {
      return objects();
    },
    get last() {
      return objects().at(-1) ?? null;
    },
  };
}
