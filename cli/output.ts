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

/** Writes `text` to stderr, ending it with a newline. */
export async function writeStderr(text: string): Promise<void> {
  await writeAll(Deno.stderr, text.endsWith("\n") ? text : text + "\n");
}

/** Synchronous variant for callers that cannot await (commander's help output). */
export function writeSync(to: "stdout" | "stderr", text: string): void {
  const file = to === "stdout" ? Deno.stdout : Deno.stderr;
  const bytes = ENCODER.encode(text);
  let written = 0;
  while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
}
