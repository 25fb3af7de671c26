/**
 * The order of grep's work when a prefilter worker helps (`_grep_pool.ts`): the walk's files
 * in chunks, each one either searched by the caller as it comes, or first answered by the
 * worker (or by the caller itself, looking ahead while the worker is busy) so that only the
 * files that may hold a needle are searched.
 *
 * The searching itself stays with the caller, in walk order: `next()` gives the files to
 * search, chunk after chunk, in the order the walk found them. So the rows, their order and
 * where the cap cuts them are what they are without the worker.
 *
 * The caller never waits long on the worker: when the next chunk is still with it, the
 * caller answers a later chunk itself, and past a few of those it waits briefly and then
 * searches the chunk itself (a worker that lags, fails or is gone costs time, not rows).
 *
 * @module
 */

import type { PendingChunk, PrefilterPool } from "./_grep_pool.ts";

/** Files per chunk. */
export const CHUNK_FILES = 48;
/** Files taken from the walk before the worker is used: small trees never need it. */
const SOLO_FILES = 192;
/** Chunks the worker holds at once. */
const WORKER_DEPTH = 3;
/** Chunks the caller answers itself ahead of one the worker has not finished. */
const LOOKAHEAD = 3;
/** How long the caller waits for the worker before searching its chunk itself. */
const WAIT_MS = 25;
/** After this many files answered by the worker, a hit rate above 1 in 3 stops its use. */
const JUDGE_AFTER_FILES = 4 * CHUNK_FILES;

/**
 * Resolves once the worker has answered into `status`, or after `WAIT_MS`. Hazard: a pending
 * `Atomics.waitAsync` does not keep Deno's event loop alive (with nothing else pending, Deno
 * ends the loop and fails the awaiting promise), so a timer runs beside it.
 */
