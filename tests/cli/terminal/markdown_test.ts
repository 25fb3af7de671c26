/**
 * The markdown a model commonly writes, rendered for the terminal (cli/terminal/markdown.ts): lists
 * with inline code, bold and links, nested and numbered lists, task lists, tables and fenced
 * code; and the chat header fitted between its fields (cli/terminal/chat_status.ts).
 */

import { assert, assertEquals } from "../../_helpers/assert.ts";
import { markdownRenderer } from "../../../cli/terminal/markdown.ts";
import { fitFields } from "../../../cli/terminal/chat_status.ts";

const ESC = "\x1b";

function plain(markdown: string, width = 80): string[] {
  return markdownRenderer({ color: false, width: () => width })(markdown).replace(/\n+$/, "")
    .split("\n");
}

Deno.test("markdownRenderer() renders the markdown models write, in plain text", async (t) => {
  const rows: [string, string, string[], number?][] = [
    ["bullet kept, bold and code rendered", "- item **two** and `code`\n- three", [
      "- item two and code",
      "- three",
    ]],
    ["a star bullet stays a star", "* one\n* two", ["* one", "* two"]],
    ["links show their address", "- see [the docs](https://example.org)", [
      "- see the docs (https://example.org)",
    ]],
    ["nested lists sit under their item's text", "- a\n  - b **c**\n    - d\n- e", [
      "- a",
      "  - b c",
      "    - d",
      "- e",
    ]],
    ["numbered lists keep their start", "3. three `x`\n4. four", ["3. three x", "4. four"]],
    ["a numbered list inside a bullet", "- steps\n  1. one\n  2. two", [
      "- steps",
      "  1. one",
      "  2. two",
    ]],
    ["task lists", "- [ ] todo\n- [x] done **now**", ["- [ ] todo", "- [x] done now"]],
    ["a long item wraps under its text, between words", "- " + "word ".repeat(12).trim(), [
      "- word word word word word",
      "  word word word word word",
      "  word word",
    ], 28],
    ["a table", "| a | b |\n|---|---|\n| **x** | `y` |", [
      "┌───┬───┐",
      "│ a │ b │",
      "├───┼───┤",
      "│ x │ y │",
      "└───┴───┘",
    ]],
    ["fenced code, indented, fences gone", "```ts\nconst x = 1;\n```", ["  const x = 1;"]],
    ["code inside a list item", "- run it:\n\n  ```sh\n  npm test\n  ```", [
      "- run it:",
      "",
      "    npm test",
    ]],
    ["a paragraph's bold", "Some **bold** and `code`.", ["Some bold and code."]],
  ];
  for (const [name, markdown, want, width] of rows) {
    await t.step(name, () => assertEquals(plain(markdown, width), want));
  }
});

Deno.test("markdownRenderer() paints bold, code and links inside list items", () => {
  const out = markdownRenderer({ color: true, width: () => 80 })(
    "- item **two** and `code` and [a link](https://example.org)",
  );
  assert(out.startsWith("- item "), JSON.stringify(out));
  assert(out.includes(`${ESC}[1mtwo${ESC}[22m`), JSON.stringify(out));
  assert(out.includes(`${ESC}[33mcode${ESC}[39m`), JSON.stringify(out));
  assert(!out.includes("**") && !out.includes("`"), JSON.stringify(out));
});

// A reply's link whose text hides another address (OSC 8 where the terminal supports it):
// woojubb/robota#2022 and jamie8johnson/cqs#1400 list OSC 8 links among model-output attacks.
Deno.test("markdownRenderer() shows every link's address, also where the terminal takes hyperlinks", async () => {
  const program = `import { markdownRenderer } from ${
    JSON.stringify(
      new URL("../../../cli/terminal/markdown.ts", import.meta.url).href,
    )
  };
const render = markdownRenderer({ color: true, width: () => 80 });
console.log(JSON.stringify(render("see [the docs](https://evil.example/x) and https://a.example")));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", new URL("../../../deno.json", import.meta.url).pathname, program],
    env: { FORCE_HYPERLINK: "1", FORCE_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const rendered: string = JSON.parse(new TextDecoder().decode(out.stdout));
  assert(!rendered.includes(`${ESC}]8;`), JSON.stringify(rendered));
  assertEquals(
    // deno-lint-ignore no-control-regex -- colour codes are what is removed
    rendered.replace(/\x1b\[[0-9;]*m/g, "").trim(),
    "see the docs (https://evil.example/x) and https://a.example",
  );
});

Deno.test("fitFields() breaks the header between fields, never inside one", async (t) => {
  const line =
    "approver=pattern · confinement=/tmp/ws · worker=read,write:/tmp/ws run:/usr/bin/bwrap · " +
    "sandbox=bwrap (no capabilities, processes≤512) · net=off";
  await t.step("wide enough: one line", () => assertEquals(fitFields(line, 200), line));
  await t.step("at 60 columns", () => {
    const lines = fitFields(line, 60).split("\n");
    assertEquals(lines, [
      "approver=pattern · confinement=/tmp/ws",
      "  worker=read,write:/tmp/ws run:/usr/bin/bwrap",
      "  sandbox=bwrap (no capabilities, processes≤512) · net=off",
    ]);
  });
  await t.step("a field wider than the terminal stands alone", () => {
    assertEquals(fitFields("a · " + "x".repeat(30) + " · b", 10).split("\n"), [
      "a",
      "  " + "x".repeat(30),
      "  b",
    ]);
  });
});
