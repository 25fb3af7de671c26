/**
 * Parser-confusion bypasses reported against other agents' shell permission checks (Claude
 * Code, gemini-cli, Codex, qwen-code, opencode), each with its source, under a read-only allow
 * list: the approver must not allow any of them. Harmless look-alikes must stay allowed, so
 * the suite cannot pass by denying everything. The first test runs the issue's own case
 * through the real `tool bash`, to show the check and the shell agree on what runs.
 */

import { join } from "node:path";
import { createApprover, type PolicyConfig } from "../../approver/mod.ts";
import { runCli } from "../_helpers/cli.ts";
import { assertEquals } from "../_helpers/assert.ts";
import { tmpWorkspace } from "../_helpers/tmp_workspace.ts";
import { BACKGROUND, runWithStubs, writeStubs } from "../_helpers/sh_stubs.ts";

const ALLOW = "^(ls|cat|echo|grep|git status)( |$)";

const POLICY: PolicyConfig = {
  mode: "pattern",
  allow: [{ tool: "bash", command: ALLOW }],
  default: "deny",
};

function exists(path: string): Promise<boolean> {
  return Deno.stat(path).then(() => true, () => false);
}

Deno.test('tool bash: echo "$\\⏎(touch PWNED)" is blocked by an echo allow list, and sh does run touch', async () => {
  await using ws = await tmpWorkspace();
  const config = join(ws.outside, "policy.yaml");
  await Deno.writeTextFile(
    config,
    `agent:\n  approver:\n    mode: pattern\n    allow:\n      - tool: bash\n        command: "${ALLOW}"\n`,
  );
  // issue 16: a backslash-newline inside double quotes joins `$` and `(`.
  const input = JSON.stringify({ command: 'echo "$\\\n(touch PWNED)"' });
  const blocked = await runCli(["--workspace", ws.root, "--config", config, "tool", "bash", input]);
  assertEquals(blocked, {
    code: 1,
    stdout: "",
    stderr: "tool call blocked: denied by pattern policy\n",
  });
  assertEquals(await exists(ws.path("PWNED")), false);
  // The same policy allows the harmless twin, and the shell prints what the parser saw.
  const twin = JSON.stringify({ command: 'echo "a\\\nb" c\\\nd' });
  const allowed = await runCli(["--workspace", ws.root, "--config", config, "tool", "bash", twin]);
  assertEquals(allowed, { code: 0, stdout: "ab cd\n", stderr: "" });
  // Without a policy the line runs: sh does read a command substitution there.
  const ran = await runCli([
    "--workspace",
    ws.root,
    "--approver",
    "allow_all",
    "tool",
    "bash",
    input,
  ]);
  assertEquals(ran.code, 0, ran.stderr);
  assertEquals(await exists(ws.path("PWNED")), true);
});

const CC = "https://github.com/anthropics/claude-code/issues";
const GEMINI = "google-gemini/gemini-cli packages/core/src/utils/shell-utils.test.ts";
const CODEX = "openai/codex codex-rs/core/src/bash.rs (tests)";
const QWEN = "https://github.com/QwenLM/qwen-code";
const OPENCODE = "https://github.com/anomalyco/opencode/issues";

