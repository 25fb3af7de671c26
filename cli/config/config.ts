/**
 * Configuration: YAML file, environment and flags, validated once into a frozen object.
 * Precedence: flag > environment > file > default. This is the only module that reads
 * `Deno.env` and config files; everything below gets plain values.
 *
 * @module
 */

import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { didYouMean, type PolicyConfig } from "../../approver/mod.ts";
import type { McpServerConfig } from "../../agent/mcp_sources.ts";
import { DEFAULT_LIMITS, type Limits, parseDuration } from "../../tools/hosting.ts";
import { UsageError } from "../errors.ts";
import { writeSync } from "../terminal/output.ts";

type ZodModule = typeof import("zod");
type WiresModule = typeof import("../../providers/wires.ts");

/** Names of `mcp_servers` entries; they become part of tool names (`mcp__<name>__<tool>`). */
/**
 * An MCP server's name: no `__` and no `_` at either end, so `mcp__<server>__<tool>` names
 * one server only (server `a` with tool `b__c` and server `a__b` with tool `c` would both be
 * `mcp__a__b__c`, and the first configured would take the calls the rule meant for the
 * other); at most 32 characters, so the 64-character cut of tool names never reaches it.
 */
const SERVER_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const SERVER_NAME_MAX = 32;

/** Builds the schema of config.yaml; unknown keys are errors. */
function buildSchema(zod: ZodModule, { WIRES, WIRE_NAMES }: WiresModule) {
  const { z } = zod;
  const duration = z.union([z.string(), z.number()]).transform((value, ctx) => {
    if (typeof value === "number") return value * 1000;
    try {
      return parseDuration(value);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
      return z.NEVER;
    }
  });
  // An age: a duration with days allowed in front (`30d`, `1d12h`), or seconds.
  const age = z.union([z.string(), z.number()]).transform((value, ctx) => {
    if (typeof value === "number" && value >= 0) return value * 1000;
    if (typeof value === "number") {
      ctx.addIssue({ code: "custom", message: `want an age of at least 0, got ${value}` });
      return z.NEVER;
    }
    const days = /^\s*(\d+(?:\.\d+)?)d(.*)$/.exec(value);
    try {
      if (days === null) return parseDuration(value);
      const rest = days[2]!.trim();
      return Number(days[1]) * 86_400_000 + (rest === "" ? 0 : parseDuration(rest));
    } catch {
      ctx.addIssue({
        code: "custom",
        message: `invalid age ${
          JSON.stringify(value)
        } (want a number with a unit, e.g. 30d, 12h, 90m)`,
      });
      return z.NEVER;
    }
  });
  const count = z.int().positive();
  const size = z.int().nonnegative();
  const stringList = z.array(z.string());
  const regexRule = z.looseObject({}); // rule fields are checked by the approver's compiler
  // The wires' sections (`anthropic:`, `openai:`) come from providers/wires.ts and sit after
  // `provider` (the reference lists keys in schema order); their types are the wires' own, so
  // the static type below leaves them out and `wireSection` reads them.
  const core = {
    provider: z.enum(WIRE_NAMES).optional(),
    agent: z.strictObject({
      system_prompt: z.string().optional(),
      max_iterations: count.optional(),
      context_window: count.optional(),
      max_result_share: z.number().gt(0).lte(1).optional(),
      approver: z.strictObject({
        mode: z.string().optional(),
        default: z.string().optional(),
        reason: z.string().optional(),
        allow: z.array(regexRule).optional(),
        ask: z.array(regexRule).optional(),
        deny: z.array(regexRule).optional(),
      }).optional(),
    }).optional(),
    tools: z.strictObject({
      read: z.strictObject({ max_bytes: count.optional() }).optional(),
      edit: z.strictObject({ max_bytes: count.optional() }).optional(),
      grep: z.strictObject({ max_matches: count.optional(), max_file_bytes: size.optional() })
        .optional(),
      bash: z.strictObject({
        timeout: duration.optional(),
        max_output_bytes: count.optional(),
        sandbox: z.enum(["auto", "bwrap", "none"]).optional(),
        overlay: z.enum(["auto", "off"]).optional(),
        unprivileged: z.enum(["auto", "off"]).optional(),
        network: z.boolean().optional(),
        max_processes: count.optional(),
        hide: stringList.optional(),
        env_remove: stringList.optional(),
      }).optional(),
      modules: stringList.optional(),
    }).optional(),
    workspace: z.strictObject({ roots: stringList.optional() }).optional(),
    state: z.strictObject({
      dir: z.string().optional(),
      undo: z.strictObject({ max_bytes: size.optional() }).optional(),
      sessions: z.strictObject({ max_age: age.optional(), max_count: size.optional() })
        .optional(),
      audit: z.strictObject({ max_bytes: size.optional(), keep: size.optional() }).optional(),
    }).optional(),
    "mcp_servers": z.record(
      z.string().regex(SERVER_NAME).max(SERVER_NAME_MAX),
      z.strictObject({
        command: z.string().min(1),
        args: stringList.optional(),
        env: z.record(z.string(), z.string()).optional(),
      }),
      {
        error: (issue) =>
          issue.code === "invalid_key"
            ? `invalid server name: want ${SERVER_NAME.source}, at most ${SERVER_NAME_MAX} ` +
              "characters (it becomes part of tool names: mcp__<server>__<tool>)"
            : undefined,
      },
    ).optional(),
    log: z.strictObject({
      level: z.enum(["debug", "info", "warn", "error"]).optional(),
      format: z.enum(["text", "json"]).optional(),
    }).optional(),
  };
  const { provider, ...rest } = core;
  const wires = Object.fromEntries(
    WIRES.map((wire) => [wire.name, wire.configSchema(zod).optional()]),
  );
  return z.strictObject({ provider, ...wires, ...rest }) as unknown as ReturnType<
    typeof z.strictObject<typeof core>
  >;
}

