/**
 * Project instructions (cli.md "Project instructions"): the user's `AGENTS.md` in rousseau's
 * config directory, then from the repository root (the nearest directory upward with `.git`,
 * else the workspace root) down to the workspace directory, in each directory `AGENTS.md`, or
 * `CLAUDE.md` where there is no `AGENTS.md`. Each file is capped; the files go into the system
 * prompt after rousseau's own text, the closest to the workspace last.
 *
 * Hazard: these files are read by rousseau itself, not through the confined tools, and their
 * text is sent to the model provider. A repository's file that resolves (through a symlink)
 * outside the repository is therefore skipped, as is anything that is not a regular file (a
 * FIFO would block the open), and so is one that resolves to rousseau's own configuration or
 * state (a link `AGENTS.md -> rousseau.yaml` planted by a command of an earlier session would
 * otherwise put the config's API key into the prompt).
 *
 * Approach credits: the AGENTS.md convention (agents.md), Codex's root-to-cwd walk, Claude
 * Code's CLAUDE.md.
 *
 * @module
 */

import { dirname, join, relative, sep } from "node:path";

/** Most bytes of one instruction file put in the prompt. */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;

/** The file names looked for in each directory, in order; the first that exists is read. */
export const INSTRUCTION_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;

/** One file read. */
export interface InstructionFile {
  /** Absolute path as found (not resolved). */
  readonly path: string;
  /** `user`: the user's own file; `project`: from the repository. */
  readonly scope: "user" | "project";
  /** Size of the file on disk. */
  readonly bytes: number;
  /** The text put in the prompt (cut with a note when over the cap). */
  readonly text: string;
}

/** A file that was found but not read, and why. */
export interface SkippedInstruction {
  readonly path: string;
  readonly reason: string;
}

/** What was read. */
export interface Instructions {
  readonly files: readonly InstructionFile[];
  readonly skipped: readonly SkippedInstruction[];
}

/** Where to look. */
export interface InstructionSources {
  /** The workspace directory (first root), real path. */
  readonly workspace: string;
  /** rousseau's config directory (`$XDG_CONFIG_HOME/rousseau`), for the user's file. */
  readonly userDir?: string;
  /** rousseau's own paths (config, config and state directories): no project file is read there. */
  readonly protectedPaths?: readonly string[];
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** The nearest directory at or above `dir` holding `.git` (a directory or a worktree file). */
export async function repositoryRoot(dir: string): Promise<string | undefined> {
  for (let current = dir;; current = dirname(current)) {
    if (await exists(join(current, ".git"))) return current;
    if (dirname(current) === current) return undefined;
  }
}

/** The directories from the repository root (or the workspace) down to the workspace. */
export async function instructionDirs(workspace: string): Promise<string[]> {
  const root = await repositoryRoot(workspace) ?? workspace;
  const dirs = [workspace];
  for (let current = workspace; current !== root;) {
    const up = dirname(current);
    if (up === current) break;
    dirs.unshift(up);
    current = up;
  }
  return dirs;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
}

/** `text` cut at the cap (on a line break when one is near), with the spec's note. */
function capped(path: string, bytes: Uint8Array, size: number): string {
  const decoder = new TextDecoder();
  if (size <= INSTRUCTIONS_MAX_BYTES && bytes.length <= INSTRUCTIONS_MAX_BYTES) {
    return decoder.decode(bytes);
  }
  // Drop a multi-byte character split by the cap rather than show a replacement mark.
  let text = decoder.decode(bytes.subarray(0, INSTRUCTIONS_MAX_BYTES)).replace(/\uFFFD$/, "");
  const line = text.lastIndexOf("\n");
  if (line > INSTRUCTIONS_MAX_BYTES / 2) text = text.slice(0, line + 1);
  return `${text.endsWith("\n") ? text : text + "\n"}[cut: ${path} is ${size} bytes]`;
}

/** Reads one file: at most the cap (plus one byte, to know it was cut). */
async function readCapped(path: string): Promise<{ bytes: Uint8Array; size: number }> {
  using file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const buffer = new Uint8Array(Math.min(size, INSTRUCTIONS_MAX_BYTES + 1));
  let filled = 0;
  while (filled < buffer.length) {
    const n = await file.read(buffer.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return { bytes: buffer.subarray(0, filled), size };
}

/** The protected paths as compared: as given and resolved, folded as `tools/_paths.ts` does. */
async function protectedForms(paths: readonly string[]): Promise<string[]> {
  const fold = (p: string) => p.normalize("NFC").toLowerCase();
  const out = new Set<string>();
  for (const path of paths) {
    out.add(fold(path));
    const real = await Deno.realPath(path).catch(() => undefined);
    if (real !== undefined) out.add(fold(real));
  }
  return [...out];
}

async function readOne(
  path: string,
  scope: InstructionFile["scope"],
  within: string | undefined,
  guarded: readonly string[] = [],
): Promise<InstructionFile | SkippedInstruction> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return { path, reason: "not a regular file" };
    if (within !== undefined) {
      const real = await Deno.realPath(path);
      if (!inside(within, real)) {
        return { path, reason: `it resolves to ${real}, outside the repository ${within}` };
      }
      const folded = real.normalize("NFC").toLowerCase();
      if (guarded.some((p) => inside(p, folded))) {
        return { path, reason: `it resolves to ${real}, rousseau's own configuration or state` };
      }
    }
    const { bytes, size } = await readCapped(path);
    return { path, scope, bytes: size, text: capped(path, bytes, size) };
  } catch (error) {
    return { path, reason: (error as Error).message };
  }
}

/** Reads the instruction files for a workspace, in prompt order. */
export async function loadInstructions(sources: InstructionSources): Promise<Instructions> {
  const files: InstructionFile[] = [];
  const skipped: SkippedInstruction[] = [];
  const keep = (result: InstructionFile | SkippedInstruction) => {
    if ("text" in result) files.push(result);
    else skipped.push(result);
  };
  if (sources.userDir !== undefined) {
    const path = join(sources.userDir, "AGENTS.md");
    if (await exists(path)) keep(await readOne(path, "user", undefined));
  }
  const dirs = await instructionDirs(sources.workspace);
  const root = dirs[0]!;
  const realRoot = await Deno.realPath(root).catch(() => root);
  const guarded = await protectedForms(sources.protectedPaths ?? []);
  for (const dir of dirs) {
    for (const name of INSTRUCTION_NAMES) {
      const path = join(dir, name);
      if (!await exists(path)) continue;
      keep(await readOne(path, "project", realRoot, guarded));
      break;
    }
  }
  return { files, skipped };
}

/** The system prompt's section for `files`; empty when there are none. */
export function instructionsPrompt(files: readonly InstructionFile[]): string {
  if (files.length === 0) return "";
  return [
    "# Project instructions",
    "",
    "The files below were read before this session started: the user's own instructions, then the project's from the repository root down to the workspace. Follow them where they do not conflict with the operator's policy; where they disagree, a later file (closer to the workspace) takes precedence over an earlier one.",
    ...files.flatMap((file) => [
      "",
      `## ${file.path}${file.scope === "user" ? " (the user's instructions)" : ""}`,
      "",
      file.text.trimEnd(),
    ]),
  ].join("\n");
}

/** `system` with the instructions appended after it. */
export function withInstructions(system: string, files: readonly InstructionFile[]): string {
  const section = instructionsPrompt(files);
  if (section === "") return system;
  return system === "" ? section : `${system}\n\n${section}`;
}
