/**
 * A synchronous question from the tool worker to its host: where does open file descriptor N
 * lead? The kernel's answer (`/proc/self/fd/N`) is what makes confinement race-free (see
 * `proveOpenedSync` in `_workspace.ts`), but Deno refuses `/proc/self` paths to any isolate
 * short of `--allow-all`, so the worker, with its narrowed permissions, cannot read it. The
 * host isolate can, and file descriptors belong to the process, so the host answers.
 *
 * The worker asks synchronously (the proof sits between an open and the first use of the
 * file) over a SharedArrayBuffer: it writes the descriptor and a sequence number, wakes the
 * host and blocks in `Atomics.wait`; the host, waiting with `Atomics.waitAsync`, reads the
 * link and answers with the same sequence number. A worker that gets no answer in time stops
 * using the channel for good, so every later proof fails closed.
 *
 * The host learns nothing from a question but a descriptor number, and answers only with a
 * path; a worker that lies to itself gains nothing, since the answer only ever narrows what
 * the worker's own tools accept.
 *
 * @module
 */

const IDLE = 0;
const ASKED = 1;
const ANSWERED = 2;
const CLOSED = 3;

// Int32 slots: state, descriptor, question number, answer number, answer length.
const STATE = 0;
const FD = 1;
const ASKED_SEQ = 2;
const ANSWER_SEQ = 3;
const LENGTH = 4;
const HEADER_BYTES = 5 * 4;
/** Longest answer: PATH_MAX bytes, plus room for " (deleted)". */
const PATH_BYTES = 4096 + 64;
/** How long the worker waits for the host before giving the channel up. */
const ANSWER_TIMEOUT_MS = 10_000;

/** A new channel, to be served by the host and handed to the worker. */
export function createFdChannel(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + PATH_BYTES);
}

/** Writes where `fd` leads into `bytes`; its length, or -1 when it cannot tell. */
function answer(fd: number, bytes: Uint8Array, encoder: TextEncoder): number {
  // Synchronous on purpose: the worker is blocked until the answer is in, and a readlink of
  // /proc/self/fd is answered from the kernel's memory.
  try {
    const link = encoder.encode(Deno.readLinkSync(`/proc/self/fd/${fd}`));
    if (link.length > PATH_BYTES) return -1;
    bytes.set(link);
    return link.length;
  } catch {
    return -1;
  }
}

/**
 * Answers the worker's questions on `channel` until the returned function is called. An
 * answer of length -1 means "cannot tell" (no `/proc`, or a path too long to send).
 */
export function serveFdChannel(channel: SharedArrayBuffer): () => void {
  const state = new Int32Array(channel, 0, HEADER_BYTES / 4);
  const bytes = new Uint8Array(channel, HEADER_BYTES, PATH_BYTES);
  const encoder = new TextEncoder();
  let stopped = false;
  (async () => {
    while (!stopped) {
      const now = Atomics.load(state, STATE);
      if (now === CLOSED) return;
      if (now !== ASKED) {
        const waiting = Atomics.waitAsync(state, STATE, now);
        if (waiting.async) await waiting.value;
        continue;
      }
      Atomics.store(state, LENGTH, answer(state[FD]!, bytes, encoder));
      Atomics.store(state, ANSWER_SEQ, Atomics.load(state, ASKED_SEQ));
      Atomics.store(state, STATE, ANSWERED);
      Atomics.notify(state, STATE);
    }
  })();
  return () => {
    stopped = true;
    Atomics.store(state, STATE, CLOSED);
    Atomics.notify(state, STATE);
  };
}

/**
 * The worker's side of `channel`: a function giving the path `fd` leads to, undefined when
 * the host cannot tell, and throwing when the host did not answer (then and ever after).
 */
export function askFdChannel(channel: SharedArrayBuffer): (fd: number) => string | undefined {
  const state = new Int32Array(channel, 0, HEADER_BYTES / 4);
  const bytes = new Uint8Array(channel, HEADER_BYTES, PATH_BYTES);
  const decoder = new TextDecoder();
  let seq = 0;
  let broken = false;
  return (fd) => {
    if (broken) throw new Error("the tool host stopped answering where opened files lead");
    seq = (seq + 1) | 0;
    Atomics.store(state, FD, fd);
    Atomics.store(state, ASKED_SEQ, seq);
    // Only an idle channel takes a question: a closed one stays closed.
    if (Atomics.compareExchange(state, STATE, IDLE, ASKED) !== IDLE) {
      broken = true;
      throw new Error("the tool host did not answer where an opened file leads");
    }
    Atomics.notify(state, STATE);
    const deadline = performance.now() + ANSWER_TIMEOUT_MS;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      Atomics.wait(state, STATE, ASKED, left);
      if (Atomics.load(state, STATE) === ANSWERED && Atomics.load(state, ANSWER_SEQ) === seq) {
        const length = Atomics.load(state, LENGTH);
        // A copy: decoding a view of shared memory is not allowed.
        const path = length < 0 ? undefined : decoder.decode(bytes.slice(0, length));
        Atomics.store(state, STATE, IDLE);
        Atomics.notify(state, STATE);
        return path;
      }
      if (Atomics.load(state, STATE) === CLOSED) break;
    }
    broken = true;
    throw new Error("the tool host did not answer where an opened file leads");
  };
}
