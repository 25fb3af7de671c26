/**
 * Running shell lines for real with every program a recording stub: the approver tests use
 * it to see what `/bin/sh` would actually run for a line they judged.
 */

/**
 * Lines with a background `&` are not run: a stub could outlive the shell, and one such line
 * (`ls() { ls | ls & }; ls`) is a fork bomb that once took this machine down.
 */
export const BACKGROUND: RegExp = /(^|[^&])&([^&]|$)/;

/** Writes one executable stub per name into `${dir}/bin`, each running `body`; returns the bin. */
export async function writeStubs(
  dir: string,
  names: Iterable<string>,
  body: string,
): Promise<string> {
  const bin = `${dir}/bin`;
  await Deno.mkdir(bin, { recursive: true });
  for (const name of names) {
    await Deno.writeTextFile(`${bin}/${name}`, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  return bin;
}

/**
 * Runs `line` with `/bin/sh -c` in `cwd`, with nothing in the environment but `PATH=bin` and
 * `STUB_LOG=log`, and no input or output.
 */
export async function runWithStubs(
  line: string,
  options: { bin: string; log: string; cwd: string },
): Promise<void> {
  await new Deno.Command("/bin/sh", {
    args: ["-c", line],
    cwd: options.cwd,
    clearEnv: true,
    env: { PATH: options.bin, STUB_LOG: options.log },
    stdin: "null",
    stdout: "null",
    stderr: "null",
    // A guard against a line that never ends, not a timing assertion.
    signal: AbortSignal.timeout(20_000),
  }).output();
}
