/**
 * The only module that writes to the terminal. stdout carries the promised output and
 * nothing else; everything for people goes to stderr.
 *
 * @module
 */

const ENCODER = new TextEncoder();

async function writeAll(file: { write(p: Uint8Array): Promise<number> }, text: string) {
  const bytes = ENCODER.encode(text);
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/** Writes `text` to stdout exactly. */
export async function writeStdout(text: string): Promise<void> {
  await writeAll(Deno.stdout, text);
}

/** Writes `text` to stderr, ending it with a newline unless `newline` is false. */
export async function writeStderr(text: string, newline = true): Promise<void> {
  await writeAll(Deno.stderr, !newline || text.endsWith("\n") ? text : text + "\n");
}

/** Synchronous variant for callers that cannot await (commander's help output). */
export function writeSync(to: "stdout" | "stderr", text: string): void {
  const file = to === "stdout" ? Deno.stdout : Deno.stderr;
  const bytes = ENCODER.encode(text);
  let written = 0;
  while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
}

/** Whether stderr may be coloured (a terminal, and NO_COLOR unset). */
export function useColor(): boolean {
  return Deno.stderr.isTerminal() && !Deno.env.get("NO_COLOR");
}

/** Line-at-a-time reading of stdin; resolves undefined at end of input or when `signal` fires. */
export function createLineReader(signal: AbortSignal): () => Promise<string | undefined> {
  const reader = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let ended = false;
  const aborted = new Promise<undefined>((resolve) => {
    if (signal.aborted) resolve(undefined);
    signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
  return async () => {
    for (;;) {
      const at = buffered.indexOf("\n");
      if (at !== -1) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        return line;
      }
      if (ended || signal.aborted) return undefined;
      const next = await Promise.race([reader.read(), aborted]);
      if (next === undefined) return undefined;
      if (next.done) {
        ended = true;
        if (buffered !== "") {
          const line = buffered;
          buffered = "";
          return line;
        }
        return undefined;
      }
      buffered += next.value;
    }
  };
}
