/**
 * Chat's `--resume` without an id: this workspace's sessions, newest first, numbered; the
 * user types a number, or just Enter for a new session. Asked before the chat's own line
 * editor starts, on the same terminal.
 *
 * @module
 */

import { createInterface } from "node:readline";
import process from "node:process";
import type { SessionInfo } from "../../agent/session_store.ts";
import { age } from "./age.ts";
import { writeSync } from "./output.ts";
import { visible } from "../../approver/visible.ts";

/** How many sessions are offered. */
const SHOWN = 20;

/** The numbered list: `  1  5m   3 turns  fix the failing test`. */
export function pickList(sessions: readonly SessionInfo[], now: number): string {
  const shown = sessions.slice(0, SHOWN);
  const width = String(shown.length).length;
  const ages = shown.map((s) => age(s.updatedAt, now));
  const ageWidth = Math.max(...ages.map((a) => a.length));
  return shown.map((s, i) => {
    // The first prompt may be a piped file's text: its controls are shown, never obeyed.
    const title = visible(s.title.replace(/\s+/g, " "));
    return `  ${String(i + 1).padStart(width)}  ${ages[i]!.padEnd(ageWidth)}  ${
      `${s.turns} turn${s.turns === 1 ? "" : "s"}`.padStart(9)
    }  ${title.length > 70 ? `${title.slice(0, 69)}…` : title}\n`;
  }).join("");
}

/** Asks on the terminal; resolves with the chosen session's id, or undefined for a new one. */
export async function pickSession(sessions: readonly SessionInfo[]): Promise<string | undefined> {
  const shown = sessions.slice(0, SHOWN);
  writeSync("stdout", `Sessions in this workspace:\n${pickList(shown, Date.now())}`);
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    for (;;) {
      const answer = await new Promise<string | undefined>((resolve) => {
        rl.once("close", () => resolve(undefined));
        rl.question(`Resume which (1-${shown.length}, Enter for a new session)? `, resolve);
      });
      if (answer === undefined || answer.trim() === "") return undefined;
      const n = Number(answer.trim());
      if (Number.isInteger(n) && n >= 1 && n <= shown.length) return shown[n - 1]!.id;
      writeSync("stdout", `want a number from 1 to ${shown.length}, or Enter\n`);
    }
  } finally {
    rl.close();
  }
}
