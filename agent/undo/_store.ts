/**
 * Undo data on disk, under `<state dir>/undo/`:
 *
 * - `objects/ab/cdef…`: file contents by SHA-256, shared by every session (deduplicated);
 * - `mirrors/<key>.json`: the mirror fallback's last scan of a workspace (its root set
 *   hashed into `<key>`), and `mirrors/<key>.pending.json` while a call that may change it
 *   runs;
 * - `sessions/<id>/<turn>.json`: what each turn changed (a {@linkcode TurnRecord}).
 *
 * Two kinds of exclusive lock (flock: a process killed while holding one releases it):
 * - `locks/<key>`, a workspace's lock, held for the whole of a call that may change that
 *   workspace (so a concurrent call or `undo` in the same workspace cannot blur what the
 *   call did) and by `undo`; a pending marker found by the next holder is therefore always
 *   the mark of a process that died;
 * - `lock`, the store's lock, held only while the store's files change (scans, records,
 *   budget), never for the length of a call, so sessions in other workspaces never wait for
 *   a long command. Order: workspace locks (sorted) first, then the store's lock.
 *
 * The objects and the mirrors together are bounded by `state.undo.max_bytes`: past it, the
 * oldest turns are dropped (never the running one), then objects nothing refers to are
 * deleted; at the end of a turn ({@linkcode UndoStore.enforceBudget}) mirrors go too, oldest
 * first, the running workspace's last, never one a running call is pending on (a dropped
 * mirror only means the next scan of that workspace reads every file again).
 *
 * `usage.json` holds the objects' byte count as of the last release of the store's lock; it
 * says "no count" before the objects change under the lock and holds the count again after
 * the release, so a process killed meanwhile leaves none and the next holder counts the
 * objects again. It is overwritten in place (a fixed 64 bytes), not replaced by a rename: on
 * ext4 a rename over a file writes the new file's data out first, a cost paid on every call
 * that changes a file.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { type Entry, type ObjectSink, sha256Hex } from "./_entry.ts";
import { type Mirror, mirrorFromJson, mirrorToJson } from "./_mirror_fallback.ts";
import { isPendingMarker, isSessionId, isTurnNumber, recordFault } from "./_check.ts";

/** Bumped when the mirror's rows change shape; an older file is scanned again. */
const MIRROR_VERSION = 2;

/** Why a dropped turn cannot be undone. */
export const DROPPED =
  "its undo data was dropped to keep the store within state.undo.max_bytes (oldest turns first)";

/** The default of `state.undo.max_bytes`: 256 MiB. */
export const DEFAULT_UNDO_MAX_BYTES = 256 * 1024 * 1024;

/** How a path changed in a turn; `after` is `"pending"` while (or if killed while) a call ran. */
export interface RecordedChange {
  before: Entry | null;
  after: Entry | null | "pending";
}

/** What one turn of a session changed. */
export interface TurnRecord {
  readonly version: 1;
  readonly session: string;
  /** The turn's number in its session (1 for the first prompt). */
  readonly turn: number;
  /** The prompt, shortened. */
  readonly prompt: string;
  readonly started: string;
  ended?: string;
  /** When it was undone. */
  undone?: string;
  /** When its kept contents were dropped to stay within `state.undo.max_bytes`. */
  dropped?: string;
  readonly roots: readonly string[];
  /** The mirror the turn's calls were scanned against. */
  readonly mirror: string;
  /** Path to how it changed. */
  changes: Record<string, RecordedChange>;
  /** Path (or `*` for a whole call) to why it cannot be put back. */
  problems: Record<string, string>;
  /**
   * Set (never stored) on the stand-in {@linkcode UndoStore.listTurns} gives for a record
   * file that cannot be trusted: why. `undo` writes nothing while one is among its turns.
   */
  readonly damaged?: string;
}

/** The size of `usage.json`, written in place. */
const USAGE_BYTES = 64;

