/**
 * The configuration reference (`docs/configuration.md`), generated from the config schema:
 * every key the schema accepts, its type as the schema states it, and the words below. A
 * test fails when a key has no words, words describe no key, or the file has drifted.
 *
 * @module
 */

import {
  DEFAULT_BASH_MAX_OUTPUT_BYTES,
  DEFAULT_BASH_MAX_PROCESSES,
  DEFAULT_BASH_TIMEOUT_MS,
  DEFAULT_EDIT_MAX_BYTES,
  DEFAULT_GREP_MAX_FILE_BYTES,
  DEFAULT_GREP_MAX_MATCHES,
  DEFAULT_READ_MAX_BYTES,
} from "../../tools/limits.ts";
import { DEFAULT_MAX_ITERATIONS } from "../../agent/loop.ts";
import { DEFAULT_MAX_RESULT_SHARE } from "../../agent/context.ts";
import { WIRES } from "../../providers/wires.ts";
import { DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_BYTES } from "../../approver/audit/mod.ts";
import { DEFAULT_SESSIONS_MAX_AGE_MS, DEFAULT_SESSIONS_MAX_COUNT } from "../../agent/retention.ts";

/** What the schema cannot say about a key. */
interface KeyDoc {
  readonly default?: string;
  readonly text: string;
}

