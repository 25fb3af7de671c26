import { assertEquals, assertStringIncludes, assertThrows } from "../_helpers/assert.ts";
import { formatDuration, parseDuration } from "../../tools/_duration.ts";

// Milliseconds in, what Go's `time.Duration.String()` prints for the same span.
const GO_FORMAT: readonly (readonly [number, string])[] = [
  [0, "0s"],
  [1e-6, "1ns"],
  [1e-4, "100ns"],
  [0.000999, "999ns"],
  [0.001, "1µs"],
  [0.0015, "1.5µs"],
  [0.5, "500µs"],
  [0.999999, "999.999µs"],
  [1, "1ms"],
  [1.5, "1.5ms"],
  [1.000001, "1.000001ms"],
  [50, "50ms"],
  [300, "300ms"],
  [999, "999ms"],
  [1000, "1s"],
  [1500, "1.5s"],
  [1001, "1.001s"],
  [59_999, "59.999s"],
  [60_000, "1m0s"],
  [61_000, "1m1s"],
  [90_000, "1m30s"],
  [150_000, "2m30s"],
  [123_456.789, "2m3.456789s"],
  [3_599_999, "59m59.999s"],
  [3_600_000, "1h0m0s"],
  [3_661_500, "1h1m1.5s"],
  [3_660_000, "1h1m0s"],
  [86_400_000, "24h0m0s"],
  [360_000_000, "100h0m0s"],
  [-1500, "-1.5s"],
  [-0.0015, "-1.5µs"],
  [-60_000, "-1m0s"],
];

for (const [ms, go] of GO_FORMAT) {
  Deno.test(`formatDuration(${ms}) is ${go}, as Go prints it`, () => {
    assertEquals(formatDuration(ms), go);
  });
}

Deno.test("formatDuration() works in whole nanoseconds, as a Go Duration does", () => {
  // Go's Duration is an integer count of nanoseconds: less than half of one is zero.
  assertEquals(formatDuration(1e-7), "0s");
  assertEquals(formatDuration(-1e-7), "0s");
  // A hair under a minute rounds to the minute and prints as one.
  assertEquals(formatDuration(59_999.9999999), "1m0s");
  assertEquals(formatDuration(999.9999999), "1s");
});

const GO_PARSE: readonly (readonly [string, number])[] = [
  ["0", 0],
  ["0s", 0],
  ["500ms", 500],
  ["300ms", 300],
  ["90s", 90_000],
  ["2m", 120_000],
  ["1h30m", 5_400_000],
  ["1.5s", 1500],
  ["1.1s", 1100],
  ["2.3s", 2300],
  [".5s", 500],
  ["1.s", 1000],
  ["1m30s", 90_000],
  ["1h1m1.5s", 3_661_500],
  ["1h0m0s", 3_600_000],
  ["1ns", 1e-6],
  ["1us", 0.001],
  ["1µs", 0.001], // U+00B5 micro sign
  ["1μs", 0.001], // U+03BC Greek mu, which Go accepts too
  ["1.5µs", 0.0015],
  ["1s500ms", 1500],
  ["100ms1h", 3_600_100],
];

for (const [text, ms] of GO_PARSE) {
  Deno.test(`parseDuration(${JSON.stringify(text)}) is ${ms} ms`, () => {
    assertEquals(parseDuration(text), ms);
  });
}

Deno.test("parseDuration() reads back what formatDuration() writes", () => {
  for (const [ms] of GO_FORMAT) {
    if (ms < 0) continue;
    assertEquals(parseDuration(formatDuration(ms)), ms, formatDuration(ms));
  }
});

const BAD: readonly string[] = [
  "",
  " ",
  "1",
  "1.5",
  "00",
  "abc",
  "s",
  "ms",
  ".s",
  "1x",
  "1sec",
  "1S",
  "1 h",
  "1s2",
  "1h-30m",
  "1e3s",
  "1..5s",
  "NaN",
  "Infinitys",
  "1s ms",
];

for (const text of BAD) {
  Deno.test(`parseDuration(${JSON.stringify(text)}) throws a RangeError naming the form`, () => {
    const error = assertThrows(() => parseDuration(text), RangeError);
    assertStringIncludes(error.message, `invalid duration ${JSON.stringify(text)}`);
    assertStringIncludes(error.message, "e.g. 500ms, 90s, 2m, 1h30m");
  });
}

Deno.test("parseDuration() error text is exact", () => {
  const error = assertThrows(() => parseDuration("5 minutes"), RangeError);
  assertEquals(
    error.message,
    'invalid duration "5 minutes" (want a number with a unit, e.g. 500ms, 90s, 2m, 1h30m)',
  );
});
