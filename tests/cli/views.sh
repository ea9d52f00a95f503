#!/usr/bin/env bash
# Command-line tests: one batch item, head or query row (--batch-index, --head, --row)
# in every format, checked against the whole run: the JSON parts equal the whole run's
# data indexed by CLI.md's axis names (jq), --format torch equals PyTorch's print of the
# sub-tensor (tests/reference/views, make_view_print.py), npz equals the JSON; --row's
# bars against the weights and mask of the whole run's JSON.
# Usage: views.sh path/to/attn. Needs jq and python3 with NumPy (Debian's).
set -u
attn=${1:?usage: views.sh path/to/attn}
. "$(dirname "$0")/common.sh"
ref="$here/../reference"
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

# Seed notebook 000: B=2, Sq=Sk=5, H=4, a causal mask.
"$attn" trace "${notebook[@]}" --format json >"$work/full.json"

# --- errors: an index outside its axis, named with the size it must stay under ----------
expect_error "--batch-index past B" 2 "attn: error: --batch-index 5 is outside 0..1 (B = 2)" \
  trace "${notebook[@]}" --batch-index 5
expect_error "--head past H" 2 "attn: error: --head 4 is outside 0..3 (H = 4)" trace "${notebook[@]}" --head 4
expect_error "--row past Sq" 2 "attn: error: --row 5 is outside 0..4 (Sq = 5)" trace "${notebook[@]}" --row 5
expect_error "--row past Sq, with --format json" 2 "attn: error: --row 5 is outside 0..4 (Sq = 5)" \
  trace "${notebook[@]}" --row 5 --format json
expect_error "a negative --row" 2 "attn: error: --row -1 is outside 0..3 (Sq = 4)" trace --row -1
expect_error "--row that is no number" 2 "attn: error: --row x: expected a whole number" trace --row x
expect_error "--head without --heads: the hint for a slip" 2 \
  "attn: error: --head 4 is outside 0..1 (H = 2); did you mean --heads 4?" trace --head 4
echo '[[[1,0,0,0],[0,1,0,0],[0,0,1,0]]]' >"$work/x.json"   # [B,Sq,Din] = [1,3,4]
expect_error "sizes from a file: --row checked against the file's Sq" 2 \
  "attn: error: --row 3 is outside 0..2 (Sq = 3)" trace --input "$work/x.json" --row 3
expect_error "--row's bars: a stage without a row of scores or weights" 2 \
  "attn: error: --stage context with --row: --row draws one query's scores or weights as bars, from the stages scores, scaled, biased, masked, softmax or dropout; for query 2 of every tensor use --format json" \
  trace "${notebook[@]}" --row 2 --stage softmax,context
expect_error "--row's bars: not the mask's booleans" 2 \
  "attn: error: --stage mask with --row: --row draws one query's scores or weights as bars, from the stages scores, scaled, biased, masked, softmax or dropout; for query 2 of every tensor use --format json" \
  trace "${notebook[@]}" --row 2 --stage mask
expect_ok "--row with --stage context in JSON: query 2 of every tensor" trace "${notebook[@]}" --row 2 --stage context --format json

# --- JSON: the part of each tensor, as the whole run's data indexed -----------------------
# same_as_whole VIEW-JSON SELECTION: every tensor of the viewed document equals the whole
# run's tensor cut by CLI.md's axis names: batch; head (not the mask's, broadcast over the
# heads); query and seq (the query side; not kv_seq or key). Prints "tensors N cut M".
same_as_whole() {
  jq -r -n --slurpfile full "$work/full.json" --slurpfile part "$1" --argjson sel "$2" '
    def pick($a; $i): if $a == 0 then [.[$i]] else map(pick($a - 1; $i)) end;
    def index_of($dim; $name):
      if $dim == "batch" then $sel.batch_index
      elif $dim == "head" and $name != "mask" then $sel.head
      elif $dim == "query" or $dim == "seq" then $sel.row
      else null end;
    [ $full[0].stages | to_entries[] | .key as $s | .value.tensors | to_entries[] | .key as $n | .value as $t
      | [ range(0; $t.dims | length) | . as $a | index_of($t.dims[$a]; $n) as $i | select($i != null) | [$a, $i] ] as $picks
      | ($t.shape | reduce $picks[] as $p (.; .[$p[0]] = 1)) as $shape
      | ($picks | map({key: $t.dims[.[0]], value: .[1]}) | from_entries) as $index
      | $part[0].stages[$s].tensors[$n] as $got
      | { cut: ($picks | length > 0),
          same: ($got.data == ($t.data | reduce $picks[] as $p (.; pick($p[0]; $p[1])))
                 and $got.shape == $shape
                 and (if ($picks | length) > 0 then $got.full_shape == $t.shape and $got.index == $index
                      else ($got | has("full_shape") or has("index")) | not end)) } ]
    | if all(.same) and ($part[0].selection == $sel) then "tensors \(length) cut \(map(select(.cut)) | length)"
      else "differs" end'
}
"$attn" trace "${notebook[@]}" --head 2 --format json >"$work/head.json"
check "--head 2: every tensor equals the whole run's at head 2 (24 tensors, 12 with a real head axis)" \
  test "$(same_as_whole "$work/head.json" '{"head":2}')" = "tensors 24 cut 12"
