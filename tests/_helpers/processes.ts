/**
 * Waiting for processes to be gone, by a marker in their command line.
 *
 * @module
 */

/** How many processes whose command line contains `marker` are still alive after up to 5 s. */
export async function survivors(marker: string): Promise<number> {
  let left = 1;
  for (let i = 0; i < 50 && left > 0; i++) {
    const ps = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
    left = new TextDecoder().decode(ps.stdout).trim().split("\n").filter(Boolean).length;
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return left;
}