async function waitForAnswer(status: Int32Array): Promise<void> {
  const wait = Atomics.waitAsync(status, 0, 0, WAIT_MS);
  if (!wait.async) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => timer = setTimeout(resolve, WAIT_MS + 5));
  try {
    await Promise.race([wait.value, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Chunk<T> {
  readonly items: readonly T[];
  /** `fresh`: not looked at; `pending`: with the worker; `answered`: `keep` says what to search. */
  state: "fresh" | "pending" | "answered";
  /** Per item: 1 to search it, 0 to skip it. */
  keep?: Uint8Array | undefined;
  /** While pending: the worker's chunk and which item each of its paths is. */
  sent?: { readonly chunk: PendingChunk; readonly at: readonly number[] } | undefined;
}

/** Options of `ChunkedWalk`. */
export interface ChunkedWalkOptions<T> {
  /**
   * The worker to use now, given how many items the walk has yielded, or undefined to search
   * the next chunks in turn (asked again before each chunk: a worker may become ready mid-walk).
   */
  pool(taken: number): PrefilterPool | undefined;
  /** The path the worker may read for `item`; undefined when only the caller may handle it. */
  pathOf(item: T): string | undefined;
  /** The caller's own answer for `path`: 0 when the file needs no search, 1 otherwise. */
  answer(path: string): number;
}

/** The walk in chunks; see the module documentation. */
export class ChunkedWalk<T> {
  readonly #items: Iterator<T>;
  readonly #options: ChunkedWalkOptions<T>;
  readonly #queue: Chunk<T>[] = [];
  /** Worker chunks not answered yet, including those the caller took back. */
  #outstanding: PendingChunk[] = [];
  #taken = 0;
  #ended = false;
  #workerFiles = 0;
  #workerHits = 0;

  constructor(items: Iterator<T>, options: ChunkedWalkOptions<T>) {
    this.#items = items;
    this.#options = options;
  }

  /** How many items have been taken from the walk so far. */
  get taken(): number {
    return this.#taken;
  }

  /**
   * The next files to search, in walk order (one chunk's worth, possibly none); undefined once
   * the walk is done.
   */
  async next(): Promise<readonly T[] | undefined> {
    for (;;) {
      this.#feedWorker();
      const head = this.#queue[0] ?? this.#take();
      if (head === undefined) return undefined;
      if (head.state === "pending" && !this.#settle(head)) {
        // Answer a later chunk meanwhile, or wait a little and then search this one.
        const ahead = this.#queue.find((chunk) => chunk.state === "fresh") ??
          (this.#answeredAhead() < LOOKAHEAD ? this.#take() : undefined);
        if (ahead?.state === "fresh") this.#answer(ahead);
        else if (ahead === undefined) {
          await waitForAnswer(head.sent!.chunk.status);
          if (!this.#settle(head)) {
            head.state = "fresh";
            head.sent = undefined;
          }
        }
        continue;
      }
      this.#queue.shift();
      // Empty too: the caller checks for cancellation and yields between chunks.
      if (head.state === "fresh") return head.items;
      return head.items.filter((_, i) => head.keep![i] === 1);
    }
  }

  /** Chunks the caller has answered and not handed back yet. */
  #answeredAhead(): number {
    let count = 0;
    for (const chunk of this.#queue) if (chunk.state === "answered") count++;
    return count;
  }

  /** The worker while it should get more chunks, else undefined. */
  #workerWanted(): PrefilterPool | undefined {
    if (this.#taken < SOLO_FILES) return undefined;
    const pool = this.#options.pool(this.#taken);
    if (pool === undefined || !pool.usable) return undefined;
    // Files the worker passes are read again by the caller: when most pass, it only adds work.
    if (this.#workerFiles >= JUDGE_AFTER_FILES && this.#workerHits * 3 > this.#workerFiles) {
      return undefined;
    }
    this.#outstanding = this.#outstanding.filter((chunk) => Atomics.load(chunk.status, 0) === 0);
    return this.#outstanding.length < WORKER_DEPTH ? pool : undefined;
  }

  #feedWorker(): void {
    while (this.#workerWanted() !== undefined && this.#take() !== undefined) {
      // #take hands each new chunk to the worker while it wants more.
    }
  }

  /** Takes the next chunk from the walk, giving it to the worker when it wants one. */
  #take(): Chunk<T> | undefined {
    if (this.#ended) return undefined;
    const items: T[] = [];
    while (items.length < CHUNK_FILES) {
      const next = this.#items.next();
      if (next.done === true) {
        this.#ended = true;
        break;
      }
      items.push(next.value);
    }
    if (items.length === 0) return undefined;
    const chunk: Chunk<T> = { items, state: "fresh" };
    const wanted = this.#workerWanted();
    this.#taken += items.length;
    this.#queue.push(chunk);
    if (wanted !== undefined) {
      const paths: string[] = [];
      const at: number[] = [];
      items.forEach((item, i) => {
        const path = this.#options.pathOf(item);
        if (path !== undefined) {
          paths.push(path);
          at.push(i);
        }
      });
      if (paths.length > 0) {
        const sent = wanted.submit(paths);
        this.#outstanding.push(sent);
        chunk.state = "pending";
        chunk.sent = { chunk: sent, at };
      }
    }
    return chunk;
  }

  /** Takes the worker's answers for `chunk` once they are in; false while they are not. */
  #settle(chunk: Chunk<T>): boolean {
    const sent = chunk.sent!;
    if (Atomics.load(sent.chunk.status, 0) !== 1) return false;
    const keep = new Uint8Array(chunk.items.length).fill(1);
    sent.at.forEach((item, i) => {
      keep[item] = sent.chunk.hits[i]!;
      this.#workerHits += keep[item]!;
    });
    this.#workerFiles += sent.at.length;
    chunk.keep = keep;
    chunk.state = "answered";
    chunk.sent = undefined;
    return true;
  }

  /** The caller's own answers for `chunk`. */
  #answer(chunk: Chunk<T>): void {
    const keep = new Uint8Array(chunk.items.length);
    chunk.items.forEach((item, i) => {
      const path = this.#options.pathOf(item);
      keep[i] = path === undefined ? 1 : this.#options.answer(path);
    });
    chunk.keep = keep;
    chunk.state = "answered";
  }
}
