/**
 * Promise (issue 24): under the overlay a bash call's file changes are observed, not
 * guessed — read from the upper layer as one exact change set, judged path by path as
 * writes (one refusal refuses all, and nothing lands), kept for undo, then applied byte for
 * byte and mode for mode.
 *
 * The oracle for "applied exactly" is the same command run by plain `/bin/sh` in a twin of
 * the workspace (same basename, same files): after the call both trees must be equal, file
 * contents, modes, links and directories, in a git repository and outside one. Real bwrap,
 * real overlayfs in a user namespace, the real worker, gate, approver and undo recorder; run
 * as root, as CI does.
 *
 * Public reports that motivate it: Claude Code's checkpoints do not track bash
 * (https://docs.anthropic.com/en/docs/claude-code/checkpointing, "Bash command changes not
 * tracked"); Codex and gemini-cli decide on the whole workspace before a command runs
 * (openai/codex codex-rs/core/src/safety.rs, google-gemini/gemini-cli docs/cli/sandbox.md).
 *
 * @module
 */

import { dirname, join } from "node:path";
import { assert, assertEquals } from "../_helpers/assert.ts";
import { until } from "../_helpers/until.ts";
import { callTool, type GateOptions } from "../../agent/tool_host.ts";
import {
  createUndoRecorder,
  openUndoStore,
  type UndoRecorder,
  type UndoStore,
  undoTurns,
} from "../../agent/undo/mod.ts";
import {
  type AuditEvent,
  createApprover,
  type PolicyConfig,
  type Preview,
} from "../../approver/mod.ts";
import { resolveSandbox } from "../../cli/layers/sandbox.ts";
import {
  createWorkerHost,
  createWorkspace,
  DEFAULT_LIMITS,
  resolveReal,
  type Sandbox,
} from "../../tools/mod.ts";

const ENV = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/nonexistent",
  LC_ALL: "C",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
  // Fixed dates: the twin's commits must hash the same.
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
};

const ALLOW_ALL: PolicyConfig = { mode: "allow_all" };

type Files = Record<string, string | { text: string; mode: number }>;

/** Every path under `root`: kind, mode, content (`.git/index` aside: it holds stat data). */
async function tree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string, rel: string) => {
    const names = [];
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
    for (const name of names.sort()) {
      const path = join(dir, name);
      const key = rel === "" ? name : `${rel}/${name}`;
      if (key === ".git/index") continue;
      const info = await Deno.lstat(path);
      const mode = ((info.mode ?? 0) & 0o7777).toString(8);
      if (info.isSymlink) out[key] = `link ${await Deno.readLink(path)}`;
      else if (info.isDirectory) {
        out[key] = `dir ${mode}`;
        await walk(path, key);
      } else if (info.isFile) {
        const bytes = await Deno.readFile(path);
        const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
        out[key] = `file ${mode} ${Array.from(hash.slice(0, 8), (b) => b.toString(16)).join("")}`;
      } else out[key] = `other ${mode}`;
    }
  };
  await walk(root, "");
  return out;
}

async function sh(cwd: string, command: string): Promise<string> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", command],
    cwd,
    clearEnv: true,
    env: { ...ENV, GIT_OPTIONAL_LOCKS: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`sh -c ${command}: exit ${out.code}: ${text}`);
  return text;
}

async function populate(root: string, files: Files, git: boolean): Promise<void> {
  for (const [rel, value] of Object.entries(files)) {
    const path = join(root, rel);
    await Deno.mkdir(dirname(path), { recursive: true });
    const { text, mode } = typeof value === "string" ? { text: value, mode: 0o644 } : value;
    await Deno.writeTextFile(path, text);
    await Deno.chmod(path, mode);
  }
  if (git) await sh(root, "git init -q && git add -A && git commit -q -m start");
}

/** A workspace under the overlay, with its gate, undo recorder and audit events. */
interface Bench extends AsyncDisposable {
  readonly root: string;
  readonly twin: string;
  readonly stateDir: string;
  readonly gate: GateOptions;
  readonly recorder: UndoRecorder;
  readonly store: UndoStore;
  readonly events: AuditEvent[];
  readonly sandbox: Sandbox;
  bash(command: string, timeout?: number): Promise<{ output: string; isError: boolean }>;
  /** The `A|M|D relative-path` list of the last call's change set, from its audit event. */
  changes(): string[];
}

