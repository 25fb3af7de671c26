/**
 * The log: stderr only, `text` (`rousseau: ...`) or `json` (one object a line), filtered by
 * level. Secrets never reach it: callers log names and decisions, not keys.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { writeSync } from "./output.ts";
import { jsonVisible, visible } from "../../approver/visible.ts";

/** Log levels, lowest first. */
export const LEVELS = ["debug", "info", "warn", "error"] as const;

/** A level name. */
export type Level = typeof LEVELS[number];

/** Writes log records. */
export interface Logger {
  log(level: Level, message: string, fields?: Record<string, unknown>): void;
  /** True when `level` would be written. */
  enabled(level: Level): boolean;
  /**
   * A line written whatever the level (the run header stating the layers), in the log's
   * format, so `--log-format json` keeps stderr all JSON.
   */
  always(message: string, fields?: Record<string, unknown>): void;
}

/** Flags that shape the log. */
export interface LogFlags {
  /** `--log-level`. */
  readonly logLevel?: string;
  /** `--log-format`. */
  readonly logFormat?: string;
}

/** A logger from flags and config (`log.level`, `log.format`). */
export function createLogger(
  flags: LogFlags,
  configured: { readonly level?: string | undefined; readonly format?: string | undefined } = {},
): Logger {
  const level = flags.logLevel ?? configured.level ?? "info";
  const format = flags.logFormat ?? configured.format ?? "text";
  if (!(LEVELS as readonly string[]).includes(level)) {
    throw new UsageError(
      `--log-level: unknown level ${JSON.stringify(level)} (want debug, info, warn or error)`,
    );
  }
  if (format !== "text" && format !== "json") {
    throw new UsageError(
      `--log-format: unknown format ${JSON.stringify(format)} (want text or json)`,
    );
  }
  const min = LEVELS.indexOf(level as Level);
  const enabled = (l: Level) => LEVELS.indexOf(l) >= min;
  // Messages quote tool calls, tool errors and provider errors: nothing in them reaches the
  // terminal as a control (approver/visible.ts); the JSON form stays the same JSON value.
  const write = (l: Level, message: string, fields: Record<string, unknown>) => {
    const line = format === "json"
      ? jsonVisible(
        JSON.stringify({ time: new Date().toISOString(), level: l, msg: message, ...fields }),
      )
      : `rousseau: ${visible(message)}`;
    writeSync("stderr", line + "\n");
  };
  return {
    enabled,
    log(l, message, fields = {}) {
      if (enabled(l)) write(l, message, fields);
    },
    always(message, fields = {}) {
      write("info", message, fields);
    },
  };
}
