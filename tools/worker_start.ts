/**
 * Starting the tool worker: the one `new Worker` of the program, with the grants it is given.
 *
 * This module imports nothing, so the entry point can start the worker before it loads
 * anything else (cli/startup/early_worker.ts): `new Worker` blocks the calling thread while the
 * worker's isolate is created (about 50 ms measured here), and the worker then loads the tools
 * on its own thread while the caller loads its modules.
 *
 * A started worker is only a running isolate with grants; `createWorkerHost` claims it (and
 * checks the grants) or stops it.
 *
 * @module
 */

import type { Workspace } from "./types.ts";
import type { Sandbox } from "./_sandbox.ts";

/** Runtime grants of the worker, as `Deno.PermissionOptionsObject` takes them. */
export interface WorkerPermissions {
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly run: readonly string[];
  readonly net: false;
  readonly env: false;
  readonly ffi: false;
  readonly sys: false;
  readonly import: false;
}

/**
 * The worker's grants for `workspace`: read on its roots (and `/proc/self/fd`, for the
 * open checks), write on its roots, run on `/bin/sh` — or on bwrap only, when bash is
 * sandboxed, or on setpriv(1) only (perl as root, with an unprivileged shell; plus read and
 * write on the scratch directory) when it runs under the overlay — and nothing else.
 */
export function derivePermissions(
  workspace: Pick<Workspace, "roots">,
  options: { write?: boolean; run?: boolean; sandbox?: Sandbox } = {},
): WorkerPermissions {
  // Under the overlay the worker itself makes the upper layers, reads them and applies what
  // was judged: it needs the scratch directory, setpriv(1) (which starts unshare; as root with
  // an unprivileged shell, perl, which makes the namespaces itself), and write on the roots.
  const overlay = options.run === false ? undefined : options.sandbox?.overlay;
  const scratch = overlay === undefined ? [] : [overlay.base];
  const write = options.write === false && overlay === undefined ? [] : [...workspace.roots];
  return {
    read: [...workspace.roots, ...scratch, "/proc/self/fd"],
    write: [...write, ...scratch],
    run: options.run === false
      ? []
      : overlay !== undefined
      ? [options.sandbox?.identity?.perl ?? overlay.setpriv]
      : options.sandbox?.identity !== undefined
      ? [options.sandbox.identity.setpriv]
      // With a network of its own, perl starts first (it makes the namespace; `_usernet.ts`).
      : options.sandbox?.network && options.sandbox.userNet !== undefined
      ? [options.sandbox.userNet.perl]
      : [options.sandbox?.bwrap ?? "/bin/sh"],
    net: false,
    env: false,
    ffi: false,
    sys: false,
    import: false,
  };
}

/** A tool worker that is loading its modules and has not been sent `init` yet. */
export interface StartedWorker {
  /** The grants it runs with. */
  readonly permissions: WorkerPermissions;
  /** Stops it (a no-op once a host has taken it over). */
  terminate(): void;
}

interface State {
  readonly worker: Worker;
  error?: string;
  taken: boolean;
}

const workers = new WeakMap<StartedWorker, State>();

/**
 * Starts a tool worker with `permissions`; it loads the tools while the caller goes on.
 * Hand it to `createWorkerHost` (which checks the grants) or terminate it.
 */
export function startToolWorker(permissions: WorkerPermissions): StartedWorker {
  const worker = new Worker(new URL("./worker.ts", import.meta.url), {
    type: "module",
    deno: {
      permissions: {
        ...permissions,
        read: [...permissions.read],
        write: permissions.write.length === 0 ? false : [...permissions.write],
        run: permissions.run.length === 0 ? false : [...permissions.run],
      },
    },
  } as WorkerOptions);
  const started: StartedWorker = {
    permissions: structuredClone(permissions),
    terminate() {
      const state = workers.get(started);
      if (state !== undefined && !state.taken) {
        state.taken = true;
        worker.terminate();
      }
    },
  };
  const state: State = { worker, taken: false };
  // Until a host takes it over, a load error is kept for the host to report.
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    state.error ??= event.message;
  };
  workers.set(started, state);
  return started;
}

/**
 * Takes over `started` when it runs with exactly `permissions` (list by list, entry by entry)
 * and nobody took it before: returns its Worker and the load error it met so far, if any.
 * Otherwise stops it (a worker with other grants is never used) and returns undefined.
 */
export function claimWorker(
  started: StartedWorker,
  permissions: WorkerPermissions,
): { worker: Worker; error?: string } | undefined {
  const state = workers.get(started);
  if (state === undefined || state.taken) return undefined;
  if (JSON.stringify(started.permissions) !== JSON.stringify(permissions)) {
    started.terminate();
    return undefined;
  }
  state.taken = true;
  return state.error === undefined
    ? { worker: state.worker }
    : { worker: state.worker, error: state.error };
}
