/**
 * Chat replies as terminal markdown: headings, lists, code blocks with a light highlight,
 * links, paragraphs reflowed at the terminal's width without breaking words. Rendering is
 * done by `marked` with `marked-terminal`, except lists, which are ours: marked-terminal
 * prints their inline markup raw (`**two**`) and swaps the bullet for `*`, so a list keeps
 * the bullet the model wrote, paints bold, code and links like a paragraph does, and wraps
 * each item at the width with its continuation lines under the item's text. Without colour
 * the same layout is printed with every escape code removed. A reply streams per completed block (a blank line outside a
 * code fence ends one), so the user still sees progress.
 *
 * @module
 */

import chalk from "chalk";
import { Marked, type Token, type Tokens } from "marked";
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
    const width = Math.max(20, options.width());
    marked.use(
      markedTerminal({
        width,
        reflowText: true,
        tab: 2,
        showSectionPrefix: true,
      }) as unknown as Parameters<typeof marked.use>[0],
    );
    marked.use({
      renderer: {
        list(token) {
          return renderList(
            token,
            width,
            (tokens) => this.parser.parseInline(tokens),
            (t) => this.parser.parse(t),
          ) + "\n\n";
        },
        checkbox: ({ checked }) => checked ? "[x] " : "[ ] ",
        // A link always shows its address: marked-terminal sends an OSC 8 hyperlink where the
        // terminal supports them (iTerm2, VTE, Windows Terminal), and its text, which the
        // model chose, could then stand for any other address.
        link(token) {
          const text = this.parser.parseInline(token.tokens);
          const href = chalk.blue.underline(token.href);
          return stripVTControlCharacters(text) === token.href ? href : `${text} (${href})`;
        },
      },
    });
    const out = marked.parse(markdown, { async: false }) as string;
    return options.color ? out : stripVTControlCharacters(out);
  };
}

/** `text` (inline-rendered, escapes allowed) wrapped between words at `width` visible columns. */
function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    let seen = 0;
    for (const word of paragraph.split(/ +/)) {
      const size = stripVTControlCharacters(word).length;
      if (seen > 0 && seen + 1 + size > width) {
        lines.push(line);
        line = "";
        seen = 0;
      }
      line += (seen > 0 ? " " : "") + word;
      seen += (seen > 0 ? 1 : 0) + size;
    }
    lines.push(line);
  }
  return lines;
}

/**
 * A markdown list as terminal lines: each item's marker as written (`-`, `*`, `+`, or its
 * number), inline markup rendered, text wrapped under itself, nested lists indented under
 * their item's text, other blocks (code) rendered by marked-terminal and indented the same.
 */
function renderList(
  list: Tokens.List,
  width: number,
  inline: (tokens: Token[]) => string,
  block: (tokens: Token[]) => string,
): string {
  const start = typeof list.start === "number" ? list.start : 1;
  const out: string[] = [];
  list.items.forEach((item, i) => {
    const marker = list.ordered ? `${start + i}.` : item.raw.trimStart()[0] ?? "-";
    const pad = " ".repeat(marker.length + 1);
    const body: string[] = [];
    let box = "";
    for (const token of item.tokens) {
      if (token.type === "space") continue;
      if (token.type === "checkbox") {
        box = (token as Tokens.Checkbox).checked ? "[x] " : "[ ] ";
        continue;
      }
      let lines: string[];
      if (token.type === "list") {
        lines = renderList(token as Tokens.List, width - pad.length, inline, block).split("\n");
      } else if (token.type === "text" || token.type === "paragraph") {
        const tokens = (token as Tokens.Text).tokens ?? [token];
        lines = wrapWords(box + inline(tokens), width - pad.length);
        box = "";
        if (item.loose && body.length > 0) body.push("");
      } else {
        lines = block([token]).replace(/^\n+|\n+$/g, "").split("\n");
        if (body.length > 0) body.push("");
      }
      body.push(...lines);
    }
    if (box !== "") body.push(box.trimEnd());
    if (body.length === 0) body.push("");
    out.push(`${marker} ${body[0]}`, ...body.slice(1).map((l) => l === "" ? "" : pad + l));
    if (list.loose && i < list.items.length - 1) out.push("");
  });
  return out.join("\n");
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
