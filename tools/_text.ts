/**
 * Byte-level text helpers shared by read, edit and grep.
 *
 * @module
 */

import { BINARY_SNIFF_BYTES } from "./limits.ts";

const DECODER = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

/** True when a NUL byte occurs in the first 512 bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** UTF-8 decoding that never fails: invalid sequences become U+FFFD, a BOM is kept. */
export function decodeUtf8(bytes: Uint8Array): string {
  return DECODER.decode(bytes);
}

/** The largest `n <= end` that does not split a UTF-8 sequence in `bytes`. */
export function utf8Boundary(bytes: Uint8Array, end: number): number {
  let n = Math.min(end, bytes.length);
  // Step back over continuation bytes (10xxxxxx), at most three.
  for (let i = 0; i < 3 && n > 0 && n < bytes.length && (bytes[n]! & 0xc0) === 0x80; i++) n--;
  return n;
}
