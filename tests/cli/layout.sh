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

# --- --shapes: the chain of shapes and strides, nothing computed --------------------------
expect_ok "--shapes for notebook 000" trace "${notebook[@]}" --shapes
check "--shapes: notebook 000 fits one screen" test "$(wc -l <"$work/out")" -le 30
check "--shapes: transpose's q, its letters, numbers and strides as PyTorch's" \
  grep -qE '^ 5  transpose +q +\[B,H,Sq,dk\] = \[2,4,5,2\] +\(40, 2, 8, 1\) +view of projections, not contiguous$' "$work/out"
check "--shapes: merge a view of context, concat its copy" \
  grep -qE '^13  merge +context +\[B,Sq,H,dk\] = \[2,5,4,2\] +\(40, 2, 10, 1\) +view of context, not contiguous$' "$work/out"
check "--shapes: concat a copy (merge.contiguous())" \
  grep -qE '^14  concat +concat +\[B,Sq,D\] += \[2,5,8\] +\(40, 8, 1\) +copy of merge \(.contiguous\(\)\)$' "$work/out"
check "--shapes: the mask broadcast over the heads" grep -qE '^ 8  mask +mask +\[B,1,Sq,Sk\] = \[2,1,5,5\]' "$work/out"
check "--shapes: no output stage with --no-out-proj" bash -c "! grep -q '^15' '$work/out'"

# JSON: the same shapes and strides as a computed run's, at the same paths, without data
layout_of() { jq -c '[.stages | to_entries[] | {s: .key, t: [.value.tensors | to_entries[] | {n: .key, shape: .value.shape, strides: .value.strides, contiguous: .value.contiguous}]}]' "$1"; }
for run_flags in "${notebook[*]}" "--batch 2 --seq 3 --kv-seq 6 --d-kv-in 12 --heads 2" "--seq 3 --heads 1 --dropout 0.5 --train"; do
  read -ra flags <<<"$run_flags"
  "$attn" trace "${flags[@]}" --format json >"$work/computed.json"
  expect_ok "--shapes --format json: $run_flags" trace "${flags[@]}" --shapes --format json
  check "--shapes --format json equals the computed run's layouts: $run_flags" \
    test "$(layout_of "$work/out")" = "$(layout_of "$work/computed.json")"
done
check "--shapes --format json: no data, a format of its own" \
  test "$(jq -c '[.format, ([.. | objects | has("data")] | any)]' "$work/out")" = '["attn.shapes/1",false]'
expect_ok "--shapes --format json --stage transpose" trace "${notebook[@]}" --shapes --format json --stage transpose
check "--shapes json: k after the transpose" \
  test "$(jq -c '.stages.transpose.tensors.k | [.letters, .strides, .memory, .view_of]' "$work/out")" = \
  '[["B","H","Sk","dk"],[40,2,8,1],"view","projections.k"]'
check "--shapes json: --stage keeps one stage" test "$(jq -c '.stages | keys' "$work/out")" = '["transpose"]'

# nothing is computed: a sequence of 100000 (scores of 4e10 elements) answers at once
timeout 5 "$attn" trace --seq 100000 --heads 4 --shapes --stage scores >"$work/out" 2>"$work/err"
check "--shapes at --seq 100000: done within 5 s" test $? -eq 0
check "--shapes at --seq 100000: the scores' shape and strides" \
  grep -qE '^ 6  scores +scores +\[B,H,Sq,Sk\] = \[1,4,100000,100000\] +\(40000000000, 10000000000, 100000, 1\)' "$work/out"

expect_error "--shapes with --format npz" 2 \
  "attn: error: --shapes prints a table or JSON (--format table or json), not --format npz" \
  trace --shapes --format npz --out "$work/s.npz"
expect_error "--shapes with --head" 2 \
  "attn: error: --shapes shows whole tensors' layouts in the right computation; --head is for their numbers: leave out one of them" \
  trace --shapes --head 1
expect_error "--shapes with --mistake" 2 \
  "attn: error: --shapes shows whole tensors' layouts in the right computation; --mistake is for their numbers: leave out one of them" \
  trace --shapes --mistake missing_scale

# --- --format dot: the run's stages as a graph, nothing computed --------------------------
expect_ok "--format dot" trace --pos alibi --past 2 --seq 2 --heads 4 --kv-heads 2 --mask causal --format dot
cp "$work/out" "$work/plan.dot"
"$attn" trace --pos alibi --past 2 --seq 2 --heads 4 --kv-heads 2 --mask causal --shapes --format json >"$work/plan-shapes.json"
check "dot: a node per stage of the run, as --shapes has them" \
  test "$(grep -cE '^  [a-z_]+ \[label=' "$work/plan.dot")" = "$(jq '.stages | length' "$work/plan-shapes.json")"
