/**
 * Everything `run` and `chat` share: config, policy, the worker with grants derived from the
 * policy, the gate, the session store and the provider, opened in one place and closed in
 * one place.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { type AskOperator, type AuditSink, createApprover, type Policy } from "../approver/mod.ts";
import { DEFAULT_MAX_ITERATIONS, runTurn, toolSpecs } from "../agent/loop.ts";
import type { AgentEvent, TurnResult } from "../agent/types.ts";
import { openSessionStore, type SessionInfo, type SessionStore } from "../agent/session_store.ts";
import { defaultSystemPrompt } from "../agent/system_prompt.ts";
import type { GateOptions } from "../agent/tool_host.ts";
import { createUndoRecorder, type UndoProgress } from "../agent/undo/mod.ts";
import { openUndoStore } from "../agent/undo/mod.ts";
import { expireSessions, pruneUndo } from "../agent/retention.ts";
import { type ContextManager, createContextManager } from "../agent/context.ts";
import { type Instructions, loadInstructions, withInstructions } from "../agent/instructions.ts";
import type { Compaction } from "../agent/types.ts";
import type { Message, Provider } from "../providers/types.ts";
import { createWorkerHost, resolveReal, type WorkerHost } from "../tools/hosting.ts";
import { type Config, defaultConfigPath, loadConfig } from "./config/config.ts";
import { UsageError } from "./errors.ts";
import {
  checkGrants,
  describeLayers,
  grantsFor,
  type Layers,
  mayRunCommands,
  observedBy,
} from "./layers/grants.ts";
import { createLogger, type LogFlags, type Logger } from "./terminal/log.ts";
import { type GlobalFlags, type LimitFlags, toolContextFrom } from "./config/options.ts";
import {
  checkToolNames,
  type PolicyCommand,
  type PolicyFlags,
  resolvePolicy,
} from "./config/policy.ts";
import { writeStderr } from "./terminal/output.ts";
import { type ProviderFlags, providerFrom, replyReserveFrom } from "./config/provider.ts";
import { openMcpSources, toolSourceOf } from "./tool_sources.ts";
import { retentionNote, sessionRetention, undoMaxBytes } from "./config/state_dir.ts";
import { openAuditLog } from "./config/audit_log.ts";
import type { McpSources } from "../agent/mcp_sources.ts";

/** Flags `run` and `chat` share. */
export interface AgentFlags extends GlobalFlags, LimitFlags, PolicyFlags, ProviderFlags, LogFlags {
  /** `--session ID`: continue a stored session. */
  readonly session?: string;
  /** `-c` / `--continue`: continue the most recent session of this workspace. */
  readonly continue?: boolean;
  /** `run -q`: nothing on stderr but errors (the note that no session was found included). */
  readonly quiet?: boolean;
  /** `--resume [ID]`: continue a given session; bare (chat only), pick one. */
  readonly resume?: string | boolean;
  /** `--max-iterations N`. */
  readonly maxIterations?: string;
  /** `--context-window N`: the model's window in tokens. */
  readonly contextWindow?: string;
  /** False with `--no-instructions`: AGENTS.md / CLAUDE.md are not read. */
  readonly instructions?: boolean;
}

/** An opened agent: close it with `await using`. */
export interface AgentSetup extends AsyncDisposable {
  readonly config: Config;
  readonly policy: Policy;
  readonly provider: Provider;
  readonly gate: GateOptions;
  readonly host: WorkerHost;
  readonly store: SessionStore;
  readonly sessionId: string;
  /** The stored history (repaired), to which the turn appends. */
  readonly messages: Message[];
  readonly system: string;
  readonly maxIterations: number;
  readonly layers: Layers;
  readonly log: Logger;
  /** The session's context window, its use and its compactions. */
  readonly context: ContextManager;
  /** The instruction files put in the system prompt. */
  readonly instructions: Instructions;
  /**
   * Chat's `/clear`: a new, empty session with the same settings (the old one stays stored).
   * `sessionId`, `messages` and `context` then describe the new one.
   */
  clear(): void;
  /** Chat's `/model NAME`: the next turns go to `model` (same provider and settings). */
  useModel(model: string): void;
  /** Compacts the session now (chat's `/compact`); undefined when there was nothing to do. */
  compact(signal: AbortSignal): Promise<Compaction | undefined>;
  /** Runs one turn on the user's `text`; every message is stored as it is added. */
  turn(
    text: string,
    signal: AbortSignal,
    onEvent: (event: AgentEvent) => void,
  ): Promise<TurnResult>;
}

