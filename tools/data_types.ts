/**
 * The plain data shapes the tools share: the workspace, the limits, a tool's input schema,
 * and what a command under the overlay changed. This file imports nothing, so any file of
 * `tools/` (the sandbox, the overlay, path checks) can use them without an import circle;
 * `types.ts` re-exports them with the tool interface.
 *
 * @module
 */

/** The gate's word on a change set a command made under the overlay. */
export type ChangeVerdict =
  | { readonly apply: true }
  | {
    readonly apply: false;
    readonly reason: string;
    /** The operator refused a call run in a preview: its output must not reach the model. */
    readonly withhold?: boolean;
  };

/**
 * What a built-in tool does, as data the layers above read instead of its name: the approver
 * (which input `path` rules test, which input is a command line, how a write is previewed),
 * the worker's grants (write, run), undo (a named file, or a scan) and the CLI's summaries.
 * `deno task schemas` copies every built-in's facts into `approver/builtin_tools.json`, where the
 * approver (which imports no other layer) and the CLI (which does not load the tools' code)
 * read them. A custom module's facts are not read: its calls are judged and recorded as those
 * of a tool that declares none.
 */
export interface ToolFacts {
  /**
   * What the tool does with what its `path` input names: `read` returns its content, `write`
   * writes that file, `walk` returns content of the files below it (a directory). Absent: the
   * tool has no `path` that path rules test.
   */
  readonly path?: "read" | "write" | "walk";
  /** True when its `command` input is a shell command line it runs (the run grant, the sandbox). */
  readonly command?: boolean;
  /**
   * How a `write` tool's new content follows from its input, for the approval prompt's diff:
   * the value of one field, or the file with the first `old` replaced by `new`.
   */
  readonly content?:
    | { readonly field: string }
    | { readonly replace: { readonly old: string; readonly new: string } };
  /** Input fields a one-line summary of a call shows (chat), joined by two spaces. */
  readonly summary?: readonly string[];
  /** An input to show when `rousseau tool NAME` gets none (JSON text). */
  readonly example?: string;
}

/** A JSON Schema object describing a tool's input, exactly as providers receive it. */
export interface JsonSchemaObject {
  /** Always "object": tool input is a JSON object. */
  readonly type: "object";
  /** The input's fields. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** Fields that must be present. */
  readonly required?: readonly string[];
  /** Any other JSON Schema keywords. */
  readonly [keyword: string]: unknown;
}

/** The directories a tool may touch. */
export interface Workspace {
  /** Absolute, symlink-free roots; the first is bash's working directory. */
  readonly roots: readonly string[];
  /**
   * rousseau's own files and directories (tools.md, "Protected paths"): absolute, each as
   * configured and as resolved when the workspace was made. They may not exist yet. No tool
   * reads or writes anything at or below them.
   */
  readonly protected: readonly string[];
  /**
   * `dev:ino` of the protected files that existed when the workspace was made (and of the
   * files in the protected directories), so a hard link elsewhere is recognised even where
   * this isolate may no longer look at the originals (the tool worker).
   */
  readonly protectedIds: readonly string[];
  /**
   * Devices (`Deno.FileInfo.dev`) whose file system keeps a file replaced by rename whole
   * across a power loss without a sync of its data (`_replace_durability.ts`): `write` and
   * `edit` skip that sync when they replace a file there. Absent or empty: always synced.
   */
  readonly replaceSafeDevices?: readonly number[];
}

/** Limits the built-in tools enforce; every field has a default in `limits.ts`. */
export interface Limits {
  /** read: files larger than this come back truncated. */
  readonly readMaxBytes: number;
  /** edit: larger files are refused before they are read. */
  readonly editMaxBytes: number;
  /** grep: the most rows one call returns. */
  readonly grepMaxMatches: number;
  /** grep: files larger than this are skipped; a file of exactly this size is searched. */
  readonly grepMaxFileBytes: number;
  /** bash: wall-clock limit of one command, in milliseconds. */
  readonly bashTimeoutMs: number;
  /** bash: the most output bytes kept (first and last halves). */
  readonly bashMaxOutputBytes: number;
}

/** One path the command changed. */
export interface ObservedChange {
  /** Absolute real path in the workspace. */
  readonly path: string;
  /** A added, M modified (content, mode, link target or kind), D deleted. */
  readonly status: "A" | "M" | "D";
  /** What is there after the command (for D: what was there before). */
  readonly kind: "file" | "dir" | "symlink";
  /** Permission bits after the command (files and directories). */
  readonly mode?: number;
  /** Size after the command (files). */
  readonly size?: number;
  /** The link's target after the command (symlinks). */
  readonly target?: string;
  /** Where the new content waits until the change set is applied (files and links). */
  readonly upper?: string;
  /** What stood there before when the kind changed (a file replaced by a directory). */
  readonly replaces?: "file" | "dir" | "symlink" | "other";
}

/** A path the command made that is never applied: a FIFO, a socket, a device. */
export interface SkippedChange {
  readonly path: string;
  readonly what: string;
}

/** Everything one command changed, read from its upper layers. */
export interface ChangeSet {
  readonly changes: readonly ObservedChange[];
  readonly skipped: readonly SkippedChange[];
}
