/**
 * Attacks on the tools' own wall: workspace confinement and protected paths, run for real as
 * the attacker would (symlinks, hard links, `..`, case, `/proc/self/...`, races), each named by
 * the promise it tests. Cases drawn from public reports against other agents cite their source.
 *
 * @module
 */

import { closeSync, openSync } from "node:fs";
import { join, relative } from "node:path";
import {
  createBuiltinTools,
  createInProcessHost,
  createWorkspace,
  DEFAULT_LIMITS,
  Registry,
  type ToolResult,
  type Workspace,
} from "../../mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { runCli } from "../_helpers/cli.ts";
import { fail, ok } from "../_helpers/results.ts";
import { type TmpWorkspace, tmpWorkspace } from "../_helpers/tmp_workspace.ts";

const REGISTRY = new Registry(createBuiltinTools());

/** A workspace whose rousseau config and state live inside it, as with chat started in `~`. */
interface Home extends AsyncDisposable {
  /** Real path of the workspace (the home directory). */
  readonly root: string;
  /** Real path of a directory outside the workspace. */
  readonly outside: string;
  /** The config file in use: `<root>/.github/rousseau.yaml`. */
  readonly config: string;
  /** The config directory: `<root>/.config/rousseau`. */
  readonly configDir: string;
  /** The state directory: `<root>/.local/share/rousseau`. */
  readonly stateDir: string;
  readonly workspace: Workspace;
  call(name: string, input: unknown): Promise<ToolResult>;
}

const POLICY = "agent:\n  approver:\n    mode: pattern\n    default: deny\n" +
  "    allow:\n      - { tool: read }\n      - { tool: write }\n      - { tool: edit }\n";