/** Words for every key path (`<name>` stands for a map key). */
export const KEY_DOCS: Readonly<Record<string, KeyDoc>> = {
  provider: { default: `\`${WIRES[0].name}\``, text: "Which model API `run` and `chat` talk to." },
  // Each wire's keys, with the words its module gives them.
  ...Object.fromEntries(
    WIRES.flatMap((wire) =>
      Object.entries(wire.keyDocs).map(([key, doc]) => [`${wire.name}.${key}`, doc])
    ),
  ),
  "agent.system_prompt": {
    default: "built in",
    text: "Replaces the built-in system prompt (which names the workspace roots and the tools).",
  },
  "agent.max_iterations": {
    default: String(DEFAULT_MAX_ITERATIONS),
    text: "Model calls per turn; `run` exits 3 when they run out. Also `--max-iterations`.",
  },
  "agent.context_window": {
    default: "known per model family, else learned",
    text: "The model's context window in tokens. Unset: the window of a known model family " +
      "(Claude 200k, gpt-4.1 1M, gpt-4o 128k, ...), or the one a server states in its " +
      '"too long" error (llama.cpp `n_ctx`). Also `--context-window`.',
  },
  "agent.max_result_share": {
    default: String(DEFAULT_MAX_RESULT_SHARE),
    text: "The most of the context window one tool result may take; a larger one is cut for " +
      "the model with a note on paging (the session keeps it whole).",
  },
  "agent.approver.mode": {
    default: "`pattern`",
    text: "`allow_all`, `deny_all` or `pattern`. Also `--approver`.",
  },
  "agent.approver.default": {
    default: "`deny`",
    text: "pattern mode: the verdict when no rule matches (`allow`, `ask`, `deny`).",
  },
  "agent.approver.reason": {
    text: "Reason given for denials by the mode or the default.",
  },
  "agent.approver.deny": {
    text: "Rules that deny (checked first; deny always wins). Fields: `tool`, `match`, " +
      "`command`, `path`, `reason`, `effects`, `examples`, `not_examples` (docs/approval-policies.md).",
  },
  "agent.approver.ask": {
    text: "Rules that ask the operator (`chat`, `tool` on a terminal); elsewhere they deny.",
  },
  "agent.approver.allow": {
    text:
      "Rules that allow. `--allow TOOL[:REGEX]` adds to them (and lifts the ask rules for that tool).",
  },
  "tools.read.max_bytes": {
    default: String(DEFAULT_READ_MAX_BYTES),
    text: "read returns a file verbatim up to this size, then cuts at a line break with a note.",
  },
  "tools.edit.max_bytes": {
    default: String(DEFAULT_EDIT_MAX_BYTES),
    text: "edit refuses larger files before reading them (memory stays a small multiple of this).",
  },
  "tools.grep.max_matches": {
    default: String(DEFAULT_GREP_MAX_MATCHES),
    text: "Most rows grep returns.",
  },
  "tools.grep.max_file_bytes": {
    default: String(DEFAULT_GREP_MAX_FILE_BYTES),
    text: "grep skips larger files.",
  },
  "tools.bash.timeout": {
    default: `\`${DEFAULT_BASH_TIMEOUT_MS / 1000}s\``,
    text: "Per command; a duration (`500ms`, `90s`, `2m`) or seconds. The whole process group " +
      "is killed at the limit.",
  },
  "tools.bash.max_output_bytes": {
    default: String(DEFAULT_BASH_MAX_OUTPUT_BYTES),
    text: "bash keeps the first and last half of this much output.",
  },
  "tools.bash.sandbox": {
    default: "`auto`",
    text: "`auto` uses bubblewrap when it works, `bwrap` requires it (start-up fails " +
      "without), `none` runs `/bin/sh` directly.",
  },
  "tools.bash.overlay": {
    default: "`auto`",
    text: "`auto` runs each sandboxed command over an overlay of the roots when the kernel " +
      "allows it in a user namespace: its changes are judged by what it really changed and " +
      "reach the workspace only then. `off` binds the roots read-write (changes are " +
      "predicted from the command line; undo scans the workspace).",
  },
  "tools.bash.unprivileged": {
    default: "`auto`",
    text: "When rousseau runs as root, `auto` runs sandboxed commands as the unprivileged uid " +
      "65534 (`nobody`), the roots and the home directory mapped to it (idmapped mounts, made " +
      "with perl): host files only root may read (`/etc/shadow`, `/root`, keys under `/etc` " +
      "and `/var/lib`) stay unreadable. `off` keeps uid 0 in the sandbox (capabilities still " +
      "dropped), which can read them.",
  },
  "tools.bash.network": {
    default: "`false`",
    text: "Whether sandboxed commands get the network. On, each command gets a network " +
      "namespace of its own, linked out by slirp4netns: the outside is reachable, the host's " +
      "127.0.0.1, ::1 and abstract unix sockets are not (DNS goes through slirp4netns's " +
      "10.0.2.3 when the host's resolver is on its loopback). Without slirp4netns (Debian: " +
      "`apt-get install slirp4netns`) commands share the host's network namespace, loopback " +
      "services included; `doctor` warns and the run header says so.",
  },
  "tools.bash.max_processes": {
    default: String(DEFAULT_BASH_MAX_PROCESSES),
    text: "The most processes (threads included) a sandboxed command may have at once, through " +
      "a pids cgroup; where none can be made (not root, read-only cgroupfs) `doctor` and the " +
      "run header say so.",
  },
  "tools.bash.hide": {
    text: "More paths the sandbox hides (credentials such as `~/.ssh` are hidden already).",
  },
  "tools.bash.env_remove": { text: "Environment variables bash never sees." },
  "tools.modules": {
    text: "Your own tool modules (paths relative to this file, or file URLs); " +
      "docs/add-a-tool.md.",
  },
  "workspace.roots": {
    default: "the start directory",
    text: "Directories the tools may touch. Also `--workspace`, `--add-dir`.",
  },
  "state.dir": {
    default: "`$XDG_DATA_HOME/rousseau` or `~/.local/share/rousseau`",
    text: "Where `sessions.db`, `audit.jsonl` and `undo/` live (`doctor` says how much each " +
      "holds).",
  },
  "state.undo.max_bytes": {
    default: "`268435456` (256 MiB)",
    text: "Most bytes of undo data on disk: file copies and the workspaces' mirrors " +
      "(`undo/objects/`, `undo/mirrors/`), held between turns. The oldest turns and other " +
      "workspaces' mirrors go first, never the running turn; `undo` names a turn whose data " +
      "went. `0` turns undo off.",
  },
  "state.sessions.max_age": {
    default: `\`${DEFAULT_SESSIONS_MAX_AGE_MS / 86_400_000}d\``,
    text: "Sessions not used for this long are removed, with their undo data, when a `run` " +
      "or `chat` starts (never the one it resumes); `sessions.db` is then vacuumed. A " +
      "duration with days allowed (`30d`, `12h`, `1d12h`); `0` keeps them however old.",
  },
  "state.sessions.max_count": {
    default: String(DEFAULT_SESSIONS_MAX_COUNT),
    text: "Only the newest this many sessions are kept (the same way), but none used in the " +
      "last day is removed for the count (another process may be in it); `0`: no limit.",
  },
  "state.audit.max_bytes": {
    default: `\`${DEFAULT_AUDIT_MAX_BYTES}\` (64 MiB)`,
    text: "`audit.jsonl` is rotated once it reaches this size, to `audit.jsonl.<first entry, " +
      "9 digits>`; the new file's first line holds the hash of the last line before, so " +
      "`audit verify` checks the rotated files as one chain. `0`: never rotated.",
  },
  "state.audit.keep": {
    default: String(DEFAULT_AUDIT_KEEP),
    text: "Rotated audit files kept; the oldest beyond go, and `audit.jsonl.start` records " +
      "where the chain then begins (so a file removed by hand still fails `audit verify`). " +
      "`0` keeps them all.",
  },
  "mcp_servers.<name>.command": {
    text: "An MCP server on stdio whose tools join as `mcp__<name>__<tool>` (docs/mcp.md). " +
      "`<name>`: lower case, digits, `_`.",
  },
  "mcp_servers.<name>.args": { text: "Its arguments." },
  "mcp_servers.<name>.env": { text: "Extra environment variables for it." },
  "log.level": {
    default: "`warn`",
    text: "`debug`, `info`, `warn`, `error`; logs go to stderr. Also `--log-level`.",
  },
  "log.format": { default: "`text`", text: "`text` or `json`. Also `--log-format`." },
};

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  exclusiveMinimum?: number;
  minimum?: number;
  format?: string;
};