async function bench(
  files: Files,
  options: { git?: boolean; policy?: PolicyConfig } = {},
): Promise<Bench> {
  const top = await Deno.realPath(await Deno.makeTempDir({ prefix: "rousseau-overlay-" }));
  try {
    return await benchIn(top, files, options);
  } catch (error) {
    // Set-up failed (no overlay here, say): the test fails, and leaves nothing behind.
    await Deno.remove(top, { recursive: true });
    throw error;
  }
}

/** {@linkcode bench} in the temp dir `top`, which its dispose removes. */
async function benchIn(
  top: string,
  files: Files,
  options: { git?: boolean; policy?: PolicyConfig },
): Promise<Bench> {
  const root = join(top, "a", "ws");
  const twin = join(top, "b", "ws");
  const stateDir = join(top, "state");
  for (const dir of [root, twin, stateDir]) await Deno.mkdir(dir, { recursive: true });
  await populate(root, files, options.git === true);
  await populate(twin, files, options.git === true);
  const report = await resolveSandbox({ values: {}, stateDir, protectedPaths: [stateDir] }, {
    PATH: ENV.PATH,
  });
  assert(
    report.sandbox?.overlay !== undefined,
    `the overlay does not work here: ${report.overlayProblem ?? report.summary}`,
  );
  const sandbox = report.sandbox!;
  const workspace = await createWorkspace([root]);
  const host = await createWorkerHost({ workspace, limits: DEFAULT_LIMITS, env: ENV, sandbox });
  const store = openUndoStore(stateDir);
  const recorder = createUndoRecorder({
    store,
    sessionId: "s1",
    roots: workspace.roots,
    protectedPaths: [stateDir],
  });
  recorder.beginTurn(1, "test");
  const events: AuditEvent[] = [];
  const gate: GateOptions = {
    registry: host.registry,
    host,
    approver: createApprover(options.policy ?? ALLOW_ALL, {
      resolvePath: resolveReal,
      workspace,
      protectedPaths: [stateDir],
      observed: true,
    }),
    audit: { record: (event) => Promise.resolve(void events.push(event)) },
    source: "cli",
    observed: new Set(["bash"]),
    undo: recorder,
  };
  return {
    root,
    twin,
    stateDir,
    gate,
    recorder,
    store,
    events,
    sandbox,
    async bash(command, timeout) {
      const gated = timeout === undefined ? gate : {
        ...gate,
        host: await createWorkerHost({
          workspace,
          limits: { ...DEFAULT_LIMITS, bashTimeoutMs: timeout },
          env: ENV,
          sandbox,
        }),
      };
      try {
        const result = await callTool(gated, "bash", { command }, new AbortController().signal);
        return { output: result.output, isError: result.isError };
      } finally {
        if (gated !== gate) await (gated.host as unknown as AsyncDisposable)[Symbol.asyncDispose]();
      }
    },
    changes() {
      const last = events.findLast((e) => e.event === "tool.done" || e.event === "tool.error");
      return (last?.changes ?? []).map((c) =>
        c === `M ${root}` ? "M ROOT" : c.replace(`${root}/`, "")
      );
    },
    async [Symbol.asyncDispose]() {
      await host[Symbol.asyncDispose]();
      await Deno.remove(top, { recursive: true });
    },
  };
}

/** Runs `command` under the overlay and in the twin; the trees must end equal. */
async function sameAsPlain(b: Bench, command: string): Promise<void> {
  const result = await b.bash(command);
  assertEquals(result.isError, false, result.output);
  await sh(b.twin, command);
  assertEquals(await tree(b.root), await tree(b.twin));
  // Nothing of the call is left in the scratch directory.
  assertEquals(entries(join(b.stateDir, "overlay")), []);
}

