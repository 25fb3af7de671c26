/**
 * `rousseau session list|show ID|delete ID`: the stored sessions.
 *
 * @module
 */

import type { Message } from "../providers/types.ts";
import { openSessionStore } from "../agent/session_store.ts";
import { openUndoStore } from "../agent/undo_store.ts";
import { sessionsPath, undoMaxBytes } from "./agent_setup.ts";
import { type Config, loadConfig } from "./config.ts";
import { EXIT, UsageError } from "./errors.ts";
import type { GlobalFlags } from "./options.ts";
import { writeStdout } from "./output.ts";

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
      case "tool_use":
        return `→ ${block.name} ${oneLine(JSON.stringify(block.input))}`;
      case "tool_result":
        return `← ${block.isError ? "error: " : ""}${oneLine(block.content)}`;
    }
  });
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
    else {
      await writeStdout(
        sessions.map((s) =>
          `${s.id}  ${s.updatedAt}  ${String(s.messages).padStart(3)} msgs  ${s.title}\n`
        ).join(""),
      );
    }
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
  if (flags.json) {
    await writeStdout(JSON.stringify({ ...found, messages }) + "\n");
  } else {
    const head =
      `session ${found.id}\nworkspace ${found.workspace}\nmodel ${found.provider}/${found.model}\n` +
      `created ${found.createdAt}, updated ${found.updatedAt}\n\n`;
    await writeStdout(head + messages.flatMap(render).join("\n") + "\n");
  }
  return EXIT.ok;
}