async function home(options: { state?: boolean } = {}): Promise<Home> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-attack-" }));
  const root = join(base, "home");
  const outside = join(base, "outside");
  const config = join(root, ".github", "rousseau.yaml");
  const configDir = join(root, ".config", "rousseau");
  const stateDir = join(root, ".local", "share", "rousseau");
  await Deno.mkdir(join(root, ".github"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.mkdir(configDir, { recursive: true });
  await Deno.writeTextFile(config, POLICY);
  await Deno.writeTextFile(join(configDir, "config.yaml"), "log:\n  level: info\n");
  if (options.state !== false) {
    await Deno.mkdir(stateDir, { recursive: true });
    await Deno.writeTextFile(join(stateDir, "audit.jsonl"), '{"seq":1}\n');
  }
  const workspace = await createWorkspace([root], [config, configDir, stateDir]);
  const host = createInProcessHost(REGISTRY, { workspace, limits: DEFAULT_LIMITS, env: {} });
  return {
    root,
    outside,
    config,
    configDir,
    stateDir,
    workspace,
    call: (name, input) => host.call(name, input, new AbortController().signal),
    async [Symbol.asyncDispose]() {
      await Deno.remove(base, { recursive: true });
    },
  };
}

function refused(tool: string, path: string): ToolResult {
  return fail(`${tool}: ${path} is rousseau's own configuration or state`);
}

/** read, write "" and edit of `path` are all refused and `real` keeps `content`. */
async function untouchable(h: Home, path: string, real: string, content: string) {
  assertEquals(await h.call("read", { path }), refused("read", path));
  assertEquals(await h.call("write", { path, content: "" }), refused("write", path));
  assertEquals(
    await h.call("edit", { path, old_string: "deny", new_string: "allow" }),
    refused("edit", path),
  );
  assertEquals(await Deno.readTextFile(real), content);
}

// ---- Protected paths: rousseau's own configuration and state ---------------------------------

// The agent rewrites its own permission file: openonion/connectonion#722
// (https://github.com/openonion/connectonion/issues/722) and nugget/thane-ai-agent#108
// (https://github.com/nugget/thane-ai-agent/issues/108, "changed workspace.path to ~").
Deno.test("protected: the config in use inside the workspace is never read, written or edited", async () => {
  await using h = await home();
  await untouchable(h, h.config, h.config, POLICY);
});

Deno.test("protected: the config directory and the state directory, and files below them", async () => {
  await using h = await home();
  const audit = join(h.stateDir, "audit.jsonl");
  await untouchable(h, audit, audit, '{"seq":1}\n');
  const user = join(h.configDir, "config.yaml");
  await untouchable(h, user, user, "log:\n  level: info\n");
  // A new file in a protected directory is refused too, and nothing is created.
  const fresh = join(h.stateDir, "new", "x.txt");
  assertEquals(await h.call("write", { path: fresh, content: "x" }), refused("write", fresh));
  assertEquals((await Array.fromAsync(Deno.readDir(h.stateDir))).map((e) => e.name), [
    "audit.jsonl",
  ]);
});

// Deny rules bypassed through a symlink: CVE-2026-25724 (Claude Code < 2.1.7,
// https://www.sentinelone.com/vulnerability-database/cve-2026-25724).
Deno.test("protected: a symlink in the workspace to the config, or to the state dir", async () => {
  await using h = await home();
  await Deno.symlink(h.config, join(h.root, "notes.txt"));
  await untouchable(h, join(h.root, "notes.txt"), h.config, POLICY);
  await Deno.symlink(h.stateDir, join(h.root, "logs"));
  const viaDir = join(h.root, "logs", "audit.jsonl");
  await untouchable(h, viaDir, join(h.stateDir, "audit.jsonl"), '{"seq":1}\n');
  // A relative link, two hops.
  await Deno.symlink("notes.txt", join(h.root, "again.txt"));
  await untouchable(h, join(h.root, "again.txt"), h.config, POLICY);
});

Deno.test("protected: `..`, doubled slashes, `.` and a trailing slash all name the same file", async () => {
  await using h = await home();
  await Deno.mkdir(join(h.root, "src"));
  for (
    const path of [
      `${h.root}/src/../.github/rousseau.yaml`,
      `${h.root}//.github/./rousseau.yaml`,
      `${h.root}/.github/rousseau.yaml/`,
      `${h.root}/.local/share/rousseau/`,
    ]
  ) {
    for (const tool of ["read", "write", "edit"]) {
      const input = { path, content: "", "old_string": "deny", "new_string": "allow" };
      assertEquals(await h.call(tool, input), refused(tool, path), `${tool} ${path}`);
    }
  }
  assertEquals(await Deno.readTextFile(h.config), POLICY);
});

// Hard links alias a file under another path: openai/codex#1705
// (https://github.com/openai/codex/pull/1705, "For a hard link, things are not as simple")
// and Hmbown/Codewhale#5569 (https://github.com/Hmbown/Codewhale/issues/5569).
Deno.test("protected: a hard link in the workspace to the config or the audit log", async () => {
  await using h = await home();
  await Deno.link(h.config, join(h.root, "policy-copy.yaml"));
  await untouchable(h, join(h.root, "policy-copy.yaml"), h.config, POLICY);
  await Deno.link(join(h.stateDir, "audit.jsonl"), join(h.root, "log.txt"));
  await untouchable(h, join(h.root, "log.txt"), join(h.stateDir, "audit.jsonl"), '{"seq":1}\n');
  // The link itself is left as it was: same inode as the audit log.
  const a = await Deno.stat(join(h.root, "log.txt"));
  const b = await Deno.stat(join(h.stateDir, "audit.jsonl"));
  assertEquals([a.ino, a.nlink], [b.ino, 2]);
});

Deno.test("protected: a hard link made after start to a protected file made after start", async () => {
  await using h = await home();
  const late = join(h.stateDir, "sessions.db");
  await Deno.writeTextFile(late, "transcripts");
  await Deno.link(late, join(h.root, "db.txt"));
  assertEquals(
    await h.call("read", { path: join(h.root, "db.txt") }),
    refused("read", join(h.root, "db.txt")),
  );
});

Deno.test("protected: other case spellings are refused (case-insensitive file systems)", async () => {
  await using h = await home();
  for (const path of [`${h.root}/.GITHUB/Rousseau.yaml`, `${h.root}/.Local/Share/ROUSSEAU/x`]) {
    assertEquals(await h.call("write", { path, content: "x" }), refused("write", path));
    assertEquals(await h.call("read", { path }), refused("read", path));
  }
  assertEquals((await Array.fromAsync(Deno.readDir(h.root))).map((e) => e.name).sort(), [
    ".config",
    ".github",
    ".local",
  ]);
});

Deno.test("protected: a state directory created after start, even as a symlink", async () => {
  await using h = await home({ state: false });
  // Created as a plain directory after the workspace was made.
  await Deno.mkdir(h.stateDir, { recursive: true });
  const audit = join(h.stateDir, "audit.jsonl");
  assertEquals(await h.call("write", { path: audit, content: "" }), refused("write", audit));
  await Deno.remove(h.stateDir);
  // Replaced by a symlink to a directory elsewhere in the workspace: the real place is guarded.
  await Deno.mkdir(join(h.root, "elsewhere"));
  await Deno.symlink(join(h.root, "elsewhere"), h.stateDir);
  const real = join(h.root, "elsewhere", "audit.jsonl");
  assertEquals(await h.call("write", { path: real, content: "" }), refused("write", real));
  assertEquals(await Array.fromAsync(Deno.readDir(join(h.root, "elsewhere"))), []);
});

// /proc/self/root and /proc/self/cwd re-enter the file system under another spelling.
Deno.test("protected: /proc/self/root and /proc/self/cwd spellings", async () => {
  await using h = await home();
  const viaRoot = `/proc/self/root${h.config}`;
  assertEquals(await h.call("read", { path: viaRoot }), refused("read", viaRoot));
  assertEquals(
    await h.call("edit", { path: viaRoot, old_string: "deny", new_string: "allow" }),
    refused("edit", viaRoot),
  );
  assertEquals(await Deno.readTextFile(h.config), POLICY);
});

Deno.test("protected: grep never shows what rousseau's own files hold", async () => {
  await using h = await home();
  await Deno.writeTextFile(join(h.root, "readme.md"), "default: deny is the policy\n");
  await Deno.link(h.config, join(h.root, "linked.yaml"));
  assertEquals(
    await h.call("grep", { pattern: "default: deny", path: h.root }),
    ok(`${h.root}/readme.md:1: default: deny is the policy\n`),
  );
});

Deno.test("protected: ordinary files beside rousseau's own stay usable", async () => {
  await using h = await home();
  const beside = join(h.root, ".github", "rousseau.yaml.bak");
  assertEquals(
    await h.call("write", { path: beside, content: "x" }),
    ok(`wrote 1 bytes to ${beside}`),
  );
  assertEquals(await h.call("read", { path: beside }), ok("x"));
  const sibling = join(h.root, ".local", "share", "rousseau-other", "f");
  assertEquals(
    await h.call("write", { path: sibling, content: "y" }),
    ok(`wrote 1 bytes to ${sibling}`),
  );
});

// The reproduced attack of issue 15 item 2, through the CLI and the tool worker: chat started
// in ~ with `--config .github/rousseau.yaml` (as docs/automation.md shows).
Deno.test("protected (CLI): edit of the config fails, bash stays denied, the audit log is kept", async () => {
  await using h = await home({ state: false });
  const env = {
    HOME: h.root,
    XDG_CONFIG_HOME: join(h.root, ".config"),
    XDG_DATA_HOME: join(h.root, ".local", "share"),
  };
  const cli = (...args: string[]) =>
    runCli(["--config", h.config, "--workspace", h.root, ...args], { env, cwd: h.root });
  const edit = await cli(
    "tool",
    "edit",
    JSON.stringify({ path: h.config, old_string: "default: deny", new_string: "default: allow" }),
  );
  assertEquals(edit, {
    code: 1,
    stdout: "",
    stderr: `edit: ${h.config} is rousseau's own configuration or state\n`,
  });
  assertEquals(await Deno.readTextFile(h.config), POLICY);
  const bash = await cli("tool", "bash", JSON.stringify({ command: "echo escaped" }));
  assertEquals(bash.code, 1);
  assert(!bash.stdout.includes("escaped"), bash.stdout);
  const audit = join(h.stateDir, "audit.jsonl");
  const before = await Deno.readTextFile(audit);
  assert(before.length > 0);
  const write = await cli("tool", "write", JSON.stringify({ path: audit, content: "" }));
  assertEquals(write, {
    code: 1,
    stdout: "",
    stderr: `write: ${audit} is rousseau's own configuration or state\n`,
  });
  assert((await Deno.readTextFile(audit)).startsWith(before));
});

// ---- Workspace confinement: the same attacks against files outside ---------------------------

const SECRET = "outside secret";

function outsideRefusal(tool: string, path: string): ToolResult {
  return fail(`${tool}: ${path} is outside the workspace`);
}

/** read, write and edit of `path` are refused as outside, and the outside dir is unchanged. */
async function sealed(ws: TmpWorkspace, path: string): Promise<void> {
  assertEquals(await ws.call("read", { path }), outsideRefusal("read", path), `read ${path}`);
  assertEquals(
    await ws.call("write", { path, content: "ESCAPED" }),
    outsideRefusal("write", path),
    `write ${path}`,
  );
  assertEquals(
    await ws.call("edit", { path, "old_string": "outside", "new_string": "ESCAPED" }),
    outsideRefusal("edit", path),
    `edit ${path}`,
  );
  assertEquals(await Deno.readTextFile(join(ws.outside, "secret.txt")), SECRET);
  assertEquals(await Array.fromAsync(Deno.readDir(ws.outside), (e) => e.name), ["secret.txt"]);
}

// A symlinked directory in the workspace leading out: google-gemini/gemini-cli#1121
// (https://github.com/google-gemini/gemini-cli/issues/1121, `ln -s /etc /workspace/config`),
// anomalyco/opencode#43336 and #40160 (https://github.com/anomalyco/opencode/issues/43336,
// https://github.com/anomalyco/opencode/issues/40160, `outbox -> OUTSIDE`), and
// carderne/pi-sandbox#34 (https://github.com/carderne/pi-sandbox/issues/34, `link -> ~/.ssh`).
Deno.test("confinement: a symlinked directory leading out, for existing and new files", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": SECRET } });
  await Deno.symlink(ws.outside, ws.path("outbox"));
  await sealed(ws, ws.path("outbox", "secret.txt"));
  await sealed(ws, ws.path("outbox", "escaped.txt"));
  await sealed(ws, ws.path("outbox", "deeper", "escaped.txt"));
});

