#!/usr/bin/env bash
# The official GitHub Action's steps (action.yml): `action_run.sh policy|run|verify`.
#
# Inputs come as INPUT_* variables that action.yml sets from its inputs (never spliced into
# this script's text), outputs go to $GITHUB_OUTPUT, a summary to $GITHUB_STEP_SUMMARY, and
# every file the run leaves to $RUNNER_TEMP/rousseau/artifact. The provider key is whatever
# ANTHROPIC_API_KEY / OPENAI_API_KEY the workflow set: this script never reads or prints it,
# and rousseau removes both from the environment of every program bash starts.
#
#   policy  rousseau --config POLICY policy test --strict
#   run     rousseau --config POLICY [flags] run --output json [--deadline ...] - < prompt
#           exit: rousseau's own (0, 1, 2, 3, 4 denials, 5 deadline, 130/143)
#   verify  rousseau audit verify on the run's audit log, and the log and its head copied out
set -uo pipefail

fail() {
  echo "::error::rousseau action: $1" >&2
  exit 2
}

out_dir="${RUNNER_TEMP:?RUNNER_TEMP is not set}/rousseau"
artifact="$out_dir/artifact"
# The run's sessions and audit log, outside the workspace (bash's sandbox hides it anyway);
# the environment beats the policy file's state.dir, so the log is always found here.
export ROUSSEAU_STATE_DIR="${ROUSSEAU_STATE_DIR:-$out_dir/state}"
mkdir -p "$artifact" "$ROUSSEAU_STATE_DIR"

policy="${INPUT_POLICY:-}"
[ -n "$policy" ] || fail "the policy input is required (a rousseau config file in the repository)"
[ -f "$policy" ] || fail "policy file $policy does not exist"

output() {
  printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT:-/dev/null}"
}

summary() {
  printf '%s\n' "$@" >>"${GITHUB_STEP_SUMMARY:-/dev/null}"
}

# A field of the result object, or "" when the run printed none.
field() {
  node -e '
    try {
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const v = process.argv[2].split(".").reduce((o, k) => (o == null ? o : o[k]), r);
      process.stdout.write(v == null ? "" : typeof v === "object" ? String(v.length ?? "") : String(v));
    } catch {}
  ' "$artifact/result.json" "$1"
}

step_policy() {
  rousseau --config "$policy" policy test --strict
}

step_run() {
  local args=(--config "$policy")
  [ -z "${INPUT_PROVIDER:-}" ] || args+=(--provider "$INPUT_PROVIDER")
  [ -z "${INPUT_MODEL:-}" ] || args+=(--model "$INPUT_MODEL")
  [ -z "${INPUT_BASE_URL:-}" ] || args+=(--base-url "$INPUT_BASE_URL")
  local line
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    [ -z "$line" ] || args+=(--allow "$line")
  done <<<"${INPUT_ALLOW:-}"
  args+=(run --output json)
  [ -z "${INPUT_DEADLINE:-}" ] || args+=(--deadline "$INPUT_DEADLINE")
  [ -z "${INPUT_MAX_ITERATIONS:-}" ] || args+=(--max-iterations "$INPUT_MAX_ITERATIONS")
  case "${INPUT_DENIALS_OK:-false}" in
  true) args+=(--denials-ok) ;;
  false | "") ;;
  *) fail "denials-ok must be true or false, got ${INPUT_DENIALS_OK}" ;;
  esac
  args+=(-)

  local prompt="$out_dir/prompt.txt"
  if [ -n "${INPUT_PROMPT:-}" ] && [ -n "${INPUT_PROMPT_FILE:-}" ]; then
    fail "give prompt or prompt-file, not both"
  elif [ -n "${INPUT_PROMPT_FILE:-}" ]; then
    [ -f "$INPUT_PROMPT_FILE" ] || fail "prompt file $INPUT_PROMPT_FILE does not exist"
    prompt="$INPUT_PROMPT_FILE"
  elif [ -n "${INPUT_PROMPT:-}" ]; then
    printf '%s\n' "$INPUT_PROMPT" >"$prompt"
  else
    fail "give the prompt or prompt-file input"
  fi

  rousseau "${args[@]}" <"$prompt" >"$artifact/result.json" 2>"$artifact/stderr.log"
  local code=$?
  cat "$artifact/stderr.log" >&2

  local session
  session=$(field session_id)
  output result "$artifact/result.json"
  output exit-code "$code"
  output session-id "$session"
  output artifact-dir "$artifact"
  summary "### rousseau run" "" \
    "| exit code | subtype | iterations | denials | session |" \
    "| --- | --- | --- | --- | --- |" \
    "| $code | $(field subtype) | $(field iterations) | $(field denials) | $session |" ""
  return "$code"
}

step_verify() {
  local log="$ROUSSEAU_STATE_DIR/audit.jsonl"
  [ ! -e "$log" ] || cp "$log" "$artifact/audit.jsonl"
  [ ! -e "$log.head" ] || cp "$log.head" "$artifact/audit.jsonl.head"
  # No FILE: the state directory's own log, so a log deleted beside its head is caught, and
  # a run that decided no tool call (no log, no head) is intact with 0 lines.
  rousseau --config "$policy" audit verify --json >"$artifact/audit-verify.json"
  local code=$?
  cat "$artifact/audit-verify.json"
  local head
  head=$(node -e '
    try {
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      process.stdout.write(r.intact ? String(r.head ?? "") : "");
    } catch {}
  ' "$artifact/audit-verify.json")
  output audit-head "$head"
  if [ "$code" -eq 0 ]; then
    summary "audit: intact, head \`$head\`"
  else
    summary "audit: **verify failed** (exit $code), see audit-verify.json"
  fi
  return "$code"
}

case "${1:-}" in
policy) step_policy ;;
run) step_run ;;
verify) step_verify ;;
*) fail "usage: action_run.sh policy|run|verify" ;;
esac