type Schema = ReturnType<typeof buildSchema>;

/** The validated file (snake_case keys, as written). */
export type ConfigFile = z.output<Schema>;

interface Tooling {
  readonly schema: Schema;
  /** The wires' own variables (`ANTHROPIC_API_KEY`, ...), with the key each one sets. */
  readonly wireVariables: readonly (readonly [path: string, name: string])[];
  readonly parseYaml: (text: string) => unknown;
}

let tooling: Promise<Tooling> | undefined;

/** The schema and YAML libraries, loaded only when there is something to read (start-up cost). */
function loadTooling(): Promise<Tooling> {
  tooling ??= Promise.all([import("zod"), import("yaml"), import("../../providers/wires.ts")])
    .then(([zod, yaml, wires]) => ({
      schema: buildSchema(zod, wires),
      wireVariables: wireVariables(wires),
      parseYaml: (text: string) => yaml.parse(text),
    }));
  return tooling;
}

/** Each wire's own variables with the key each one sets, in the wires' order. */
function wireVariables({ WIRES }: WiresModule): [path: string, name: string][] {
  return WIRES.flatMap((wire) =>
    Object.entries(wire.environment).map(([key, name]): [string, string] => [
      `${wire.name}.${key}`,
      name,
    ])
  );
}

/** Everything the commands need, resolved. */
export interface Config {
  /** Path of the file that was read, if any. */
  readonly file?: string;
  /** The validated values. */
  readonly values: ConfigFile;
  /** Tool limits after file, environment and defaults. */
  readonly limits: Limits;
  /** The configured approver section, if any. */
  readonly approver?: PolicyConfig;
  /** Extra variable names removed from bash's environment. */
  readonly envRemove: readonly string[];
  /** Where sessions and the audit log live. */
  readonly stateDir: string;
  /**
   * rousseau's own files, absolute: the config file in use, the config directory and the
   * state directory. No tool reads or writes them and the sandbox hides them (tools.md,
   * "Protected paths"), wherever they live. They may not exist yet.
   */
  readonly protectedPaths: readonly string[];
  /** Custom tool modules as file URLs (relative paths resolve against the config file). */
  readonly modules: readonly string[];
  /** MCP servers whose tools are offered as `mcp__<server>__<tool>`, by server name. */
  readonly mcpServers: Readonly<Record<string, McpServerConfig>>;
}

