/**
 * Remembers, before each call of a turn that may change the workspace, what is needed to
 * put back what it changes; the gate (`agent/tool_host.ts`) wraps approved calls in
 * {@linkcode UndoRecorder.around}. It runs in the main isolate, outside the tools' worker.
 *
 * - `write` and `edit` name their file: its entry (and bytes) are taken just before the
 *   call, with the directories the call may create, and its new entry after it.
 * - `bash` under the overlay (`tools/_overlay.ts`) says, just before its change set is
 *   applied, which paths it will change ({@linkcode UndoRecorder.aroundObserved}): those
 *   entries (the whole subtree of a directory it deletes or replaces) are taken then and
 *   again after the apply. Nothing else is read, so the cost is what the command changed.
 *   Paths inside a `.git` directory are not kept, as the scan below does not keep them.
 * - Any other tool that is not read-only (`bash`, custom and MCP tools) may change anything:
 *   the fallback (`_mirror_fallback.ts`). The workspace's mirror is brought up to date just
 *   before the call (only files whose metadata changed are read again), scanned again after
 *   it, and the difference is what the call did. A pending marker is written before the
 *   call, so a process killed during it leaves enough for the next one (or `undo`) to work
 *   out what the call did.
 *
 * The turn's record is written after every call, so a killed turn keeps what it did (after a
 * write/edit, while its result goes on to the model: until then the record says `pending`
 * for its paths, as during the call; see `recordAfter`). A failure to record never stops a
 * call: it is stored as a problem of the turn, which `undo` reports.
 *
 * @module
 */

import { dirname } from "node:path";
import {
  captureEntry,
  type Change,
  DEFAULT_UNDO_MAX_FILE_BYTES,
  type Entry,
  sameEntry,
} from "./_entry.ts";
import {
  diffMirrors,
  type Mirror,
  sameMirror,
  type ScanProgress,
  scanTree,
  scanTreeAsync,
} from "./_mirror_fallback.ts";
import { mirrorKey, type TurnRecord, type UndoStore } from "./_store.ts";
import { factsOf } from "../../approver/tool_facts.ts";

/** What a recorder needs. */
export interface UndoRecorderOptions {
  readonly store: UndoStore;
  readonly sessionId: string;
  /** Workspace roots, real paths. */
  readonly roots: readonly string[];
  /** Paths never scanned nor recorded (the config and state directories). */
  readonly protectedPaths?: readonly string[];
  /** @default {DEFAULT_UNDO_MAX_FILE_BYTES} */
  readonly maxFileBytes?: number;
  /**
   * Told how a scan of the workspace goes once it has run for {@linkcode PROGRESS_AFTER_MS}
   * (a first scan of a large tree takes seconds), and when it ends.
   */
  readonly onProgress?: (progress: UndoProgress) => void;
}

/** A scan shorter than this says nothing. */
export const PROGRESS_AFTER_MS = 250;

/** How a scan of the workspace (before or after a call) goes. */
export type UndoProgress =
  | ({ readonly type: "scan"; readonly tool: string } & ScanProgress)
  | {
    readonly type: "scan_end";
    readonly tool: string;
    /** Regular files in the tree. */
    readonly files: number;
    /** How long the scan took. */
    readonly ms: number;
  };

/** A path a change set is about to change; `tree` when everything under it goes too. */
export interface KeptPath {
  readonly path: string;
  readonly tree: boolean;
}

/** Called by an observed call just before it applies its changes. */
export type Keep = (paths: readonly KeptPath[]) => Promise<void>;

