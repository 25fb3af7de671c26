/**
 * The messages between the tool worker (`worker.ts`) and its host (`worker_host.ts`): the one
 * surface both sides share, so the host never imports the worker's code.
 *
 * @module
 */

import type { ChangeVerdict, Limits, Workspace } from "./types.ts";
import type { ChangeSet } from "./_overlay.ts";
import type { HiddenPath, Sandbox } from "./_sandbox.ts";
import type { OpenedProof } from "./_later_proofs.ts";

/** Sent once, before any call. */
export interface InitMessage {
  readonly type: "init";
  readonly workspace: Workspace;
  readonly limits: Limits;
  readonly env: Readonly<Record<string, string>>;
  /** Module URLs whose default export is a tool or an array of tools. */
  readonly modules: readonly string[];
  /** False in the custom modules' worker: the built-in tools are not loaded there. @default true */
  readonly builtins?: boolean;
  /** bash's sandbox, if any. */
  readonly sandbox?: Sandbox;
  /** Where to ask the host what an open file descriptor leads to (see `_fd_channel.ts`). */
  readonly fdChannel?: SharedArrayBuffer;
  /**
   * True when the host proves a call's opened files with its result (`LaterProofs` in
   * `_workspace.ts`): a call may leave them open for it, listed in `result.proofs`.
   */
  readonly proveLater?: boolean;
}

/** Runs one call. */
export interface CallMessage {
  readonly type: "call";
  readonly id: number;
  readonly name: string;
  readonly input: unknown;
  /** True when the host judges files per call (`ToolContext.mayReturn`): ask it. */
  readonly scoped?: boolean;
  /**
   * When the host judges change sets (`ToolContext.settleChanges`): ask it, about every set
   * (true) or only about one that changes something (`"changes"`: `CallScope.appliesEmpty`).
   */
  readonly settles?: boolean | "changes";
  /** Sockets bound since start that bash's sandbox covers too, for this call. */
  readonly hide?: readonly HiddenPath[];
  /**
   * Paths the sandbox hides that are gone now (nothing there to hide): left out for this call,
   * since bwrap refuses to cover a path that does not exist.
   */
  readonly unhide?: readonly string[];
  /** Descriptors the host has proven since the last call (`result.proofs`): close them. */
  readonly close?: readonly number[];
}

/** Descriptors the host has proven (`result.proofs`), sent alone when many wait: close them. */
export interface CloseMessage {
  readonly type: "close";
  readonly fds: readonly number[];
}

/** The host's answer to a `settle` question. */
export interface SettleAnswer {
  readonly type: "settle-answer";
  readonly ask: number;
  readonly verdict: ChangeVerdict;
}

/** The host's answer to a `may-return` question. */
export interface MayReturnAnswer {
  readonly type: "may-return-answer";
  /** The question's number. */
  readonly ask: number;
  readonly allowed: boolean;
}

/** Cancels a call in flight. */
export interface CancelMessage {
  readonly type: "cancel";
  readonly id: number;
}

/**
 * A prefilter worker for grep, started by the host after a `want-prefilter` (see
 * `_grep_pool.ts`): grep's end of its channel. The host alone picks its grants (read on the
 * workspace roots); the tool worker only gets the port.
 */
export interface PrefilterMessage {
  readonly type: "prefilter";
  readonly port: MessagePort;
}

/** Messages the worker accepts. */
export type WorkerRequest =
  | InitMessage
  | CallMessage
  | CancelMessage
  | CloseMessage
  | MayReturnAnswer
  | SettleAnswer
  | PrefilterMessage;

/** Messages the worker sends. */
export type WorkerReply =
  | {
    readonly type: "ready";
    readonly tools: ReadonlyArray<
      { name: string; description: string; inputSchema: unknown; readOnly: boolean }
    >;
  }
  | { readonly type: "failed"; readonly error: string }
  | {
    /** Whether a file's content may be returned by call `id` (see `ToolContext.mayReturn`). */
    readonly type: "may-return";
    readonly id: number;
    readonly ask: number;
    readonly path: string;
  }
  | {
    /** Whether call `id` may apply the change set its command made (`ToolContext.settleChanges`). */
    readonly type: "settle";
    readonly id: number;
    readonly ask: number;
    readonly set: ChangeSet;
    readonly output: string;
  }
  | {
    readonly type: "result";
    readonly id: number;
    readonly output: string;
    readonly isError: boolean;
    /** Descriptors left open for the host to prove and close (see `InitMessage.proveLater`). */
    readonly proofs?: readonly OpenedProof[];
  }
  | {
    /** A grep is walking a large tree: start a prefilter worker and send its port. */
    readonly type: "want-prefilter";
  };
