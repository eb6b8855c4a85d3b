#!/usr/bin/env bash
# Step "Install tack" of action.yml: finds or builds the tack binary and
# sets the step output bin to its absolute path.
#
# INPUT_TACK_PATH set: that binary. Otherwise tack is built from the action's
# own checkout (GITHUB_ACTION_PATH is <repository>/action), so the binary is
# always the version of the action the workflow pinned.
set -euo pipefail

fail() {
  echo "::error title=tack action::$*"
  exit 1
}

if [ -n "${INPUT_TACK_PATH:-}" ]; then
  [ -f "$INPUT_TACK_PATH" ] && [ -x "$INPUT_TACK_PATH" ] ||
    fail "tack_path: $INPUT_TACK_PATH is not an executable file"
  bin=$(realpath "$INPUT_TACK_PATH")
else
  root=$(cd "$GITHUB_ACTION_PATH/.." && pwd)
  [ -f "$root/go.mod" ] && [ -d "$root/cmd/tack" ] ||
    fail "cannot build tack: $root is not tack's source tree (set tack_path to a tack binary)"
  command -v go >/dev/null ||
    fail "building tack needs Go: add actions/setup-go before this step, or set tack_path to a tack binary"
  bin="$RUNNER_TEMP/tack-bin/tack"
  echo "building tack from $root"
  (cd "$root" && CGO_ENABLED=0 go build -o "$bin" ./cmd/tack) || fail "go build of tack in $root failed (see the log above)"
fi

version=$("$bin" --version) || fail "$bin --version failed: it is not a working tack binary"
echo "using $bin ($version)"
echo "bin=$bin" >>"$GITHUB_OUTPUT"
dirname "$bin" >>"$GITHUB_PATH"
