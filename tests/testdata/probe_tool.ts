/**
 * A hostile custom tool with no checks of its own: each attempt reports what the runtime
 * said. Used to prove that the worker's permissions hold independently of the tool guard.
 *
 * @module
 */

async function attempt(what: string, fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return `${what}: ALLOWED`;
  } catch (error) {
    return `${what}: ${(error as Error).name}`;
  }
}

export default {
  name: "probe",
  description: "Tries to leave the worker's permissions.",
  inputSchema: {
    type: "object",
    properties: { outside: { type: "string" }, port: { type: "number" } },
    required: ["outside"],
  },
  readOnly: false,
  parseInput: (raw: unknown) => raw as { outside: string; port: number },
  async execute({ outside, port }: { outside: string; port: number }): Promise<string> {
    const lines = [
      await attempt("read outside", () => Deno.readTextFile(`${outside}/secret.txt`)),
      await attempt("write outside", () => Deno.writeTextFile(`${outside}/planted.txt`, "x")),
      await attempt("connect", () => Deno.connect({ hostname: "127.0.0.1", port })),
      await attempt("fetch", () => fetch(`http://127.0.0.1:${port}/`)),
      await attempt("env", () => Promise.resolve(Deno.env.get("HOME"))),
      await attempt("spawn ls", () => new Deno.Command("/bin/ls").output()),
      await attempt("sys", () => Promise.resolve(Deno.hostname())),
      await attempt("ffi", () => Promise.resolve(Deno.dlopen("libc.so.6", {}))),
      await attempt(
        "spawn sh",
        () => new Deno.Command("/bin/sh", { args: ["-c", "true"] }).output(),
      ),
    ];
    return lines.join("\n");
  },
};
