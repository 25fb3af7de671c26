/**
 * The public-sources suite: command lines drawn from publicly reported bypasses of other
 * agents' shell permissions (Claude Code issues and advisories, Codex's is_safe_command
 * tests, gemini-cli's shell-utils tests, qwen-code, opencode and others), each judged under a
 * realistic policy, with the harmless look-alikes that must stay allowed. Every case names
 * its source (the `SOURCES` entry: a URL or repo/path, in a comment and in the data).
 *
 * The workspace is `/ws` (paths are resolved lexically here; the CLI test resolves real ones).
 */

import { createApprover, type PolicyConfig, type Verdict } from "../../approver/mod.ts";
import { assert, assertEquals } from "../_helpers/assert.ts";

/** Where each case comes from. */
const SOURCES = {
  // rousseau issue 16: the reproductions this suite must close: issues show 16
  ISSUE16: "issues show 16",
  // the README's own example policy: README.md
  README: "README.md",
  // the spec's worked examples: ../shared/spec/approver.md, "What an allow grants: effects"
  SPEC: '../shared/spec/approver.md, "What an allow grants: effects"',
  // Codex is_known_safe_command tests: openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  CODEX: "openai/codex codex-rs/core/src/command_safety/is_safe_command.rs",
  // gemini-cli shell-utils tests: google-gemini/gemini-cli packages/core/src/utils/shell-utils.test.ts
  GEMINI: "google-gemini/gemini-cli packages/core/src/utils/shell-utils.test.ts",
  // Claude Code: bash permission bypass via command chaining under Bash(echo *): https://github.com/anthropics/claude-code/issues/4956
  CC4956: "https://github.com/anthropics/claude-code/issues/4956",
  // Claude Code: find -exec grep reads what the rules meant to hide: https://github.com/anthropics/claude-code/issues/6036
  CC6036: "https://github.com/anthropics/claude-code/issues/6036",
  // Claude Code: read-only find/head pipelines with 2>/dev/null: https://github.com/anthropics/claude-code/issues/1128
  CC1128: "https://github.com/anthropics/claude-code/issues/1128",
  // Claude Code: Bash(cd:*) allows what follows &&: https://github.com/anthropics/claude-code/issues/28784
  CC28784: "https://github.com/anthropics/claude-code/issues/28784",
  // Claude Code: chained rm behind allowed ln/ls: https://github.com/anthropics/claude-code/issues/15763
  CC15763: "https://github.com/anthropics/claude-code/issues/15763",
  // CVE-2025-54795, Claude Code echo bypass (GHSA-x56v-x2h6-7j34): https://github.com/anthropics/claude-code/security/advisories/GHSA-x56v-x2h6-7j34
  CVE54795: "https://github.com/anthropics/claude-code/security/advisories/GHSA-x56v-x2h6-7j34",
  // CVE-2025-58764, Claude Code rg command injection (GHSA-qxfv-fcpc-w36x): https://github.com/anthropics/claude-code/security/advisories/GHSA-qxfv-fcpc-w36x
  CVE58764: "https://github.com/anthropics/claude-code/security/advisories/GHSA-qxfv-fcpc-w36x",
  // CVE-2025-66032, Claude Code command validation bypass (GHSA-xq4m-mc3c-vvg3): https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3
  CVE66032: "https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3",
  // CVE-2025-64755, Claude Code sed expression validation (GHSA-7mv8-j34q-vp7q): https://github.com/HackTricks-wiki/hacktricks/pull/1603
  CVE64755: "https://github.com/HackTricks-wiki/hacktricks/pull/1603",
  // Claude Code sed write bypass (GHSA-mhg7-666j-cqg4): https://github.com/anthropics/claude-code/security/advisories/GHSA-mhg7-666j-cqg4
  GHSA_MHG7: "https://github.com/anthropics/claude-code/security/advisories/GHSA-mhg7-666j-cqg4",
  // qwen-code: allow rules bypassed by substitutions in leading assignments: https://github.com/QwenLM/qwen-code/issues/10192
  // qwen-code: a command substitution hidden by a line continuation, or by ${var@P}: https://github.com/QwenLM/qwen-code/issues/8582
  QWEN8582: "https://github.com/QwenLM/qwen-code/issues/8582",
  QWEN10192: "https://github.com/QwenLM/qwen-code/issues/10192",
  // qwen-code: a backslash inside single quotes hides a second command: https://github.com/QwenLM/qwen-code/issues/11764
  QWEN11764: "https://github.com/QwenLM/qwen-code/issues/11764",
  // opencode: bash permission escape via --: https://github.com/anomalyco/opencode/issues/39931
  OPENCODE39931: "https://github.com/anomalyco/opencode/issues/39931",
  // opencode: an allowed command redirected over a file: https://github.com/anomalyco/opencode/issues/5330
  OPENCODE5330: "https://github.com/anomalyco/opencode/issues/5330",
  // AntSeed: awk system()/getline/print|, sed e, find -fprintf auto-allowed: https://github.com/AntSeed/antseed/pull/660
  ANTSEED660: "https://github.com/AntSeed/antseed/pull/660",
  // openworker: find -exec ... {} + escapes operator checks: https://github.com/andrewyng/openworker/pull/280
  OPENWORKER280: "https://github.com/andrewyng/openworker/pull/280",
  // Amazon Q CLI: find -okdir runs programs: https://github.com/aws/amazon-q-developer-cli-autocomplete/pull/444
  AMAZONQ444: "https://github.com/aws/amazon-q-developer-cli-autocomplete/pull/444",
  // SafeClaw: allowlist bypass through the env wrapper: https://github.com/princezuda/safestclaw/issues/59
  SAFECLAW59: "https://github.com/princezuda/safestclaw/issues/59",
  // SafeClaw: allowlist bypass through python3 -c: https://github.com/princezuda/safestclaw/issues/67
  SAFECLAW67: "https://github.com/princezuda/safestclaw/issues/67",
  // Bash(xargs *) gives access to every command: https://github.com/intelligentcode-ai/claude-code-vm/issues/4
  XARGSVM4: "https://github.com/intelligentcode-ai/claude-code-vm/issues/4",
  // gptme: echo > file then base64 -d | bash: https://github.com/gptme/gptme/pull/840
  GPTME840: "https://github.com/gptme/gptme/pull/840",
  // claw-code read-only mode: tee writes without a redirection: https://gitea.d0zingcat.dev/d0zingcat/claude-code/commit/5a4a8ebfb2f5a6dcabdf8b57037d7805fb20f655?files=ROADMAP.md
  CLAW495:
    "https://gitea.d0zingcat.dev/d0zingcat/claude-code/commit/5a4a8ebfb2f5a6dcabdf8b57037d7805fb20f655?files=ROADMAP.md",
  // GTFOBins-style tar gadgets named by Codex and Claude Code read-only lists (--to-command, -I, --checkpoint-action): openai/codex codex-rs/core/src/command_safety/is_safe_command.rs; https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3
  TAR:
    "openai/codex codex-rs/core/src/command_safety/is_safe_command.rs; https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3",
} as const;

