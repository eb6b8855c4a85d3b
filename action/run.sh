#!/usr/bin/env bash
# Step "Run tack" of action.yml: runs tack in print mode on the repository
# with stream-json output, keeps every message as the execution log, sets the
# step outputs (conclusion, execution_file, execution_dir, session_id) and
# writes the step summary (summary.jq). The step fails when the run did.
#
# Reads TACK_BIN (from the install step) and the action's inputs as INPUT_*.
set -euo pipefail

fail() {
  echo "::error title=tack action::$*"
  echo "conclusion=failure" >>"$GITHUB_OUTPUT"
  exit 1
}

[ -n "${TACK_BIN:-}" ] && [ -x "$TACK_BIN" ] || fail "no tack binary (TACK_BIN=${TACK_BIN:-}): the install step did not run"
command -v jq >/dev/null || fail "jq is needed to write the execution log and the summary"

dir=$(mktemp -d "${RUNNER_TEMP:?RUNNER_TEMP is not set}/tack-execution-XXXXXX")
prompt="$dir/prompt.txt"
if [ -n "${INPUT_PROMPT:-}" ] && [ -n "${INPUT_PROMPT_FILE:-}" ]; then
  fail "give prompt or prompt_file, not both"
elif [ -n "${INPUT_PROMPT:-}" ]; then
  printf '%s' "$INPUT_PROMPT" >"$prompt"
elif [ -n "${INPUT_PROMPT_FILE:-}" ]; then
  cp -- "$INPUT_PROMPT_FILE" "$prompt" 2>/dev/null || fail "prompt_file: cannot read $INPUT_PROMPT_FILE"
else
  fail "no prompt: set the prompt or prompt_file input"
fi

case "${INPUT_TRUST_WORKSPACE:-false}" in
  true) "$TACK_BIN" trust "${GITHUB_WORKSPACE:?GITHUB_WORKSPACE is not set}" >/dev/null ||
    fail "trust_workspace: tack trust $GITHUB_WORKSPACE failed" ;;
  false | "") ;;
  *) fail "trust_workspace: $INPUT_TRUST_WORKSPACE is neither true nor false" ;;
esac

args=(-p --output-format stream-json --verbose)
[ -n "${INPUT_SETTINGS:-}" ] && args+=(--settings "$INPUT_SETTINGS")
[ -n "${INPUT_MODEL:-}" ] && args+=(--model "$INPUT_MODEL")
# One rule list per flag: the input's lines become commas.
[ -n "${INPUT_ALLOWED_TOOLS:-}" ] && args+=(--allowedTools "${INPUT_ALLOWED_TOOLS//$'\n'/,}")
[ -n "${INPUT_DISALLOWED_TOOLS:-}" ] && args+=(--disallowedTools "${INPUT_DISALLOWED_TOOLS//$'\n'/,}")
if [ -n "${INPUT_MAX_TURNS:-}" ]; then
  [[ "$INPUT_MAX_TURNS" =~ ^[1-9][0-9]*$ ]] || fail "max_turns: $INPUT_MAX_TURNS is not a positive integer"
  args+=(--max-turns "$INPUT_MAX_TURNS")
fi
if [ -n "${INPUT_TACK_ARGS:-}" ]; then
  # xargs splits with shell quoting but expands nothing. (No mapfile or
  # xargs -r: macOS runners have bash 3.2 and BSD xargs.)
  printf '%s' "$INPUT_TACK_ARGS" | xargs printf '%s\0' >"$dir/args" ||
    fail "tack_args: cannot split $INPUT_TACK_ARGS (unbalanced quotes?)"
  while IFS= read -r -d '' word; do
    if [ -n "$word" ]; then args+=("$word"); fi
  done <"$dir/args"
  rm -f -- "$dir/args"
fi
[ -n "${INPUT_ANTHROPIC_API_KEY:-}" ] && export ANTHROPIC_API_KEY="$INPUT_ANTHROPIC_API_KEY"

stream="$dir/stream.jsonl"
status=0
"$TACK_BIN" "${args[@]}" <"$prompt" >"$stream" || status=$?
rm -f -- "$prompt"

execution="$dir/execution-output.json"
jq -s . "$stream" >"$execution" || fail "tack printed a line that is not JSON (see $stream)"
{
  echo "execution_dir=$dir"
  echo "execution_file=$execution"
  echo "session_id=$(jq -r 'map(select(.type == "system" and .subtype == "init"))[0].session_id // empty' "$execution")"
} >>"$GITHUB_OUTPUT"

result=$(jq -c 'map(select(.type == "result")) | last // {}' "$execution")
if [ "$status" -eq 0 ] && jq -e '.subtype == "success" and .is_error == false' <<<"$result" >/dev/null; then
  conclusion=success
else
  conclusion=failure
fi
echo "conclusion=$conclusion" >>"$GITHUB_OUTPUT"
jq -r --arg conclusion "$conclusion" --argjson status "$status" \
  -f "$(dirname "$0")/summary.jq" "$execution" >>"$GITHUB_STEP_SUMMARY"
jq -r '"tack: \(.subtype // "no result") after \(.num_turns // 0) turns, $\(.total_cost_usd // 0)"' <<<"$result"

if [ "$conclusion" != success ]; then
  echo "::error title=tack action::tack's run failed (exit status $status, result $(jq -r '.subtype // "missing"' <<<"$result")); the log is in $execution"
  exit 1
fi
