/**
 * Input decoding shared by the built-in tools. The texts are contract:
 * `<tool>: parse input: <detail>` for a bad shape, `<tool>: <field> is required` for a
 * missing value, `<tool>: path must be absolute, got "<path>"` (to which the host adds
 * `; use "<the absolute path meant>"`, since only it knows the workspace).
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import { ToolError } from "./define.ts";

type FieldType = "string" | "boolean" | "number";

/** Field name to expected JSON type; decoding checks every present field before anything else. */
export type Shape = Readonly<Record<string, FieldType>>;

/** Decoded fields: present ones with their type, absent (or `null`) ones `undefined`. */
export type Fields = Readonly<Record<string, string | boolean | number | undefined>>;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Checks that `raw` is an object whose known fields have the right types; unknown keys are ignored. */
export function parseFields(tool: string, raw: unknown, shape: Shape): Fields {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ToolError(tool, `${tool}: parse input: expected a JSON object, got ${describe(raw)}`);
  }
  const record = raw as Record<string, unknown>;
  const fields: Record<string, string | boolean | number | undefined> = {};
  for (const [field, type] of Object.entries(shape)) {
    const value = Object.hasOwn(record, field) ? record[field] : undefined;
    if (value === undefined || value === null) {
      fields[field] = undefined;
      continue;
    }
    const actual = typeof value;
    if (actual !== type) {
      throw new ToolError(
        tool,
        `${tool}: parse input: field "${field}" must be a ${type}, got ${describe(value)}`,
      );
    }
    fields[field] = value as string | boolean | number;
  }
  return fields;
}

/** A string that must be present and non-empty. */
export function requireNonEmpty(tool: string, fields: Fields, field: string): string {
  const value = fields[field];
  if (typeof value !== "string" || value === "") {
    throw new ToolError(tool, `${tool}: ${field} is required`);
  }
  return value;
}

/** A string that must be present; `""` is a valid value. */
export function requirePresent(tool: string, fields: Fields, field: string): string {
  const value = fields[field];
  if (typeof value !== "string") throw new ToolError(tool, `${tool}: ${field} is required`);
  return value;
}

/** An optional whole number of at least 1: `<tool>: parse input: field "<f>" must be ...`. */
export function optionalCount(tool: string, fields: Fields, field: string): number | undefined {
  const value = fields[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new ToolError(
      tool,
      `${tool}: parse input: field "${field}" must be a whole number of at least 1, got ${
        JSON.stringify(value)
      }`,
    );
  }
  return value;
}

/** A relative path where an absolute one is required; `path` is the path as given. */
export class RelativePathError extends ToolError {
  /** The path as the model gave it. */
  readonly path: string;

  constructor(tool: string, path: string) {
    super(tool, `${tool}: path must be absolute, got ${JSON.stringify(path)}`);
    this.name = "RelativePathError";
    this.path = path;
  }

  /**
   * The message with the absolute path the model most likely meant: `path` resolved against
   * `root` (the workspace's first root, bash's working directory), or the path without the
   * blanks around it when that is absolute. A `~` path names a home the tools do not know:
   * no suggestion then.
   */
  hinted(root: string | undefined): string {
    const trimmed = this.path.trim();
    if (root === undefined || trimmed === "" || trimmed.startsWith("~")) return this.message;
    const meant = isAbsolute(trimmed) ? resolve(trimmed) : resolve(root, trimmed);
    return `${this.message}; use ${JSON.stringify(meant)}`;
  }
}

/** Throws unless `path` is absolute. */
export function requireAbsolute(tool: string, path: string): string {
  if (!isAbsolute(path)) throw new RelativePathError(tool, path);
  return path;
}