// deno-lint-ignore no-explicit-any
function shapeOf(schema: any): Record<string, unknown> | undefined {
  let s = schema;
  while (s?.def?.innerType ?? s?.unwrap) s = s.def?.innerType ?? s.unwrap();
  return s?.shape;
}

/** Leaf key paths of the schema, e.g. `tools.bash.timeout`. */
function leafPaths(schema: unknown, prefix = ""): string[] {
  const shape = shapeOf(schema);
  if (shape === undefined) return [prefix];
  if (prefix === "agent.approver") {
    return [prefix + ".mode", prefix + ".default", prefix + ".reason"];
  }
  return Object.entries(shape).flatMap(([key, child]) =>
    leafPaths(child, prefix ? `${prefix}.${key}` : key)
  );
}

/** The closest known key to a mistyped one (re-exported for tests and callers). */
export { didYouMean };

// deno-lint-ignore no-explicit-any
function recordValue(schema: any): unknown {
  let s = schema;
  while (s?.def?.innerType ?? s?.unwrap) s = s.def?.innerType ?? s.unwrap();
  return s?.def?.type === "record" ? s.def.valueType : undefined;
}

function keysAt(root: Schema, path: readonly PropertyKey[]): string[] {
  // deno-lint-ignore no-explicit-any
  let schema: any = root;
  for (const part of path) schema = shapeOf(schema)?.[String(part)] ?? recordValue(schema);
  return Object.keys(shapeOf(schema) ?? {});
}

/** The value at `path` in `raw`, as a short text for an error message. */
function shown(raw: unknown, path: readonly PropertyKey[]): string {
  let value = raw;
  for (const part of path) {
    value = typeof value === "object" && value !== null
      ? (value as Record<PropertyKey, unknown>)[part as string]
      : undefined;
  }
  if (value === undefined) return "nothing";
  if (value === null) return "an empty value";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  number: "a number",
  int: "a whole number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "a map of keys",
  record: "a map of keys",
};

/** What the schema wanted, in words, with what it got. */
function expectation(issue: z.core.$ZodIssue, raw: unknown): string {
  const got = `got ${shown(raw, issue.path)}`;
  switch (issue.code) {
    case "invalid_type":
      return `want ${TYPE_WORDS[issue.expected] ?? issue.expected}, ${got}`;
    case "too_small":
      return `want ${
        issue.origin === "string"
          ? "a non-empty string"
          : `a number ${issue.inclusive ? ">=" : ">"} ${issue.minimum}`
      }, ${got}`;
    case "too_big":
      return `want a number ${issue.inclusive ? "<=" : "<"} ${issue.maximum}, ${got}`;
    case "invalid_value":
      return `want one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, ${got}`;
    case "invalid_format":
      return issue.format === "url"
        ? `want a URL such as http://127.0.0.1:11434/v1, ${got}`
        : `want ${issue.format}, ${got}`;
    default:
      return issue.message;
  }
}

function describeIssue(
  root: Schema,
  source: string,
  issue: z.core.$ZodIssue,
  raw: unknown,
): string[] {
  const dotted = issue.path.map(String).join(".");
  const at = source === "environment" && dotted
    ? `ROUSSEAU_${dotted.replaceAll(".", "_").toUpperCase()}`
    : dotted;
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => {
      const full = dotted ? `${dotted}.${key}` : key;
      const guess = didYouMean(key, keysAt(root, issue.path));
      const known = keysAt(root, issue.path).join(", ");
      return `${source}: ${full}: unknown key` +
        (guess ? ` (did you mean "${guess}"?)` : ` (known keys here: ${known})`);
    });
  }
  return [`${source}: ${at || "(top level)"}: ${expectation(issue, raw)}`];
}

/** YAML's empty values (`bash:` with every child commented out) mean "not set". */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value) || typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, dropNulls(v)]),
  );
}

function validate(schema: Schema, source: string, given: unknown): ConfigFile {
  const raw = dropNulls(given ?? {});
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const lines = result.error.issues.flatMap((issue) => describeIssue(schema, source, issue, raw));
  throw new UsageError(lines.join("\n"));
}

