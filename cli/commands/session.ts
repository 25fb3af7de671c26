/**
 * `rousseau session list|show ID|delete ID`: the stored sessions.
 *
 * @module
 */

// Stored messages hold what models and the files they read said: shown through visible().
import { visible } from "../../approver/visible.ts";
import type { Message } from "../../providers/types.ts";
import type { ContextRecord } from "../../agent/context.ts";
import { openSessionStore, type SessionInfo } from "../../agent/session_store.ts";
import { openUndoStore } from "../../agent/undo/mod.ts";
import { sessionsPath } from "../agent_setup.ts";
import { undoMaxBytes } from "../config/state_dir.ts";
import { type Config, loadConfig } from "../config/config.ts";
import { EXIT, UsageError } from "../errors.ts";
import type { GlobalFlags } from "../config/options.ts";
import { writeStdout } from "../terminal/output.ts";
import { age } from "../terminal/age.ts";

/** Flags of `session`. */
export interface SessionFlags extends GlobalFlags {
  /** `--json`. */
  readonly json?: boolean;
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A message as readable lines. */
function render(message: Message): string[] {
  return message.content.map((block) => {
    switch (block.type) {
      case "text":
        return `${message.role}: ${block.text}`;
      case "thinking":
        return block.redacted !== undefined
          ? "(thinking: redacted)"
          : `(thinking: ${oneLine(block.text)})`;
      case "tool_use":
        return block.rawInput !== undefined
          ? `→ ${block.name} (input not valid JSON, as sent: ${oneLine(block.rawInput)})`
          : `→ ${block.name} ${oneLine(JSON.stringify(block.input))}`;
      case "tool_result":
        return `← ${block.isError ? "error: " : ""}${oneLine(block.content)}`;
    }
  });
}

const REASONS = {
  threshold: "near the window",
  overflow: "the server said the prompt is too long",
  manual: "/compact",
} as const;

/** A context record as one line: what the model stopped seeing from there on. */
function renderRecord(record: ContextRecord): string {
  if (record.type === "window") {
    return `— context window of ${record.model}: ${record.tokens} tokens (stated by the server)`;
  }
  const did = [
    ...(record.elided.length === 0
      ? []
      : [`${record.elided.length} old tool result(s) shown to the model as stubs`]),
    ...(record.summary === undefined ? [] : [
      `messages 1–${record.summary.through} shown to the model as a summary: ${
        oneLine(record.summary.text, 400)
      }`,
    ]),
  ].join("; ");
  return `— context compacted (${
    REASONS[record.reason]
  }), ${record.tokensBefore} → ${record.tokensAfter} tokens: ${did}`;
}

/** The messages with each context record after the message it followed. */
function renderAll(messages: readonly Message[], records: readonly ContextRecord[]): string[] {
  const lines: string[] = [];
  let next = 0;
  messages.forEach((message, i) => {
    while (next < records.length && records[next]!.at <= i) {
      lines.push(renderRecord(records[next++]!));
    }
    lines.push(...render(message));
  });
  while (next < records.length) lines.push(renderRecord(records[next++]!));
  return lines;
}

/** `session list` as text: one row a session under a header, or `no sessions yet`. */
export function listing(sessions: readonly SessionInfo[], now: number): string {
  if (sessions.length === 0) return "no sessions yet\n";
  const rows = [
    ["ID", "WORKSPACE", "AGE", "TURNS", "FIRST PROMPT"],
    ...sessions.map((s) =>
      [
        s.id,
        s.workspace,
        age(s.updatedAt, now),
        String(s.turns),
        oneLine(s.title, 60),
      ].map(visible)
    ),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r.map((cell, i) =>
      i === 4 ? cell : i === 3 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)
    )
      .join("  ").trimEnd() + "\n"
  ).join("");
}

/** Removes a session's undo data (and the file copies nothing else needs). */
async function deleteUndoData(config: Config, id: string): Promise<void> {
  const undo = openUndoStore(config.stateDir, { maxBytes: undoMaxBytes(config) });
  using _lock = await undo.lock();
  undo.deleteSession(id);
}

/** Runs `session ACTION [ID]` and returns the exit code. */
export async function sessionCommand(
  action: string,
  id: string | undefined,
  flags: SessionFlags,
): Promise<number> {
  if (!["list", "show", "delete"].includes(action)) {
    throw new UsageError(
      `session: unknown action ${JSON.stringify(action)} (want list, show ID or delete ID)`,
    );
  }
  if (action !== "list" && id === undefined) throw new UsageError(`session ${action}: missing ID`);
  const config = await loadConfig(flags.config);
  using store = openSessionStore(sessionsPath(config));
  if (action === "list") {
    const sessions = store.list();
    if (flags.json) await writeStdout(JSON.stringify(sessions) + "\n");
    else await writeStdout(listing(sessions, Date.now()));
    return EXIT.ok;
  }
  const found = store.find(id!);
  if (found === undefined) {
    throw new Error(
      `session ${action}: no session ${JSON.stringify(id)} (see rousseau session list)`,
    );
  }
  if (action === "delete") {
    store.delete(found.id);
    await deleteUndoData(config, found.id);
    await writeStdout(`deleted ${found.id}\n`);
    return EXIT.ok;
  }
  const messages = store.load(found.id, false);
  // The messages are stored whole; compactions only changed what the model was sent.
  const context = store.loadContext(found.id);
  if (flags.json) {
    await writeStdout(JSON.stringify({ ...found, messages, context }) + "\n");
  } else {
    const head =
      `session ${found.id}\nworkspace ${found.workspace}\nmodel ${found.provider}/${found.model}\n` +
      `created ${found.createdAt}, updated ${found.updatedAt}\n\n`;
    await writeStdout(visible(head + renderAll(messages, context).join("\n")) + "\n");
  }
  return EXIT.ok;
}
