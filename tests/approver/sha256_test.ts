/**
 * The audit file's SHA-256 (approver/audit/_sha256.ts) against FIPS 180-4's examples and
 * against Web Crypto on every length across the padding boundaries and on random inputs: a
 * chain hashed by one must verify by the other.
 *
 * @module
 */

import { assertEquals } from "../_helpers/assert.ts";
import { sha256Hex } from "../../approver/audit/_sha256.ts";

async function webCrypto(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("sha256: the hash is FIPS 180-4's for its examples", () => {
  const text = (s: string) => sha256Hex(new TextEncoder().encode(s));
  assertEquals(text(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assertEquals(text("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assertEquals(
    text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256: the hash is Web Crypto's at every length around the block boundaries", async () => {
  for (let length = 0; length <= 300; length++) {
    const bytes = new Uint8Array(length).map((_, i) => (i * 131 + length) & 0xff);
    assertEquals(sha256Hex(bytes), await webCrypto(bytes), `length ${length}`);
  }
});

Deno.test("sha256: the hash is Web Crypto's for random inputs, multi-byte text included", async () => {
  for (let i = 0; i < 200; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(Math.floor(Math.random() * 5000)));
    assertEquals(sha256Hex(bytes), await webCrypto(bytes));
  }
  const text = new TextEncoder().encode("é中😀".repeat(1000));
  assertEquals(sha256Hex(text), await webCrypto(text));
});