check "dot: a node gives the stage's number, name, shape and strides" \
  grep -qF 'transpose [label="5 · transpose\lq  [B,H,Sq,dk] = [1,4,2,2]  (16, 2, 8, 1)  view of projections, not contiguous\l' "$work/plan.dot"
check "dot: views are dashed edges (view, transpose, merge)" \
  test "$(grep -cE '^  (projections -> view|view -> transpose|context -> merge) \[style=dashed, label="view"\];$' "$work/plan.dot")" = 3
check "dot: copies are solid edges named by the copy" grep -qx '  merge -> concat \[label="copy (.contiguous())"\];' "$work/plan.dot"
check "dot: scores reads q from transpose and k from repeat_kv, not from append" \
  test "$(grep -E -- '-> scores;$' "$work/plan.dot" | tr -d ' ' | tr '\n' ' ')" = "transpose->scores; repeat_kv->scores; "
check "dot: masked reads the plane before it (biased) and the mask; biased adds alibi's bias" \
  test "$(grep -E -- '-> (masked|biased);$' "$work/plan.dot" | tr -d ' ' | tr '\n' ' ')" = "scaled->biased; alibi->biased; biased->masked; mask->masked; "
expect_ok "dot: absent stages are absent" trace --heads 4 --format dot
check "... no mask, no masked without a mask" test "$(grep -cE '^  (mask|masked|dropout|rope) ' "$work/out")" = 0
expect_ok "dot: --stage draws those stages, joined through the ones left out" trace --heads 4 --mask causal --stage 6,10 --format dot
check "... scores -> softmax" test "$(grep -c -- '->' "$work/out"):$(grep -c -- '-> softmax' "$work/out")" = "1:1"
expect_ok "dot: --mistake marks the step it replaces" trace --heads 4 --mask causal --mistake softmax_axis --format dot
check "... softmax drawn red and saying so" \
  grep -q '^  softmax \[label=.*, color=red, fontcolor=red, xlabel="--mistake softmax_axis replaces this step"\];$' "$work/out"
expect_error "dot: a view flag is refused" 2 \
  "attn: error: --format dot draws the run's stages and layouts, nothing computed; --head is for their numbers: leave out one of them" \
  trace --format dot --head 1
# --- --graph: the same graph laid out and drawn by Graphviz's library -----------------------
expect_ok "--graph --format svg" trace --pos alibi --past 2 --seq 2 --heads 4 --kv-heads 2 --mask causal --graph --format svg
check "... an SVG that parses as XML, a node per stage" \
  python3 -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); sys.exit(sum(1 for g in r.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "node") != int(sys.argv[2]))' \
  "$work/out" "$(jq '.stages | length' "$work/plan-shapes.json")"
check "... with the views drawn dashed" grep -q 'stroke-dasharray' "$work/out"
"$attn" trace --heads 4 --mask causal --graph --format png --out "$work/graph.png"
check "--graph --format png: a PNG" test "$(head -c 8 "$work/graph.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a
expect_ok "--graph --format html: the graph beside the stages" trace --heads 4 --mask causal --graph --format html --out "$work/graph.html"
check "... in an aside, before the stages" \
  test "$(grep -n -m1 '<aside class="graph">' "$work/graph.html" | cut -d: -f1)" -lt "$(grep -n -m1 '<section class="stage"' "$work/graph.html" | cut -d: -f1)"
check "... each box a link to its stage's section (14 stages, 14 sections)" \
  test "$(grep -o 'xlink:href="#stage-[a-z_]*"' "$work/graph.html" | sort -u | wc -l):$(grep -c '<section class="stage" id="stage-' "$work/graph.html")" = "14:14"
check "... with no reference outside the page (Graphviz's DOCTYPE left out)" test "$(grep -c 'w3.org/Graphics' "$work/graph.html")" = 0
expect_error "--graph with a format it cannot draw" 2 \
  "attn: error: --graph draws the run's stages with --format svg, png or html (or writes them with --format dot), not --format table" \
  trace --graph
expect_error "--graph with --shapes" 2 "attn: error: --graph draws what --shapes prints: give one of them" \
  trace --graph --shapes --format svg

if command -v dot >/dev/null; then
  check "dot: Graphviz's dot reads it and draws an SVG" sh -c "dot -Tsvg '$work/plan.dot' | grep -q '<svg'"
else
  echo "skip dot -Tsvg: no Graphviz (apt-get install graphviz)"
fi

finish
