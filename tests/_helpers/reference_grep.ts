import { RE2JS } from "re2js";
import { GREP_MAX_LINE_CHARS } from "../../tools/limits.ts";

const ENCODER = new TextEncoder();

/**
 * grep's rows by the spec, directly, for checking the real grep against: files in the given
 * order (sorted names for a record), each decoded as UTF-8, one trailing \r dropped per line,
 * every line tested with RE2; files with a NUL byte, empty ones and those over `maxBytes`
 * are skipped; rows are cut at the tool's line limit.
 */
export function referenceGrep(
  files:
    | ReadonlyArray<readonly [string, Uint8Array]>
    | Readonly<Record<string, string | Uint8Array>>,
  root: string,
  pattern: string,
  ignoreCase: boolean,
  maxBytes = Infinity,
): string {
  const re = RE2JS.compile(pattern, RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
  const list = Array.isArray(files)
    ? files as ReadonlyArray<readonly [string, Uint8Array]>
    : Object.keys(files).sort().map((name) => {
      const raw = (files as Record<string, string | Uint8Array>)[name]!;
      return [name, typeof raw === "string" ? ENCODER.encode(raw) : raw] as const;
    });
  let out = "";
  for (const [name, bytes] of list) {
    if (bytes.length > maxBytes || bytes.includes(0)) continue;
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
    if (text === "") continue;
    const lines = text.split("\n");
    if (text.endsWith("\n")) lines.pop();
    lines.forEach((line, i) => {
      const body = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (!re.test(body)) return;
      const chars = Array.from(body);
      const row = chars.length > GREP_MAX_LINE_CHARS
        ? chars.slice(0, GREP_MAX_LINE_CHARS).join("") + "…"
        : body;
      out += `${root}/${name}:${i + 1}: ${row}\n`;
    });
  }
  return out === "" ? "no matches" : out;
}
