#!/usr/bin/env bash
# Command-line tests: memory layout. The README's "Memory layout" commands print what
# it says; --format json gives strides and contiguity; npz writes the views (transpose,
# merge) in row-major order, as t.numpy() does, checked with NumPy against the stages
# they view. Usage: layout.sh path/to/attn. Needs jq and python3 with NumPy.
set -u
attn=${1:?usage: layout.sh path/to/attn}
. "$(dirname "$0")/common.sh"
readme=$(dirname "$0")/../../README.md
export PATH="/usr/bin:$PATH"  # Debian's python3, with NumPy

# --- the README's examples are real ---------------------------------------------------
# the line after each "$ attn ..." line in the section's code block
section() { awk '/^## Memory layout/ {seen = 1; next} seen && /^## / {exit} seen' "$readme"; }
readme_after() { section | grep -A1 -xF -- "$1" | tail -n 1; }
expect_ok "trace --stage transpose --format json" trace --stage transpose --format json
check "README: transpose's q in JSON" test "$(jq -c '.stages.transpose.tensors.q | del(.data)' "$work/out")" = \
  "$(readme_after "\$ attn trace --stage transpose --format json | jq -c '.stages.transpose.tensors.q | del(.data)'")"
expect_ok "trace --stage transpose" trace --stage transpose
check "README: transpose's q in the table" test "$(grep '^q ' "$work/out")" = \
  "$(readme_after "\$ attn trace --stage transpose | grep '^q '")"

# --- strides and contiguity at each stage (B=2, S=3, D=8, H=4, dk=2) --------------------
expect_ok "json of every stage" trace --batch 2 --seq 3 --heads 4 --format json
layout() { jq -c ".stages.$1.tensors.$2 | [.strides, .contiguous]" "$work/out"; }
check "projections: row-major" test "$(layout projections q)" = "[[24,8,1],true]"
check "view: a view, still contiguous" test "$(layout view q)" = "[[24,8,2,1],true]"
check "transpose: not contiguous" test "$(layout transpose k)" = "[[24,2,8,1],false]"
check "scores: new memory" test "$(layout scores scores)" = "[[36,9,3,1],true]"
check "merge: not contiguous" test "$(layout merge context)" = "[[24,2,6,1],false]"
check "concat: the copy, contiguous" test "$(layout concat concat)" = "[[24,8,1],true]"
check "one head: the transpose is contiguous" bash -c \
  "'$attn' trace --heads 1 --stage transpose --format json | jq -e '.stages.transpose.tensors.q.contiguous'"

# --- npz: views in row-major order -----------------------------------------------------
expect_ok "npz of every stage" trace --batch 2 --seq 3 --heads 4 --mask causal --format npz --out "$work/t.npz"
check "npz: view, transpose, merge and concat are the stages they view, rearranged" python3 -c '
import sys, numpy as np
t = np.load(sys.argv[1])
for n in "qkv":
    p = t["projections." + n]
    assert np.array_equal(t["view." + n], p.reshape(2, 3, 4, 2))
    assert np.array_equal(t["transpose." + n], p.reshape(2, 3, 4, 2).transpose(0, 2, 1, 3))
    assert t["transpose." + n].flags["C_CONTIGUOUS"]
assert np.array_equal(t["merge.context"], t["context.context"].transpose(0, 2, 1, 3))
assert np.array_equal(t["concat.concat"], t["merge.context"].reshape(2, 3, 8))
' "$work/t.npz"

finish
