#!/usr/bin/env bash
# Benchmark: wall time of whole `attn trace` runs over growing shapes, per
# output format. Not a test: it prints numbers and never fails on them.
# Usage: tests/bench.sh path/to/attn   (or: cmake --build build --target bench)
set -euo pipefail
attn=${1:?usage: bench.sh path/to/attn}
runs=${BENCH_RUNS:-5}

# best_ms ARGS...: the fastest of $runs runs, in milliseconds, output discarded.
best_ms() {
  local best=
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    "$attn" "$@" >/dev/null
    end=$(date +%s%N)
    local ms=$(( (end - start) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}

npz_out=$(mktemp --suffix=.npz)
work=$(mktemp -d)
trap 'rm -rf "$npz_out" "$work"' EXIT

printf '%-44s %9s %9s %9s %9s %9s %12s\n' "shape" "stages" "json" "table" "torch" "npz" "json bytes"
for shape in "1 4 8 2" "2 5 8 4" "4 64 64 4" "8 128 256 8" "8 512 512 8" "4 1024 1024 16"; do
  read -r b s d h <<<"$shape"
  args=(trace --batch "$b" --seq "$s" --d-model "$d" --heads "$h" --mask causal)
  # the computation alone, with a tiny output: what is left is compute time
  compute=$(best_ms "${args[@]}" --format json --stage params)
  json=$(best_ms "${args[@]}" --format json)
  table=$(best_ms "${args[@]}" --format table)
  torch=$(best_ms "${args[@]}" --format torch)
  npz=$(best_ms "${args[@]}" --format npz --out "$npz_out")
  bytes=$("$attn" "${args[@]}" --format json | wc -c)
  printf '%-44s %9s %9s %9s %9s %9s %12s\n' "B=$b Sq=$s D=$d H=$h causal" "$compute" "$json" "$table" "$torch" "$npz" "$bytes"
done
echo "(milliseconds, best of $runs; stages = compute with a tiny output)"

# reading a large input: x [8,512,512] as JSON nested arrays (2M numbers)
"$attn" trace --batch 8 --seq 512 --d-model 512 --heads 8 --format json --stage input |
  jq -c .stages.input.tensors.x.data >"$work/x.json"
echo
echo "--input x.json, [8,512,512] ($(wc -c <"$work/x.json") bytes): $(best_ms trace --input "$work/x.json" --heads 8 --format json --stage params) ms"
