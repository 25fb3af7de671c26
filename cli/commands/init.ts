/**
 * `rousseau init`: writes a commented config file. Every key is present, most commented
 * out at its default, so the file documents itself; the result always loads.
 *
 * @module
 */

import { dirname, resolve } from "node:path";
import { defaultConfigPath } from "../config/config.ts";
import { EXIT, UsageError } from "../errors.ts";
import type { GlobalFlags } from "../config/options.ts";
import { writeStderr, writeStdout } from "../terminal/output.ts";
import type { ProviderFlags } from "../config/provider.ts";

/** Flags of `init`. */
export interface InitFlags extends GlobalFlags, ProviderFlags {
  /** `--force`: replace an existing file. */
  readonly force?: boolean;
  /** `--print`: write the file to stdout instead. */
  readonly print?: boolean;
}

/** The commented config; `provider` picks which section is filled in. */
export function configTemplate(provider: "anthropic" | "openai", baseUrl?: string): string {
  const openaiUrl = baseUrl ?? "http://127.0.0.1:11434/v1";
  return `# rousseau configuration (written by \`rousseau init\`).
# Precedence: command-line flag > environment (ROUSSEAU_<KEY>, dots as underscores) > this
# file > default. Check it with \`rousseau doctor\`; the reference is docs/configuration.md.

# Which model API to use: anthropic or openai (any OpenAI-compatible server).
provider: ${provider}

anthropic:
  # Keep keys out of files: set ANTHROPIC_API_KEY in the environment instead.
  # api_key: ...
  model: claude-sonnet-4-5
  # max_tokens: 8192                          # or --max-tokens; a cut answer is error_max_tokens
  # thinking_budget: 4096                     # extended thinking (>= 1024, below max_tokens)
  # base_url: https://api.anthropic.com      # or ANTHROPIC_BASE_URL (a proxy, a gateway)

openai:
  # api_key: ...                              # or OPENAI_API_KEY; local servers need none
  model: ${provider === "openai" ? "qwen3" : "gpt-4.1"}
  ${
    provider === "openai"
      ? ""
      : "# "
  }base_url: ${openaiUrl}   # Ollama; vLLM, llama.cpp, OpenRouter work the same way
  # max_tokens: 4096                          # unset: a quarter of the context window, at most 8192

agent:
  # max_iterations: 32                         # model calls per turn before run exits 3
  # system_prompt: "..."                       # replaces the built-in prompt
  # Every tool call passes this policy (docs/approval-policies.md). Without one: read and
  # grep are allowed; chat asks for write, edit and bash; run and mcp deny them.
  # The worker's runtime grants are derived from it: bash never allowed -> no run grant.
  approver:
    mode: pattern                              # allow_all | deny_all | pattern
    # When no rule matches: allow | ask | deny. ask keeps chat asking you about anything
    # not listed below; run and mcp have nobody to ask, so there it is a denial (exit 4).
    default: ask
    deny:
      - tool: bash
        command: "^(sudo|rm -rf /)( |$)"
        reason: not on this machine
        examples: [{command: "sudo reboot"}]
    ask:
      - tool: write
      - tool: edit
    allow:
      - tool: read
      - tool: grep
      - tool: bash
        command: "^(ls|cat|wc|git (status|diff|log|show))( |$)"
        examples: [{command: "git status"}, {command: "ls -la; git diff"}]
        not_examples: [{command: "git status; rm -rf ~"}]

tools:
  # read:
  #   max_bytes: 262144
  # edit:
  #   max_bytes: 16777216
  # grep:
  #   max_matches: 200
  #   max_file_bytes: 4194304
  bash:
    # timeout: 1m                              # 500ms, 90s, 2m
    # max_output_bytes: 1048576
    sandbox: auto                              # auto (bwrap when it works) | bwrap | none
    network: false                             # inside the sandbox
    # hide: [~/.ssh, ~/.aws]                   # extra paths the sandbox hides
    # env_remove: [AWS_SECRET_ACCESS_KEY]      # variables bash never sees
  # modules: [./tools/word_count.ts]           # your own tools (docs/add-a-tool.md)

# workspace:
#   roots: [/srv/app]                          # default: the directory you start in

# state:
#   dir: ~/.local/share/rousseau               # sessions.db, audit.jsonl, undo/
#   undo:
#     max_bytes: 268435456                     # undo data on disk; 0 turns undo off
#   sessions:
#     max_age: 30d                             # sessions unused this long are removed
#     max_count: 1000                          # and all but the newest this many
#   audit:
#     max_bytes: 67108864                      # audit.jsonl rotates at this size
#     keep: 10                                 # rotated files kept (0: all)

# mcp_servers:                                 # other MCP servers' tools (docs/mcp.md)
#   files:
#     command: npx
#     args: [-y, "@modelcontextprotocol/server-filesystem", /srv/app]

log:
  level: warn                                  # debug | info | warn | error
  format: text                                 # text | json
`;
}

/** Runs `init` and returns its exit code. */
export async function initCommand(flags: InitFlags): Promise<number> {
  const provider = flags.provider === "openai" ? "openai" : "anthropic";
  const text = configTemplate(provider, flags.baseUrl);
  if (flags.print) {
    await writeStdout(text);
    return EXIT.ok;
  }
  const env = Deno.env.toObject();
  // As for loadConfig: a relative --config is relative to where the user started.
  const start = env.INIT_CWD?.startsWith("/") ? env.INIT_CWD : Deno.cwd();
  const path = flags.config === undefined ? defaultConfigPath(env) : resolve(start, flags.config);
  if (path === undefined) {
    throw new UsageError("init: no HOME or XDG_CONFIG_HOME to write to; pass --config FILE");
  }
  const exists = await Deno.lstat(path).then(() => true, () => false);
  if (exists && !flags.force) {
    throw new UsageError(`init: ${path} already exists; pass --force to replace it`);
  }
  await Deno.mkdir(dirname(path), { recursive: true });
  // Written beside the target and renamed: a crash never leaves half a config file.
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, text, { mode: 0o600, createNew: true });
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw new Error(`init: cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
  await writeStderr(`rousseau: wrote ${path}; check it with: rousseau doctor`);
  return EXIT.ok;
}