/** Undoes the turn and checks the tree is back to `before`. */
async function undoneTo(b: Bench, before: Record<string, string>): Promise<void> {
  await b.recorder.endTurn();
  using _lock = await b.store.lock();
  const outcome = undoTurns(b.store, "s1");
  assertEquals(outcome.conflicts, []);
  assertEquals(outcome.notUndoable, []);
  assertEquals(await tree(b.root), before);
}

interface Case {
  readonly name: string;
  readonly files: Files;
  readonly command: string;
  /** The exact change set (relative paths, sorted). */
  readonly changes: readonly string[];
  /** A git repository; changes under `.git/` are checked apart (object names vary). */
  readonly git?: boolean;
  /** The command writes git's own files too (index, objects, refs). */
  readonly gitWrites?: boolean;
  readonly ignore?: boolean;
}

const TEXT = { "a.txt": "a cat sat\n", "notes/b.txt": "beta\n" };

function hasProgram(name: string): boolean {
  return new Deno.Command("/bin/sh", { args: ["-c", `command -v ${name}`], stdout: "null" })
    .outputSync().success;
}

const CASES: Case[] = [
  {
    name: "sed -i keeps the mode",
    files: { ...TEXT, "m.txt": { text: "mode 640\n", mode: 0o640 } },
    command: "sed -i s/cat/dog/ a.txt && sed -i s/640/six/ m.txt",
    changes: ["M a.txt", "M m.txt"],
  },
  {
    name: "an npm-style writer: many new files in new directories",
    files: TEXT,
    command:
      "mkdir -p node_modules/x/lib && for i in 1 2 3; do echo $i > node_modules/x/lib/f$i.js; done",
    changes: [
      "A node_modules",
      "A node_modules/x",
      "A node_modules/x/lib",
      "A node_modules/x/lib/f1.js",
      "A node_modules/x/lib/f2.js",
      "A node_modules/x/lib/f3.js",
    ],
  },
  {
    name: "rm -rf of a directory is one deletion",
    files: { ...TEXT, "build/out/x.o": "x", "build/y.o": "y" },
    command: "rm -rf build",
    changes: ["D build"],
  },
  {
    name: "mv of a directory (EXDEV under the overlay: mv copies) is a copy and a deletion",
    files: { ...TEXT, "dir1/k.txt": "k\n", "dir1/sub/l.txt": "l\n" },
    command: "mv dir1 dir2",
    changes: ["A dir2", "A dir2/k.txt", "A dir2/sub", "A dir2/sub/l.txt", "D dir1"],
  },
  {
    name: "chmod of a file and a directory",
    files: { ...TEXT, "run.sh": "#!/bin/sh\n" },
    command: "chmod 755 run.sh && chmod 700 notes",
    changes: ["M notes", "M run.sh"],
  },
  {
    name: "deleted names with spaces, newlines and leading dots",
    files: { "sp ace.txt": "x", "new\nline": "y", ".hidden": "h", "..dots": "d", "keep": "k" },
    command: "rm 'sp ace.txt' .hidden ..dots \"$(printf 'new\\nline')\"",
    changes: ["D ..dots", "D .hidden", "D new\nline", "D sp ace.txt"],
  },
  {
    name: "chmod of the root itself",
    files: TEXT,
    command: "chmod 750 .",
    changes: ["M ROOT"],
  },
  {
    name: "ln -s: a new link, and a link retargeted",
    files: { ...TEXT },
    command: "ln -s a.txt link && ln -s notes dirlink && ln -sfn a.txt dirlink2",
    changes: ["A dirlink", "A dirlink2", "A link"],
  },
  {
    name: "tar x of an archive made beforehand",
    files: TEXT,
    command: "mkdir -p t/in && echo one > t/in/1 && tar cf t.tar -C t in && rm -rf t && " +
      "mkdir x && tar xf t.tar -C x && rm t.tar",
    changes: ["A x", "A x/in", "A x/in/1"],
  },
  {
    name: "a writer through an option no table needs: sort -o",
    files: { "in.txt": "b\na\n" },
    command: "sort -o sorted.txt in.txt",
    changes: ["A sorted.txt"],
  },
  {
    name: "a python script writing files",
    files: TEXT,
    command: "python3 -c \"import os; os.makedirs('gen', exist_ok=True); " +
      "open('gen/data.json','w').write('{}'); os.remove('a.txt')\"",
    changes: ["A gen", "A gen/data.json", "D a.txt"],
    ignore: !hasProgram("python3"),
  },
  {
    name: "gcc -o writes the binary (mode 755)",
    files: { "main.c": "int main(void) { return 0; }\n" },
    command: "gcc -o prog main.c",
    changes: ["A prog"],
    ignore: !hasProgram("gcc"),
  },
  {
    name: "hard links among new files stay links",
    files: TEXT,
    command: "echo x > h1 && ln h1 h2",
    changes: ["A h1", "A h2"],
  },
  {
    name: "a file replaced by a directory, a directory by a file",
    files: { ...TEXT, "f": "file\n", "d/inner": "inner\n" },
    command: "rm f && mkdir f && echo g > f/g && rm -rf d && echo now-a-file > d",
    changes: ["M d", "M f", "A f/g"],
  },
  {
    name: "a directory emptied and refilled (opaque): old names deleted, new ones added",
    files: { ...TEXT, "d/old1": "1", "d/old2": "2" },
    command: "rm -rf d && mkdir d && echo n > d/new",
    changes: ["D d/old1", "D d/old2", "A d/new"].sort(),
  },
  {
    name: "a large file appended to is copied up and applied whole",
    files: { "big.log": "line\n".repeat(200_000) },
    command: "echo more >> big.log",
    changes: ["M big.log"],
  },
  {
    name: "touch of an existing file changes nothing that is applied",
    files: TEXT,
    command: "touch a.txt",
    changes: [],
  },
];