/** The config file's default location. */
export function defaultConfigPath(env: Readonly<Record<string, string>>): string | undefined {
  const base = env.XDG_CONFIG_HOME || (env.HOME ? join(env.HOME, ".config") : undefined);
  return base === undefined ? undefined : join(base, "rousseau", "config.yaml");
}

function stateDirectory(values: ConfigFile, env: Readonly<Record<string, string>>): string {
  if (values.state?.dir) return values.state.dir;
  const base = env.XDG_DATA_HOME || join(env.HOME ?? "/tmp", ".local", "share");
  return join(base, "rousseau");
}

/**
 * Whether any variable can carry configuration: `ROUSSEAU_*`, or a wire's own
 * (`ANTHROPIC_API_KEY`, ...). Those end in `_API_KEY` or `_BASE_URL` (tests/providers/
 * wires_test.ts holds them to it), so providers/ is loaded to know them only when such a name
 * is set: the start-up path of `tool` loads no provider module.
 */
async function readsEnvironment(env: Readonly<Record<string, string>>): Promise<boolean> {
  const names = Object.keys(env);
  if (names.some((name) => name.startsWith("ROUSSEAU_"))) return true;
  if (!names.some((name) => WIRE_VARIABLE.test(name))) return false;
  const known = wireVariables(await import("../../providers/wires.ts"));
  return names.some((name) => known.some(([, variable]) => variable === name));
}

/** The shape of every wire's own variable names. */
export const WIRE_VARIABLE = /^[A-Z][A-Z0-9_]*_(API_KEY|BASE_URL)$/;

/** Values from `ROUSSEAU_<KEY>` variables (dots as underscores), as a nested object. */
function fromEnvironment(
  env: Readonly<Record<string, string>>,
  { schema, wireVariables, parseYaml }: Tooling,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const set = (path: string, value: unknown) => {
    const parts = path.split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts.at(-1)!] = value;
  };
  for (const path of leafPaths(schema)) {
    const name = `ROUSSEAU_${path.replaceAll(".", "_").toUpperCase()}`;
    const text = env[name];
    if (text === undefined) continue;
    // Lists are comma-separated; numbers and booleans are parsed as YAML scalars.
    const value = /(\.roots|\.hide|\.env_remove|\.modules)$/.test(path)
      ? text.split(",").map((s) => s.trim()).filter(Boolean)
      : /(api_key|model|system_prompt|base_url|dir|timeout|reason|default|mode)$/.test(path)
      ? text
      : parseYaml(text);
    set(path, value);
  }
  for (const [path, name] of wireVariables) {
    if (env[name]) set(path, env[name]);
  }
  return out;
}

function merge(base: unknown, over: unknown): unknown {
  if (typeof base !== "object" || base === null || Array.isArray(base)) return over ?? base;
  if (typeof over !== "object" || over === null || Array.isArray(over)) return over ?? base;
  const out: Record<string, unknown> = { ...base as Record<string, unknown> };
  for (const [key, value] of Object.entries(over)) out[key] = merge(out[key], value);
  return out;
}

/** Variables that look like secrets for the user's own tools, not settings (never warned). */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$/;

/**
 * A misspelled `ROUSSEAU_*` variable is ignored, where the same typo in the file stops
 * start-up (the environment holds many things that are not ours): say so on stderr.
 */
function warnUnknownVariables(names: readonly string[], leaves: readonly string[]): void {
  const known = leaves.map((path) => `ROUSSEAU_${path.replaceAll(".", "_").toUpperCase()}`);
  for (const name of names) {
    if (known.includes(name) || SECRET_NAME.test(name)) continue;
    const guess = didYouMean(name, known);
    writeSync(
      "stderr",
      `rousseau: environment: ${name} is not a setting and is ignored${
        guess === undefined ? "" : ` (did you mean ${guess}?)`
      }\n`,
    );
  }
}