// The final component is a symlink to an outside file, or a dangling one whose target would be
// created outside: CopilotKit/OpenBot#100 (https://github.com/CopilotKit/OpenBot/issues/100),
// thClaws/thClaws#204 (https://github.com/thClaws/thClaws/issues/204) and
// nextlevelbuilder/goclaw#1201 (https://github.com/nextlevelbuilder/goclaw/issues/1201).
Deno.test("confinement: a final symlink out, live or dangling, relative or absolute, chained", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": SECRET } });
  await Deno.symlink(join(ws.outside, "secret.txt"), ws.path("notes.md"));
  await Deno.symlink(join(ws.outside, "not-yet.txt"), ws.path("draft.txt"));
  await Deno.symlink("../outside/not-yet.txt", ws.path("relative.txt"));
  await Deno.symlink("relative.txt", ws.path("chain.txt"));
  for (const name of ["notes.md", "draft.txt", "relative.txt", "chain.txt"]) {
    await sealed(ws, ws.path(name));
  }
});

// A missing file under a symlinked directory chain: nomad-prime/hoosh PERMISSION_MODEL_REVIEW.md
// ("For non-existent paths, only the parent is canonicalized"; `ln -s /etc evil_dir`).
Deno.test("confinement: `..` after a symlinked directory resolves where the kernel goes", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": SECRET, "sub/x": "" } });
  await Deno.remove(join(ws.outside, "sub", "x"));
  await Deno.symlink(join(ws.outside, "sub"), ws.path("evil_dir"));
  // Lexically inside (ws/evil_dir/../secret.txt is ws/secret.txt); really outside/secret.txt.
  const path = `${ws.path("evil_dir")}/../secret.txt`;
  assertEquals(await ws.call("read", { path }), outsideRefusal("read", path));
  assertEquals(
    await ws.call("write", { path, content: "ESCAPED" }),
    outsideRefusal("write", path),
  );
  assertEquals(await Deno.readTextFile(join(ws.outside, "secret.txt")), SECRET);
});