check "--head 2: the mask [B,1,Sq,Sk] stays whole" \
  test "$(jq -c '.stages.mask.tensors.mask | [.shape, has("index")]' "$work/head.json")" = '[[2,1,5,5],false]'
check "--head 2: jq paths keep their depth (.data[b][0][q][k])" \
  test "$(jq '.stages.softmax.tensors.weights.data[1][0][4][2]' "$work/head.json")" = \
       "$(jq '.stages.softmax.tensors.weights.data[1][2][4][2]' "$work/full.json")"
"$attn" trace "${notebook[@]}" --batch-index 1 --head 3 --format json >"$work/bh.json"
check "--batch-index 1 --head 3: every tensor at batch 1, head 3 (all 18 but the 6 params)" \
  test "$(same_as_whole "$work/bh.json" '{"batch_index":1,"head":3}')" = "tensors 24 cut 18"
check "--batch-index 1 --head 3: the selection, after config" \
  test "$(jq -c '[keys_unsorted[1:3], .selection]' "$work/bh.json")" = '[["config","selection"],{"batch_index":1,"head":3}]'
check "--batch-index 1 --head 3: the weights' shape, full_shape and index" \
  test "$(jq -c '.stages.softmax.tensors.weights | [.shape, .full_shape, .index]' "$work/bh.json")" = \
       '[[1,1,5,5],[2,4,5,5],{"batch":1,"head":3}]'
"$attn" trace "${notebook[@]}" --batch-index 0 --head 1 --row 3 --format json >"$work/bhr.json"
check "--batch-index 0 --head 1 --row 3: every tensor at that query (x, q, planes, context, concat; not k, v)" \
  test "$(same_as_whole "$work/bhr.json" '{"batch_index":0,"head":1,"row":3}')" = "tensors 24 cut 18"
check "--row 3: k keeps every key position" \
  test "$(jq -c '.stages.transpose.tensors.k.shape' "$work/bhr.json")" = '[1,1,5,2]'
"$attn" trace "${notebook[@]}" --row 4 --format json >"$work/row.json"
check "--row 4 alone in JSON: query 4 of the 12 tensors with a query-side axis" \
  test "$(same_as_whole "$work/row.json" '{"row":4}')" = "tensors 24 cut 12"
check "without a view: no selection, no full_shape" \
  test "$(jq -c '[has("selection"), ([.. | objects | select(has("full_shape"))] | length)]' "$work/full.json")" = '[false,0]'

# --- jsonl: the lines hold the JSON document's parts -------------------------------------
"$attn" trace "${notebook[@]}" --batch-index 1 --head 3 --format jsonl >"$work/bh.jsonl"
check "--format jsonl with a view: each stage's tensors as in --format json" \
  test "$(jq -s -c '[.[] | {(.name): .tensors}] | add' "$work/bh.jsonl" | md5sum)" = \
       "$(jq -c '.stages | map_values(.tensors)' "$work/bh.json" | md5sum)"

# --- npz: the arrays of the JSON document ------------------------------------------------
expect_ok "--format npz with a view" trace "${notebook[@]}" --batch-index 1 --head 3 --format npz --out "$work/bh.npz"
check "--format npz with a view: each array is the JSON document's part; a selection member" \
  "$python" - "$work/bh.npz" "$work/bh.json" <<'PY'
import json, sys
import numpy as np
z, doc = np.load(sys.argv[1]), json.load(open(sys.argv[2]))
for stage, s in doc["stages"].items():
    for name, t in s["tensors"].items():
        a = z[stage + "." + name]
        want = np.array(t["data"], dtype=bool if t["dtype"] == "bool" else np.float32)
        assert list(a.shape) == t["shape"], (stage, name, a.shape)
        assert a.dtype == want.dtype and np.array_equal(a, want, equal_nan=a.dtype != bool), (stage, name)
