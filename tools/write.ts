/**
 * write: replace a file's contents (atomically), creating parent directories.
 *
 * @module
 */

import { dirname, normalize } from "node:path";
import { defineTool, ToolError } from "./define.ts";
import { parseFields, requireAbsolute, requireNonEmpty, requirePresent } from "./_input.ts";
import { isNotFound, pathError } from "./_os_error.ts";
import { confine } from "./_workspace.ts";
import { writeAtomic } from "./_atomic.ts";
import type { Tool, ToolContext } from "./types.ts";

/** Input of the write tool. */
export interface WriteInput {
  /** Absolute path of the file. */
  readonly path: string;
  /** The complete new contents; `""` writes an empty file. */
  readonly content: string;
}

const NAME = "write";
const DIR_MODE = 0o755;
const ENCODER = new TextEncoder();

/** Creates the write tool. */
export function createWriteTool(): Tool<WriteInput> {
  return defineTool({
    name: NAME,
    description: "Write a UTF-8 text file, replacing its whole contents (never appending). " +
      "Missing parent directories are created. The path must be absolute and inside the " +
      "workspace. content is required; pass an empty string to empty a file. Prefer edit " +
      "for changes to part of an existing file.",
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Absolute path of the file to write." },
        content: { type: "string", description: "The complete new contents of the file." },
      },
      required: ["path", "content"],
    },
    readOnly: false,
    facts: {
      path: "write",
      content: { field: "content" },
      example: '{"path": "/abs/file", "content": "text"}',
    },
    parseInput(raw: unknown): WriteInput {
      const fields = parseFields(NAME, raw, { path: "string", content: "string" });
      const path = requireAbsolute(NAME, requireNonEmpty(NAME, fields, "path"));
      return { path, content: requirePresent(NAME, fields, "content") };
    },
    execute: writeFile,
  });
}

/** Creates the missing directories above `real`, naming a parent that is not a directory. */
async function makeParents(path: string, real: string): Promise<void> {
  const parent = dirname(real);
  try {
    const info = await Deno.stat(parent);
    if (info.isDirectory) return;
  } catch (error) {
    if (!isNotFound(error) && !(error instanceof Deno.errors.NotADirectory)) {
      throw new ToolError(NAME, `${NAME}: mkdir: ${pathError("stat", parent, error)}`);
    }
  }
  // Name the first component of the caller's path that exists but is not a directory. A
  // prefix this isolate may not look at (above the worker's grants) is passed over.
  const spelled = normalize(path).split("/");
  for (let i = 2; i < spelled.length; i++) {
    const prefix = spelled.slice(0, i).join("/");
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(prefix);
    } catch (error) {
      if (isNotFound(error)) break;
      continue;
    }
    if (!info.isDirectory) {
      throw new ToolError(NAME, `${NAME}: mkdir: mkdir ${prefix}: not a directory`);
    }
  }
  try {
    await Deno.mkdir(parent, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    throw new ToolError(NAME, `${NAME}: mkdir: ${pathError("mkdir", dirname(path), error)}`, {
      cause: error,
    });
  }
}

async function writeFile({ path, content }: WriteInput, context: ToolContext): Promise<string> {
  const { workspace, signal } = context;
  signal.throwIfAborted();
  const real = await confine(NAME, path, workspace);
  // `name/` names a directory: as open(2) with O_CREAT says, a directory cannot be written.
  if (path.length > 1 && path.endsWith("/")) {
    throw new ToolError(NAME, `${NAME}: open ${path}: is a directory`);
  }
  await makeParents(path, real);
  // The directories now exist: resolve again so a link created meanwhile is seen.
  const final = await confine(NAME, path, workspace);
  const bytes = ENCODER.encode(content);
  await writeAtomic(NAME, path, final, bytes, workspace, signal);
  return `wrote ${bytes.length} bytes to ${path}`;
}