const READ_ONLY = "^(ls|cat|echo|grep|find|head|tail|wc|sort|uniq|awk|sed|rg|base64|tee|man|less|" +
  "more|tar|env|xargs|timeout|nice|nohup|stdbuf|command|" +
  "git (status|diff|log|show|branch|stash|grep|blame))( |$)";

/** The policies the cases run under. */
const POLICIES: Readonly<Record<string, PolicyConfig>> = {
  // The README's example: an allow list for looking at a repository, rm denied.
  README: {
    mode: "pattern",
    default: "deny",
    deny: [{ tool: "bash", command: "^rm( |$)" }],
    allow: [
      { tool: "read" },
      { tool: "grep" },
      { tool: "bash", command: "^git (status|diff|log)( |$)" },
    ],
  },
  // A generous read-only list of programs (what the public reports' victims had allowed).
  RO: { mode: "pattern", allow: [{ tool: "read" }, { tool: "bash", command: READ_ONLY }] },
  // The same, and the write tool may write under /ws/out/.
  RO_OUT: {
    mode: "pattern",
    allow: [{ tool: "bash", command: READ_ONLY }, { tool: "write", path: "^/ws/out/" }],
  },
  // Interpreters and build tools allowed by name: inline code and gadgets still are not.
  BROAD: {
    mode: "pattern",
    allow: [{
      tool: "bash",
      command: "^(python3|node|perl|ruby|php|sh|bash|make|npm|npx|cargo|sudo|deno|echo|cat)( |$)",
    }],
  },
  // Read-only list, everything else asks the operator.
  ASK: { mode: "pattern", default: "ask", allow: [{ tool: "bash", command: READ_ONLY }] },
};