/** Leaf keys of `schema` with their type text; rule lists stop at the list. */
export function schemaKeys(schema: JsonSchema, prefix = ""): [string, string][] {
  if (schema.properties !== undefined) {
    return Object.entries(schema.properties).flatMap(([key, child]) =>
      schemaKeys(child, prefix ? `${prefix}.${key}` : key)
    );
  }
  const map = schema.additionalProperties;
  if (schema.type === "object" && typeof map === "object" && map.properties !== undefined) {
    return schemaKeys(map, `${prefix}.<name>`);
  }
  return [[prefix, typeText(schema)]];
}

function typeText(schema: JsonSchema): string {
  if (schema.enum !== undefined) return schema.enum.map((v) => `\`${v}\``).join(" \\| ");
  if (Array.isArray(schema.type)) return "duration or seconds";
  if (schema.format === "uri") return "URL";
  switch (schema.type) {
    case "integer":
      return schema.exclusiveMinimum === 0 ? "integer > 0" : "integer ≥ 0";
    case "array":
      return schema.items?.type === "string" ? "list of strings" : "list of rules";
    case "object":
      return "map of strings";
    default:
      return schema.type ?? "any";
  }
}

function envName(path: string): string {
  // Rule lists and server maps have no variable: they are structures, not values.
  return path.includes("<name>") || /^agent\.approver\.(allow|ask|deny)$/.test(path)
    ? "—"
    : `\`ROUSSEAU_${path.replaceAll(".", "_").toUpperCase()}\``;
}

/** `text` in lines of at most 95 characters (the page's width), broken at spaces. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > 95) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return line === "" ? lines : [...lines, line];
}

/** The reference page for `schema`. */
export function renderReference(schema: JsonSchema): string {
  const keys = schemaKeys(schema);
  const sections = new Map<string, string[]>();
  for (const [path, type] of keys) {
    const doc = KEY_DOCS[path];
    if (doc === undefined) throw new Error(`config reference: no words for key ${path}`);
    const section = path.includes(".") ? path.split(".")[0]! : "top level";
    const row = `| \`${path}\` | ${type} | ${doc.default ?? "—"} | ${
      envName(path)
    } | ${doc.text} |`;
    sections.set(section, [...(sections.get(section) ?? []), row]);
  }
  const out = [
    "# Configuration reference",
    "",
    "<!-- Generated from the config schema by `deno task docs`; do not edit by hand. -->",
    "",
    ...wrap(
      "One YAML file: `--config FILE`, else `$XDG_CONFIG_HOME/rousseau/config.yaml`, else " +
        "`~/.config/rousseau/config.yaml`. `rousseau init` writes a commented one. Precedence: " +
        "flag > environment > file > default. Every key can also come from `ROUSSEAU_<KEY>` " +
        "(dots as underscores; lists comma-separated), and " +
        WIRES.flatMap((wire) => Object.values(wire.environment)).map((name) => `\`${name}\``)
          .join(", ") +
        " are read as well. An unknown key or a wrong type stops start-up with the key's path, " +
        'what was expected, and a "did you mean" for near misses.',
    ),
  ];
  for (const [section, rows] of sections) {
    out.push(
      "",
      `## ${section === "top level" ? "Top level" : `\`${section}\``}`,
      "",
      "| key | type | default | environment | meaning |",
      "| --- | --- | --- | --- | --- |",
      ...rows,
    );
  }
  return out.join("\n") + "\n";
}
