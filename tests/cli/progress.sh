#!/usr/bin/env bash
# The progress line (README "Progress"): on stderr when it is a terminal, erased at the end;
# nothing in pipes, with CI set, or with --quiet. ATTN_PROGRESS_DELAY_MS=0 draws it at once,
# so that a small run shows it too. The terminal is util-linux's `script`.
set -uo pipefail
attn=${1:?usage: progress.sh path/to/attn}
source "$(dirname "$0")/common.sh"

args=(trace --batch 2 --seq 64 --d-model 64 --heads 4 --mask causal --format json)

# in_terminal ENV... -- ARGS...: attn ARGS with stderr on a pseudo-terminal (stdout to
# $work/json); what the terminal showed goes to $work/tty.
in_terminal() {
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done
  shift
  script -qefc "env -u CI ${env[*]} $(printf '%q ' "$attn" "$@") >$work/json" /dev/null >"$work/tty" 2>&1
}

if command -v script >/dev/null; then
  in_terminal ATTN_PROGRESS_DELAY_MS=0 -- "${args[@]}"
  check "terminal: the line names the stage and the share of the work done" grep -aq 'attn trace: [a-z]*, [0-9]*% of the work done' "$work/tty"
  # the last thing on the terminal is the line blanked out: \r, spaces, \r
  check "terminal: the line is erased at the end" bash -c "tail -c 2 '$work/tty' | od -c | grep -q '\\\\r'"
  check "terminal: nothing is left but blanks after the last \\r" \
    bash -c "test -z \"\$(tr '\\r' '\\n' <'$work/tty' | tail -n 1 | tr -d ' \\n')\""
  check "terminal: stdout is the whole JSON document" jq -e '.stages.softmax' "$work/json"

  in_terminal ATTN_PROGRESS_DELAY_MS=0 -- "${args[@]}" --quiet
  check "terminal with --quiet: no line" test ! -s "$work/tty"
  in_terminal ATTN_PROGRESS_DELAY_MS=0 CI=true -- "${args[@]}"
  check "terminal in CI: no line" test ! -s "$work/tty"
  in_terminal -- "${args[@]}"
  check "terminal, a run under a second: no line" test ! -s "$work/tty"
  in_terminal ATTN_PROGRESS_DELAY_MS=0 -- "${args[@]/json/npz}" --out "$work/t.npz"
  check "terminal, npz to --out: a line too" grep -aq 'attn trace: ' "$work/tty"
else
  echo "skip: no script(1) for a pseudo-terminal"
fi

# a run of 10 s or more says so before it starts (the estimate measures this machine's speed);
# --quiet does not. Every row of [1,1,300000,300000] to npz, stopped after 2 s: the planes
# are computed in blocks of rows, so it holds little.
long=(--seq 300000 --d-model 8 --heads 1 --stage softmax --format npz)
"$attn" trace "${long[@]}" >/dev/null 2>"$work/err" &
pid=$!
sleep 2; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
check "a long run: the estimate up front" grep -q '^attn trace: this run computes for about [0-9]* s on this machine, most of it in [a-z]*$' "$work/err"
"$attn" trace "${long[@]}" --quiet >/dev/null 2>"$work/err" &
pid=$!
sleep 2; kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
check "a long run with --quiet: no estimate" test ! -s "$work/err"

# stderr a file or a pipe: never a line
ATTN_PROGRESS_DELAY_MS=0 "$attn" "${args[@]}" >"$work/out" 2>"$work/err"
check "stderr to a file: nothing" test ! -s "$work/err"
check "stderr to a pipe: nothing" test -z "$(ATTN_PROGRESS_DELAY_MS=0 "$attn" "${args[@]}" 2>&1 >/dev/null | cat)"

finish
