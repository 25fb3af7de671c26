/**
 * The prefilter worker's program, and starting one: a thread that reads files grep's walk
 * found and says which of them cannot hold a needle (see `_grep_pool.ts` for why and how grep
 * uses it). It talks over a MessagePort only, so whoever starts it (the tool worker's host on
 * the main thread, or an in-process caller) hands the other end to grep.
 *
 * Who starts it: the main thread, never the tool worker. A worker started by a worker waits
 * about half a second before its first line runs (Deno 2.9, measured here: the new thread
 * sleeps in 1 ms steps until then), and starting one blocks the starting thread for tens of
 * milliseconds; from the main thread it is ready in about 0.1 s, and the tool worker goes on.
 *
 * What it may do: read on the workspace roots it is given, nothing else (no write, run, net,
 * env, ffi, sys, import). Nothing it reads reaches grep's output; a wrong answer could only
 * drop a file's rows, never add or leak any (see `_grep_pool.ts`).
 *
 * @module
 */

import type * as Fs from "node:fs";
import type { Buffer as NodeBuffer } from "node:buffer";
import { holdsNeedle, type NeedlePlan } from "./_grep_needles.ts";

/** What grep sends over the port. */
export type PrefilterRequest =
  | { readonly type: "plan"; readonly plan: NeedlePlan; readonly maxBytes: number }
  | {
    readonly type: "chunk";
    readonly paths: readonly string[];
    /** 4 bytes of status (set to 1 once answered), then one byte per path. */
    readonly shared: SharedArrayBuffer;
  };

/** The worker's one answer over the port: `"ready"`, once it listens. */
export const READY = "ready";

/**
 * The worker's whole program. It may name nothing outside itself: it arrives as text. The
 * first message to the worker carries the port; everything after goes over that port.
 */
function prefilterMain(
  scope: {
    onmessage: ((event: MessageEvent<{ port: MessagePort }>) => void) | null;
    postMessage(message: string): void;
  },
  fs: typeof Fs,
  Buffer: typeof NodeBuffer,
  holds: typeof holdsNeedle,
  ready: string,
): void {
  // As grep's own unproved read of a walked file: no-follow (a file swapped for a symlink is
  // refused), non-blocking (a FIFO swapped in cannot hang the open), read by position.
  const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW;
  const scratch = Buffer.allocUnsafe(256 * 1024);
  let large = Buffer.allocUnsafe(0);
  let plan: NeedlePlan | undefined;
  let maxBytes = 0;
  /** 0 when grep would find no row in the file at `path` now, 1 when it must look. */
  const answer = (path: string): number => {
    if (plan === undefined) return 1;
    let fd: number;
    try {
      fd = fs.openSync(path, flags);
    } catch {
      return 1;
    }
    try {
      let buffer = scratch;
      let filled = fs.readSync(fd, buffer, 0, buffer.length, 0);
      if (filled === buffer.length) {
        // grep's own rules for a large file: skipped when it is not a regular file or over
        // the limit, otherwise read to one byte past its size.
        const info = fs.fstatSync(fd);
        if (!info.isFile() || info.size > maxBytes) return 0;
        const want = Math.max(info.size, filled) + 1;
        if (large.length < want) large = Buffer.allocUnsafe(want);
        buffer.copy(large, 0, 0, filled);
        buffer = large;
        while (filled < want) {
          const n = fs.readSync(fd, buffer, filled, want - filled, filled);
          if (n === 0) break;
          filled += n;
        }
      }
      if (filled > maxBytes) return 0;
      const text = buffer.toString("latin1", 0, filled);
      return holds(text, plan) && !text.includes("\0") ? 1 : 0;
    } catch {
      return 1;
    } finally {
      fs.closeSync(fd);
    }
  };
  scope.onmessage = (event) => {
    const port = event.data.port;
    scope.onmessage = null;
    port.onmessage = (request: MessageEvent<PrefilterRequest>) => {
      const message = request.data;
      if (message.type === "plan") {
        plan = message.plan;
        maxBytes = message.maxBytes;
        return;
      }
      const status = new Int32Array(message.shared, 0, 1);
      const hits = new Uint8Array(message.shared, 4);
      for (let i = 0; i < message.paths.length; i++) hits[i] = answer(message.paths[i]!);
      Atomics.store(status, 0, 1);
      Atomics.notify(status, 0);
    };
    port.postMessage(ready);
  };
  // Tells the starter its source is loaded (it then lets go of the source's URL).
  scope.postMessage(ready);
}

/** The worker's module source: its imports, then the two functions above, then the call. */
function prefilterSource(): string {
  return [
    'import * as fs from "node:fs";',
    'import { Buffer } from "node:buffer";',
    `const holdsNeedle = ${holdsNeedle.toString()};`,
    `(${prefilterMain.toString()})(self, fs, Buffer, holdsNeedle, ${JSON.stringify(READY)});`,
  ].join("\n");
}

/** A started prefilter worker: the port grep talks to it over, and stopping it. */
export interface StartedPrefilter {
  /** grep's end of the channel; transferable to the thread that runs grep. */
  readonly port: MessagePort;
  /** Stops the worker (its port then never answers again). */
  terminate(): void;
}

/**
 * Starts a prefilter worker with read on `roots` and nothing else. Throws when no worker can
 * be started here. Call it on the main thread (see the module documentation).
 */
export function startPrefilter(roots: readonly string[]): StartedPrefilter {
  const url = URL.createObjectURL(new Blob([prefilterSource()], { type: "text/javascript" }));
  let worker: Worker;
  try {
    worker = new Worker(url, {
      type: "module",
      deno: {
        permissions: {
          read: [...roots],
          write: false,
          run: false,
          net: false,
          env: false,
          ffi: false,
          sys: false,
          import: false,
        },
      },
    } as WorkerOptions);
  } catch (error) {
    URL.revokeObjectURL(url);
    throw error;
  }
  const channel = new MessageChannel();
  worker.onmessage = () => URL.revokeObjectURL(url);
  // A worker that cannot run answers nothing: grep then never sees it ready and searches alone.
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    URL.revokeObjectURL(url);
    worker.terminate();
  };
  worker.postMessage({ port: channel.port2 }, [channel.port2]);
  return {
    port: channel.port1,
    terminate: () => worker.terminate(),
  };
}
