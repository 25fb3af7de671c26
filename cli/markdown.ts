/**
 * Chat replies as terminal markdown: headings, lists, code blocks with a light highlight,
 * links, paragraphs reflowed at the terminal's width without breaking words. Rendering is
 * done by `marked` with `marked-terminal`; without colour the same layout is printed with
 * every escape code removed. A reply streams per completed block (a blank line outside a
 * code fence ends one), so the user still sees progress.
 *
 * @module
 */

import chalk from "chalk";
import { Marked } from "marked";
import { markedTerminal } from "marked-terminal";
import { stripVTControlCharacters } from "node:util";

/** How a markdown text is turned into terminal text. */
export type Render = (markdown: string) => string;

/** A renderer for `width` columns; `color: false` gives plain text (no escape codes). */
export function markdownRenderer(options: { color: boolean; width: () => number }): Render {
  // marked-terminal paints through chalk's shared instance, whose level chalk guesses from
  // the environment (a `CI` variable alone turns colour off at a real terminal). Whether to
  // paint is chat's decision (a terminal, no NO_COLOR): say so to chalk.
  if (options.color && chalk.level === 0) chalk.level = 1;
  return (markdown) => {
    const marked = new Marked();
    // marked-terminal's option and return types do not match marked's own; both are plain
    // objects at run time (see its README: `marked.use(markedTerminal(options))`).
    marked.use(
      markedTerminal({
        width: Math.max(20, options.width()),
        reflowText: true,
        tab: 2,
        showSectionPrefix: true,
      }) as unknown as Parameters<typeof marked.use>[0],
    );
    const out = marked.parse(markdown, { async: false }) as string;
    return options.color ? out : stripVTControlCharacters(out);
  };
}

/** The length of the leading part of `text` made of complete blocks (0 when none is). */
export function completeBlocks(text: string): number {
  let fence: string | undefined;
  let end = 0;
  let at = 0;
  for (;;) {
    const newline = text.indexOf("\n", at);
    if (newline === -1) return end;
    const line = text.slice(at, newline);
    const marker = line.match(/^ {0,3}(`{3,}|~{3,})/)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (
      fence !== undefined && marker !== undefined && marker.startsWith(fence) &&
      line.trim() === marker
    ) fence = undefined;
    else if (fence === undefined && line.trim() === "") end = newline + 1;
    at = newline + 1;
  }
}

/** Feeds streamed text in; writes each completed block rendered, the rest on `flush`. */
export interface MarkdownStream {
  push(text: string): void;
  /** Writes what is left (the turn's text ended); the output then ends with a newline. */
  flush(): void;
}

export function markdownStream(render: Render, write: (text: string) => void): MarkdownStream {
  let buffer = "";
  let shown = 0;
  const emit = (markdown: string) => {
    if (markdown.trim() === "") return;
    const text = render(markdown).replace(/^\n+/, "").replace(/\s+$/, "");
    if (text === "") return;
    write((shown++ > 0 ? "\n" : "") + text + "\n");
  };
  return {
    push(text) {
      buffer += text;
      const end = completeBlocks(buffer);
      if (end === 0) return;
      const done = buffer.slice(0, end);
      buffer = buffer.slice(end);
      emit(done);
    },
    flush() {
      const rest = buffer;
      buffer = "";
      emit(rest);
      shown = 0;
    },
  };
}