/** [command line, source]: each must not be allowed under `ALLOW`. */
const ATTACKS: ReadonlyArray<readonly [string, string]> = [
  // Command chaining past a prefix rule, `Bash(echo *)`.
  ["echo test && touch PWNED", `${CC}/4956`],
  ["echo test; touch PWNED", `${CC}/4956`],
  ["echo test || touch PWNED", `${CC}/4956`],
  ["echo test | sh", `${CC}/4956`],
  ["echo test & touch PWNED", `${CC}/4956`],
  ["echo test\ntouch PWNED", `${CC}/4956`],
  ["echo $(touch PWNED)", `${CC}/4956`],
  ["echo `touch PWNED`", `${CC}/4956`],
  ["echo test > ~/.bashrc", `${CC}/4956`],
  ["echo '[core] pager = sh' >> .git/config", `${CC}/4956`],
  ["ls;touch PWNED", `${CC}/4956`],
  ["ls&&touch PWNED", `${CC}/4956`],
  ["ls|touch PWNED", `${CC}/4956`],
  ["ls\n\ntouch PWNED", `${CC}/4956`],
  // Compound lines in default mode.
  ["rm -rf x && ls | cat ; echo done", `${CC}/58424`],
  // Shell wrappers around a write.
  ["bash -c 'echo x >> .claude/settings.json'", `${CC}/43085`],
  ["sh -c 'ls; touch PWNED'", `${CC}/43085`],
  // Backslash-newline continuations (multi-line commands).
  ['echo "$\\\n(touch PWNED)"', "issue 16 (this repository); dash 0.5.12 runs it"],
  ["echo $\\\n(touch PWNED)", `${CC}/16030`],
  ["echo x; to\\\nuch PWNED", `${CC}/16030`],
  ["echo x &\\\n& touch PWNED", `${CC}/16030`],
  ["echo x \\\n&& touch PWNED", `${CC}/25441`],
  ["echo x |\\\n touch PWNED", `${CC}/25441`],
  ["cat <<E\n$\\\n(touch PWNED)\nE", `${CC}/25441`],
  ["git status && \\\ngit commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", `${CC}/25441`],
  ['echo "`\\\ntouch PWNED`"', `${CC}/16030`],
  // Carriage returns: shell-quote splits on \r, sh does not.
  ["echo ok\r\ntouch PWNED", "https://claude-wiki.com/bash-security.html (CR differential)"],
  ["ls\r; touch PWNED", "https://claude-wiki.com/bash-security.html (CR differential)"],
  ["cat\rtouch", "https://claude-wiki.com/bash-security.html (CR differential)"],
  // Past a sub-command cap: 50 no-ops, then the payload.
  [
    "echo 1;".repeat(60) + "touch PWNED",
    "https://claude-wiki.com/bash-security.html (50-subcommand cap, Adversa AI)",
  ],
  // ANSI-C quoting and $IFS.
  ["echo$'\\x20'-rf$'\\x20'/", "https://finisky.github.io/en/claude-code-bash-security"],
  [
    "cat${IFS}/etc/passwd",
    "claude-code bashSecurity.ts validateIFSInjection (how-claude-code-works#3)",
  ],
  [
    "cat${IFS:0:1}${HOME}/.claude/settings.json",
    "claude-code bashSecurity.ts validateIFSInjection",
  ],
  ["cat$IFS/etc/shadow", "https://github.com/HackTricks-wiki/hacktricks/pull/644"],
  ["X=$'cat\\x20/etc/passwd'&&$X", "HackTricks bypass-bash-restrictions"],
  ["{cat,/etc/passwd}", "HackTricks bypass-bash-restrictions (brace expansion)"],
  ["/???/c?t /etc/passwd", "HackTricks bypass-bash-restrictions (globs)"],
  ["$(echo Y2F0Cg== | base64 -d) f", "HackTricks bypass-bash-restrictions"],
  ["who$@ami", "HackTricks bypass-bash-restrictions"],
  ["ls $'\\'' ; touch PWNED # '", "HackTricks bypass-bash-restrictions ($'...' sh/bash split)"],
  // Substitutions gemini-cli's tests must see.
  ["echo $(badCommand --danger)", GEMINI],
  ["echo `badCommand --danger`", GEMINI],
  ["cat <(touch PWNED)", `${GEMINI} (process substitution)`],
  ["diff <(ls) <(ls -a)", `${GEMINI} (process substitution)`],
  ['echo "${var1=aa\\140 env| ls -l\\140}${var1@P}"', `${GEMINI} (prompt transformation)`],
  ["echo ${foo@P}", `${GEMINI} (prompt transformation)`],
  ["echo $(cat secret) > output.txt", GEMINI],
  ['echo "foo" > >(cat)', GEMINI],
  ['sh -c "ls -l"', `${GEMINI} (stripShellWrapper)`],
  ['  bash  -c  "ls -l"  ', `${GEMINI} (stripShellWrapper)`],
  ["zsh -c ls -l", `${GEMINI} (stripShellWrapper)`],
  ['cat <<< "hello"', `${GEMINI} (here-string: bash only)`],
  ["exec 3<&0", GEMINI],
  // Codex's word-only command sequence rejects these.
  ["ls || (pwd && echo hi)", CODEX],
  ["ls > out.txt", CODEX],
  ["echo $(pwd)", CODEX],
  ["echo `pwd`", CODEX],
  ["echo $HOME", CODEX],
  ['echo "hi $USER"', CODEX],
  ["FOO=bar ls", CODEX],
  ["ls &&", CODEX],
  ['bash -lc "ls && rm -rf x"', "openai/codex codex-rs/core/src/is_safe_command.rs (bash -lc)"],
  // Command substitution hidden in an assignment prefix.
  ["X=`touch${IFS}PWNED` ls", `${QWEN}/issues/10192`],
  ["X=$(touch PWNED) git status", `${QWEN}/issues/10192`],
  ['python3 -c "print($(echo hello))"', `${QWEN}/issues/4093`],
  ['echo hello && python3 -c "print(1)"', `${QWEN}/issues/4093`],
  ['cat "$(touch PWNED)"', `${QWEN}/pull/4386`],
  // Variables and separators.
  ['f=.env && cat "$f"', `${OPENCODE}/26042`],
  ["cat -- $(touch PWNED)", `${OPENCODE}/39931`],
  ["git status -- ; touch PWNED", `${OPENCODE}/39931`],
  // Allow lists that check names only.
  ["echo $(touch PWNED)", "https://github.com/MladenSU/cli-mcp-server/issues/17"],
  ["ls; `touch PWNED`", "https://github.com/MladenSU/cli-mcp-server/issues/19"],
  ["$(printf touch) PWNED", "https://github.com/tetsuo-ai/AgenC/issues/1334"],
  ["$(printf python3) --version", "https://github.com/tetsuo-ai/AgenC/issues/1334"],
  // Escape classes of a denylist: ANSI-C, braces, assignments, zero-width characters.
  ["$'touch' PWNED", "https://github.com/NousResearch/hermes-agent/pull/47936"],
  ["$'\\x74ouch' PWNED", "https://github.com/NousResearch/hermes-agent/pull/47936"],
  ["{touch,PWNED}", "https://github.com/NousResearch/hermes-agent/pull/47936"],
  ["X=1 touch PWNED", "https://github.com/NousResearch/hermes-agent/pull/47936"],
  ["echo\u200b x", "https://github.com/NousResearch/hermes-agent/pull/47936 (zero-width)"],
  ["ls\u00a0-la", "https://github.com/NousResearch/hermes-agent/pull/47936 (look-alike space)"],
  // Newlines and ANSI-C quotes in a quote-stripping check.
  ["echo 123\ntouch PWNED", "https://github.com/dyad-sh/dyad/pull/2305"],
  ["echo $'123\\ntouch PWNED'", "https://github.com/dyad-sh/dyad/pull/2305"],
  // Substitution guard: $(), backticks, ${ }, bare (.
  ['echo "$(touch PWNED)"', "https://github.com/agentforce314/clawcodex/pull/626"],
  ["echo ${x:-$(touch PWNED)}", "https://github.com/agentforce314/clawcodex/pull/626"],
  ["echo \\$(touch PWNED)", "https://github.com/agentforce314/clawcodex/pull/626 (bare paren)"],
  ["timeout 5 touch PWNED", "https://github.com/agentforce314/clawcodex/pull/626"],
  ["\\touch PWNED", "https://github.com/agentforce314/clawcodex/pull/626"],
  // Classifier escapes.
  ["find / | xargs -I% rm -f %", "https://github.com/danielmiessler/LifeOS/issues/732"],
  ["$(rm -rf /)", "https://github.com/danielmiessler/LifeOS/issues/732"],
  ["`rm -rf /`", "https://github.com/danielmiessler/LifeOS/issues/732"],
  [
    "echo 'rm -rf /' > script.sh && chmod +x script.sh && ./script.sh",
    "https://github.com/danielmiessler/LifeOS/issues/732",
  ],
  // A heredoc delimiter defined as a function, and a fake heredoc inside quotes.
  ["EOF(){ :; }\necho '<<EOF'\ntouch PWNED\nEOF", "https://github.com/crewAIInc/crewAI/pull/6878"],
  ["cat <<EOF\n$(touch PWNED)\nEOF", "https://github.com/crewAIInc/crewAI/pull/6878"],
  // A substring in a comment.
  ["touch PWNED # echo", "https://github.com/yuting0624/antigravity-for-claude-code/issues/29"],
  // Escaped quotes in a naive splitter.
  ['echo \\"; touch PWNED; echo \\"', "https://github.com/Gitlawb/openclaude/pull/787"],
  ["cat <(touch PWNED) >(touch PWNED2)", "https://github.com/Gitlawb/openclaude/pull/787"],
  // Functions and aliases shadowing an allowed program (issue 16: a fork bomb).
  ["ls() { ls | ls & }; ls", "issue 16 (this repository)"],
  ["echo() { touch PWNED; }; echo hi", "issue 16 (this repository)"],
  ["alias ls='touch PWNED'\nls", "issue 16 (this repository)"],
  ["cat() touch PWNED; cat f", "issue 16 (this repository)"],
  // Constructs bash reads differently.
  ["ls $[1+$(touch PWNED)]", "spec approver.md ($[ ])"],
  ["ls $((a[$(touch PWNED)]))", "spec approver.md (arithmetic subscripts)"],
  ["ls ${!ref}", "spec approver.md (${!ref})"],
  ["((x=$(touch PWNED)))", "spec approver.md (bash arithmetic command)"],
  ["[[ -f $(touch PWNED) ]]", "spec approver.md (bash [[ ]])"],
  ["function ls { touch PWNED; }; ls", "spec approver.md (bash function keyword)"],
  ["for PATH in /tmp; do ls; done", "spec approver.md (assigning PATH)"],
  ["ls\u0000; touch PWNED", "spec approver.md (NUL)"],
  ["cat <<E\n`touch PWNED`\nE", "spec approver.md (here-document bodies)"],
  ["cat <<-E\n\t$(touch PWNED)\n\tE", "spec approver.md (here-document bodies)"],
];