// A sibling whose name starts with the workspace's: QwenLM/qwen-code#5453
// (https://github.com/QwenLM/qwen-code/issues/5453) and HKUDS/nanobot#956
// (https://github.com/HKUDS/nanobot/pull/956, `workspace_evil`).
Deno.test("confinement: a sibling directory sharing the workspace's name as a prefix", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": SECRET } });
  const sibling = `${ws.root}-evil`;
  await Deno.mkdir(sibling);
  try {
    await Deno.writeTextFile(join(sibling, "secret.txt"), SECRET);
    for (const path of [join(sibling, "secret.txt"), `${ws.root}/../ws-evil/secret.txt`]) {
      assertEquals(await ws.call("read", { path }), outsideRefusal("read", path));
      assertEquals(
        await ws.call("write", { path, content: "x" }),
        outsideRefusal("write", path),
      );
    }
    assertEquals(await Deno.readTextFile(join(sibling, "secret.txt")), SECRET);
  } finally {
    await Deno.remove(sibling, { recursive: true });
  }
});

// /proc spellings: /proc/self/root re-enters `/`, /proc/self/cwd the process's directory, and
// /proc/self/fd/N any file the process holds open (our own).
Deno.test("confinement: /proc/self/root, /proc/self/cwd and /proc/self/fd/N spellings", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": SECRET } });
  const viaRoot = `/proc/self/root${ws.outside}/secret.txt`;
  await sealed(ws, viaRoot);
  const fd = openSync(join(ws.outside, "secret.txt"), "r");
  try {
    const viaFd = `/proc/self/fd/${fd}`;
    assertEquals(await ws.call("read", { path: viaFd }), outsideRefusal("read", viaFd));
    assertEquals(
      await ws.call("write", { path: viaFd, content: "x" }),
      outsideRefusal("write", viaFd),
    );
  } finally {
    closeSync(fd);
  }
  const viaCwd = `/proc/self/cwd/${relative(Deno.cwd(), join(ws.outside, "secret.txt"))}`;
  assertEquals(await ws.call("read", { path: viaCwd }), outsideRefusal("read", viaCwd));
  assertEquals(await Deno.readTextFile(join(ws.outside, "secret.txt")), SECRET);
});

