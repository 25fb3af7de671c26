/**
 * Bounded capture of a byte stream: the first and last halves of the cap are kept, the
 * middle is counted, so memory stays fixed however much a process prints.
 *
 * @module
 */

import { decodeUtf8 } from "./_text.ts";

function sequenceLength(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

/** Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
function wholePrefix(bytes: Uint8Array): number {
  let lead = bytes.length - 1;
  while (lead > 0 && lead > bytes.length - 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return 0;
  return lead + sequenceLength(bytes[lead]!) <= bytes.length ? bytes.length : lead;
}

/** Number of continuation bytes `bytes` starts with (a sequence cut at its front). */
function cutFront(bytes: Uint8Array): number {
  let n = 0;
  while (n < bytes.length && n < 3 && (bytes[n]! & 0xc0) === 0x80) n++;
  return n;
}

/** Keeps the head and tail of what is appended, within `cap` bytes. */
export class HeadTail {
  readonly #head: Uint8Array;
  readonly #ring: Uint8Array;
  #headLength = 0;
  #ringEnd = 0; // next write position in the ring
  #ringLength = 0;
  #total = 0;

  /** `cap` is the most bytes kept; half goes to the head, the rest to the tail. */
  constructor(cap: number) {
    const half = Math.floor(cap / 2);
    this.#head = new Uint8Array(half);
    this.#ring = new Uint8Array(cap - half);
  }

  /** Bytes appended so far. */
  get total(): number {
    return this.#total;
  }

  /** Appends a chunk. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headLength < this.#head.length) {
      const n = Math.min(rest.length, this.#head.length - this.#headLength);
      this.#head.set(rest.subarray(0, n), this.#headLength);
      this.#headLength += n;
      rest = rest.subarray(n);
    }
    const ring = this.#ring;
    if (ring.length === 0 || rest.length === 0) return;
    if (rest.length > ring.length) rest = rest.subarray(rest.length - ring.length);
    const first = Math.min(rest.length, ring.length - this.#ringEnd);
    ring.set(rest.subarray(0, first), this.#ringEnd);
    ring.set(rest.subarray(first), 0);
    this.#ringEnd = (this.#ringEnd + rest.length) % ring.length;
    this.#ringLength = Math.min(ring.length, this.#ringLength + rest.length);
  }

  /** The kept text; when bytes were dropped, `[... <n> bytes omitted ...]` stands between. */
  text(): string {
    const ring = this.#ring;
    const tail = new Uint8Array(this.#ringLength);
    const start = (this.#ringEnd - this.#ringLength + ring.length) % (ring.length || 1);
    const first = Math.min(this.#ringLength, ring.length - start);
    tail.set(ring.subarray(start, start + first));
    tail.set(ring.subarray(0, this.#ringLength - first), first);
    const head = this.#head.subarray(0, this.#headLength);
    const omitted = this.#total - head.length - tail.length;
    if (omitted === 0) {
      const all = new Uint8Array(head.length + tail.length);
      all.set(head);
      all.set(tail, head.length);
      return decodeUtf8(all);
    }
    // Move both cut points off the middle of a UTF-8 sequence; those bytes count as omitted.
    const headEnd = wholePrefix(head);
    const tailStart = cutFront(tail);
    const dropped = omitted + (head.length - headEnd) + tailStart;
    return decodeUtf8(head.subarray(0, headEnd)) + `\n[... ${dropped} bytes omitted ...]\n` +
      decodeUtf8(tail.subarray(tailStart));
  }
}
