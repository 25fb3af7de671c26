/**
 * `rousseau mcp` driven by the official SDK's `Client` over `StdioClientTransport` (which fails
 * on anything but protocol on stdout): the real CLI process, with the tests' config and state
 * directories.
 *
 * @module
 */

import type { ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI_ARGS, REPO, TEST_HOME } from "./cli.ts";

/** A connected client and the server process behind it. */
export interface Served extends AsyncDisposable {
  readonly client: Client;
  /** The server process's pid. */
  readonly pid: number;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  /** Closes the client (ends the server's stdin) and resolves to the server's exit code. */
  close(): Promise<number | null>;
}

const ENV_PASSED = ["DENO_DIR", "LANG"];

/**
 * Starts `rousseau --workspace ws ...args mcp` and connects the SDK client to it; `env` is
 * laid over the tests' environment (another state directory, say).
 */
export async function serveMcp(
  workspace: string,
  args: readonly string[] = [],
  { env: extra = {} }: { env?: Record<string, string> } = {},
): Promise<Served> {
  const env: Record<string, string> = {
    NO_COLOR: "1",
    XDG_CONFIG_HOME: `${TEST_HOME}/config`,
    XDG_DATA_HOME: `${TEST_HOME}/data`,
    ...extra,
  };
  for (const name of ENV_PASSED) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [...CLI_ARGS, "--workspace", workspace, ...args, "mcp"],
    env,
    cwd: REPO,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
  const client = new Client({ name: "rousseau-tests", version: "1.0.0" });
  await client.connect(transport);
  // The transport keeps its child private; its pid and exit code are what tests look at.
  const child = (transport as unknown as { _process: ChildProcess })._process;
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
  let closed: Promise<number | null> | undefined;
  const close = () => closed ??= client.close().then(() => exited);
  return {
    client,
    pid: child.pid!,
    stderr: () => stderr,
    close,
    async [Symbol.asyncDispose]() {
      await close();
    },
  };
}