// A hard link inside the workspace to an outside file cannot be told from a file of the
// workspace by its path. write and edit replace the link by rename, so the outside file never
// changes: openai/codex#1705 (https://github.com/openai/codex/pull/1705) and #21819
// (https://github.com/openai/codex/pull/21819), Hmbown/Codewhale#5569
// (https://github.com/Hmbown/Codewhale/issues/5569).
Deno.test("confinement: write and edit through a hard link never change the outside file", async () => {
  await using ws = await tmpWorkspace({ outside: { "secret.txt": SECRET } });
  const outsideFile = join(ws.outside, "secret.txt");
  await Deno.link(outsideFile, ws.path("alias.txt"));
  const path = ws.path("alias.txt");
  assertEquals(
    await ws.call("edit", { path, "old_string": "outside", "new_string": "inside" }),
    ok(`edited ${path} (1 replacement)`),
  );
  assertEquals(
    await ws.call("write", { path, content: "ESCAPED" }),
    ok(`wrote 7 bytes to ${path}`),
  );
  assertEquals(await Deno.readTextFile(outsideFile), SECRET);
  assertEquals((await Deno.stat(outsideFile)).nlink, 1);
});

// Case and Unicode spellings of the workspace root name a different directory on Linux: they
// must never be taken for the root (our own; the case-insensitive side is tested above).
Deno.test("confinement: case and Unicode variants of the root are not the root", async () => {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-attack-" }));
  try {
    const nfc = join(base, "caf\u00e9");
    await Deno.mkdir(nfc);
    const workspace = await createWorkspace([nfc]);
    const host = createInProcessHost(REGISTRY, { workspace, limits: DEFAULT_LIMITS, env: {} });
    const call = (name: string, input: unknown) =>
      host.call(name, input, new AbortController().signal);
    for (const root of [join(base, "cafe\u0301"), join(base, "CAF\u00c9")]) {
      const path = join(root, "x.txt");
      assertEquals(await call("write", { path, content: "x" }), outsideRefusal("write", path));
      assertEquals(await call("read", { path }), outsideRefusal("read", path));
    }
    assertEquals(await Array.fromAsync(Deno.readDir(base), (e) => e.name), ["caf\u00e9"]);
    assertEquals(await Array.fromAsync(Deno.readDir(nfc)), []);
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

// TOCTOU between the check and the open, for a file and for a directory: another process swaps
// a symlink to outside in and out as fast as it can (google-gemini/gemini-cli#1121 names the
// TOCTOU; anomalyco/opencode#7515, https://github.com/anomalyco/opencode/pull/7515, documents
// it as a limitation of its resolved-path check). The open file is proved where it leads.
Deno.test("confinement: a symlink swapped in and out under read never leaks the outside file", async () => {
  await using ws = await tmpWorkspace({
    files: { "real/f.txt": "inside\n", "plain.txt": "inside\n" },
    outside: { "secret.txt": SECRET, "f.txt": SECRET },
  });
  const swapper = new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'cd "$0" && while [ ! -e stop ]; do ' +
      'ln -sfn "$1" d.new && mv -T d.new d; ln -sfn real d.new && mv -T d.new d; ' +
      'ln -sf "$1/secret.txt" f.new && mv f.new f.txt; ln -f plain.txt f.new && mv f.new f.txt; ' +
      "done",
      ws.root,
      ws.outside,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (let i = 0; i < 300; i++) {
      for (const path of [ws.path("f.txt"), ws.path("d", "f.txt")]) {
        const result = await ws.call("read", { path });
        assert(!result.output.includes(SECRET), `read ${path} leaked: ${result.output}`);
        const written = await ws.call("write", { path, content: "ESCAPED" });
        assert(written.isError || written.output.startsWith("wrote"), written.output);
      }
    }
  } finally {
    await Deno.writeTextFile(ws.path("stop"), "");
    await swapper.status;
  }
  assertEquals(await Deno.readTextFile(join(ws.outside, "secret.txt")), SECRET);
  assertEquals(await Deno.readTextFile(join(ws.outside, "f.txt")), SECRET);
  assertEquals((await Array.fromAsync(Deno.readDir(ws.outside), (e) => e.name)).sort(), [
    "f.txt",
    "secret.txt",
  ]);
});

Deno.test("confinement: a symlink loop fails with an error, never hangs", async () => {
  await using ws = await tmpWorkspace();
  await Deno.symlink(ws.path("b"), ws.path("a"));
  await Deno.symlink(ws.path("a"), ws.path("b"));
  const path = ws.path("a");
  assertEquals(
    await ws.call("read", { path }),
    fail(`read: open ${path}: too many levels of symbolic links`),
  );
});