const GIT_CASES: Case[] = [
  {
    name: "git checkout -- f restores a file (and git's index)",
    files: TEXT,
    command: "echo dirty > a.txt && git checkout -- a.txt",
    changes: [],
    git: true,
    gitWrites: true,
  },
  {
    name: "git commit writes objects, refs and logs under .git",
    files: TEXT,
    command: "echo more >> a.txt && git commit -q -am second",
    changes: ["M a.txt"],
    git: true,
    gitWrites: true,
  },
  {
    name: "git diff --output writes the patch",
    files: TEXT,
    command: "echo more >> a.txt && git diff --output=d.patch",
    changes: ["M a.txt", "A d.patch"].sort(),
    git: true,
  },
];

for (const c of [...CASES, ...GIT_CASES]) {
  Deno.test({
    name: `overlay: ${c.name}: the exact change set, applied as plain sh would, undone exactly`,
    ignore: c.ignore === true,
    fn: async () => {
      await using b = await bench(c.files, { git: c.git === true });
      const before = await tree(b.root);
      await sameAsPlain(b, c.command);
      const changes = b.changes();
      const inGit = changes.filter((p) => p.slice(2).startsWith(".git/"));
      // git's own files are listed like any other write (GIT_OPTIONAL_LOCKS=0 keeps a
      // read-only command such as `git diff` from refreshing the index).
      assertEquals(inGit.length > 0, c.gitWrites === true, JSON.stringify(changes));
      const byPath = (a: string, b: string) => a.slice(2) < b.slice(2) ? -1 : 1;
      assertEquals(changes.filter((p) => !inGit.includes(p)), [...c.changes].sort(byPath));
      if (c.name.startsWith("hard links")) {
        assertEquals(inode(join(b.root, "h1")), inode(join(b.root, "h2")));
      }
      // Undo puts the tree back (git's own files are not undone: `.git` is git's store).
      if (c.git) {
        await b.recorder.endTurn();
        using _lock = await b.store.lock();
        undoTurns(b.store, "s1");
        const now = await tree(b.root);
        const strip = (t: Record<string, string>) =>
          Object.fromEntries(Object.entries(t).filter(([k]) => !k.startsWith(".git")));
        assertEquals(strip(now), strip(before));
      } else await undoneTo(b, before);
    },
  });
}

/** Whether some call's upper layer under the overlay holds `name` (the command wrote it). */
function inUpper(stateDir: string, name: string): boolean {
  const base = join(stateDir, "overlay");
  return entries(base).some((e) => exists(join(base, e.name, "0", "u", name)));
}