assert json.loads(str(z["selection"])) == doc["selection"]
PY

# --- replaying a dump of part of the run is refused, unless --head alone cut it ---------
expect_error "--from a JSON dump written with --batch-index" 1 \
  "attn: error: --from $work/bh.json: the dump holds only part of the run (it was written with --batch-index 1); replay a dump written without --batch-index and --row" \
  trace --from "$work/bh.json"
"$attn" trace "${notebook[@]}" --row 2 --format npz --out "$work/row.npz"
expect_error "--from an npz dump written with --row" 1 \
  "attn: error: --from $work/row.npz: the dump holds only part of the run (it was written with --row 2); replay a dump written without --batch-index and --row" \
  trace --from "$work/row.npz"
"$attn" trace "${notebook[@]}" --head 1 --format npz --out "$work/head.npz"
expect_ok "--from a dump written with --head alone replays the run" trace --from "$work/head.npz" --format json
check "... the whole run" test "$(jq -c .stages "$work/out" | md5sum)" = "$(jq -c .stages "$work/full.json" | md5sum)"

# --- torch: PyTorch's print of t[1:2, 2:3], in the OpenBLAS kernel's set -------------------
kernel=$("${ATTN_OPENBLAS_CORENAME:-openblas_corename}" 2>/dev/null)
blas_set=$(awk -v k="$kernel" '$1 == k { print $2 }' "$ref/openblas/kernels.txt")
[ -n "$blas_set" ] || echo "note: OpenBLAS kernel '$kernel' has no set in tests/reference/openblas/kernels.txt:" \
  "--format torch is checked for its headers only"
while read -r case args; do
  # shellcheck disable=SC2086
  "$attn" trace "${notebook[@]}" $args --format torch >"$work/torch.txt" 2>/dev/null
  want="$ref/views/openblas/$blas_set/$case.txt"
  [ -f "$want" ] || want="$ref/views/torch_text/$case.txt"
  if [ -n "$blas_set" ]; then
    check "--format torch $args: PyTorch's print of each part ($case)" diff "$want" "$work/torch.txt"
  else
    check "--format torch $args: the parts PyTorch printed ($case)" diff <(grep '^#' "$want") <(grep '^#' "$work/torch.txt")
  fi
done <<'CASES'
head_1 --head 1
batch_1_head_2 --batch-index 1 --head 2
batch_0_head_3_row_4 --batch-index 0 --head 3 --row 4
row_2 --row 2
CASES
expect_ok "--format torch --head 1" trace "${notebook[@]}" --head 1 --format torch --stage softmax,mask,concat
check "... a header names the part: softmax.weights[:, 1:2]; the mask and concat whole" \
  test "$(grep '^#' "$work/out" | paste -sd ' ')" = "# mask.mask # softmax.weights[:, 1:2] # concat.concat"

# --- the table: only the selected slices, said in the tensor's header ----------------------
"$attn" trace "${notebook[@]}" --stage softmax >"$work/full.txt"
expect_ok "table --head 1" trace "${notebook[@]}" --head 1 --stage mask,softmax
check "--head 1: the weights' header says which part" \
  grep -qx "weights \[2,4,5,5\] (batch, head, query, key) strides \[100,25,5,1\], contiguous, only head=1" "$work/out"
check "--head 1: only head 1's slices" \
  test "$(grep -o '^weights\[.*\]$' "$work/out" | paste -sd ' ')" = "weights[batch=0, head=1] weights[batch=1, head=1]"
slice() {  # slice FILE LABEL: the label's line and the 6 lines of its slice
  grep -A6 -xF "$2" "$1"
}
check "--head 1: each slice as in the whole run's table" \
  diff <(slice "$work/full.txt" "weights[batch=1, head=1]") <(slice "$work/out" "weights[batch=1, head=1]")
check "--head 1: the mask, the same for every head, shown whole" \
  test "$(grep -E '^mask( \[|\[)' "$work/out" | paste -sd '|')" = \
       "mask [2,1,5,5] (batch, head, query, key) strides [25,25,5,1], contiguous|mask[batch=0] (the same for every head)|mask[batch=1] (the same for every head)"
expect_ok "--pos alibi --batch 2 --batch-index 1: the bias [1,H,Sq,Sk] is every item's" trace --pos alibi --batch 2 \
  --batch-index 1 --stage alibi --format json