/** Reads and validates the config: `path` (from `--config`) or the default location. */
export async function loadConfig(
  path: string | undefined,
  env: Readonly<Record<string, string>> = Deno.env.toObject(),
): Promise<Config> {
  // `deno task` runs from the repository; a relative --config is relative to where the
  // user started the command.
  if (path !== undefined) {
    const init = env.INIT_CWD;
    path = resolve(init !== undefined && init.startsWith("/") ? init : Deno.cwd(), path);
  }
  let file: string | undefined = path;
  let raw: unknown = {};
  const candidate = path ?? defaultConfigPath(env);
  if (candidate !== undefined) {
    let text: string | undefined;
    try {
      text = await Deno.readTextFile(candidate);
      file = candidate;
    } catch (error) {
      if (path !== undefined) {
        throw new UsageError(
          `config: cannot read ${path}: ${(error as Error).message}; check the --config path`,
        );
      }
    }
    if (text !== undefined) {
      const { parseYaml } = await loadTooling();
      try {
        raw = parseYaml(text) ?? {};
      } catch (error) {
        throw new UsageError(`config: ${candidate}: not valid YAML: ${(error as Error).message}`);
      }
    }
  }
  let values: ConfigFile = {};
  const rousseauNames = Object.keys(env).filter((name) => name.startsWith("ROUSSEAU_"));
  // Nothing to read (no file, no variables): the defaults need neither YAML nor a schema.
  if (file !== undefined || await readsEnvironment(env)) {
    const tools = await loadTooling();
    validate(tools.schema, file ?? "config", raw); // file mistakes are reported against the file
    values = validate(tools.schema, "environment", merge(raw, fromEnvironment(env, tools)));
    warnUnknownVariables(rousseauNames, leafPaths(tools.schema));
  }
  const bash = values.tools?.bash;
  const limits: Limits = {
    readMaxBytes: values.tools?.read?.max_bytes ?? DEFAULT_LIMITS.readMaxBytes,
    editMaxBytes: values.tools?.edit?.max_bytes ?? DEFAULT_LIMITS.editMaxBytes,
    grepMaxMatches: values.tools?.grep?.max_matches ?? DEFAULT_LIMITS.grepMaxMatches,
    grepMaxFileBytes: values.tools?.grep?.max_file_bytes ?? DEFAULT_LIMITS.grepMaxFileBytes,
    bashTimeoutMs: bash?.timeout ?? DEFAULT_LIMITS.bashTimeoutMs,
    bashMaxOutputBytes: bash?.max_output_bytes ?? DEFAULT_LIMITS.bashMaxOutputBytes,
  };
  const config: { -readonly [K in keyof Config]: Config[K] } = {
    values,
    limits,
    envRemove: bash?.env_remove ?? [],
    stateDir: stateDirectory(values, env),
    protectedPaths: [],
    // A relative command path (`./server.sh`) is the config's, like a module's: the servers
    // start in the workspace, where a repository or the model could put a file of that name.
    mcpServers: Object.fromEntries(
      Object.entries(values.mcp_servers ?? {}).map(([name, server]) => [name, {
        ...server,
        command: server.command.includes("/") && !server.command.startsWith("/")
          ? resolve(file === undefined ? Deno.cwd() : dirname(file), server.command)
          : server.command,
      }]),
    ),
    modules: (values.tools?.modules ?? []).map((module) =>
      pathToFileURL(resolve(file === undefined ? Deno.cwd() : dirname(file), module)).href
    ),
  };
  if (file !== undefined) config.file = file;
  const configHome = defaultConfigPath(env);
  config.protectedPaths = [
    ...new Set([
      ...(file === undefined ? [] : [file]),
      ...(configHome === undefined ? [] : [dirname(configHome)]),
      config.stateDir,
    ].map((p) => resolve(p))),
  ];
  if (values.agent?.approver !== undefined) config.approver = values.agent.approver as PolicyConfig;
  return Object.freeze(config);
}

/** The config file's JSON Schema (input side), for the generated reference. */
export async function configJsonSchema(): Promise<Record<string, unknown>> {
  const [{ schema }, { z }] = await Promise.all([loadTooling(), import("zod")]);
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
}