Deno.test("overlay, contained: the command runs before its reply is on disk, and its changes land only after", async () => {
  await using b = await bench({});
  const gate = { ...b.gate, contained: new Set(["bash"]) };
  let sync!: () => void;
  const stored = new Promise<void>((resolve) => sync = resolve);
  const command = "echo ran > ran.txt; echo out";
  const pending = callTool(gate, "bash", { command }, new AbortController().signal, stored);
  // The command runs (its write is in its upper layer) while the reply is not on disk yet...
  await until("the command's write in its upper layer", () => inUpper(b.stateDir, "ran.txt"));
  // ...and nothing of it reaches the workspace until it is.
  assertEquals(entries(b.root), []);
  sync();
  const result = await pending;
  assertEquals([result.output, result.isError], ["out\n", false]);
  assertEquals(await Deno.readTextFile(join(b.root, "ran.txt")), "ran\n");
});

Deno.test("overlay, contained: a command whose reply could not be synced to disk has none of its changes applied, and says why", async () => {
  await using b = await bench({});
  const gate = { ...b.gate, contained: new Set(["bash"]) };
  const stored = Promise.reject(new Error("session: the model's reply could not be synced"));
  stored.catch(() => {});
  const result = await callTool(
    gate,
    "bash",
    { command: "echo ran > ran.txt; echo out" },
    new AbortController().signal,
    stored,
  );
  assertEquals(result.isError, true);
  assertEquals(
    result.output,
    "out\nbash: the command's changes were not applied: session: the model's reply could not " +
      "be synced",
  );
  assertEquals(entries(b.root), []);
  // A command that changes nothing needs no reply on disk: it returns its output as it is.
  const quiet = await callTool(
    gate,
    "bash",
    { command: "echo quiet" },
    new AbortController().signal,
    stored,
  );
  assertEquals([quiet.output, quiet.isError], ["quiet\n", false]);
});

Deno.test("overlay: one path a write rule refuses refuses the whole set: nothing lands, the path is named", async () => {
  const policy = (root: string): PolicyConfig => ({
    mode: "pattern",
    default: "deny",
    allow: [
      { tool: "bash", command: "^make( |$)" },
      { tool: "write", path: `^${root}/src/` },
    ],
  });
  // The reproduction of issue 24: a Makefile recipe writes a workflow file no rule allows.
  const files = {
    "Makefile": "all:\n\tmkdir -p .github/workflows src && echo x > .github/workflows/ci.yml " +
      "&& echo y > src/ok.txt\n",
  };
  await using b = await bench(files);
  // The policy names the bench's own root.
  (b.gate as { approver: unknown }).approver = createApprover(policy(b.root), {
    resolvePath: resolveReal,
    workspace: await createWorkspace([b.root]),
    protectedPaths: [b.stateDir],
    observed: true,
  });
  const before = await tree(b.root);
  const result = await b.bash("make");
  assertEquals(result.isError, true);
  assertEquals(
    result.output,
    "mkdir -p .github/workflows src && echo x > .github/workflows/ci.yml && echo y > src/ok.txt\n" +
      "bash: the command's changes were not applied: it wrote .github/workflows/ci.yml, and no " +
      "rule allows writing there",
  );
  assertEquals(await tree(b.root), before);
  // Within the rule, the same recipe's changes land.
  await Deno.writeTextFile(
    join(b.root, "Makefile"),
    "all:\n\tmkdir -p src && echo y > src/ok.txt\n",
  );
  const allowed = await b.bash("make");
  assertEquals(allowed.isError, false, allowed.output);
  assertEquals(await Deno.readTextFile(join(b.root, "src/ok.txt")), "y\n");
});