interface Case {
  /** Policy name. */
  readonly p: keyof typeof POLICIES;
  /** Source (a `SOURCES` key). */
  readonly src: keyof typeof SOURCES;
  readonly want: Verdict;
  readonly cmd: string;
}

const CASES: readonly Case[] = [
  // issues show 16
  {
    p: "README",
    src: "ISSUE16",
    want: "deny",
    cmd: "git log -1 --format='[core]%n%x09fsmonitor = \"id > PWNED; false\"' --output=.git/config",
  },
  { p: "README", src: "ISSUE16", want: "allow", cmd: "git status" },
  { p: "README", src: "ISSUE16", want: "allow", cmd: "git log -p -1" },
  { p: "README", src: "ISSUE16", want: "allow", cmd: "git diff HEAD~1" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "README", src: "CODEX", want: "allow", cmd: "git log --oneline -5" },
  { p: "README", src: "CODEX", want: "allow", cmd: "git diff --stat" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git log --output=/tmp/git-log-out-test -n 1" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git diff --output /tmp/git-diff-out-test" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git log --output=notes.txt" },
  // issues show 16
  { p: "README", src: "ISSUE16", want: "deny", cmd: "git log --outp=.git/config" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "README", src: "CODEX", want: "deny", cmd: "git -c core.pager=cat log -n 1" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git -ccore.pager=cat status" },
  // issues show 16
  { p: "README", src: "ISSUE16", want: "deny", cmd: "git -c core.fsmonitor='touch PWNED' status" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "README", src: "CODEX", want: "deny", cmd: "git --config-env=core.pager=EVIL log" },
  // issues show 16
  {
    p: "README",
    src: "ISSUE16",
    want: "deny",
    cmd: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='touch PWNED' git log",
  },
  { p: "README", src: "ISSUE16", want: "deny", cmd: "GIT_EXTERNAL_DIFF=./x git diff" },
  { p: "README", src: "ISSUE16", want: "deny", cmd: "PAGER='touch PWNED' git log" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "README", src: "CODEX", want: "deny", cmd: "git diff --ext-diff" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git log --ext-diff -p" },
  // README.md
  { p: "README", src: "README", want: "deny", cmd: "git status; rm -rf build" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "README", src: "CODEX", want: "deny", cmd: "git -C vendor/lib status" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git --git-dir=evil/.git log" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git --work-tree=/ status" },
  { p: "README", src: "CODEX", want: "deny", cmd: "git --exec-path=./bin log" },
  { p: "README", src: "CODEX", want: "allow", cmd: "git diff --no-ext-diff" },
  { p: "README", src: "CODEX", want: "allow", cmd: "git log --format='%H %s' -3" },
  { p: "README", src: "CODEX", want: "allow", cmd: "git diff -- src/a.ts" },
  // google-gemini/gemini-cli packages/core/src/utils/shell-utils.test.ts
  { p: "README", src: "GEMINI", want: "allow", cmd: "git log 2>&1" },
  // https://github.com/anomalyco/opencode/issues/5330
  { p: "README", src: "OPENCODE5330", want: "deny", cmd: "git diff > patch.diff" },
  // https://github.com/anthropics/claude-code/issues/4956
  { p: "README", src: "CC4956", want: "deny", cmd: "git log | head" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "README", src: "CODEX", want: "allow", cmd: "git log --grep=fix --oneline" },
  { p: "README", src: "CODEX", want: "allow", cmd: "git diff --output-indicator-new=+ HEAD" },
  // https://github.com/anomalyco/opencode/issues/39931
  { p: "README", src: "OPENCODE39931", want: "allow", cmd: "git log -- --output=x" },
  { p: "README", src: "OPENCODE39931", want: "allow", cmd: "git diff --" },
  // issues show 16
  { p: "RO", src: "ISSUE16", want: "deny", cmd: "find . -delete" },
  { p: "RO", src: "ISSUE16", want: "deny", cmd: "find . -maxdepth 0 -fprintf .git/config x" },
  { p: "RO", src: "ISSUE16", want: "deny", cmd: "ls() { ls | ls & }; ls" },
  { p: "RO", src: "ISSUE16", want: "allow", cmd: "find . -name '*.ts'" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -name file.txt -exec rm {} \\;" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -name '*.py' -execdir python3 {} \\;" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -name file.txt -ok rm {} \\;" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -name '*.py' -okdir python3 {} \\;" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -delete -name file.txt" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -fls /etc/passwd" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -fprint /etc/passwd" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -fprint0 /etc/passwd" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "find . -fprintf /root/suid.txt '%#m %u %p\\n'" },
  // https://github.com/andrewyng/openworker/pull/280
  { p: "RO", src: "OPENWORKER280", want: "deny", cmd: "find . -exec touch /tmp/pwned {} +" },
  // https://github.com/aws/amazon-q-developer-cli-autocomplete/pull/444
  {
    p: "RO",
    src: "AMAZONQ444",
    want: "deny",
    cmd: "echo y | find . -type f -maxdepth 1 -okdir open -a Calculator {} +",
  },
  // https://github.com/anthropics/claude-code/issues/6036
  {
    p: "RO",
    src: "CC6036",
    want: "allow",
    cmd: "find . -name '*.json' -exec grep -l pattern {} \\;",
  },
  // https://github.com/anthropics/claude-code/issues/1128
  {
    p: "RO",
    src: "CC1128",
    want: "allow",
    cmd: "find . -type d -name somestring 2>/dev/null | head -1",
  },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "allow", cmd: "find src -name '*.ts' -newer package.json" },
  // issues show 16
  { p: "RO", src: "ISSUE16", want: "deny", cmd: "find . \\-delete" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "allow", cmd: "find . -name -delete" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "rg --pre pwned files" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "rg --pre=pwned files" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "rg --hostname-bin pwned files" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "rg --hostname-bin=pwned files" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "rg --search-zip files" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "rg -z files" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "rg Cargo.toml -n" },
  // https://github.com/anthropics/claude-code/security/advisories/GHSA-qxfv-fcpc-w36x
  { p: "RO", src: "CVE58764", want: "allow", cmd: "rg -n 'TODO' src" },
  { p: "RO", src: "CVE58764", want: "allow", cmd: "rg --pre-glob '*.pdf' foo" },
  { p: "RO", src: "CVE58764", want: "deny", cmd: "rg -zn foo" },
  { p: "RO", src: "CVE58764", want: "deny", cmd: "rg --pr=sh foo" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "deny", cmd: "base64 -o out.bin" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "base64 --output out.bin" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "base64 --output=out.bin" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "base64 -ob64.txt" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "base64 f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "base64 -d f" },
  // https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3
  { p: "RO", src: "CVE66032", want: "allow", cmd: "sort f" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "sort -o out.txt f" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "sort --output=/etc/cron.d/x f" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "sort --compress-program=sh f" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "sort --compress-prog=sh f" },
  { p: "RO", src: "CVE66032", want: "allow", cmd: "sort -k2 -t, f" },
  { p: "RO", src: "CVE66032", want: "allow", cmd: "sort -u f | uniq -c" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "deny", cmd: "uniq a b" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "uniq -c f" },
  // https://gitea.d0zingcat.dev/d0zingcat/claude-code/commit/5a4a8ebfb2f5a6dcabdf8b57037d7805fb20f655?files=ROADMAP.md
  { p: "RO", src: "CLAW495", want: "deny", cmd: "tee out.txt" },
  { p: "RO", src: "CLAW495", want: "deny", cmd: "tee -a out.txt" },
  { p: "RO", src: "CLAW495", want: "deny", cmd: "echo hi | tee out.txt" },
  { p: "RO", src: "CLAW495", want: "deny", cmd: "cat a | tee b" },
  { p: "RO", src: "CLAW495", want: "allow", cmd: "echo hi | tee /dev/null" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed -n 1,5p file.txt" },
  // https://github.com/AntSeed/antseed/pull/660
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "sed -n '1e id' f" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "sed 's/a/b/e' f" },
  // https://github.com/anthropics/claude-code/security/advisories/GHSA-mhg7-666j-cqg4
  { p: "RO", src: "GHSA_MHG7", want: "deny", cmd: "sed -i s/a/b/ f" },
  { p: "RO", src: "GHSA_MHG7", want: "deny", cmd: "sed -ie s/a/b/ f" },
  { p: "RO", src: "GHSA_MHG7", want: "deny", cmd: "sed --in-place=.bak s/a/b/ f" },
  // https://github.com/HackTricks-wiki/hacktricks/pull/1603
  { p: "RO", src: "CVE64755", want: "deny", cmd: "sed -n 'w out.txt' f" },
  { p: "RO", src: "CVE64755", want: "deny", cmd: "sed 's/a/b/w out.txt' f" },
  // https://github.com/AntSeed/antseed/pull/660
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "sed -f script.sed f" },
  // https://github.com/HackTricks-wiki/hacktricks/pull/1603
  { p: "RO", src: "CVE64755", want: "deny", cmd: "sed -e 's/a/b/' -e '1e touch PWNED' f" },
  { p: "RO", src: "CVE64755", want: "deny", cmd: "sed '1~2e touch PWNED' f" },
  { p: "RO", src: "CVE64755", want: "deny", cmd: "sed -n '/x/,$ W out.txt' f" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed 's/x/y/g' f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed -E 's/(a|b)+/c/' f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed '/^#/d' f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed -n '$p' f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed 'y/abc/xyz/' f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed '1!G;h;$!d' f" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "sed -n '/start/,/end/p' f" },
  // issues show 16
  { p: "RO", src: "ISSUE16", want: "allow", cmd: "awk '{print $1}' f" },
  // https://github.com/AntSeed/antseed/pull/660
  // The program awk runs is judged as its own command: env is on this list, id is not.
  { p: "RO", src: "ANTSEED660", want: "allow", cmd: "awk 'BEGIN{system(\"env\")}'" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk 'BEGIN{system(\"id\")}'" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk 'BEGIN{\"id\" | getline x; print x}'" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk '{print | \"sh\"}' f" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk '{print > \"/etc/x\"}' f" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk '{print $0 >> \"log.txt\"}' f" },
  { p: "RO", src: "ANTSEED660", want: "allow", cmd: "awk '$1 > 5' f" },
  { p: "RO", src: "ANTSEED660", want: "allow", cmd: "awk -F, '{print $2}' f" },
  { p: "RO", src: "ANTSEED660", want: "allow", cmd: "awk 'NR==1 || /x|y/' f" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk -f prog.awk f" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: 'awk \'{printf("%s\\n", $1) > "out"}\' f' },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: 'awk \'BEGIN { f = "system"; @f("id") }\'' },
  { p: "RO", src: "ANTSEED660", want: "allow", cmd: "awk '{ print (length($0) > 80) }' f" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: "awk '{ cmd = \"date\"; cmd | getline d }'" },
  { p: "RO", src: "ANTSEED660", want: "deny", cmd: 'awk \'BEGIN { print "x" |& "sh" }\'' },
  // https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3
  { p: "RO", src: "CVE66032", want: "deny", cmd: "man -P 'sh -c id' ls" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "man --html=firefox ls" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "man -H ls" },
  { p: "RO", src: "CVE66032", want: "allow", cmd: "man ls" },
  { p: "RO", src: "CVE66032", want: "allow", cmd: "man -P cat ls" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "man -P 'touch PWNED' ls" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "less README.md" },
  { p: "RO", src: "CVE66032", want: "deny", cmd: "more README.md" },
  // issues show 16
  { p: "RO", src: "ISSUE16", want: "allow", cmd: 'echo "a && rm -rf x"' },
  // https://github.com/anthropics/claude-code/security/advisories/GHSA-x56v-x2h6-7j34
  { p: "RO", src: "CVE54795", want: "allow", cmd: "echo 'a;rm -rf x'" },
  // https://github.com/anthropics/claude-code/issues/4956
  { p: "RO", src: "CC4956", want: "allow", cmd: 'echo "test" && ls' },
  { p: "RO", src: "CC4956", want: "deny", cmd: 'echo "test" && rm -rf x' },
  { p: "RO", src: "CC4956", want: "deny", cmd: 'echo "test" | sh' },
  // google-gemini/gemini-cli packages/core/src/utils/shell-utils.test.ts
  { p: "RO", src: "GEMINI", want: "deny", cmd: "echo ${foo@P}" },
  // https://github.com/QwenLM/qwen-code/issues/8582 (also issue 16's reproduction)
  { p: "RO", src: "QWEN8582", want: "deny", cmd: 'echo "$\\\n(touch PWNED)"' },
  { p: "RO", src: "QWEN8582", want: "allow", cmd: 'echo "a\\\nb"' },
  { p: "RO", src: "GEMINI", want: "deny", cmd: 'echo "${var1=aa\\140 env| ls -l\\140}${var1@P}"' },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "echo $(badCommand --danger)" },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "echo `badCommand --danger`" },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "diff <(ls) <(ls -a)" },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "echo $(cat secret) > output.txt" },
  { p: "RO", src: "GEMINI", want: "allow", cmd: "cat < input.txt" },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "ls 2> error.log" },
  { p: "RO", src: "GEMINI", want: "allow", cmd: "ls 2>/dev/null" },
  // issues show 16
  { p: "RO", src: "ISSUE16", want: "allow", cmd: "ls -la src 2>/dev/null" },
  // google-gemini/gemini-cli packages/core/src/utils/shell-utils.test.ts
  { p: "RO", src: "GEMINI", want: "deny", cmd: "echo hello > world" },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "echo hello >> world" },
  { p: "RO", src: "GEMINI", want: "allow", cmd: "cat <<EOF\nhello\nEOF" },
  // A here-string is bash, not POSIX sh: the line does not parse as /bin/sh runs it.
  { p: "RO", src: "GEMINI", want: "deny", cmd: 'grep "foo" <<< "foobar"' },
  { p: "RO", src: "GEMINI", want: "deny", cmd: 'echo "foo" > >(cat)' },
  { p: "RO", src: "GEMINI", want: "allow", cmd: 'echo "a > b"' },
  { p: "RO", src: "GEMINI", want: "deny", cmd: "exec 3<&0" },
  // https://github.com/princezuda/safestclaw/issues/59
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "env bash -c id" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "env PAGER=x git log" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "env LD_PRELOAD=/tmp/x.so ls" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "env -S 'rm -rf x' ls" },
  { p: "RO", src: "SAFECLAW59", want: "allow", cmd: "env ls -la" },
  { p: "RO", src: "SAFECLAW59", want: "allow", cmd: "timeout 5 ls" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "timeout 5 rm -rf x" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "nice -n 10 find . -delete" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "nohup sed -i s/a/b/ f" },
  { p: "RO", src: "SAFECLAW59", want: "allow", cmd: "stdbuf -oL grep foo f" },
  { p: "RO", src: "SAFECLAW59", want: "allow", cmd: "command -v ls" },
  { p: "RO", src: "SAFECLAW59", want: "deny", cmd: "command rm -rf x" },
  // https://github.com/intelligentcode-ai/claude-code-vm/issues/4
  { p: "RO", src: "XARGSVM4", want: "deny", cmd: "ls | xargs rm" },
  { p: "RO", src: "XARGSVM4", want: "allow", cmd: "ls | xargs grep foo" },
  { p: "RO", src: "XARGSVM4", want: "deny", cmd: "echo -delete | xargs find ." },
  { p: "RO", src: "XARGSVM4", want: "deny", cmd: "ls | xargs -I{} sh -c 'echo {}'" },
  { p: "RO", src: "XARGSVM4", want: "deny", cmd: "ls | xargs sed -i s/a/b/" },
  // https://github.com/QwenLM/qwen-code/issues/10192
  { p: "RO", src: "QWEN10192", want: "deny", cmd: "PATH=/tmp/evil:$PATH ls" },
  { p: "RO", src: "QWEN10192", want: "deny", cmd: "X=`touch${IFS}PWNED` ls" },
  { p: "RO", src: "QWEN10192", want: "deny", cmd: "IFS=, ls" },
  { p: "RO", src: "QWEN10192", want: "deny", cmd: "export PATH=/tmp; ls" },
  // https://github.com/QwenLM/qwen-code/issues/11764
  { p: "RO", src: "QWEN11764", want: "deny", cmd: "echo 'a\\' ; touch PWNED" },
  { p: "RO", src: "QWEN11764", want: "allow", cmd: "echo 'a\\' ; ls" },
  // https://github.com/anthropics/claude-code/issues/28784
  { p: "RO", src: "CC28784", want: "deny", cmd: "cd /tmp && python3 script.py" },
  // https://github.com/anthropics/claude-code/issues/15763
  { p: "RO", src: "CC15763", want: "deny", cmd: "rm -rf x && ln -s y x && ls -la x" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs; https://github.com/anthropics/claude-code/security/advisories/GHSA-xq4m-mc3c-vvg3
  { p: "RO", src: "TAR", want: "allow", cmd: "tar -tf a.tar" },
  { p: "RO", src: "TAR", want: "deny", cmd: "tar xzf a.tgz" },
  { p: "RO", src: "TAR", want: "deny", cmd: "tar --to-command='sh -c id' -xf a.tar" },
  { p: "RO", src: "TAR", want: "deny", cmd: "tar -I 'sh -c id' -xf a.tar" },
  {
    p: "RO",
    src: "TAR",
    want: "deny",
    cmd: "tar --checkpoint=1 --checkpoint-action=exec='sh -c id' -cf a.tar f",
  },
  { p: "RO", src: "TAR", want: "deny", cmd: "tar -czf out.tgz src" },
  { p: "RO", src: "TAR", want: "allow", cmd: "tar -xOf a.tar README" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO", src: "CODEX", want: "allow", cmd: "git branch" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "git branch --show-current" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git branch -d feature" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git branch new-branch" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git checkout status" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git -C . branch --show-current" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "git stash list" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git stash" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git stash pop" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git show --output=x HEAD" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git grep -O foo" },
  { p: "RO", src: "CODEX", want: "deny", cmd: "git grep --open-files-in-pager=vim foo" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "git grep -n foo" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "git blame src/a.ts" },
  { p: "RO", src: "CODEX", want: "allow", cmd: "git show HEAD:README.md" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  { p: "RO_OUT", src: "SPEC", want: "allow", cmd: "sort -o /ws/out/x f" },
  { p: "RO_OUT", src: "SPEC", want: "allow", cmd: "sort -o out/sorted.txt f" },
  { p: "RO_OUT", src: "SPEC", want: "deny", cmd: "sort -o /ws/src/x f" },
  { p: "RO_OUT", src: "SPEC", want: "allow", cmd: "sort f > out/sorted.txt" },
  // https://gitea.d0zingcat.dev/d0zingcat/claude-code/commit/5a4a8ebfb2f5a6dcabdf8b57037d7805fb20f655?files=ROADMAP.md
  { p: "RO_OUT", src: "CLAW495", want: "allow", cmd: "tee out/log.txt" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  { p: "RO_OUT", src: "SPEC", want: "deny", cmd: "find out -name '*.tmp' -delete" },
  // https://github.com/anthropics/claude-code/security/advisories/GHSA-mhg7-666j-cqg4
  { p: "RO_OUT", src: "GHSA_MHG7", want: "allow", cmd: "sed -i s/a/b/ out/x.txt" },
  { p: "RO_OUT", src: "GHSA_MHG7", want: "deny", cmd: "sed -i s/a/b/ src/x.ts" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  { p: "RO_OUT", src: "SPEC", want: "allow", cmd: "git log --output=out/log.txt" },
  { p: "RO_OUT", src: "SPEC", want: "deny", cmd: "git log --output=.git/config" },
  { p: "RO_OUT", src: "SPEC", want: "deny", cmd: "sort -o ../out/x f" },
  { p: "RO_OUT", src: "SPEC", want: "deny", cmd: "sort -o out/../src/x f" },
  // https://github.com/AntSeed/antseed/pull/660
  { p: "RO_OUT", src: "ANTSEED660", want: "allow", cmd: "awk '{print > \"out/a.txt\"}' f" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "RO_OUT", src: "CODEX", want: "allow", cmd: "find . -maxdepth 0 -fprint out/list.txt" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  // Quoted, out/* is a file named "*"; unquoted, a pattern the shell expands.
  { p: "RO_OUT", src: "SPEC", want: "allow", cmd: "sort -o 'out/*' f" },
  { p: "RO_OUT", src: "SPEC", want: "deny", cmd: "sort -o out/* f" },
  // https://github.com/princezuda/safestclaw/issues/67
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "python3 -c 'import os; os.system(\"id\")'" },
  { p: "BROAD", src: "SAFECLAW67", want: "allow", cmd: "python3 scripts/gen.py" },
  {
    p: "BROAD",
    src: "SAFECLAW67",
    want: "deny",
    cmd: 'node -e \'require("child_process").execSync("id")\'',
  },
  { p: "BROAD", src: "SAFECLAW67", want: "allow", cmd: "node build.js" },
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "perl -e 'system(\"id\")'" },
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "perl -pi -e 's/a/b/' f" },
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "ruby -e 'puts 1'" },
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "php -r 'system(\"id\");'" },
  // https://github.com/princezuda/safestclaw/issues/59
  { p: "BROAD", src: "SAFECLAW59", want: "deny", cmd: "bash -c 'ls'" },
  { p: "BROAD", src: "SAFECLAW59", want: "allow", cmd: "sh scripts/test.sh" },
  // https://github.com/gptme/gptme/pull/840
  { p: "BROAD", src: "GPTME840", want: "deny", cmd: "echo id | sh" },
  { p: "BROAD", src: "GPTME840", want: "deny", cmd: "cat /tmp/1.txt | base64 -d | bash" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  { p: "BROAD", src: "SPEC", want: "allow", cmd: "make test" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "make -f /tmp/evil.mk test" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "make --eval='x:;@id' x" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "make SHELL=/tmp/evil test" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "make -C ../other test" },
  { p: "BROAD", src: "SPEC", want: "allow", cmd: "npm test" },
  { p: "BROAD", src: "SPEC", want: "allow", cmd: "npm run lint" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "npm --script-shell=/tmp/evil test" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "npx cowsay hi" },
  { p: "BROAD", src: "SPEC", want: "deny", cmd: "npm exec -- evil-pkg" },
  // openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
  { p: "BROAD", src: "CODEX", want: "allow", cmd: "cargo test" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  {
    p: "BROAD",
    src: "SPEC",
    want: "deny",
    cmd: "cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"sh -c id\"' test",
  },
  // https://github.com/princezuda/safestclaw/issues/59
  { p: "BROAD", src: "SAFECLAW59", want: "deny", cmd: "sudo rm -rf /" },
  { p: "BROAD", src: "SAFECLAW59", want: "deny", cmd: "sudo -s" },
  // https://github.com/princezuda/safestclaw/issues/67
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "python3" },
  { p: "BROAD", src: "SAFECLAW67", want: "deny", cmd: "deno eval 'Deno.exit()'" },
  { p: "BROAD", src: "SAFECLAW67", want: "allow", cmd: "python3 -m pytest" },
  { p: "BROAD", src: "SAFECLAW67", want: "allow", cmd: "sudo make test" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  { p: "ASK", src: "SPEC", want: "ask", cmd: "sort -o out.txt f" },
  { p: "ASK", src: "SPEC", want: "ask", cmd: "git log --output=x" },
  // issues show 16
  { p: "ASK", src: "ISSUE16", want: "ask", cmd: "find . -delete" },
  // ../shared/spec/approver.md, "What an allow grants: effects"
  { p: "ASK", src: "SPEC", want: "allow", cmd: "git log -p -1" },
];

Deno.test(`public sources: ${CASES.length} command lines from public bypass reports`, async (t) => {
  assert(CASES.length >= 150, `only ${CASES.length} cases`);
  const approvers = Object.fromEntries(
    Object.entries(POLICIES).map((
      [name, policy],
    ) => [name, createApprover(policy, { workspace: { roots: ["/ws"] } })]),
  );
  for (const c of CASES) {
    await t.step(`${c.p} ${c.want}: ${JSON.stringify(c.cmd)} (${SOURCES[c.src]})`, async () => {
      const decision = await approvers[c.p]!.approve({ tool: "bash", input: { command: c.cmd } });
      assertEquals(decision.decision, c.want, JSON.stringify(decision));
    });
  }
});

Deno.test("public sources: harmless look-alikes make up a real share of the suite", () => {
  const allowed = CASES.filter((c) => c.want === "allow").length;
  const refused = CASES.length - allowed;
  assert(allowed >= 50, `only ${allowed} look-alikes`);
  assert(refused >= 100, `only ${refused} bypasses`);
});
