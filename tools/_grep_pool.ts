/**
 * A second thread for grep: a prefilter worker that reads files the walk found and says which
 * of them cannot hold a needle, so that on a large tree the opens and reads run on two cores.
 *
 * Why: inside the tool worker every open pays for Deno's permission check, which resolves the
 * path one component at a time (a readlink each): measured on this machine, 25 µs per open of
 * a nine-component path against 10 µs unrestricted, most of the time of a grep over a tree of
 * small files, and no other API opens a file without it. A second thread does half of them.
 *
 * What it may do: the worker is a child of the isolate running grep, with narrower grants:
 * read on the workspace roots and nothing else (Deno refuses a child grants its parent lacks).
 * It gets paths the walk found (regular files in confined directories) and answers one bit
 * per file. A file it does not rule out is searched by grep exactly as without it: the
 * confined open, the fd proof, the per-file path rules. Nothing it reads reaches the output,
 * and a wrong answer could only drop a file's rows, never add or leak any. Files it cannot
 * settle (unreadable, changed while read) it leaves to grep.
 *
 * Startup: starting a worker blocks the starting thread for tens of milliseconds, and a worker
 * started by a worker then takes about half a second before its first line runs (Deno 2.9,
 * measured here, whatever the module). So the tool worker starts it after a call that walked
 * a large tree (`wantPool`), and grep uses it once it has said it is ready; until then grep
 * searches alone. Elsewhere (the in-process host, tests) it starts only on request
 * (`startPrefilterPool`).
 *
 * @module
 */

import type * as Fs from "node:fs";
import type { Buffer as NodeBuffer } from "node:buffer";
import { holdsNeedle, type NeedlePlan } from "./_grep_needles.ts";

/** One chunk handed to the worker; `status` turns 1 once `hits` holds its answers. */
export interface PendingChunk {
  /** 1 once the worker has answered. */
  readonly status: Int32Array;
  /** Per path: 0 when the file cannot hold a needle (or has no row anyway), 1 otherwise. */
  readonly hits: Uint8Array;
}

/** The messages the worker accepts. */
type PoolMessage =
  | { readonly type: "plan"; readonly plan: NeedlePlan; readonly maxBytes: number }
  | {
    readonly type: "chunk";
    readonly paths: readonly string[];
    readonly shared: SharedArrayBuffer;
  };

/**
 * The worker's whole program, started by `prefilterSource`'s module. It may name nothing
 * outside itself: it arrives as text.
 */
function prefilterMain(
  scope: { onmessage: ((event: MessageEvent<PoolMessage>) => void) | null },
  post: (message: string) => void,
  fs: typeof Fs,
  Buffer: typeof NodeBuffer,
  holds: typeof holdsNeedle,
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
    const message = event.data;
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
  post("ready");
}

/** The worker's module source: its imports, then the two functions above, then the call. */
function prefilterSource(): string {
  return [
    'import * as fs from "node:fs";',
    'import { Buffer } from "node:buffer";',
    `const holdsNeedle = ${holdsNeedle.toString()};`,
    `(${prefilterMain.toString()})(self, (m) => self.postMessage(m), fs, Buffer, holdsNeedle);`,
  ].join("\n");
}