Deno.test("overlay: a deny rule on a path refuses a line the policy lets run, naming the rule", async () => {
  await using b = await bench(TEXT);
  (b.gate as { approver: unknown }).approver = createApprover({
    mode: "pattern",
    default: "deny",
    allow: [{ tool: "bash" }],
    deny: [{ tool: "write", path: "\\.env$", reason: "secrets stay out" }],
  }, {
    resolvePath: resolveReal,
    workspace: await createWorkspace([b.root]),
    protectedPaths: [b.stateDir],
    observed: true,
  });
  const before = await tree(b.root);
  const result = await b.bash("echo ok > fine.txt && echo KEY=1 > .env");
  assertEquals(result.isError, true);
  assertEquals(
    result.output,
    "bash: the command's changes were not applied: it wrote .env: secrets stay out (rule deny[0])",
  );
  assertEquals(await tree(b.root), before);
  // bash allowed without a command pattern may change anything else in the roots.
  const ok = await b.bash("echo ok > fine.txt && rm a.txt");
  assertEquals(ok.isError, false, ok.output);
  assertEquals(b.changes(), ["D a.txt", "A fine.txt"]);
});

Deno.test("overlay: a change made to the workspace meanwhile is a conflict: the set is refused, the path named", async () => {
  await using b = await bench({ "f.txt": "old\n" });
  const running = b.bash("echo new > f.txt && sleep 5");
  // Wait for the command's write in its upper layer, then change the real file.
  const base = join(b.stateDir, "overlay");
  await until(
    "the command's f.txt in its upper layer",
    () => entries(base).some((e) => exists(join(base, e.name, "0", "u", "f.txt"))),
    { limitMs: 15_000, everyMs: 50 },
  );
  await Deno.writeTextFile(join(b.root, "f.txt"), "theirs\n");
  const result = await running;
  assertEquals(result.isError, true);
  assertEquals(
    result.output,
    "bash: the command's changes were not applied: the workspace changed while the command " +
      `ran: ${b.root}/f.txt (changed meanwhile)`,
  );
  assertEquals(await Deno.readTextFile(join(b.root, "f.txt")), "theirs\n");
});

/** The entries of `dir` (sync: called from tests). */
function entries(dir: string): Deno.DirEntry[] {
  return [...Deno.readDirSync(dir)];
}

/** Permission bits of `path`. */
function modeOf(path: string): number {
  return (Deno.lstatSync(path).mode ?? 0) & 0o7777;
}

/** The inode of `path`. */
function inode(path: string): number | null {
  return Deno.lstatSync(path).ino;
}