/** The mirror key of a root set. */
export function mirrorKey(roots: readonly string[]): string {
  return sha256Hex(new TextEncoder().encode(roots.join("\n"))).slice(0, 24);
}

function writeAtomicSync(path: string, data: Uint8Array | string, mode = 0o600): void {
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    if (typeof data === "string") Deno.writeTextFileSync(temp, data, { mode });
    else Deno.writeFileSync(temp, data, { mode });
    Deno.renameSync(temp, path);
  } catch (error) {
    try {
      Deno.removeSync(temp);
    } catch { /* never written */ }
    throw error;
  }
}

/**
 * {@linkcode writeAtomicSync} of a text, its write and rename done off this thread: a rename
 * over an existing file costs about a millisecond on ext4 (`auto_da_alloc` writes the new
 * file's data out first), time this thread can spend on other work.
 */
async function writeAtomic(path: string, data: string, mode = 0o600): Promise<void> {
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, data, { mode });
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {/* never written */});
    throw error;
  }
}

function readJson(path: string): unknown | undefined {
  try {
    return JSON.parse(Deno.readTextFileSync(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new Error(
      `undo: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** Throws unless `session` and `turn` can name a record file (no `/`, `..`, NUL). */
function checkName(session: unknown, turn: unknown): void {
  if (!isSessionId(session)) throw new TypeError(`undo: bad session id ${JSON.stringify(session)}`);
  if (!isTurnNumber(turn)) throw new TypeError(`undo: bad turn number ${JSON.stringify(turn)}`);
}

/**
 * The stand-in for a record file that cannot be trusted (unreadable, not JSON, a path outside
 * its workspace): it changes nothing and says why, so `undo` names it instead of silently
 * undoing an older turn in its place.
 */
function damagedRecord(path: string, session: string, turn: number): TurnRecord {
  let why: string;
  try {
    const value = JSON.parse(Deno.readTextFileSync(path));
    why = recordFault(value, session, turn, mirrorKey) ?? "it changed while it was read";
  } catch (error) {
    why = error instanceof Error ? error.message : String(error);
  }
  return {
    version: 1,
    session,
    turn,
    prompt: "",
    started: "",
    roots: [],
    mirror: "",
    changes: {},
    problems: {
      "*": `its undo record ${path} is damaged (${why}); remove it to undo the turns before it`,
    },
    damaged: why,
  };
}

/** The pending marker of a mirror: a call that was running (its process may have died). */
export interface Pending {
  readonly session: string;
  readonly turn: number;
  readonly tool: string;
}

/** The undo directory of one state directory. */
export interface UndoStore extends ObjectSink {
  readonly dir: string;
  readonly maxBytes: number;
  /** Takes the store's exclusive lock (waits for other processes); dispose to release. */
  lock(): Promise<Disposable>;
  /**
   * Takes the locks of the workspaces whose mirror keys are `keys` (in sorted order, so two
   * holders never deadlock); take before {@linkcode lock}. Dispose to release.
   */
  lockWorkspaces(keys: readonly string[]): Promise<Disposable>;
  /** The stored bytes of `hash`, checked; undefined when missing or damaged. */
  get(hash: string): Uint8Array | undefined;
  /** Bytes the objects and the mirrors take (what `maxBytes` bounds). */
  totalBytes(): number;
  /** The same, apart: file copies and mirrors. */
  usage(): { objects: number; mirrors: number };
  readMirror(key: string): Mirror | undefined;
  writeMirror(key: string, roots: readonly string[], mirror: Mirror): void;
  readPending(key: string): Pending | undefined;
  writePending(key: string, pending: Pending | undefined): void;
  readTurn(session: string, turn: number): TurnRecord | undefined;
  writeTurn(record: TurnRecord): void;
  /**
   * {@linkcode writeTurn}, its file written and renamed off this thread (the caller keeps the
   * store's lock until it settles).
   */
  writeTurnAsync(record: TurnRecord): Promise<void>;
  /** The session's turn records, oldest first. */
  listTurns(session: string): TurnRecord[];
  /** Removes a session's records, then what nothing refers to any more. */
  deleteSession(session: string): void;
  /** The same for several sessions, collecting once. */
  deleteSessions(sessions: readonly string[]): void;
  /** The ids of the sessions that have records. */
  sessionIds(): string[];
  /** The turn being recorded: never dropped to make room. */
  setActiveTurn(turn: { session: string; turn: number } | undefined): void;
  /**
   * Drops the oldest turns (never the active one) until the store fits `maxBytes`, with the
   * objects nothing refers to any more; then, if still over, mirrors (oldest first, the
   * active turn's workspace last, never one with a pending call). New contents and mirrors
   * make room when stored by dropping turns only (a scan in progress needs its mirror).
   */
  enforceBudget(): void;
}

/**
 * Opens (creating it and its directory when missing) the lock file `path`, synchronously: a
 * lock file in the store's own 0700 directory is a regular file that opens at once, and each
 * asynchronous step would cost a trip through the thread pool (three of them per lock).
 */
function openLockFile(path: string): Deno.FsFile {
  const options = { read: true, write: true, create: true, mode: 0o600 };
  try {
    return Deno.openSync(path, options);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    Deno.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return Deno.openSync(path, options);
  }
}

/**
 * An exclusive flock on `path` (created), after the holders queued before it in this process:
 * two descriptors of one process would otherwise both wait on the kernel in no fixed order.
 */
async function flock(path: string, queues: Map<string, Promise<void>>): Promise<Disposable> {
  const previous = queues.get(path) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => release = resolve);
  queues.set(path, mine);
  const done = () => {
    if (queues.get(path) === mine) queues.delete(path);
    release();
  };
  await previous;
  try {
    const file = openLockFile(path);
    try {
      await file.lock(true);
    } catch (error) {
      file.close();
      throw error;
    }
    return {
      [Symbol.dispose]() {
        try {
          file.unlockSync();
        } finally {
          file.close();
          done();
        }
      },
    };
  } catch (error) {
    done();
    throw error;
  }
}

/** Opens (creating lazily) the undo store of `stateDir`. */
export function openUndoStore(
  stateDir: string,
  options: { maxBytes?: number } = {},
): UndoStore {
  const dir = join(stateDir, "undo");
  const objects = join(dir, "objects");
  const mirrors = join(dir, "mirrors");
  const sessions = join(dir, "sessions");
  const maxBytes = options.maxBytes ?? DEFAULT_UNDO_MAX_BYTES;
  const usagePath = join(dir, "usage.json");
  /** Bytes of the objects; recounted (or read from `usage.json`) after each lock is taken. */
  let total: number | undefined;
  /** Bytes of the mirror files, likewise. */
  let mirrorTotal: number | undefined;
  /** This process holds the store's lock. */
  let holding = false;
  /** The objects changed under the lock: `usage.json` is gone until the lock is released. */
  let dirty = false;
  /** `total` came from `usage.json` (so there is nothing to write back unless it changed). */
  let saved = false;
  /** Objects written or found while the lock is held: a scan in progress may need them. */
  const fresh = new Set<string>();
  /** The turn being recorded, never dropped to make room. */
  let active: { session: string; turn: number } | undefined;
  /** Set when nothing more can be dropped while the lock is held. */
  let exhausted = false;
  /** Object directories known to exist. */
  const made = new Set<string>();
  /** The last mirror written or read, to skip re-reading an unchanged file. */
  const mirrorCache = new Map<string, { stamp: string; mirror: Mirror }>();
  /** In-process queues by lock file: one waiter a file at a time within this process. */
  const queues = new Map<string, Promise<void>>();

  const objectPath = (hash: string) => join(objects, hash.slice(0, 2), hash.slice(2));
  const ensure = (path: string) => Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
  const stampOf = (path: string): string | undefined => {
    try {
      const info = Deno.statSync(path);
      return `${info.ino}:${info.size}:${info.mtime?.getTime()}`;
    } catch {
      return undefined;
    }
  };
  /** The objects' count kept in `usage.json`, when there is a valid one. */
  const readUsage = (): number | undefined => {
    try {
      const value = JSON.parse(Deno.readTextFileSync(usagePath)) as { objects?: unknown };
      return Number.isSafeInteger(value.objects) && (value.objects as number) >= 0
        ? value.objects as number
        : undefined;
    } catch {
      return undefined; // none (a holder was killed, or never written) or damaged: recount
    }
  };
  /** `usage.json` was brought to its fixed size by this process. */
  let sized = false;
  /** `usage.json` in place (null: no count): one small write at 0, whole or not at all. */
  const writeUsage = (objects: number | null) => {
    const text = JSON.stringify({ objects }).padEnd(USAGE_BYTES - 1);
    const bytes = new TextEncoder().encode(`${text}\n`);
    using file = Deno.openSync(usagePath, { write: true, create: true, mode: 0o600 });
    if (file.writeSync(bytes) !== bytes.length) throw new Error("undo: short write of usage.json");
    if (!sized) file.truncateSync(USAGE_BYTES); // an older version's longer file loses its tail
    sized = true;
  };
  /** Before the objects change: a holder killed from here on leaves no stale count behind. */
  const markDirty = () => {
    if (dirty) return;
    dirty = true;
    saved = false;
    try {
      writeUsage(null);
      return;
    } catch { /* no room for the file, or damaged: remove it instead */ }
    try {
      Deno.removeSync(usagePath);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  };
  const objectBytes = (): number => {
    if (total === undefined) {
      const kept = dirty ? undefined : readUsage();
      saved = kept !== undefined;
      total = kept ?? computeTotal();
    }
    return total;
  };
  const sizeOf = (path: string): number => {
    try {
      return Deno.statSync(path).size;
    } catch {
      return 0;
    }
  };
  const mirrorBytes = (): number => {
    if (mirrorTotal !== undefined) return mirrorTotal;
    let sum = 0;
    try {
      for (const { name } of Deno.readDirSync(mirrors)) {
        // A killed writer's temporary file counts until it is swept (see enforceBudget).
        if (/^[0-9a-f]+\.json$/.test(name) || name.endsWith(".tmp")) {
          sum += sizeOf(join(mirrors, name));
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    mirrorTotal = sum;
    return sum;
  };
  const computeTotal = (): number => {
    let sum = 0;
    try {
      for (const prefix of Deno.readDirSync(objects)) {
        if (!prefix.isDirectory) continue;
        for (const file of Deno.readDirSync(join(objects, prefix.name))) {
          const path = join(objects, prefix.name, file.name);
          // A killed writer's `.tmp`: a recount follows every kill (usage.json holds no count), so
          // under the lock (every writer holds it) it is swept here; unlocked, it counts.
          if (file.name.endsWith(".tmp") && holding) {
            try {
              Deno.removeSync(path);
              continue;
            } catch { /* counted below */ }
          }
          sum += sizeOf(path);
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return sum;
  };
  const allRecords = (): TurnRecord[] => {
    const out: TurnRecord[] = [];
    let ids: Deno.DirEntry[] = [];
    try {
      ids = [...Deno.readDirSync(sessions)];
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    for (const id of ids) {
      if (!id.isDirectory || !isSessionId(id.name)) continue;
      // A damaged record refers to nothing it could keep alive, and is never rewritten.
      out.push(...store.listTurns(id.name).filter((r) => r.damaged === undefined));
    }
    return out;
  };
  const referenced = (records: readonly TurnRecord[], mirrorSets: Map<string, Set<string>>) => {
    const refs = new Set<string>(fresh);
    for (const set of mirrorSets.values()) for (const hash of set) refs.add(hash);
    for (const record of records) {
      for (const change of Object.values(record.changes)) {
        if (change.before?.kind === "file" && change.before.stored) refs.add(change.before.hash);
      }
    }
    return refs;
  };
  /** Hashes each mirror refers to; with `liveKeys`, mirrors no turn refers to are deleted. */
  const mirrorHashes = (liveKeys?: Set<string>): Map<string, Set<string>> => {
    const out = new Map<string, Set<string>>();
    let names: Deno.DirEntry[] = [];
    try {
      names = [...Deno.readDirSync(mirrors)];
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    for (const { name } of names) {
      const match = /^([0-9a-f]+)\.json$/.exec(name);
      if (match === null) continue;
      const key = match[1]!;
      if (liveKeys !== undefined && !liveKeys.has(key) && store.readPending(key) === undefined) {
        // No turn refers to it: the copy of that workspace is no longer needed.
        Deno.removeSync(join(mirrors, name));
        mirrorCache.delete(key);
        mirrorTotal = undefined;
        continue;
      }
      const set = new Set<string>();
      for (const cached of store.readMirror(key)?.values() ?? []) {
        if (cached.entry.kind === "file" && cached.entry.stored) set.add(cached.entry.hash);
      }
      out.set(key, set);
    }
    return out;
  };
  const collect = (records: readonly TurnRecord[], mirrorSets: Map<string, Set<string>>) => {
    const refs = referenced(records, mirrorSets);
    let sum = 0;
    try {
      for (const prefix of Deno.readDirSync(objects)) {
        if (!prefix.isDirectory) continue;
        for (const file of Deno.readDirSync(join(objects, prefix.name))) {
          const path = join(objects, prefix.name, file.name);
          if (!refs.has(prefix.name + file.name)) {
            markDirty();
            Deno.removeSync(path);
          } else sum += Deno.statSync(path).size;
        }
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    total = sum;
  };

  const isActive = (r: TurnRecord) =>
    active !== undefined && r.session === active.session && r.turn === active.turn;

  /**
   * Drops the oldest turns (never the active one) until the store takes at most `limit`;
   * with `mirrorsToo`, mirrors are candidates as well (never while a scan may be using one).
   * Order: finished turns and other workspaces' mirrors by age, then turns without an end
   * (another process may still be running them), then the active turn's workspace's mirror.
   */
  const drop = (limit: number, mirrorsToo = false) => {
    if (store.totalBytes() <= limit) return;
    const all = allRecords();
    const live = all.filter((r) => r.dropped === undefined);
    const mirrorSets = mirrorHashes();
    const activeMirror = all.find(isActive)?.mirror;
    const candidates: { at: string; rank: number; record?: TurnRecord; mirror?: string }[] = live
      .filter((r) => !isActive(r))
      .map((record) => ({ at: record.started, rank: record.ended === undefined ? 1 : 0, record }));
    if (mirrorsToo) {
      for (const key of mirrorSets.keys()) {
        if (store.readPending(key) !== undefined) continue; // a call is running (or died) on it
        let at = "";
        try {
          at = Deno.statSync(join(mirrors, `${key}.json`)).mtime?.toISOString() ?? "";
        } catch { /* gone meanwhile */ }
        candidates.push({ at, rank: key === activeMirror ? 2 : 0, mirror: key });
      }
    }
    candidates.sort((a, b) => a.rank - b.rank || (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    for (const candidate of candidates) {
      if (store.totalBytes() <= limit) break;
      if (candidate.record !== undefined) {
        const oldest = candidate.record;
        live.splice(live.indexOf(oldest), 1);
        // The record stays, emptied, so `undo` and `--list` say why the turn cannot be undone
        // instead of silently skipping to an older one.
        store.writeTurn({
          ...oldest,
          changes: {},
          problems: { "*": DROPPED },
          dropped: new Date().toISOString(),
        });
      } else {
        const key = candidate.mirror!;
        try {
          Deno.removeSync(join(mirrors, `${key}.json`));
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        }
        mirrorCache.delete(key);
        mirrorSets.delete(key);
        mirrorTotal = undefined;
      }
      collect(live, mirrorSets);
    }
  };

  /** Where `record` is written (its session's directory made); throws for a damaged one. */
  const turnPath = (record: TurnRecord): string => {
    if (record.damaged !== undefined) {
      throw new TypeError("undo: a damaged record is never written");
    }
    checkName(record.session, record.turn);
    const at = join(sessions, record.session);
    ensure(at);
    return join(at, `${record.turn}.json`);
  };

  const store: UndoStore = {
    dir,
    maxBytes,
    async lock() {
      const held = await flock(join(dir, "lock"), queues);
      // Other processes may have changed the store since this one last held the lock.
      holding = true;
      total = undefined;
      mirrorTotal = undefined;
      return {
        [Symbol.dispose]() {
          try {
            if (total !== undefined && (dirty || !saved)) {
              ensure(dir);
              writeUsage(total);
              dirty = false;
              saved = true;
            }
          } catch { /* no count kept: the next holder counts the objects */ }
          holding = false;
          fresh.clear();
          exhausted = false;
          held[Symbol.dispose]();
        },
      };
    },
    async lockWorkspaces(keys) {
      const held: Disposable[] = [];
      const release = () => {
        for (const lock of held.reverse()) lock[Symbol.dispose]();
      };
      try {
        for (const key of [...new Set(keys)].sort()) {
          if (!/^[0-9a-f]+$/.test(key)) throw new TypeError(`undo: bad workspace key ${key}`);
          held.push(await flock(join(dir, "locks", key), queues));
        }
      } catch (error) {
        release();
        throw error;
      }
      return { [Symbol.dispose]: release };
    },
    put(hash, bytes) {
      const path = objectPath(hash);
      try {
        Deno.statSync(path);
        fresh.add(hash);
        return true;
      } catch { /* not stored yet */ }
      if (store.totalBytes() + bytes.length > maxBytes && !exhausted) {
        // Room is made by dropping the oldest turns, as late as possible.
        drop(maxBytes - bytes.length);
        if (store.totalBytes() + bytes.length > maxBytes) exhausted = true;
      }
      if (store.totalBytes() + bytes.length > maxBytes) return false;
      markDirty();
      fresh.add(hash);
      const prefix = hash.slice(0, 2);
      if (!made.has(prefix)) {
        ensure(join(objects, prefix));
        made.add(prefix);
      }
      writeAtomicSync(path, bytes, 0o600);
      total = objectBytes() + bytes.length;
      return true;
    },
    room(bytes) {
      return store.totalBytes() + bytes <= maxBytes || !exhausted;
    },
    get(hash) {
      try {
        const bytes = Deno.readFileSync(objectPath(hash));
        return sha256Hex(bytes) === hash ? bytes : undefined;
      } catch {
        return undefined;
      }
    },
    totalBytes() {
      return objectBytes() + mirrorBytes();
    },
    usage() {
      return { objects: objectBytes(), mirrors: mirrorBytes() };
    },
    readMirror(key) {
      if (!/^[0-9a-f]+$/.test(key)) return undefined;
      const path = join(mirrors, `${key}.json`);
      const stamp = stampOf(path);
      if (stamp === undefined) return undefined;
      const cached = mirrorCache.get(key);
      if (cached?.stamp === stamp) return cached.mirror;
      let mirror: Mirror;
      try {
        const data = readJson(path) as
          | { version?: unknown; roots?: unknown; rows?: unknown }
          | undefined;
        if (data?.version !== MIRROR_VERSION) return undefined;
        // Rows only below the roots the file is named for (a mirror from elsewhere is none).
        const roots = data.roots;
        if (!Array.isArray(roots) || mirrorKey(roots) !== key) return undefined;
        mirror = mirrorFromJson(data.rows, roots);
      } catch {
        return undefined; // damaged: the next scan reads every file again
      }
      mirrorCache.set(key, { stamp, mirror });
      return mirror;
    },
    writeMirror(key, roots, mirror) {
      ensure(mirrors);
      const path = join(mirrors, `${key}.json`);
      const known = mirrorBytes();
      const old = sizeOf(path);
      const text = JSON.stringify({ version: MIRROR_VERSION, roots, rows: mirrorToJson(mirror) });
      writeAtomicSync(path, text);
      mirrorTotal = known - old + sizeOf(path);
      const stamp = stampOf(path);
      if (stamp !== undefined) mirrorCache.set(key, { stamp, mirror });
      // A larger mirror makes room as new contents do: by the oldest turns (never mirrors,
      // whose scans may be in progress).
      if (store.totalBytes() > maxBytes) drop(maxBytes);
    },
    readPending(key) {
      let value: unknown;
      try {
        value = readJson(join(mirrors, `${key}.pending.json`));
      } catch {
        value = {}; // damaged: settled as a call of no turn
      }
      if (value === undefined) return undefined;
      return isPendingMarker(value) ? value : { session: "", turn: -1, tool: "a call" };
    },
    writePending(key, pending) {
      const path = join(mirrors, `${key}.pending.json`);
      if (pending === undefined) {
        try {
          Deno.removeSync(path);
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        }
        return;
      }
      ensure(mirrors);
      writeAtomicSync(path, JSON.stringify(pending));
    },
    readTurn(session, turn) {
      if (!isSessionId(session) || !isTurnNumber(turn)) return undefined;
      let value: unknown;
      try {
        value = readJson(join(sessions, session, `${turn}.json`));
      } catch {
        return undefined;
      }
      return recordFault(value, session, turn, mirrorKey) === undefined
        ? value as TurnRecord
        : undefined;
    },
    writeTurn(record) {
      writeAtomicSync(turnPath(record), JSON.stringify(record));
    },
    writeTurnAsync(record) {
      let path: string;
      try {
        path = turnPath(record);
      } catch (error) {
        return Promise.reject(error);
      }
      return writeAtomic(path, JSON.stringify(record));
    },
    listTurns(session) {
      if (!isSessionId(session)) {
        throw new TypeError(`undo: bad session id ${JSON.stringify(session)}`);
      }
      const at = join(sessions, session);
      let names: Deno.DirEntry[];
      try {
        names = [...Deno.readDirSync(at)];
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return [];
        throw error;
      }
      const out: TurnRecord[] = [];
      for (const { name } of names) {
        const match = /^(\d+)\.json$/.exec(name);
        if (match === null) continue;
        const turn = Number(match[1]);
        const record = store.readTurn(session, turn);
        if (record !== undefined) out.push(record);
        else out.push(damagedRecord(join(at, name), session, turn));
      }
      return out.sort((a, b) => a.turn - b.turn);
    },
    deleteSession(session) {
      store.deleteSessions([session]);
    },
    deleteSessions(ids) {
      for (const session of ids) {
        if (!/^[A-Za-z0-9-]+$/.test(session)) {
          throw new TypeError(`undo: bad session id ${session}`);
        }
      }
      for (const session of ids) {
        try {
          Deno.removeSync(join(sessions, session), { recursive: true });
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        }
      }
      const records = allRecords();
      collect(records, mirrorHashes(new Set(records.map((r) => r.mirror))));
    },
    sessionIds() {
      try {
        return [...Deno.readDirSync(sessions)].filter((e) => e.isDirectory).map((e) => e.name)
          .sort();
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return [];
        throw error;
      }
    },
    setActiveTurn(turn) {
      active = turn;
    },
    enforceBudget() {
      // Temporary files of writers killed mid-write (every writer holds the store's lock, so
      // under it any is a leftover): a mirror's can be as large as the mirror.
      for (const at of [dir, mirrors]) {
        let names: Deno.DirEntry[] = [];
        try {
          names = [...Deno.readDirSync(at)];
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
        }
        for (const { name, isFile } of names) {
          if (!isFile || !name.endsWith(".tmp")) continue;
          try {
            Deno.removeSync(join(at, name));
          } catch (error) {
            if (!(error instanceof Deno.errors.NotFound)) throw error;
          }
          mirrorTotal = undefined;
        }
      }
      drop(maxBytes, true);
    },
  };
  return store;
}
