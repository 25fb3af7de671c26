/**
 * A second thread for grep: a prefilter worker (`_grep_prefilter.ts`) that reads files the
 * walk found and says which of them cannot hold a needle, so that on a large tree the opens
 * and reads run on two cores.
 *
 * Why: inside the tool worker every open pays for Deno's permission check, which resolves the
 * path one component at a time (a readlink each): measured on this machine, 25 µs per open of
 * a nine-component path against 10 µs unrestricted, most of the time of a grep over a tree of
 * small files, and no other API opens a file without it. A second thread does half of them.
 *
 * What it may do: read on the workspace roots and nothing else. It gets paths the walk found
 * (regular files in confined directories) and answers one bit per file. A file it does not
 * rule out is searched by grep exactly as without it: the confined open, the fd proof, the
 * per-file path rules. Nothing it reads reaches the output, and a wrong answer could only
 * drop a file's rows, never add or leak any. Files it cannot settle (unreadable, changed while
 * read) it leaves to grep.
 *
 * Startup: inside the tool worker, a grep that has walked `START_AFTER_FILES` files asks its
 * host (on the main thread) for one (`wantPool`); the host starts it and sends a port to it,
 * and grep uses it from the next chunk once it has said it is ready, in the same call. Until
 * then grep searches alone. Elsewhere (the in-process host, tests) it starts only on request
 * (`startPrefilterPool`).
 *
 * @module
 */

import type { NeedlePlan } from "./_grep_needles.ts";
import {
  type PrefilterRequest,
  READY,
  type StartedPrefilter,
  startPrefilter,
} from "./_grep_prefilter.ts";

/** One chunk handed to the worker; `status` turns 1 once `hits` holds its answers. */
export interface PendingChunk {
  /** 1 once the worker has answered. */
  readonly status: Int32Array;
  /** Per path: 0 when the file cannot hold a needle (or has no row anyway), 1 otherwise. */
  readonly hits: Uint8Array;
}

/** A prefilter worker for one set of workspace roots, as grep's end of its port. */
export class PrefilterPool {
  /** The roots its read grant covers. */
  readonly roots: readonly string[];
  /** True while a grep call uses it (one call at a time; others search alone). */
  busy = false;
  /** Paths handed to the worker so far. */
  sentFiles = 0;
  readonly #port: MessagePort;
  readonly #stop: () => void;
  readonly #ready: Promise<boolean>;
  #settleReady: (ready: boolean) => void = () => {};
  #usable = false;
  #failed = false;

  /** Wraps `port`, a prefilter worker's channel; `stop` stops the worker when it is ours. */
  constructor(roots: readonly string[], port: MessagePort, stop: () => void = () => {}) {
    this.roots = [...roots];
    this.#port = port;
    this.#stop = stop;
    this.#ready = new Promise<boolean>((resolve) => this.#settleReady = resolve);
    port.onmessage = (event: MessageEvent<unknown>) => {
      if (event.data !== READY || this.#failed) return;
      this.#usable = true;
      this.#settleReady(true);
    };
  }

  /** True once the worker has started and nothing has gone wrong with it. */
  get usable(): boolean {
    return this.#usable;
  }

  /** True once it was closed or failed: it is never used again. */
  get failed(): boolean {
    return this.#failed;
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

  /** Stops using the worker (and stops it, when it is ours). */
  close(): void {
    this.#fail();
  }

  #post(message: PrefilterRequest): void {
    try {
      this.#port.postMessage(message);
    } catch {
      this.#fail(); // its chunks then never finish, and grep searches them itself
    }
  }

  #fail(): void {
    this.#failed = true;
    this.#usable = false;
    this.#port.onmessage = null;
    this.#port.close();
    this.#stop();
    this.#settleReady(false);
  }
}

/** Files a call must walk before grep asks for the prefilter worker. */
export const START_AFTER_FILES = 1000;
/** Times a tool worker asks for a prefilter worker: a second and third after one failed. */
const MAX_ASKS = 3;

let shared: PrefilterPool | undefined;
/** How this thread asks its host for a prefilter worker; set in the tool worker only. */
let askHost: (() => void) | undefined;
let asks = 0;
let asked = false;

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

/** Set by the tool worker: `ask` has its host start a prefilter worker and send its port. */
export function setPoolRequester(ask: () => void): void {
  askHost = ask;
}

/** The tool worker got `port` from its host: the prefilter worker over `roots` from now on. */
export function adoptPool(roots: readonly string[], port: MessagePort): void {
  asked = false;
  if (shared?.busy === true) {
    port.close(); // a call uses the one there is; keep it
    return;
  }
  shared?.close();
  shared = new PrefilterPool(roots, port);
}

/**
 * Says that a grep over `roots` is walking a large tree: in the tool worker, its host is asked
 * for a prefilter worker, which the call uses once it is ready (and the calls after it).
 * Elsewhere it starts only on request (`startPrefilterPool`).
 */
export function wantPool(roots: readonly string[]): void {
  if (askHost === undefined || asked || asks >= MAX_ASKS) return;
  if (shared !== undefined && sameRoots(shared.roots, roots) && !shared.failed) return;
  asked = true;
  asks++;
  askHost();
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
  let started: StartedPrefilter;
  try {
    started = startPrefilter(roots);
  } catch {
    return undefined;
  }
  const pool = new PrefilterPool(roots, started.port, started.terminate);
  shared = pool;
  return await pool.whenReady() ? pool : undefined;
}

/** Stops the prefilter worker, if any; a call using it finishes without it. */
export function stopPrefilterPool(): void {
  shared?.close();
  shared = undefined;
}

function sameRoots(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((root, i) => root === b[i]);
}
