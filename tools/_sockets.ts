/**
 * Unix sockets this host has bound, for the sandbox to cover: read from /proc/net/unix (the
 * sockets bound in this network namespace) when rousseau starts, and again before every bash
 * call, so a socket bound after start (a daemon started later, an agent forwarded into the
 * session) is covered too; and the hidden paths gone since start, which bwrap could not cover.
 * Read in the main isolate: the tool worker may not read /proc/net.
 *
 * @module
 */

import { type HiddenPath, mustCover, type Sandbox, under } from "./_sandbox.ts";

/** The most sockets hidden one by one (each costs a bind mount per call). */
export const MAX_SOCKETS = 256;

/** The filesystem paths of the sockets bound in this network namespace, as listed. */
export function boundSockets(): string[] {
  const out: string[] = [];
  try {
    for (const line of Deno.readTextFileSync("/proc/net/unix").split("\n").slice(1)) {
      const path = line.trim().split(/\s+/)[7];
      if (path?.startsWith("/")) out.push(path);
    }
  } catch {
    // no /proc/net/unix: the masks and the environment still apply
  }
  return out;
}

/**
 * Sockets bound now that `sandbox` does not cover yet, for one call over `roots`: outside
 * /tmp and the masked directories (private or empty inside already), existing, and — with
 * an unprivileged shell — on a path its uid could reach at all (bwrap runs as that uid).
 */
export function socketsSinceStart(sandbox: Sandbox, roots: readonly string[]): HiddenPath[] {
  const hidden = new Set(sandbox.hide.map((h) => h.path));
  const covered = ["/tmp", ...(sandbox.mask ?? [])];
  const out: HiddenPath[] = [];
  let room = MAX_SOCKETS - sandbox.hide.length;
  for (const listed of boundSockets()) {
    if (room <= 0) break;
    if (hidden.has(listed)) continue;
    let real: string;
    try {
      real = Deno.realPathSync(listed);
      if (!Deno.statSync(real).isSocket) continue;
    } catch {
      continue; // gone, or not ours to look at
    }
    if (hidden.has(real) || covered.some((dir) => under(real, dir))) continue;
    if (!mustCover(sandbox, roots, real)) continue;
    hidden.add(real);
    out.push({ path: real, kind: "file" });
    room--;
  }
  return out;
}

/**
 * The paths `sandbox` hides that are gone now: a socket found at start whose server has gone
 * (and removed it, or its directory), a credential directory removed. bwrap refuses to cover
 * a path that does not exist (it cannot make the mount point on the read-only root), and every
 * call would fail its set-up; there is nothing there to hide. A path made again later is
 * covered again (it is still listed). One lstat a path, before every bash call.
 */
export function hiddenGone(sandbox: Sandbox): string[] {
  const out: string[] = [];
  for (const { path } of sandbox.hide) {
    try {
      Deno.lstatSync(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) out.push(path);
    }
  }
  return out;
}