/** The sessions database under the state directory. */
export function sessionsPath(config: Config): string {
  return join(config.stateDir, "sessions.db");
}

function iterationsFrom(flags: AgentFlags, config: Config): number {
  if (flags.maxIterations === undefined) {
    return config.values.agent?.max_iterations ?? DEFAULT_MAX_ITERATIONS;
  }
  const n = Number(flags.maxIterations);
  if (!/^\d+$/.test(flags.maxIterations.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `--max-iterations: want a whole number of at least 1, got ${
        JSON.stringify(flags.maxIterations)
      }`,
    );
  }
  return n;
}

function contextWindowFrom(flags: AgentFlags, config: Config): number | undefined {
  if (flags.contextWindow === undefined) return config.values.agent?.context_window;
  const n = Number(flags.contextWindow);
  if (!/^\d+$/.test(flags.contextWindow.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(
      `--context-window: want a whole number of tokens of at least 1, got ${
        JSON.stringify(flags.contextWindow)
      }`,
    );
  }
  return n;
}

/**
 * Audit events to the state directory's log, and to the log at debug level. The log and its
 * head are kept open between lines (a turn records two lines a call for as long as the
 * command runs); `close()` closes them.
 */
function auditTo(
  config: Config,
  secrets: readonly string[],
  log: Logger,
): AuditSink & { close(): void } {
  const file = openAuditLog(config, secrets, { keepOpen: true });
  return {
    close: () => file.close(),
    async record(event) {
      await file.record(event);
      if (log.enabled("debug")) {
        log.log("debug", `${event.event} ${event.tool}`, {
          event: event.event,
          tool: event.tool,
          ...(event.rule === undefined ? {} : { rule: event.rule }),
        });
      }
    },
  };
}

/**
 * Opens what a turn needs. A broken config file is an error (exit 1); a bad flag is a
 * usage error (exit 2).
 */
/** Picks one of this workspace's sessions (newest first); undefined starts a new one. */
export type SessionPicker = (sessions: readonly SessionInfo[]) => Promise<string | undefined>;

/**
 * The session to continue, from `--session`, `--resume` or `--continue` (at most one), or
 * undefined for a new one. Continuing another workspace's session is said on stderr: the
 * tools work in this command's workspace, not the one the session started in.
 */
async function sessionToContinue(
  flags: AgentFlags,
  store: SessionStore,
  workspace: string,
  pick: SessionPicker | undefined,
): Promise<SessionInfo | undefined> {
  const given = [
    flags.session === undefined ? undefined : "--session",
    flags.resume === undefined || flags.resume === false ? undefined : "--resume",
    flags.continue ? "--continue" : undefined,
  ].filter((f) => f !== undefined);
  if (given.length > 1) {
    throw new UsageError(`${given.join(" and ")} cannot be used together; pick one`);
  }
  let found: SessionInfo | undefined;
  const note = (text: string) => flags.quiet === true ? Promise.resolve() : writeStderr(text);
  if (flags.continue) {
    found = store.list().find((s) => s.workspace === workspace);
    if (found === undefined) {
      await note(`rousseau: no earlier session in ${workspace}; starting a new one`);
      return undefined;
    }
  } else if (flags.resume === true) {
    const mine = store.list().filter((s) => s.workspace === workspace);
    if (pick === undefined) {
      throw new UsageError("--resume: give a session id (see rousseau session list), or use -c");
    }
    if (mine.length === 0) {
      await note(`rousseau: no earlier session in ${workspace}; starting a new one`);
      return undefined;
    }
    const id = await pick(mine);
    if (id === undefined) return undefined;
    found = store.find(id);
  } else {
    const id = flags.session ?? (typeof flags.resume === "string" ? flags.resume : undefined);
    if (id === undefined) return undefined;
    found = store.find(id);
    if (found === undefined) {
      throw new UsageError(
        `${given[0]}: no session ${JSON.stringify(id)} (see rousseau session list)`,
      );
    }
  }
  if (found !== undefined && found.workspace !== workspace) {
    await writeStderr(
      `rousseau: session ${found.id} was started in ${found.workspace}; continuing it in ` +
        `${workspace} (pass --workspace ${found.workspace} to work there)`,
    );
  }
  return found;
}

export async function openAgent(
  command: Extract<PolicyCommand, "run" | "chat">,
  flags: AgentFlags,
  options: {
    operator?: AskOperator;
    pickSession?: SessionPicker;
    /** Run bash calls the policy asks about first, and ask with what they did (chat). */
    preview?: boolean;
    /** Told how a long scan of the workspace for undo goes (a status line). */
    onUndoProgress?: (progress: UndoProgress) => void;
  } = {},
): Promise<AgentSetup> {
  const config = await loadConfig(flags.config).catch((error) => {
    // A broken config file is an error of the run (exit 1), not of its command line.
    throw error instanceof UsageError ? new Error(error.message, { cause: error }) : error;
  });
  const log = createLogger(flags, config.values.log ?? {});
  const policy = resolvePolicy(command, config.approver, flags);
  const maxIterations = iterationsFrom(flags, config);
  const contextWindow = contextWindowFrom(flags, config);
  const provider = providerFrom(config, flags);
  const context = await toolContextFrom(flags, config, mayRunCommands(policy));
  const grants = grantsFor(policy, context.workspace, context.sandbox);
  checkGrants(policy, grants, context.sandbox);
  const store = openSessionStore(sessionsPath(config));
  let host: WorkerHost | undefined;
  let sources: McpSources | undefined;
  /** The undo side of retention, which may wait for another process's lock. */
  let pruning: Promise<unknown> | undefined;
  try {
    let sessionId: string;
    let messages: Message[] = [];
    const found = await sessionToContinue(
      flags,
      store,
      context.workspace.roots[0]!,
      options.pickSession,
    );
    if (found !== undefined) {
      sessionId = found.id;
      messages = store.load(sessionId);
    } else {
      sessionId = store.create({
        workspace: context.workspace.roots[0]!,
        provider: provider.name,
        model: provider.model,
      });
    }
    // Retention, as every run and chat starts: expired sessions go (never this one).
    const expired = expireSessions(store, sessionRetention(config), { keep: sessionId });
    if (expired.sessions.length > 0 && flags.quiet !== true) {
      // Said, not only logged: history that vanishes without a word looks like a bug.
      await writeStderr(`rousseau: ${retentionNote(expired.sessions.length, config)}`);
    }
    host = await createWorkerHost({ ...context, modules: config.modules, permissions: grants });
    checkToolNames(config.approver, flags, host.registry.names(), Object.keys(config.mcpServers));
    // Tools of the configured MCP servers join the worker's, behind the same gate.
    sources = await openMcpSources(config, context.workspace, log);
    const tools = toolSourceOf(host, sources, log);
    const secrets = Object.entries(Deno.env.toObject())
      .filter(([key]) => !(key in context.env)).map(([, value]) => value);
    // state.undo.max_bytes = 0 turns undo off (no copies, no scans before bash calls).
    const undoStore = undoMaxBytes(config) === 0
      ? undefined
      : openUndoStore(config.stateDir, { maxBytes: undoMaxBytes(config) });
    // Their undo data (and any whose session is gone), and the cap, without holding up the
    // start: the store's lock may be held by another process's scan.
    pruning = pruneUndo(
      undoStore ?? openUndoStore(config.stateDir, { maxBytes: 0 }),
      store,
      { budget: undoStore !== undefined },
    ).then(
      (gone) => {
        if (gone.length > 0) {
          log.log("info", `retention: removed the undo data of ${gone.length} session(s)`);
        }
      },
      (error) => log.log("warn", `retention: undo data: ${(error as Error).message}`),
    );
    /** The undo recorder of session `id` (chat's /clear starts another session). */
    const audit = auditTo(config, secrets, log);
    const undoFor = (id: string) =>
      undoStore === undefined ? {} : {
        undo: createUndoRecorder({
          store: undoStore,
          sessionId: id,
          roots: context.workspace.roots,
          protectedPaths: config.protectedPaths,
          ...(options.onUndoProgress === undefined ? {} : { onProgress: options.onUndoProgress }),
        }),
      };
    const gate: GateOptions = {
      registry: tools.registry,
      host: tools.host,
      approver: createApprover(policy, {
        resolvePath: resolveReal,
        workspace: context.workspace,
        protectedPaths: config.protectedPaths,
        observed: context.sandbox?.overlay !== undefined,
      }),
      ...observedBy(context.sandbox),
      // A preview cannot reach anything yet only when bash has no network.
      ...(options.preview === true && context.sandbox?.overlay !== undefined &&
          !context.sandbox.network
        ? { preview: true }
        : {}),
      audit,
      source: "model",
      sessionId,
      ...(options.operator === undefined ? {} : { operator: options.operator }),
      ...undoFor(sessionId),
    };
    const opened = host;
    const mcp = sources;
    const pruned = pruning;
    const configHome = defaultConfigPath(Deno.env.toObject());
    const instructions: Instructions = flags.instructions === false
      ? { files: [], skipped: [] }
      : await loadInstructions({
        workspace: context.workspace.roots[0]!,
        ...(configHome === undefined ? {} : { userDir: dirname(configHome) }),
        protectedPaths: config.protectedPaths,
      });
    for (const skipped of instructions.skipped) {
      log.log("warn", `instructions: skipped ${skipped.path}: ${skipped.reason}`);
    }
    const system = withInstructions(
      config.values.agent?.system_prompt ??
        defaultSystemPrompt(context.workspace.roots, tools.registry.names()),
      instructions.files,
    );
    const managerFor = (model: string, id: string) =>
      createContextManager({
        model,
        ...(contextWindow === undefined ? {} : { window: contextWindow }),
        ...(config.values.agent?.max_result_share === undefined
          ? {}
          : { maxResultShare: config.values.agent.max_result_share }),
        // The reply's budget must stay free (servers refuse prompt + max_tokens over the window).
        reserveTokens: replyReserveFrom(config, flags, provider.name),
        records: store.loadContext(id),
        onRecord: (record) => store.appendContext(id, record),
      });
    // What /clear and /model change; the getters below always tell the current ones.
    let current = {
      provider,
      sessionId,
      messages,
      gate,
      manager: managerFor(provider.model, sessionId),
    };
    return {
      config,
      policy,
      get provider() {
        return current.provider;
      },
      get gate() {
        return current.gate;
      },
      host: opened,
      store,
      get sessionId() {
        return current.sessionId;
      },
      get messages() {
        return current.messages;
      },
      system,
      maxIterations,
      turn(text, signal, onEvent) {
        const { sessionId, messages, provider, gate, manager } = current;
        const message = { role: "user" as const, content: [{ type: "text" as const, text }] };
        messages.push(message);
        store.append(sessionId, message);
        const undo = gate.undo;
        // The stored count of prompts: `messages` shrinks when the context is compacted.
        undo?.beginTurn(store.find(sessionId)?.turns ?? 1, text);
        return runTurn(messages, {
          provider,
          gate,
          system,
          maxIterations,
          signal,
          onEvent,
          onMessage: (added) => store.append(sessionId, added),
          context: manager,
        }).finally(() => undo?.endTurn());
      },
      get context() {
        return current.manager;
      },
      instructions,
      clear() {
        const id = store.create({
          workspace: context.workspace.roots[0]!,
          provider: current.provider.name,
          model: current.provider.model,
        });
        current = {
          ...current,
          sessionId: id,
          messages: [],
          gate: { ...current.gate, sessionId: id, ...undoFor(id) },
          manager: managerFor(current.provider.model, id),
        };
      },
      useModel(model) {
        const next = providerFrom(config, { ...flags, model });
        current = { ...current, provider: next, manager: managerFor(model, current.sessionId) };
      },
      compact(signal) {
        return current.manager.compact(current.provider, {
          system,
          messages: current.messages,
          tools: toolSpecs(current.gate),
        }, signal);
      },
      layers: describeLayers(policy, context.workspace, grants, context.sandbox),
      log,
      async [Symbol.asyncDispose]() {
        opened.close();
        audit.close();
        await pruned;
        store.close();
        await mcp.close();
      },
    };
  } catch (error) {
    host?.close();
    await pruning;
    store.close();
    await sources?.close();
    throw error;
  }
}