/** [command line, source]: harmless look-alikes that must stay allowed. */
const HARMLESS: ReadonlyArray<readonly [string, string]> = [
  ["ls -la src 2>/dev/null", "issue 16 (this repository)"],
  ['echo "a && rm -rf x"', "issue 16 (this repository)"],
  ["git status", "issue 16 (this repository)"],
  ["git status --short", `${OPENCODE}/39931`],
  ["git status --", `${OPENCODE}/39931`],
  ["echo 'a; touch PWNED'", `${CC}/4956`],
  ['echo "a | sh"', `${CC}/4956`],
  ["echo '$(touch PWNED)'", `${CC}/4956`],
  ['echo "\\$(touch PWNED)"', "https://github.com/agentforce314/clawcodex/pull/626"],
  ["echo \\$\\(touch PWNED\\)", "https://github.com/agentforce314/clawcodex/pull/626"],
  ['echo "$\\(x)"', "issue 16 (a backslash that is not a continuation)"],
  ['grep -r "foo|bar" src', GEMINI],
  ["grep -E 'a(b|c)' f", GEMINI],
  ['echo "a > b"', `${GEMINI} (hasRedirection: quoted)`],
  ["cat README.md | grep x", CODEX],
  ["ls && echo done", CODEX],
  ["echo hi & echo bye", CODEX],
  ["(ls; cat f)", CODEX],
  ["{ ls; echo x; }", CODEX],
  ["ls\ngit status", `${CC}/16303`],
  ["ls \\\n  -la \\\n  src", `${CC}/16030`],
  ['echo "a\\\nb"', `${CC}/16030`],
  ["cat <<'EOF'\n$(touch PWNED)\nEOF", `${CC}/25441`],
  ["cat <<EOF\nhello\nEOF", `${GEMINI} (here-document)`],
  ["c\\at f", "HackTricks bypass-bash-restrictions (the same cat)"],
  ["c''at f", "HackTricks bypass-bash-restrictions (the same cat)"],
  ["ls # ; touch PWNED", "https://github.com/yuting0624/antigravity-for-claude-code/issues/29"],
  ['echo "a # b"', "https://github.com/yuting0624/antigravity-for-claude-code/issues/29"],
  ['echo \\\\"; touch PWNED; echo \\\\"', "https://github.com/Gitlawb/openclaude/pull/787"],
  ["echo 'it'\\''s'", "https://github.com/Gitlawb/openclaude/pull/787"],
  ['echo "quote \\" inside"', "https://github.com/Gitlawb/openclaude/pull/787"],
  ["ls *.ts", "https://github.com/NousResearch/hermes-agent/pull/47936 (globs are fine)"],
  ["ls -la | grep -v '^d'", CODEX],
  ["ls > /dev/null", GEMINI],
  ["ls 2>&1 | cat", GEMINI],
  ["cat f || echo missing", CODEX],
  ["if ls; then echo y; fi", CODEX],
  ["for f in a b; do echo x; done", CODEX],
  ["case x in x) echo y;; esac", CODEX],
  ["git status -s -b", "issue 16 (this repository)"],
  // dash joins `E\` and the next line, so `touch PWNED` is here-document text.
  ["cat <<E\nx\nE\\\ntouch PWNED\nE", "dash 0.5.12: a delimiter line ending in \\ continues"],
  ["echo a,b {} {x}", "https://github.com/NousResearch/hermes-agent/pull/47936 (not braces)"],
];