check "... its one batch entry, whole" test "$(jq -c '.stages.alibi.tensors.bias | [.shape, .index]' "$work/out")" = '[[1,2,4,4],{"batch":0}]'
expect_ok "... and in the table" trace --pos alibi --batch 2 --batch-index 1 --stage alibi
check "... head 0's bias" grep -q '^bias\[batch=0, head=0\]$' "$work/out"
expect_ok "table --batch-index 1 --head 2 --stage view" trace "${notebook[@]}" --batch-index 1 --head 2 --stage view
check "--batch-index 1 --head 2: q [B,Sq,H,dk] shows batch 1's table, head 2's columns" \
  test "$(grep -c '^q\[batch=1\]$' "$work/out"),$(grep -c '│ head 2$' "$work/out"),$(grep -c 'head [013]' "$work/out")" = "1,3,0"
check "--batch-index 1 --head 2: position 3's row is q[1, 3, 2, :] of the whole run" \
  test "$(grep -m1 '^seq 3 ' "$work/out" | tr -s ' ')" = \
  "$(jq -r '.stages.view.tensors.q.data[1][3][2] | map(. * 10000 | round / 10000 | tostring) | "seq 3 │ " + join(" ")' "$work/full.json")"
check "--batch-index 1 --head 2: the header" \
  grep -qx "q \[2,5,4,2\] (batch, seq, head, head_dim) strides \[40,8,2,1\], contiguous: a view of projections.q, only batch=1, head=2" "$work/out"
# 2 x 30 x 30 = 1800 weights are summarised as print(t) would; one head's 900 are not
run trace --seq 30 --stage softmax
check "without a view, 1800 weights are summarised" grep -q "summarised: --full prints all 1800 values" "$work/out"
run trace --seq 30 --stage softmax --head 1
check "--head 1: its 900 weights are not" test "$(grep -c summarised "$work/out"),$(grep -c '^query ' "$work/out")" = "0,30"

# --- --row: one query's weights as bars ------------------------------------------------------
# check_bars TEXT FULL-JSON STAGE Q: every chart of the text against the whole run's JSON: one
# chart per (batch, head), each value as the table prints it (%.4f of the float32), a bar of
# round(320 w) eighths (40 columns = 1), the mask's false keys marked "masked", the three
# largest of the others marked 1st, 2nd, 3rd and named in order on the line under the chart.
check_bars() {
  "$python" - "$@" <<'PY'
import json, re, struct, sys
text, doc, stage, q = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
f32 = lambda v: struct.unpack("f", struct.pack("f", float(v)))[0]
w = doc["stages"][stage]["tensors"]["weights"]["data"]
mask = doc["stages"]["mask"]["tensors"]["mask"]["data"]
eighths = " ▏▎▍▌▋▊▉"
charts = re.findall(r"^weights\[batch=(\d+), head=(\d+), query=(\d+)\]\n((?:  key .*\n)+)  (query .*)$", text, re.M)
seen = set()
for b, h, qq, lines, summary in charts:
    b, h = int(b), int(h)
    assert int(qq) == q, qq
    seen.add((b, h))
    row = [f32(v) for v in w[b][h][q]]
    allowed = [bool(m) for m in mask[b][0][q]]
    top = sorted((k for k in range(len(row)) if allowed[k]), key=lambda k: (-row[k], k))[:3]
    for k, line in enumerate(lines.splitlines()):
        m = re.fullmatch(r"  key (\d+)  ([█▏▎▍▌▋▊▉]*) *  +(\S+)(?:  (◀ (1st|2nd|3rd)|masked))?", line)
        assert m and int(m.group(1)) == k, line
        assert m.group(3) == "%.4f" % row[k], (line, row[k])
        bar = m.group(2)
        units = 8 * bar.count("█") + (eighths.index(bar[-1]) if bar and bar[-1] != "█" else 0)
        assert units == round(row[k] * 320), (line, units)
        assert (m.group(4) == "masked") == (not allowed[k]), line
        rank = top.index(k) + 1 if k in top else 0
        assert (m.group(5) or "") == ["", "1st", "2nd", "3rd"][rank], (line, top)
    names = ", ".join("key %d (%.4f)" % (k, row[k]) for k in top)
    verb = "attends only to" if sum(allowed) == 1 else "attends most to"
    assert summary == "query %d %s %s" % (q, verb, names), (summary, names)
B, H = len(w), len(w[0])
assert len(charts) == len(seen), "a chart twice"
print(len(charts))
PY
}
for q in 0 1 2 3 4; do
  run trace "${notebook[@]}" --row "$q" --color never
  check "--row $q: 8 charts (B=2 x H=4), bars, values, masked keys and top keys as the JSON's weights" \
    test "$(check_bars "$work/out" "$work/full.json" softmax "$q")" = 8