/** This process's start time, field 22 of /proc/self/stat. */
function startTime(): string {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("overlay: a command killed by the timeout has its partial change set discarded, and says so", async () => {
  await using b = await bench(TEXT);
  const before = await tree(b.root);
  const result = await b.bash("echo half > half.txt && rm a.txt && sleep 30", 1_000);
  assertEquals(result.isError, true);
  assertEquals(
    result.output,
    "bash: timed out after 1s\nbash: what it changed was discarded (nothing of it reached the " +
      "workspace)",
  );
  assertEquals(await tree(b.root), before);
  assertEquals(entries(join(b.stateDir, "overlay")), []);
});

Deno.test("overlay: FIFOs and sockets the command makes are not applied, and named", async () => {
  await using b = await bench(TEXT);
  const result = await b.bash("mkfifo pipe && echo kept > kept.txt");
  assertEquals(result.isError, false, result.output);
  assertEquals(
    result.output,
    `bash: not applied (only files, directories and symbolic links are): ${b.root}/pipe (a FIFO)`,
  );
  assertEquals(exists(join(b.root, "pipe")), false);
  assertEquals(await Deno.readTextFile(join(b.root, "kept.txt")), "kept\n");
});

Deno.test("overlay: setuid and setgid bits never reach the workspace", async () => {
  await using b = await bench({ "tool": { text: "#!/bin/sh\n", mode: 0o755 } });
  const result = await b.bash("cp tool new && chmod 6755 new tool");
  assertEquals(result.isError, false, result.output);
  assertEquals(modeOf(join(b.root, "new")), 0o755);
  assertEquals(modeOf(join(b.root, "tool")), 0o755);
});

Deno.test("overlay: a scratch directory left by a dead process is removed by the next probe", async () => {
  await using b = await bench(TEXT);
  const base = join(b.stateDir, "overlay");
  // pid 2^22 + 1 is above pid_max: no process has it.
  const stale = join(base, "4194305.1.1.x");
  await Deno.mkdir(join(stale, "0", "u", "locked"), { recursive: true });
  await Deno.chmod(join(stale, "0", "u"), 0o000);
  // One of a live process (this one) stays.
  const start = startTime();
  const live = join(base, `${Deno.pid}.${start}.99.live`);
  await Deno.mkdir(live);
  await resolveSandbox({ values: {}, stateDir: b.stateDir }, { PATH: ENV.PATH });
  assertEquals(exists(stale), false);
  assertEquals(exists(live), true);
  await Deno.remove(live);
});

Deno.test("overlay: left out, with the reason, where an overlay of the roots cannot stand in for them", async () => {
  await using b = await bench(TEXT);
  const { sandboxForRoots } = await import("../../cli/layers/sandbox.ts");
  assertEquals(sandboxForRoots(b.sandbox, [b.root]).overlayProblem, undefined);
  assertEquals(
    sandboxForRoots(b.sandbox, [b.root, join(b.root, "notes")]).overlayProblem,
    `the root ${join(b.root, "notes")} lies inside another root`,
  );
  assertEquals(
    sandboxForRoots(b.sandbox, [dirname(b.stateDir)]).overlayProblem,
    `the state directory and the root ${dirname(b.stateDir)} lie inside one another`,
  );
  // A filesystem mounted below a root (a volume for node_modules, say) would not show through
  // an overlay of the root: the roots are bound as they are instead.
  const point = join(b.root, "mnt");
  await Deno.mkdir(point);
  await sh(b.root, `mount -t tmpfs tmpfs ${point}`);
  try {
    const fitted = sandboxForRoots(b.sandbox, [b.root]);
    assertEquals(fitted.overlayProblem, `${point} is a mount point inside a root`);
    assertEquals(fitted.sandbox.overlay, undefined);
  } finally {
    await sh(b.root, `umount ${point}`);
  }
});

Deno.test("overlay preview: the operator sees output and changes first; a preview cut short withholds its output", async () => {
  await using b = await bench(TEXT);
  const workspace = await createWorkspace([b.root]);
  const seen: (Preview | undefined)[] = [];
  let answer: true | string = true;
  const gate: GateOptions = {
    ...b.gate,
    preview: true,
    approver: createApprover({ mode: "pattern", default: "ask" }, {
      resolvePath: resolveReal,
      workspace,
      protectedPaths: [b.stateDir],
      observed: true,
    }),
    operator: (request) => {
      seen.push(request.preview);
      return Promise.resolve(answer);
    },
  };
  const call = (command: string, g: GateOptions = gate) =>
    callTool(g, "bash", { command }, new AbortController().signal);

  const applied = await call("echo shown && echo new > n.txt");
  assertEquals(applied.isError, false, applied.output);
  assertEquals(applied.output, "shown\n");
  assertEquals(seen.at(-1)?.output, "shown\n");
  assertEquals(seen.at(-1)?.changes.map((c) => `${c.status} ${c.path}`), [`A ${b.root}/n.txt`]);
  assertEquals(await Deno.readTextFile(join(b.root, "n.txt")), "new\n");

  answer = "discarded by the operator";
  const refused = await call("echo secret && rm a.txt");
  assertEquals(refused, {
    output: "bash: discarded by the operator; nothing it changed was applied, and its output is " +
      "withheld",
    isError: true,
    decision: refused.decision!,
    durationMs: refused.durationMs!,
    changes: { paths: [`D ${b.root}/a.txt`], allowed: false },
  });
  assert(exists(join(b.root, "a.txt")));

  // Cut short by the timeout: never asked, nothing applied, the output withheld.
  await using slow = await createWorkerHost({
    workspace,
    limits: { ...DEFAULT_LIMITS, bashTimeoutMs: 1_000 },
    env: ENV,
    sandbox: b.sandbox,
  });
  const asked = seen.length;
  const cut = await call("echo secret && sleep 30", { ...gate, host: slow });
  assertEquals(
    cut.output,
    "bash: the call needed approval and ended before it could be asked; its output is withheld (bash: timed out after 1s)",
  );
  assertEquals(cut.isError, true);
  assertEquals(seen.length, asked);
});
