/**
 * Text from the model, a file or a command, made safe to put on a terminal: every control
 * character but newline and tab, DEL, the C1 range and the bidirectional overrides are
 * written out as visible escapes (`\x1b`, `\x0d`, `\u{202e}`), so nothing shown can move the
 * cursor, erase a line, recolour or conceal text, set the title or the clipboard, or reorder
 * what the operator reads. The approval prompt depends on it: a command holding
 * `\r\x1b[2K$ ls` must not be shown as `$ ls`.
 *
 * Credit: Deno's own permission prompt had this hole (CVE-2024-27936, denoland/deno).
 *
 * @module
 */

// C0 but \t and \n, DEL, C1, ALM, LRM/RLM, the embeddings and overrides, the isolates.
// deno-lint-ignore no-control-regex -- control characters are what is matched
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function shown(char: string): string {
  const code = char.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/** `text` with every character that could act on a terminal written out visibly. */
export function visible(text: string): string {
  return text.replace(UNSAFE, shown);
}