done
run trace "${notebook[@]}" --head 1 --row 3 --color never
check "--head 1 --row 3: 2 charts, each right" test "$(check_bars "$work/out" "$work/full.json" softmax 3)" = 2
check "--head 1 --row 3: only head 1" test "$(grep -c '^weights\[batch=[01], head=1, query=3\]$' "$work/out")" = 2
check "--row shows the softmax stage by default" test "$(grep -c '^── ' "$work/out"),$(grep -c '^── 10 · softmax' "$work/out")" = "1,1"
run trace "${notebook[@]}" --batch-index 1 --head 0 --row 0 --color never
check "--row 0 of a causal mask: query 0 attends only to key 0" \
  grep -qx "  query 0 attends only to key 0 (1.0000)" "$work/out"
check "... a chart that is right" test "$(check_bars "$work/out" "$work/full.json" softmax 0)" = 1
run trace "${notebook[@]}" --batch-index 1 --head 0 --row 3 --stage scaled,masked --color never
check "--stage scaled,masked --row: both stages, one chart each" \
  test "$(grep -c '^scaled\[batch=1, head=0, query=3\]$' "$work/out"),$(grep -c '^masked\[batch=1, head=0, query=3\]$' "$work/out")" = "1,1"
check "--stage masked --row: the masked key reads -inf, marked masked" \
  grep -qE "^  key 4  +│ +-inf  masked$" "$work/out"
want_scaled=$(jq -r '.stages.scaled.tensors.scaled.data[1][0][3][] | .*10000 | round / 10000' "$work/full.json" | paste -sd ' ')
got_scaled=$(awk '/^scaled\[/ {on = 1; next} on && /^  key/ {sub(/  (◀ ...|masked)$/, ""); print $NF + 0} on && /^  query/ {exit}' \
  "$work/out" | paste -sd ' ')
check "--stage scaled --row: the values are the JSON's scaled scores" test "$got_scaled" = "$want_scaled"
# ALiBi's biased scores are a plane of scores too: their row as bars (once refused)
alibi=(trace --seed 5 --batch 1 --seq 4 --heads 2 --pos alibi --mask causal)
"$attn" "${alibi[@]}" --format json >"$work/alibi.json"
run "${alibi[@]}" --row 2 --head 1 --stage biased --color never
check "--pos alibi --row 2 --stage biased: one chart" \
  test "$rc,$(grep -c '^biased\[batch=0, head=1, query=2\]$' "$work/out")" = "0,1"
want_biased=$(jq -r '.stages.biased.tensors.biased.data[0][1][2][] | .*10000 | round / 10000' "$work/alibi.json" | paste -sd ' ')
got_biased=$(awk '/^biased\[/ {on = 1; next} on && /^  key/ {sub(/  (◀ ...|masked)$/, ""); print $NF + 0} on && /^  query/ {exit}' \
  "$work/out" | paste -sd ' ')
check "--stage biased --row: the values are the JSON's biased scores" test "$got_biased" = "$want_biased"
run trace --seq 50 --row 7 --head 0 --color never
check "a row of 50 keys shows its 10 largest" \
  test "$(grep -c '^  key ' "$work/out"),$(grep -c 'its 10 largest of 50 keys: --full shows them all' "$work/out")" = "10,1"
run trace --seq 50 --row 7 --head 0 --full --color never
check "--full shows every key" test "$(grep -c '^  key ' "$work/out")" = 50
run trace "${notebook[@]}" --row 3 --head 1 --color always
check "--color always: the bars in colour" grep -q $'\x1b\\[36m█' "$work/out"
run trace "${notebook[@]}" --row 3 --head 1 --color never
check "--color never: no escape codes" test "$(grep -c $'\x1b' "$work/out")" = 0

# --- --help and the README -------------------------------------------------------------------
run trace --help
check "--help: --batch-index, --head and --row in the Output group" \
  test "$(awk '/^Output:/ {on = 1} on && /^ *--(batch-index|head|row) / {print $1}' "$work/out" | paste -sd ' ')" = \
       "--batch-index --head --row"
readme="$here/../../README.md"
awk '/--head 1 --row 3` prints:/ {seen = 1; next} seen && /^```/ {if (inside) exit; inside = 1; next} inside' \
  "$readme" >"$work/readme-row"
"$attn" trace --seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj --head 1 --row 3 \
  --color never >"$work/actual-row"
check "README's one head, one row block is real" diff "$work/readme-row" "$work/actual-row"

finish
