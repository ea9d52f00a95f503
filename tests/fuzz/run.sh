#!/usr/bin/env bash
# Runs the libFuzzer harnesses, each for SECONDS, on a copy of its seed corpus.
#   tests/fuzz/run.sh SECONDS [HARNESS...]     (json npy npz params flags replay_json replay_npz
#                                               exercise safetensors tokens; default: all)
# Env: ATTN_FUZZ_BUILD  the ATTN_FUZZ build folder (default build-san; configured and built
#                       when missing: CC=clang CXX=clang++ cmake -DATTN_FUZZ=ON, as README)
#      ATTN_FUZZ_WORK   where corpora grow and crashes land (default: a new temp folder)
#      ATTN_FUZZ_JOBS   harnesses run at once (default 1)
#      ATTN_FUZZ_MAX_LEN   -max_len (default 65536: inputs beyond libFuzzer's 4096 default, and 16 KB)
#      ATTN_FUZZ_KEEP_GOING=1  fork mode: keep fuzzing after a crash (long runs), else stop at the first
# Prints one line per harness: executions, seconds, crashes; exits 1 if any harness crashed.
# Crash inputs are left in $ATTN_FUZZ_WORK/<harness>/crashes/ (docs/fuzzing.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:?usage: tests/fuzz/run.sh SECONDS [json npy npz params flags replay_json replay_npz exercise safetensors tokens]}"
shift
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(json npy npz params flags replay_json replay_npz exercise safetensors tokens)
build="${ATTN_FUZZ_BUILD:-$root/build-san}"
work="${ATTN_FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/attn-fuzz.XXXXXX")}"
mkdir -p "$work"
jobs="${ATTN_FUZZ_JOBS:-1}"
max_len="${ATTN_FUZZ_MAX_LEN:-65536}"

if [ ! -x "$build/tests/fuzz/fuzz_json" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DATTN_FUZZ=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE=-O1 >/dev/null
fi
cmake --build "$build" -j2 --target fuzz >/dev/null

run_one() {
  local h="$1" dir="$work/$1"
  mkdir -p "$dir/corpus" "$dir/crashes"
  local args=(-max_total_time="$seconds" -max_len="$max_len" -timeout=30 -print_final_stats=1
              -artifact_prefix="$dir/crashes/")
  [ "$h" = flags ] && args+=(-dict="$here/flags.dict")
  [ "${ATTN_FUZZ_KEEP_GOING:-0}" = 1 ] && args+=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
  # New inputs go to the first folder (the work copy); the committed corpus and the
  # crash inputs found before are read only.
  (cd "$dir" && "$build/tests/fuzz/fuzz_$h" "${args[@]}" "$dir/corpus" "$here/corpus/$h" \
       $( [ -d "$here/crashes/$h" ] && echo "$here/crashes/$h" ) >"$dir/log" 2>&1) || true
  local execs
  execs=$(grep -Eo '^stat::number_of_executed_units: *[0-9]+' "$dir/log" | grep -Eo '[0-9]+$' | tail -1 || true)
  [ -n "$execs" ] || execs=$(grep -Eo '^#[0-9]+' "$dir/log" | tail -1 | tr -d '#' || true)
  local crashes
  crashes=$(find "$dir/crashes" -type f | wc -l)
  echo "fuzz_$h: ${execs:-0} executions in ${seconds}s, max_len $max_len, $crashes crash inputs (log: $dir/log)"
}

pids=()
for h in "${harnesses[@]}"; do
  run_one "$h" > "$work/$h.summary" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
wait
status=0
for h in "${harnesses[@]}"; do
  cat "$work/$h.summary"
  if [ -n "$(find "$work/$h/crashes" -type f)" ]; then
    status=1
    grep -E 'ERROR|runtime error|attn_fuzz:' "$work/$h/log" | head -3 | sed 's/^/  /'
  fi
done
exit $status
