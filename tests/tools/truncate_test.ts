import { assert, assertEquals } from "../_helpers/assert.ts";
import { HeadTail } from "../../tools/_truncate.ts";
import { prng } from "../_helpers/prng.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

function marker(n: number): string {
  return `\n[... ${n} bytes omitted ...]\n`;
}

/** Pushes `data` into a new HeadTail(cap) in chunks of the given sizes (the rest in one). */
function capture(cap: number, data: Uint8Array, sizes: readonly number[] = []): HeadTail {
  const sink = new HeadTail(cap);
  let at = 0;
  for (const size of sizes) {
    if (at >= data.length) break;
    sink.push(data.subarray(at, at + size));
    at += size;
  }
  if (at < data.length) sink.push(data.subarray(at));
  return sink;
}

function randomInt(random: () => number, max: number): number {
  return Math.floor(random() * (max + 1));
}

/** Random chunk sizes covering `length` bytes: empty chunks, single bytes, big ones. */
function randomChunking(random: () => number, length: number): number[] {
  const sizes: number[] = [];
  let sum = 0;
  while (sum < length) {
    const kind = random();
    const size = kind < 0.1 ? 0 : kind < 0.4 ? 1 : kind < 0.8 ? randomInt(random, 7) : randomInt(
      random,
      length,
    );
    sizes.push(size);
    sum += size;
  }
  return sizes;
}

const SAMPLE_CHARS = ["a", "b", "\n", " ", "é", "ß", "€", "中", "😀", "𝄞", "\u0000", "~"];

function randomText(random: () => number, maxChars: number): string {
  let text = "";
  const n = randomInt(random, maxChars);
  for (let i = 0; i < n; i++) text += SAMPLE_CHARS[randomInt(random, SAMPLE_CHARS.length - 1)];
  return text;
}

/**
 * The expected text for valid UTF-8, computed on characters rather than bytes: the head
 * is the longest run of whole characters in the first floor(cap/2) bytes, the tail the
 * longest run of whole characters in the last cap - floor(cap/2) bytes.
 */
function expectedText(text: string, cap: number): string {
  const total = bytes(text).length;
  if (total <= cap) return text;
  const half = Math.floor(cap / 2);
  const tailBytes = cap - half;
  const chars = [...text];
  let head = "";
  let headLength = 0;
  for (const char of chars) {
    const n = bytes(char).length;
    if (headLength + n > half) break;
    head += char;
    headLength += n;
  }
  let tail = "";
  let tailLength = 0;
  for (const char of chars.reverse()) {
    const n = bytes(char).length;
    if (tailLength + n > tailBytes) break;
    tail = char + tail;
    tailLength += n;
  }
  return head + marker(total - headLength - tailLength) + tail;
}

Deno.test("HeadTail keeps everything up to the cap", () => {
  assertEquals(new HeadTail(10).text(), "");
  assertEquals(capture(10, bytes("")).text(), "");
  assertEquals(capture(10, bytes("abc")).text(), "abc");
  const exact = capture(10, bytes("0123456789"));
  assertEquals(exact.text(), "0123456789");
  assertEquals(exact.total, 10);
});

Deno.test("HeadTail cuts the middle one byte over the cap", () => {
  const sink = capture(10, bytes("0123456789A"));
  assertEquals(sink.text(), `01234${marker(1)}6789A`);
  assertEquals(sink.total, 11);
});

Deno.test("HeadTail with an odd cap gives the extra byte to the tail", () => {
  assertEquals(capture(7, bytes("0123456")).text(), "0123456");
  assertEquals(capture(7, bytes("0123456789")).text(), `012${marker(3)}6789`);
});

Deno.test("HeadTail counts every dropped byte", () => {
  const data = bytes("x".repeat(1000) + "END");
  const sink = capture(20, data, [1, 2, 3, 500]);
  assertEquals(sink.total, 1003);
  assertEquals(sink.text(), `xxxxxxxxxx${marker(983)}xxxxxxxEND`);
});

Deno.test("HeadTail with tiny caps", () => {
  assertEquals(capture(0, bytes("")).text(), "");
  assertEquals(capture(0, bytes("abc")).text(), marker(3));
  assertEquals(capture(1, bytes("a")).text(), "a");
  assertEquals(capture(1, bytes("abc")).text(), `${marker(2)}c`);
  assertEquals(capture(2, bytes("abc")).text(), `a${marker(1)}c`);
});

Deno.test("HeadTail handles a chunk larger than the whole cap after a wrap", () => {
  const sink = new HeadTail(8);
  sink.push(bytes("abcd")); // head full
  sink.push(bytes("efg")); // ring partly filled
  sink.push(bytes("hijklmnopqrstuvwxyz")); // far larger than the ring
  assertEquals(sink.text(), `abcd${marker(18)}wxyz`);
  sink.push(bytes("12"));
  assertEquals(sink.text(), `abcd${marker(20)}yz12`);
});

Deno.test("HeadTail.text() does not disturb the capture", () => {
  const sink = new HeadTail(6);
  sink.push(bytes("abcdef"));
  assertEquals(sink.text(), "abcdef");
  assertEquals(sink.text(), "abcdef");
  sink.push(bytes("g"));
  assertEquals(sink.text(), `abc${marker(1)}efg`);
  assertEquals(sink.text(), `abc${marker(1)}efg`);
});

Deno.test("HeadTail does not keep references to pushed chunks", () => {
  const sink = new HeadTail(8);
  const chunk = bytes("abcdefghij");
  sink.push(chunk);
  chunk.fill(0x3f); // "?"
  assertEquals(sink.text(), `abcd${marker(2)}ghij`);
});