/** The hook the gate calls. */
export interface UndoRecorder {
  /** Starts turn number `turn` of the session. */
  beginTurn(turn: number, prompt: string): void;
  /** Runs `call` (an approved call of `tool`), recording what it changes. */
  around<T>(tool: string, input: unknown, readOnly: boolean, call: () => Promise<T>): Promise<T>;
  /**
   * Runs `call`, a call whose changes are observed before they land: it calls `keep` (at
   * most once) with the paths it is about to change, and they are recorded around that.
   */
  aroundObserved<T>(tool: string, call: (keep: Keep) => Promise<T>): Promise<T>;
  /** Ends the turn: its record is final; the store is brought back within its budget. */
  endTurn(): Promise<void>;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function inside(path: string, dirs: readonly string[]): boolean {
  return dirs.some((d) => path === d || path.startsWith(d.endsWith("/") ? d : d + "/"));
}

/** Folds one call's changes into a record: the first `before` stays, the last `after` wins. */
export function mergeChanges(record: TurnRecord, changes: readonly Change[]): void {
  for (const change of changes) {
    const known = record.changes[change.path];
    const before = known === undefined ? change.before : known.before;
    if (sameEntry(before, change.after)) {
      // Back to how it was before the turn (a temporary file, an edit undone by the model).
      delete record.changes[change.path];
      delete record.problems[change.path];
      continue;
    }
    record.changes[change.path] = { before, after: change.after };
    if (before?.kind === "file" && !before.stored) {
      record.problems[change.path] = before.why ?? "its content was not kept";
    } else if (before?.kind === "other") {
      record.problems[change.path] = "not a regular file, directory or symbolic link";
    }
  }
}

/** True when `path` lies in a `.git` directory below one of `roots`. */
function inGitDir(path: string, roots: readonly string[]): boolean {
  const root = roots.find((r) => path.startsWith(r.endsWith("/") ? r : `${r}/`));
  if (root === undefined) return false;
  return path.slice(root.length).split("/").includes(".git");
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The real path `path` names, resolving the links of its existing part. */
function realTarget(path: string): string {
  const rest: string[] = [];
  let at = path;
  for (;;) {
    try {
      const real = Deno.realPathSync(at);
      return rest.length === 0 ? real : [real, ...rest.reverse()].join("/");
    } catch {
      const parent = dirname(at);
      if (parent === at) return path;
      rest.push(at.slice(parent === "/" ? 1 : parent.length + 1));
      at = parent;
    }
  }
}

function isRealDirectory(path: string): boolean {
  try {
    return Deno.realPathSync(path) === path && Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Resolves a pending marker left by a call whose process died: the difference between the
 * mirror (the state before that call) and now is what it did. Call under the workspace's lock
 * (so the call is not still running in another process) and the store's lock.
 */
export function settlePending(
  store: UndoStore,
  key: string,
  roots: readonly string[],
  skip: readonly string[],
  maxFileBytes = DEFAULT_UNDO_MAX_FILE_BYTES,
): void {
  const pending = store.readPending(key);
  if (pending === undefined) return;
  // A root moved away would scan as "every file deleted": the marker waits for it to be back.
  if (roots.some((root) => !isRealDirectory(root))) return;
  const before = store.readMirror(key);
  const record = store.readTurn(pending.session, pending.turn);
  if (before === undefined) {
    // Without the state before the call, every file would look created by it: say so instead.
    if (record !== undefined) {
      record.problems["*"] = `${pending.tool}: interrupted, and the state before it is lost`;
      store.writeTurn(record);
    }
    store.writePending(key, undefined);
    return;
  }
  const after = scanTree({ roots, previous: before, sink: store, skip, maxFileBytes });
  if (record !== undefined) {
    mergeChanges(record, diffMirrors(before, after));
    record.ended ??= new Date().toISOString();
    store.writeTurn(record);
  }
  store.writeMirror(key, roots, after);
  store.writePending(key, undefined);
}

/**
 * The workspace locks a call (or an undo) in `roots` takes: the root set's own (its mirror's)
 * and each root's alone, so two sessions whose root sets differ but share a root (one with
 * `--add-dir`) never change that root at the same time, nor undo there meanwhile. Roots
 * nested in another session's root are not covered.
 */
export function workspaceLocks(roots: readonly string[]): string[] {
  return [mirrorKey(roots), ...roots.map((root) => mirrorKey([root]))];
}

/** Creates the recorder of one session. */
export function createUndoRecorder(options: UndoRecorderOptions): UndoRecorder {
  const { store, sessionId, roots } = options;
  const skip = [...(options.protectedPaths ?? []), store.dir];
  const maxFileBytes = options.maxFileBytes ?? DEFAULT_UNDO_MAX_FILE_BYTES;
  const key = mirrorKey(roots);
  const onProgress = options.onProgress;
  const locks = workspaceLocks(roots);
  let current: { turn: number; prompt: string; started: string } | undefined;
  /** The after-call records (`recordAfter`) still being written; `endTurn` waits for them. */
  const settling = new Set<Promise<void>>();
  const settled = async () => {
    while (settling.size > 0) await Promise.all([...settling]);
  };

  /**
   * A scan of the roots that yields to the event loop as it goes, and says how far it is
   * once it has run for PROGRESS_AFTER_MS (and that it ended, if it said anything).
   */
  const scanRoots = async (tool: string, previous: Mirror): Promise<Mirror> => {
    const started = performance.now();
    let shown = false;
    let last: ScanProgress = { done: 0 };
    const show = () => {
      shown = true;
      onProgress?.({ type: "scan", tool, ...last });
    };
    const timer = onProgress === undefined ? undefined : setTimeout(show, PROGRESS_AFTER_MS);
    try {
      return await scanTreeAsync({
        roots,
        previous,
        sink: store,
        skip,
        maxFileBytes,
        onProgress: (progress) => {
          last = progress;
          if (shown || performance.now() - started >= PROGRESS_AFTER_MS) show();
        },
      });
    } finally {
      clearTimeout(timer);
      if (shown) {
        onProgress?.({
          type: "scan_end",
          tool,
          files: last.files ?? 0,
          ms: Math.round(performance.now() - started),
        });
      }
    }
  };

  const record = (): TurnRecord | undefined => {
    if (current === undefined) return undefined;
    return store.readTurn(sessionId, current.turn) ?? {
      version: 1,
      session: sessionId,
      turn: current.turn,
      prompt: current.prompt,
      started: current.started,
      roots: [...roots],
      mirror: key,
      changes: {},
      problems: {},
    };
  };

  const problem = (what: string, error: unknown) => {
    try {
      const r = record();
      if (r === undefined) return;
      r.problems["*"] = `${what}: ${messageOf(error)}`;
      store.writeTurn(r);
    } catch { /* the store itself is broken; the call still runs */ }
  };

  /** write/edit: the named file and the directories the call may create. */
  const aroundFile = async <T>(path: string, call: () => Promise<T>): Promise<T> => {
    const target = realTarget(path);
    if (!inside(target, roots) || inside(target, skip)) return await call();
    const paths: string[] = [];
    for (let at = target; inside(at, roots) && at !== dirname(at); at = dirname(at)) {
      paths.push(at);
      if (exists(at)) break; // parents above an existing path are untouched
    }
    let before: Map<string, Entry | null> | undefined;
    // Held over the call: a bash call of another process in this workspace waits meanwhile.
    let workspace: Disposable | undefined;
    try {
      workspace = await store.lockWorkspaces(locks);
    } catch (error) {
      problem(`${path}: could not be kept before the call`, error);
      return await call();
    }
    try {
      using _lock = await store.lock();
      const r = record()!;
      before = new Map(paths.map((p) => [p, captureEntry(p, { sink: store, maxFileBytes })]));
      for (const [p, entry] of before) {
        if (r.changes[p] === undefined) r.changes[p] = { before: entry, after: "pending" };
        else if (r.changes[p].after !== "pending") r.changes[p].after = "pending";
      }
      store.writeTurn(r);
    } catch (error) {
      problem(`${path}: could not be kept before the call`, error);
      before = undefined;
    }
    try {
      return await call();
    } finally {
      // The result goes back without waiting for the record of what the call left (see
      // `recordAfter`); the workspace's lock is held until it is written.
      const recording = recordAfter(path, before, workspace);
      settling.add(recording);
      void recording.then(() => settling.delete(recording));
    }
  };

  /**
   * After a write/edit: its paths' entries now, into the turn's record, then the workspace's
   * lock released. Runs while the call's result goes on to the model: the entries are taken
   * first, under the store's lock and the workspace's (so no other call of a rousseau process
   * in this workspace, nor an undo, comes between), and the record's rewrite, a rename over
   * the old file that ext4 makes cost about a millisecond, is done off this thread. Until it
   * lands the record says `pending` for these paths, as it did during the call: a process
   * killed meanwhile leaves what a kill during the call leaves (undo puts back the kept
   * before-image; it takes what is there as what the call did). The next call in this
   * workspace waits for the lock, and `endTurn` for this, so records are written in order.
   * Never rejects: a failure is a problem of the turn.
   */
  const recordAfter = async (
    path: string,
    before: Map<string, Entry | null> | undefined,
    workspace: Disposable,
  ): Promise<void> => {
    try {
      if (before === undefined) return;
      using _lock = await store.lock();
      const r = record()!;
      const changes: Change[] = [];
      for (const p of before.keys()) {
        const known = r.changes[p];
        if (known === undefined) continue;
        const after = captureEntry(p, { maxFileBytes });
        known.after = after; // settled below by mergeChanges
        changes.push({ path: p, before: known.before, after });
      }
      mergeChanges(r, changes);
      await store.writeTurnAsync(r);
    } catch (error) {
      problem(`${path}: could not be recorded after the call`, error);
    } finally {
      workspace[Symbol.dispose]();
    }
  };

  /** The entries of `paths` now: each path, and every entry below a `tree` one. */
  const entriesOf = (paths: readonly KeptPath[], sink?: typeof store) => {
    const out = new Map<string, Entry | null>();
    for (const { path, tree } of paths) {
      const entry = captureEntry(path, { ...(sink ? { sink } : {}), maxFileBytes });
      out.set(path, entry);
      if (!tree || entry?.kind !== "dir") continue;
      for (
        const [below, cached] of scanTree({
          roots: [path],
          sink: sink ?? store,
          skip,
          maxFileBytes,
        })
      ) {
        out.set(below, cached.entry);
      }
    }
    return out;
  };

  /** A call whose change set is observed: keep exactly what it is about to change. */
  const aroundObserved = async <T>(tool: string, call: (keep: Keep) => Promise<T>): Promise<T> => {
    let workspace: Disposable | undefined;
    try {
      // Held over the call: another process's call in this workspace waits meanwhile.
      workspace = await store.lockWorkspaces(locks);
    } catch (error) {
      problem(`${tool}: its changes could not be kept`, error);
      return await call(async () => {});
    }
    let kept: { paths: KeptPath[]; before: Map<string, Entry | null> } | undefined;
    const keep: Keep = async (paths) => {
      const wanted = paths.filter((p) =>
        inside(p.path, roots) && !inside(p.path, skip) && !inGitDir(p.path, roots)
      );
      if (wanted.length === 0) return;
      try {
        using _lock = await store.lock();
        settlePending(store, key, roots, skip, maxFileBytes);
        const r = record()!;
        const before = entriesOf(wanted, store);
        for (const [p, entry] of before) {
          if (r.changes[p] === undefined) r.changes[p] = { before: entry, after: "pending" };
          else if (r.changes[p].after !== "pending") r.changes[p].after = "pending";
        }
        store.writeTurn(r);
        kept = { paths: wanted, before };
      } catch (error) {
        problem(`${tool}: its changes could not be kept before they were applied`, error);
      }
    };
    try {
      return await call(keep);
    } finally {
      try {
        if (kept !== undefined) {
          using _lock = await store.lock();
          const after = entriesOf(kept.paths);
          const r = record()!;
          const changes: Change[] = [];
          for (const p of new Set([...kept.before.keys(), ...after.keys()])) {
            const known = r.changes[p];
            const before = known === undefined ? null : known.before;
            const now = after.get(p) ?? null;
            if (known !== undefined) known.after = now; // settled below by mergeChanges
            changes.push({ path: p, before, after: now });
          }
          mergeChanges(r, changes);
          store.writeTurn(r);
        }
      } catch (error) {
        problem(`${tool}: its changes could not be recorded after they were applied`, error);
      } finally {
        workspace[Symbol.dispose]();
      }
    }
  };

  /** Any other tool that may change files: scan before and after. */
  const aroundScan = async <T>(tool: string, call: () => Promise<T>): Promise<T> => {
    // The workspace's lock is held over the call; the store's only while its files change.
    let workspace: Disposable | undefined;
    let before: Mirror | undefined;
    try {
      workspace = await store.lockWorkspaces(locks);
      using _lock = await store.lock();
      settlePending(store, key, roots, skip, maxFileBytes);
      const r = record()!;
      store.writeTurn(r);
      const previous = store.readMirror(key);
      before = await scanRoots(tool, previous ?? new Map());
      // Nothing changed since the last scan (the usual case): the file on disk says the same.
      if (previous === undefined || !sameMirror(previous, before)) {
        store.writeMirror(key, roots, before);
      } else before = previous;
      store.writePending(key, { session: sessionId, turn: r.turn, tool });
    } catch (error) {
      problem(`${tool}: the workspace could not be scanned before the call`, error);
      before = undefined;
    }
    try {
      return await call();
    } finally {
      try {
        if (before !== undefined) {
          using _lock = await store.lock();
          const after = await scanRoots(tool, before);
          const r = record()!;
          mergeChanges(r, diffMirrors(before, after));
          store.writeTurn(r);
          if (!sameMirror(before, after)) store.writeMirror(key, roots, after);
          store.writePending(key, undefined);
        }
      } catch (error) {
        problem(`${tool}: the workspace could not be scanned after the call`, error);
      } finally {
        workspace?.[Symbol.dispose]();
      }
    }
  };

  return {
    beginTurn(turn, prompt) {
      const flat = prompt.replace(/\s+/g, " ").trim();
      store.setActiveTurn({ session: sessionId, turn });
      current = {
        turn,
        prompt: flat.length > 80 ? `${flat.slice(0, 79)}…` : flat,
        started: new Date().toISOString(),
      };
    },
    around(tool, input, readOnly, call) {
      if (readOnly || current === undefined) return call();
      const path = (input as { path?: unknown } | null)?.path;
      // A tool that writes the file its `path` names (write, edit, by its facts): that file.
      // Without an absolute `path` it refuses the call before touching anything, so there is
      // nothing to keep (a scan of the whole tree would be all the call cost).
      if (factsOf(tool)?.path === "write") {
        return typeof path === "string" && path[0] === "/" ? aroundFile(path, call) : call();
      }
      return aroundScan(tool, call);
    },
    aroundObserved(tool, call) {
      if (current === undefined) return call(async () => {});
      return aroundObserved(tool, call);
    },
    async endTurn() {
      if (current === undefined) return;
      // The last call's record first: it needs the turn still current.
      await settled();
      const turn = current.turn;
      current = undefined;
      try {
        using _lock = await store.lock();
        const r = store.readTurn(sessionId, turn);
        if (r !== undefined) {
          r.ended = new Date().toISOString();
          store.writeTurn(r);
        }
        store.setActiveTurn({ session: sessionId, turn });
        store.enforceBudget();
        store.setActiveTurn(undefined);
      } catch { /* the record stays as the last call left it */ }
    },
  };
}
