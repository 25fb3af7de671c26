/**
 * The two shapes of the effects engine: the command it reads (`Invocation`) and what it reports
 * (`Effect`). Every program family returns `Effect[]` for one `Invocation`.
 *
 * @module
 */

import type { Assignment, Redirect } from "../shell.ts";

/** The command `effectsOf` reads: a subset of the parser's `SimpleCommand`. */
export interface Invocation {
  /** Words after quote removal; `DYNAMIC` marks what is computed at run time. */
  readonly argv: readonly string[];
  /** Per word: an unquoted pattern the shell may replace with file names. */
  readonly globs?: readonly boolean[];
  /** Prefix assignments. */
  readonly assignments?: readonly Assignment[];
  /** Redirections. */
  readonly redirects?: readonly Redirect[];
  /** Directory (as written, relative to the line's) the program runs in, if a wrapper set one. */
  readonly cwd?: string;
  /** Words standing for paths the program is given at run time (`{}` of `find -exec`). */
  readonly runtimePaths?: readonly string[];
}

/** One effect beyond the plain one. `via` names its cause for reasons: `git log --output`. */
export type Effect =
  /** Runs another program: judged as its own simple command. */
  | { readonly kind: "run"; readonly command: Invocation; readonly via: string }
  /** Runs a shell command line: parsed and each simple command judged. */
  | { readonly kind: "script"; readonly script: string; readonly via: string }
  /**
   * Writes, deletes or truncates `path` (relative paths are relative to the line's working
   * directory; `tree`: everything under it too). `path` is undefined when it cannot be known.
   */
  | {
    readonly kind: "write";
    readonly path: string;
    readonly tree: boolean;
    readonly via: string;
  }
  /** Changes the shell itself (`what` is a phrase: `defining the function ls`). */
  | { readonly kind: "shell"; readonly what: string }
  /** Cannot be known from the text (`what` is a phrase saying what). */
  | { readonly kind: "unknown"; readonly what: string };
