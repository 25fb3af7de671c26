/**
 * Text that models, tools and the files they read produced, made safe to show on a terminal:
 * every character the terminal would act on instead of showing is written out as text.
 *
 * Hazard: a terminal obeys what it is sent. An escape sequence in a model's reply or a
 * command's output would clear the screen or move the cursor (and so redraw the approval
 * prompt to show `ls` while `rm -rf ~` is asked), write the clipboard (OSC 52), retitle the
 * window, or hide text (SGR 8, foreground = background); a carriage return or backspaces
 * overwrite what was shown; C1 controls (U+0080..U+009F) are escape sequences of their own on
 * some terminals; bidirectional controls (U+202E) make the terminal show characters in another
 * order than they run (Trojan Source, CVE-2021-42574). So these are shown as `\xNN` (C0, DEL,
 * C1) or `<U+XXXX>` (bidi and, in `visibleExact`, every other invisible format character).
 * Newlines and tabs stay; a `\r\n` line end is shown as a newline.
 *
 * Our own colouring is added after this, around text already made visible: callers apply
 * these functions to what they did not write themselves, then paint.
 *
 * Sources: CVE-2024-27936 (Deno's permission prompt spoofed with ANSI escapes in a name,
 * https://github.com/CWE-CAPEC/CWE-Content-Development-Repository/issues/112); Claude Code
 * replaying escape sequences from stored tool output (anthropics/claude-code#18418); the
 * same class in other agents' streamed output and tool summaries
 * (Growth-Circle/cadis#1723, woojubb/robota#2022, michelbr84/GarraRUST#995) and bidi in an
 * approval card (Growth-Circle/cadis#791).
 *
 * @module
 */

/** C0 controls but tab and newline, DEL, and C1; a CR before a newline is taken with it. */
// deno-lint-ignore no-control-regex -- control characters are what is matched
const CONTROL = /\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Bidirectional controls: marks, embeddings, overrides, isolates. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Every invisible format character (`Cf`: zero-width spaces and joiners, word joiner, BOM,
 * soft hyphen, tag characters), line and paragraph separators, and the bidi controls. In a
 * command, a path or a name, none of them is needed and each can make two different texts
 * look the same.
 */
const FORMAT = /[\p{Cf}\u2028\u2029]/gu;

/** `\xNN` for each code unit up to U+009F (only the controls among them are looked up). */
const HEX = Array.from({ length: 0xa0 }, (_, n) => `\\x${n.toString(16).padStart(2, "0")}`);

function control(c: string): string {
  return c.length === 2 ? "\n" : HEX[c.charCodeAt(0)]!;
}

function codePoint(c: string): string {
  return `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/**
 * `text` with terminal controls shown as `\xNN` and bidi controls as `<U+XXXX>`: for prose
 * (replies, reasoning, command output, file contents), where joiners inside emoji stay.
 */
export function visible(text: string): string {
  return text.replace(CONTROL, control).replace(BIDI, codePoint);
}

/**
 * `visible`, and every invisible format character shown too: for what the operator must read
 * exactly (a command to approve, a path, a tool's name).
 */
export function visibleExact(text: string): string {
  return text.replace(CONTROL, control).replace(FORMAT, codePoint);
}

/** `value` with every string in it (keys too) passed through `visibleExact`. */
export function visibleValue(value: unknown): unknown {
  if (typeof value === "string") return visibleExact(value);
  if (Array.isArray(value)) return value.map(visibleValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [visibleExact(k), visibleValue(v)]),
    );
  }
  return value;
}

/**
 * A JSON text (from `JSON.stringify`) with DEL, C1, the line separators and the bidi and
 * format characters also written as `\uXXXX`: the same JSON value, which no terminal acts on.
 * (`JSON.stringify` escapes only C0.)
 */
export function jsonVisible(json: string): string {
  return json.replace(/[\x7f-\x9f\p{Cf}\u2028\u2029]/gu, (c) => {
    let out = "";
    // Each UTF-16 unit of the character (a tag character is a surrogate pair).
    for (let i = 0; i < c.length; i++) {
      out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
    return out;
  });
}
