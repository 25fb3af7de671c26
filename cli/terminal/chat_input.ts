/**
 * Chat's keyboard input with bracketed paste: the terminal is asked (`ESC[?2004h`) to wrap
 * pasted text in `ESC[200~ … ESC[201~`, so a pasted block is known to be one, whatever the
 * chunks it arrives in. Typed keys pass through to `node:readline`; a paste is handed whole
 * to `onPaste` and never reaches readline (which would submit at its first newline).
 *
 * @module
 */

import { PassThrough } from "node:stream";
import process from "node:process";

export const PASTE_ON = "\x1b[?2004h";
export const PASTE_OFF = "\x1b[?2004l";
const START = "\x1b[200~";
const END = "\x1b[201~";

/** The length of the longest end of `text` that is a start of `marker` (a split marker). */
function partialMarker(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

/** Splits a terminal byte stream into typed text and whole pastes. */
export function pasteSplitter(
  typed: (text: string) => void,
  pasted: (text: string) => void,
): (chunk: string) => void {
  let held = "";
  let paste: string | undefined;
  return (chunk) => {
    let text = held + chunk;
    held = "";
    for (;;) {
      if (paste === undefined) {
        const at = text.indexOf(START);
        if (at === -1) {
          const keep = partialMarker(text, START);
          if (text.length > keep) typed(text.slice(0, text.length - keep));
          held = text.slice(text.length - keep);
          return;
        }
        if (at > 0) typed(text.slice(0, at));
        paste = "";
        text = text.slice(at + START.length);
      } else {
        const at = text.indexOf(END);
        if (at === -1) {
          const keep = partialMarker(text, END);
          paste += text.slice(0, text.length - keep);
          held = text.slice(text.length - keep);
          return;
        }
        const whole = paste + text.slice(0, at);
        paste = undefined;
        text = text.slice(at + END.length);
        pasted(whole.replace(/\r\n?/g, "\n"));
      }
    }
  };
}

/** The terminal input readline reads from, with pastes taken out; `close` lets stdin go. */
export interface ChatInput {
  readonly stream: NodeJS.ReadableStream;
  /** Feeds text to readline as if typed (a one-line paste goes in the line being edited). */
  type(text: string): void;
  close(): void;
}

export function chatInput(onPaste: (text: string) => void): ChatInput {
  const stream = new PassThrough();
  // readline puts the terminal in raw mode through its input; this one is the real stdin.
  Object.assign(stream, {
    isTTY: true,
    setRawMode: (mode: boolean) => {
      process.stdin.setRawMode?.(mode);
      return stream;
    },
  });
  const split = pasteSplitter((text) => stream.write(text), onPaste);
  const onData = (chunk: Buffer | string) => split(chunk.toString());
  process.stdin.on("data", onData);
  // An earlier reader (the --resume picker's) may have paused it.
  process.stdin.resume();
  return {
    stream,
    type: (text) => stream.write(text),
    close() {
      process.stdin.off("data", onData);
      process.stdin.pause();
      stream.end();
    },
  };
}