Deno.test("HeadTail never splits a UTF-8 character at the head cut", () => {
  // cap 10: the head is the first 5 bytes.
  for (const char of ["é", "€", "😀"]) { // 2, 3 and 4 bytes
    const n = bytes(char).length;
    for (let ascii = 0; ascii <= 5; ascii++) {
      const text = "a".repeat(ascii) + char + "b".repeat(20);
      const got = capture(10, bytes(text)).text();
      assertEquals(got, expectedText(text, 10), `${ascii} + ${n}-byte`);
      assert(!got.includes("\uFFFD"), got);
      const headHasChar = ascii + n <= 5;
      assertEquals(got.startsWith("a".repeat(ascii) + (headHasChar ? char : "\n")), true, got);
    }
  }
});

Deno.test("HeadTail never splits a UTF-8 character at the tail cut", () => {
  // cap 10: the tail is the last 5 bytes.
  for (const char of ["é", "€", "😀"]) {
    for (let ascii = 0; ascii <= 5; ascii++) {
      const text = "a".repeat(20) + char + "b".repeat(ascii);
      const got = capture(10, bytes(text)).text();
      assertEquals(got, expectedText(text, 10), `${ascii} after ${char}`);
      assert(!got.includes("\uFFFD"), got);
    }
  }
});

Deno.test("HeadTail moves both cuts and counts the bytes moved over", () => {
  // head "aaaa" + first byte of €, tail last two bytes of € + "bbb": both partial.
  const text = "aaaa€" + "x".repeat(10) + "€bbb";
  // 4 + 3 + 10 + 3 + 3 = 23 bytes; kept 4 + 3; omitted 16 (1 + 2 of them off the cuts).
  assertEquals(bytes(text).length, 23);
  assertEquals(capture(10, bytes(text)).text(), `aaaa${marker(23 - 4 - 3)}bbb`);
});

Deno.test("HeadTail keeps a cut character whole when it fits exactly", () => {
  assertEquals(capture(8, bytes("😀" + "x".repeat(10) + "😀")).text(), `😀${marker(10)}😀`);
  assertEquals(capture(6, bytes("€" + "x".repeat(10) + "€")).text(), `€${marker(10)}€`);
});

Deno.test("HeadTail property: random valid UTF-8, caps and chunkings match the model", () => {
  for (let seed = 1; seed <= 3000; seed++) {
    const random = prng(seed);
    const text = randomText(random, 60);
    const data = bytes(text);
    const cap = randomInt(random, 40);
    const expected = expectedText(text, cap);
    const whole = capture(cap, data).text();
    assertEquals(whole, expected, `seed ${seed}, cap ${cap}, whole`);
    for (let round = 0; round < 4; round++) {
      const sizes = randomChunking(random, data.length);
      const sink = capture(cap, data, sizes);
      assertEquals(sink.text(), expected, `seed ${seed}, cap ${cap}, chunks ${sizes}`);
      assertEquals(sink.total, data.length, `seed ${seed}`);
    }
  }
});

Deno.test("HeadTail property: arbitrary bytes are chunking-independent", () => {
  for (let seed = 1; seed <= 2000; seed++) {
    const random = prng(seed * 7919);
    const data = new Uint8Array(randomInt(random, 80));
    for (let i = 0; i < data.length; i++) data[i] = randomInt(random, 255);
    const cap = randomInt(random, 50);
    const whole = capture(cap, data).text();
    if (data.length <= cap) {
      assertEquals(whole, decoder.decode(data), `seed ${seed}`);
    } else {
      const match = /\n\[\.\.\. (\d+) bytes omitted \.\.\.\]\n/.exec(whole);
      assert(match !== null, `seed ${seed}: ${JSON.stringify(whole)}`);
      // At most three bytes move off each cut.
      const omitted = Number(match[1]);
      assert(omitted >= data.length - cap && omitted <= data.length - cap + 6, `seed ${seed}`);
    }
    for (let round = 0; round < 4; round++) {
      const sizes = randomChunking(random, data.length);
      assertEquals(capture(cap, data, sizes).text(), whole, `seed ${seed}, chunks ${sizes}`);
    }
  }
});

Deno.test("HeadTail property: big ASCII streams in random chunks keep exact head and tail", () => {
  for (let seed = 1; seed <= 40; seed++) {
    const random = prng(seed * 104_729);
    const length = 1000 + randomInt(random, 50_000);
    const data = new Uint8Array(length);
    for (let i = 0; i < length; i++) data[i] = 0x21 + randomInt(random, 0x5d);
    const cap = randomInt(random, 4096);
    const half = Math.floor(cap / 2);
    const text = decoder.decode(data);
    const expected = length <= cap
      ? text
      : text.slice(0, half) + marker(length - cap) + text.slice(length - (cap - half));
    const sink = capture(cap, data, randomChunking(random, length));
    assertEquals(sink.text(), expected, `seed ${seed}`);
  }
});

Deno.test("HeadTail at the bash default cap: 131072 kept, 131073 cut to 65536 + 65536", () => {
  const cap = 131_072;
  const exact = new Uint8Array(cap).fill(0x61);
  assertEquals(capture(cap, exact, [4096, 4096]).text(), "a".repeat(cap));
  const over = new Uint8Array(cap + 1).fill(0x61);
  over[0] = 0x48; // H
  over[cap] = 0x54; // T
  assertEquals(
    capture(cap, over, [65_535, 1, 1]).text(),
    "H" + "a".repeat(65_535) + marker(1) + "a".repeat(65_535) + "T",
  );
});
