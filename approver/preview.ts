/**
 * How a call run in a preview is shown to the operator: its output's end, its change set as
 * `git status --short` would list it (with `+added −removed` lines for text files), and on
 * request the unified diff of every changed file. The before side is the file in the
 * workspace (nothing has been applied yet), the after side the copy the preview made.
 *
 * @module
 */

import type { Preview, PreviewChange } from "./types.ts";

/** Files larger than this are listed without a line count or a diff. */
const MAX_DIFF_BYTES = 1024 * 1024;
/** How many lines of the output's end the prompt shows. */
const OUTPUT_LINES = 20;

async function readText(path: string | undefined): Promise<string | undefined | null> {
  if (path === undefined) return undefined;
  try {
    const info = await Deno.lstat(path);
    if (!info.isFile) return undefined;
    if (info.size > MAX_DIFF_BYTES) return null;
    const bytes = await Deno.readFile(path);
    if (bytes.subarray(0, 8192).includes(0)) return null;
    return new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}

/** The two sides of a file change: undefined when absent, null when binary or large. */
async function sides(change: PreviewChange) {
  const before = change.status === "A" ? undefined : await readText(change.path);
  const after = change.status === "D" ? undefined : await readText(change.after);
  return { before, after };
}

/** `path` relative to `root` when inside it. */
function shown(path: string, root: string | undefined): string {
  return root !== undefined && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

/** The last lines of the output, indented; `(no output)` when there is none. */
export function outputTail(output: string): string {
  const lines = output.replace(/\n$/, "").split("\n");
  if (output === "") return "  (no output)";
  const cut = lines.length > OUTPUT_LINES
    ? [`  … ${lines.length - OUTPUT_LINES} lines before`]
    : [];
  return [...cut, ...lines.slice(-OUTPUT_LINES).map((line) => `  ${line}`)].join("\n");
}

/** One line per change: `M src/a.ts +3 −1`, `A out.txt`, `D build/`. */
export async function changeLines(preview: Preview, root?: string): Promise<string> {
  if (preview.changes.length === 0) return "  (no file changes)";
  const { diffLines } = await import("diff");
  const lines: string[] = [];
  for (const change of preview.changes) {
    const name = shown(change.path, root) + (change.kind === "dir" ? "/" : "");
    let counts = "";
    if (change.kind === "file") {
      const { before, after } = await sides(change);
      if (before === null || after === null) counts = " (binary or large)";
      else if (before !== undefined || after !== undefined) {
        let added = 0;
        let removed = 0;
        for (const part of diffLines(before ?? "", after ?? "")) {
          if (part.added) added += part.count ?? 0;
          else if (part.removed) removed += part.count ?? 0;
        }
        counts = ` +${added} −${removed}`;
      }
    } else if (change.kind === "symlink") counts = " (symbolic link)";
    lines.push(`  ${change.status} ${name}${counts}`);
  }
  return lines.join("\n");
}

/** The unified diff of every changed text file (git's `a/` and `b/` names). */
export async function changeDiff(preview: Preview, root?: string): Promise<string> {
  const { createTwoFilesPatch } = await import("diff");
  const parts: string[] = [];
  for (const change of preview.changes) {
    if (change.kind !== "file") continue;
    const name = shown(change.path, root);
    const { before, after } = await sides(change);
    if (before === null || after === null) {
      parts.push(`${name}: binary or larger than 1 MiB, not shown`);
      continue;
    }
    parts.push(
      createTwoFilesPatch(
        change.status === "A" ? "/dev/null" : `a/${name}`,
        change.status === "D" ? "/dev/null" : `b/${name}`,
        before ?? "",
        after ?? "",
        "",
        "",
      ).split("\n").slice(1).join("\n").trimEnd(),
    );
  }
  return parts.length === 0 ? "(no text file changed)" : parts.join("\n");
}
