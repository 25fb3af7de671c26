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
 * Above the workspace only files the user (or root) owns are read, and a `.git` owned by
 * anybody else is not taken as the repository root (git's own rule since CVE-2022-24765,
 * `safe.directory`): another local user who plants `/tmp/.git` and `/tmp/AGENTS.md` must not
 * give instructions to a session started in `/tmp/project`. A project file with more than one
 * hard link is read only when its other names are this directory's AGENTS.md/CLAUDE.md: a
 * hard link has no target to check, and one made to `~/.ssh/id_ed25519` would otherwise put
 * the key into the prompt. The file read is the one checked (same device and inode).
 *
 * Approach credits: the AGENTS.md convention (agents.md), Codex's root-to-cwd walk, Claude
 * Code's CLAUDE.md. Reports: instruction files taken from parent directories without any
 * trust check (ducks/claux#8, https://github.com/ducks/claux/issues/8), a user-level file
 * any process can write (anthropics/claude-code#21674), git's dubious-ownership check
 * (CVE-2022-24765).
 *
 * @module
 */

import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
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
  /**
   * The user id whose files above the workspace are trusted (with root's).
   * @default Deno.uid()
   */
  readonly uid?: number;
}

/** True when `info` belongs to `uid` or root and is not writable by every user. */
function trusted(info: Deno.FileInfo, uid: number): boolean {
  return (info.uid === uid || info.uid === 0) && ((info.mode ?? 0) & 0o002) === 0;
}

function ownerNote(info: Deno.FileInfo, uid: number): string {
  return info.uid !== uid && info.uid !== 0
    ? `it belongs to uid ${info.uid}, not to you (uid ${uid}) or root`
    : "every user may write it";
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The nearest directory at or above `dir` holding `.git` (a directory or a worktree file).
 * With `uid`, a `.git` above `dir` that another user owns (or every user may write) ends the
 * search with no repository, and `untrusted` is told where it was.
 */
export async function repositoryRoot(
  dir: string,
  uid?: number,
  untrusted?: (skipped: SkippedInstruction) => void,
): Promise<string | undefined> {
  for (let current = dir;; current = dirname(current)) {
    const marker = join(current, ".git");
    const info = await Deno.lstat(marker).catch(() => undefined);
    if (info !== undefined) {
      if (uid === undefined || current === dir || trusted(info, uid)) return current;
      untrusted?.({
        path: marker,
        reason: `${ownerNote(info, uid)}: not taken as the repository root (as git's ` +
          "safe.directory); only the workspace's own instructions are read",
      });
      return undefined;
    }
    if (dirname(current) === current) return undefined;
  }
}

/** The directories from the repository root (or the workspace) down to the workspace. */
export async function instructionDirs(
  workspace: string,
  uid?: number,
  untrusted?: (skipped: SkippedInstruction) => void,
): Promise<string[]> {
  const root = await repositoryRoot(workspace, uid, untrusted) ?? workspace;
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

/**
 * Reads the file at the real path `real`: at most the cap (plus one byte, to know it was cut).
 * Opened without following a last link and without blocking (a FIFO swapped in after the
 * checks opens at once and is refused here, instead of hanging the start); undefined unless
 * the opened file is a regular file with the device and inode that were checked.
 */
export function readCapped(
  real: string,
  checked: Deno.FileInfo,
): { bytes: Uint8Array; size: number } | undefined {
  const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile() || opened.dev !== checked.dev || opened.ino !== checked.ino) {
      return undefined;
    }
    const size = opened.size;
    const buffer = new Uint8Array(Math.min(size, INSTRUCTIONS_MAX_BYTES + 1));
    let filled = 0;
    while (filled < buffer.length) {
      const n = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      filled += n;
    }
    return { bytes: buffer.subarray(0, filled), size };
  } finally {
    closeSync(fd);
  }
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

/** How a project file is checked before it is read. */
interface ProjectChecks {
  /** The repository's real root: the file must resolve inside it. */
  readonly within: string;
  /** rousseau's own paths, folded: the file must not resolve there. */
  readonly guarded: readonly string[];
  /** Set for a directory above the workspace: the file must be this user's or root's. */
  readonly uid?: number;
}

/** How many of the instruction names in `dir` are the file `info` (hard links of it). */
async function namesHere(dir: string, info: Deno.FileInfo): Promise<number> {
  let count = 0;
  for (const name of INSTRUCTION_NAMES) {
    const other = await Deno.lstat(join(dir, name)).catch(() => undefined);
    if (other?.isFile && other.dev === info.dev && other.ino === info.ino) count++;
  }
  return count;
}

async function readOne(
  path: string,
  scope: InstructionFile["scope"],
  checks?: ProjectChecks,
  owner?: number,
): Promise<InstructionFile | SkippedInstruction> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return { path, reason: "not a regular file" };
    const real = await Deno.realPath(path);
    // The user's own file: theirs (or root's), and not one every user may write.
    if (owner !== undefined && !trusted(info, owner)) {
      return { path, reason: `${ownerNote(info, owner)}: your instructions must be your own file` };
    }
    if (checks !== undefined) {
      const { within, guarded, uid } = checks;
      if (!inside(within, real)) {
        return { path, reason: `it resolves to ${real}, outside the repository ${within}` };
      }
      const folded = real.normalize("NFC").toLowerCase();
      if (guarded.some((p) => inside(p, folded))) {
        return { path, reason: `it resolves to ${real}, rousseau's own configuration or state` };
      }
      if (uid !== undefined && !trusted(info, uid)) {
        return {
          path,
          reason: `${ownerNote(info, uid)}, and it lies above the workspace: only your own ` +
            "files there are read",
        };
      }
      const links = info.nlink ?? 1;
      if (links > 1 && await namesHere(dirname(real), info) < links) {
        return {
          path,
          reason: `it has ${links} hard links, and a hard link's other names cannot be ` +
            "checked (one may be a secret outside the repository): make it a plain file, " +
            "or a symbolic link to one",
        };
      }
    }
    const read = readCapped(real, info);
    if (read === undefined) {
      return { path, reason: "it was replaced while it was being read; start again" };
    }
    return { path, scope, bytes: read.size, text: capped(path, read.bytes, read.size) };
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
  const uid = sources.uid ?? Deno.uid() ?? 0;
  if (sources.userDir !== undefined) {
    const path = join(sources.userDir, "AGENTS.md");
    if (await exists(path)) keep(await readOne(path, "user", undefined, uid));
  }
  const dirs = await instructionDirs(sources.workspace, uid, keep);
  const root = dirs[0]!;
  const realRoot = await Deno.realPath(root).catch(() => root);
  const guarded = await protectedForms(sources.protectedPaths ?? []);
  for (const dir of dirs) {
    for (const name of INSTRUCTION_NAMES) {
      const path = join(dir, name);
      if (!await exists(path)) continue;
      keep(
        await readOne(path, "project", {
          within: realRoot,
          guarded,
          ...(dir === sources.workspace ? {} : { uid }),
        }),
      );
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
