/**
 * Waiting for processes to appear or be gone, by a marker in their command line.
 *
 * @module
 */

import { until } from "./until.ts";

/** How many live processes have `marker` in their command line. */
async function count(marker: string): Promise<number> {
  const ps = await new Deno.Command("pgrep", { args: ["-f", marker], stdout: "piped" }).output();
  return new TextDecoder().decode(ps.stdout).trim().split("\n").filter(Boolean).length;
}

/** How many processes whose command line contains `marker` are still alive after up to 5 s. */
export async function survivors(marker: string): Promise<number> {
  let left = 1;
  for (let i = 0; i < 50 && left > 0; i++) {
    left = await count(marker);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return left;
}

/** Waits until a process with `marker` in its command line runs; throws after `limitMs`. */
export async function waitForProcess(marker: string, limitMs = 10_000): Promise<void> {
  await until(`a process with ${marker}`, async () => await count(marker) > 0, {
    limitMs,
    everyMs: 50,
  });
}

/** Every live process below `pid` (any depth, by walking /proc), deepest first. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry.name)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      walk(child);
      found.push(child);
    }
  };
  walk(pid);
  return found;
}

/** SIGKILLs every process below `pid`, deepest first, then `pid`. */
export function killTree(pid: number): void {
  for (const target of [...descendants(pid), pid]) {
    try {
      Deno.kill(target, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