/** The worker at `url` with read on `roots` and nothing else; the URL is revoked if it fails. */
function startWorker(url: string, roots: readonly string[]): Worker {
  try {
    return new Worker(url, {
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
}

/** A prefilter worker for one set of workspace roots. */
export class PrefilterPool {
  /** The roots its read grant covers. */
  readonly roots: readonly string[];
  /** True while a grep call uses it (one call at a time; others search alone). */
  busy = false;
  /** Paths handed to the worker so far. */
  sentFiles = 0;
  readonly #worker: Worker;
  readonly #ready: Promise<boolean>;
  #settleReady: (ready: boolean) => void = () => {};
  #usable = false;
  #failed = false;

  private constructor(roots: readonly string[]) {
    this.roots = [...roots];
    const url = URL.createObjectURL(new Blob([prefilterSource()], { type: "text/javascript" }));
    this.#worker = startWorker(url, roots);
    this.#ready = new Promise<boolean>((resolve) => this.#settleReady = resolve);
    this.#worker.onmessage = () => {
      URL.revokeObjectURL(url);
      this.#usable = !this.#failed;
      this.#settleReady(this.#usable);
    };
    this.#worker.onerror = (event: ErrorEvent) => {
      // A worker that cannot run is not used; grep searches alone, as before it existed.
      event.preventDefault();
      URL.revokeObjectURL(url);
      this.#fail();
    };
  }

  /** Starts a worker for `roots`; undefined when no worker can be started here. */
  static start(roots: readonly string[]): PrefilterPool | undefined {
    try {
      return new PrefilterPool(roots);
    } catch {
      return undefined;
    }
  }

  /** True once the worker has started and nothing has gone wrong with it. */
  get usable(): boolean {
    return this.#usable;
  }

  /** Resolves true once the worker is ready, false when it failed to start. */
  whenReady(): Promise<boolean> {
    return this.#ready;
  }

  /** What the chunks sent next are checked for; `maxBytes` is grep's file size limit. */
  setPlan(plan: NeedlePlan, maxBytes: number): void {
    this.#post({ type: "plan", plan, maxBytes });
  }

  /** Hands `paths` to the worker; their answers come into the returned chunk. */
  submit(paths: readonly string[]): PendingChunk {
    const shared = new SharedArrayBuffer(4 + paths.length);
    this.sentFiles += paths.length;
    this.#post({ type: "chunk", paths, shared });
    return { status: new Int32Array(shared, 0, 1), hits: new Uint8Array(shared, 4) };
  }

  /** Stops the worker. */
  close(): void {
    this.#fail();
  }

  #post(message: PoolMessage): void {
    try {
      this.#worker.postMessage(message);
    } catch {
      this.#fail(); // its chunks then never finish, and grep searches them itself
    }
  }

  #fail(): void {
    this.#failed = true;
    this.#usable = false;
    this.#worker.terminate();
    this.#settleReady(false);
  }
}

/** True when grep runs inside a worker (the tool worker), where the pool starts by itself. */
const IN_WORKER = "WorkerGlobalScope" in globalThis;
/** Files a call must walk before the tool worker starts the prefilter worker for later calls. */
export const START_AFTER_FILES = 1000;
/**
 * Delay before that start. Starting a worker blocks the starting thread for tens of
 * milliseconds; after a short delay it falls in the idle time of a long-lived process, and a
 * one-shot `rousseau tool grep` has exited by then and never pays for it.
 */
const START_DELAY_MS = 100;

let shared: PrefilterPool | undefined;
let starting = false;

/**
 * The prefilter worker for a grep call over `roots`, marked busy, or undefined when there is
 * none to use now (not started, not ready yet, busy with another call, or failed). Give it
 * back with `releasePool`.
 */
export function takePool(roots: readonly string[]): PrefilterPool | undefined {
  if (shared === undefined || !shared.usable || shared.busy) return undefined;
  if (!sameRoots(shared.roots, roots)) return undefined;
  shared.busy = true;
  return shared;
}

/** Gives back what `takePool` gave. */
export function releasePool(pool: PrefilterPool): void {
  pool.busy = false;
}

/**
 * Says that a grep over `roots` walked a large tree: inside a worker, the prefilter worker is
 * started (after `START_DELAY_MS`) for the calls that follow, replacing one for other roots.
 * Elsewhere it starts only on request (`startPrefilterPool`).
 */
export function wantPool(roots: readonly string[]): void {
  if (!IN_WORKER || starting) return;
  if (shared !== undefined && (sameRoots(shared.roots, roots) || shared.busy)) return;
  starting = true;
  const timer = setTimeout(() => {
    starting = false;
    if (shared !== undefined && (sameRoots(shared.roots, roots) || shared.busy)) return;
    shared?.close();
    shared = PrefilterPool.start(roots);
  }, START_DELAY_MS);
  Deno.unrefTimer(timer);
}

/**
 * Starts the prefilter worker for `roots` in this isolate, where it does not start by itself
 * (the in-process host, tests), and resolves once it is ready: the worker, or undefined when
 * it could not start. Stop it with `stopPrefilterPool`.
 */
export async function startPrefilterPool(
  roots: readonly string[],
): Promise<PrefilterPool | undefined> {
  stopPrefilterPool();
  const pool = PrefilterPool.start(roots);
  shared = pool;
  return pool !== undefined && await pool.whenReady() ? pool : undefined;
}

/** Stops the prefilter worker, if any; a call using it finishes without it. */
export function stopPrefilterPool(): void {
  shared?.close();
  shared = undefined;
}

function sameRoots(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((root, i) => root === b[i]);
}