Deno.test(`parser bypasses: ${ATTACKS.length} public cases are not allowed by ${ALLOW}`, async (t) => {
  const approver = createApprover(POLICY);
  for (const [command, source] of ATTACKS) {
    await t.step(`${JSON.stringify(command).slice(0, 80)} (${source})`, async () => {
      const decision = await approver.approve({ tool: "bash", input: { command } });
      assertEquals(decision.decision, "deny", JSON.stringify(decision));
    });
  }
});

Deno.test(`parser look-alikes: ${HARMLESS.length} harmless lines stay allowed`, async (t) => {
  const approver = createApprover(POLICY);
  for (const [command, source] of HARMLESS) {
    await t.step(`${JSON.stringify(command)} (${source})`, async () => {
      const decision = await approver.approve({ tool: "bash", input: { command } });
      assertEquals(decision.decision, "allow", JSON.stringify(decision));
    });
  }
});

Deno.test("parser look-alikes: sh runs only allowed programs for each of them", async () => {
  // Every program sh could run is a stub that records its name; none may be outside the list.
  const dir = await Deno.makeTempDir({ prefix: "rousseau-lookalike-" });
  try {
    const bin = await writeStubs(
      dir,
      ["ls", "cat", "grep", "git", "touch", "sh", "f"],
      `printf '%s\\n' "\${0##*/}" >>"$STUB_LOG"`,
    );
    const log = `${dir}/log`;
    for (const [command] of HARMLESS) {
      if (BACKGROUND.test(command)) continue;
      await runWithStubs(command, { bin, log, cwd: dir });
    }
    const ran = (await Deno.readTextFile(log)).trim().split("\n");
    assertEquals(ran.filter((name) => !["ls", "cat", "grep", "git"].includes(name)), []);
    assertEquals(ran.length > 20, true, ran.join(","));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
