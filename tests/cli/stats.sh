#!/usr/bin/env bash
# Command-line tests for --stats: each shown tensor's statistics in every format, checked
# against the tensor's own data in the same JSON document (jq computes min, max, mean and
# std from "data"), against hand-worked values (a causal row i spreads over i + 1 keys; row 0
# is one-hot), over every row while the table prints only some, -inf and NaN counted, and
# Var(q·k)/dk near 1 for q and k drawn from torch.randn.
# Usage: stats.sh path/to/attn. Needs jq; python3 with NumPy (Debian's) for the npz.
set -u
attn=${1:?usage: stats.sh path/to/attn}
. "$(dirname "$0")/common.sh"
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

# Seed notebook 000: B=2, Sq=Sk=5, H=4, dk=2, a causal mask.
"$attn" trace "${notebook[@]}" --stats --format json >"$work/stats.json"
"$attn" trace "${notebook[@]}" --format json >"$work/plain.json"
j() { jq -e "$@" "$work/stats.json" >/dev/null; }

# --- JSON: additive; every existing key kept ----------------------------------------------
check "json: without --stats no tensor has \"stats\"" \
  jq -e '[.stages[].tensors[] | has("stats")] | any | not' "$work/plain.json"
check "json: with --stats every tensor has \"stats\"" jq -e '[.stages[].tensors[] | has("stats")] | all' "$work/stats.json"
check "json: the document without the stats is the one without --stats" \
  cmp -s <(jq -S 'del(.stages[].tensors[].stats)' "$work/stats.json") <(jq -S . "$work/plain.json")

# --- every tensor's numbers against its own data (jq), over the finite values --------------
# [min, max, mean, unbiased std, zeros, nan, -inf] of .data, the strings "nan", "-inf" counted apart
from_data='[.data | flatten[]] as $all | [$all[] | select(type == "number")] as $x | ($x | add / length) as $m |
  [($x | min), ($x | max), $m, ((($x | map((. - $m) * (. - $m)) | add) / (($x | length) - 1)) | sqrt),
   ($x | map(select(. == 0)) | length), ($all | map(select(. == "nan")) | length),
   ($all | map(select(. == "-inf")) | length)]'
from_stats='.stats | [.min, .max, .mean, .std, .zeros, .nan, .neg_inf]'
close='[.[0], .[1]] | transpose | all(if (.[0] | type) == "number" then ((.[0] - .[1]) | fabs) <= 1e-6 * (1 + (.[1] | fabs)) else .[0] == .[1] end)'
for path in input.tensors.x projections.tensors.q scores.tensors.scores scaled.tensors.scaled \
            masked.tensors.masked softmax.tensors.weights context.tensors.context concat.tensors.concat; do
  check "json: $path's stats equal min, max, mean, std and counts computed from its data" \
    jq -e ".stages.$path | [($from_stats), ($from_data)] | $close" "$work/stats.json"
done

# --- -inf counted, not averaged --------------------------------------------------------------
check "masked: 2·4·10 masked scores are -inf, counted" j '.stages.masked.tensors.masked.stats.neg_inf == 80'
check "masked: the mean is over the 120 finite scores, a number" \
  j '.stages.masked.tensors.masked.stats | .finite == 120 and (.mean | type) == "number"'
check "mask: booleans as 0 and 1, a mean of 15/25 allowed" \
  j '.stages.mask.tensors.mask.stats | .count == 50 and ((.mean - 0.6) | fabs) < 1e-12'

# --- weights: per row, nested [B,H,Sq]; hand-worked for a causal mask ----------------------
w='.stages.softmax.tensors.weights.stats'
check "weights: entropy, max_weight and max_key nested [B,H,Sq] = [2,4,5]" \
  j "$w | [.entropy, .max_weight, .max_key] | all(length == 2 and all(.[]; length == 4 and all(.[]; length == 5)))"
check "weights: a causal row 0 is one-hot: entropy 0, largest weight 1 at key 0" \
  j "$w | [.entropy[][][0]] + [.max_key[][][0]] | all(. == 0)"
check "weights: row 0's largest weight is 1" j "$w | [.max_weight[][][0]] | all(. == 1)"
check "weights: each row sums to 1 over 5 keys: mean 0.2" j "$w | ((.mean - 0.2) | fabs) < 1e-7"
check "weights: the uniform comparison is the mean of ln(i+1) over rows: ln(120)/5" \
  j "$w | ((.uniform_entropy - ((120 | log) / 5)) | fabs) < 1e-12 and .rows_in_means == 40"
check "weights: every entropy between 0 and ln(i+1) of its row" \
  j "$w | [.entropy[][] | to_entries[] | .value <= ((.key + 1) | log) + 1e-9 and .value >= 0] | all"
check "weights: max_key is the argmax of each row of data" \
  j '.stages.softmax.tensors.weights | [.data[][][] | [to_entries | max_by(.value) | .key]] == [.stats.max_key[][][] | [.]]'
check "weights: the mean entropy is the mean of the rows'" \
  j "$w | (([.entropy[][][]] | add / length) - .mean_entropy | fabs) < 1e-12"

# --- scores and scaled: the variance next to dk ------------------------------------------------
check "scores: var = std², head_dim = dk = 2, var_over_head_dim = var / 2" \
  j '.stages.scores.tensors.scores.stats | .head_dim == 2 and ((.var - .std * .std) | fabs) < 1e-12 and ((.var_over_head_dim - .var / 2) | fabs) < 1e-12'
check "scaled: its variance is scores' / dk (√dk divides every score)" \
  j '.stages | ((.scaled.tensors.scaled.stats.var - .scores.tensors.scores.stats.var / 2) | fabs) < 1e-6'
# q and k from torch.randn (attn's own input x, drawn with two seeds): Var(q·k) ≈ dk
"$attn" trace --seq 128 --d-model 64 --stage input --format json | jq -c .stages.input.tensors.x.data >"$work/q.json"
"$attn" trace --seed 1 --seq 128 --d-model 64 --stage input --format json | jq -c .stages.input.tensors.x.data >"$work/k.json"
"$attn" trace --q "$work/q.json" --k "$work/k.json" --v "$work/k.json" --heads 1 --stage scores,scaled --stats \
  --format json >"$work/randn.json"
check "q, k from torch.randn, dk = 64: Var(q·k)/dk within 0.8 .. 1.2" \
  jq -e '.stages.scores.tensors.scores.stats | .head_dim == 64 and .var_over_head_dim > 0.8 and .var_over_head_dim < 1.2' "$work/randn.json"
check "... and scaled's variance within 0.8 .. 1.2" \
  jq -e '.stages.scaled.tensors.scaled.stats.var | . > 0.8 and . < 1.2' "$work/randn.json"

"$attn" trace --seq 256 --d-model 256 --heads 4 --stage projections,scores --stats --format json >"$work/linear.json"
check "attn's own nn.Linear weights, as --help says: q entries of variance near 1/3, var/dk near 1/9" \
  jq -e '.stages | (.projections.tensors.q.stats.std | . * . > 0.3 and . * . < 0.37) and
    (.scores.tensors.scores.stats.var_over_head_dim | . > 0.09 and . < 0.13)' "$work/linear.json"

# --- NaN: a row with no allowed key under -inf --------------------------------------------------
echo '[[1,0,0],[0,0,0],[1,1,1]]' >"$work/m.json"
"$attn" trace --seq 3 --heads 2 --mask-file "$work/m.json" --stage softmax --stats --format json \
  >"$work/nan.json" 2>/dev/null
check "a row of no allowed keys: its 2·3 NaN weights counted, its entropy nan, left out of the means" \
  jq -e '.stages.softmax.tensors.weights.stats | .nan == 6 and .entropy[0][0][1] == "nan" and .max_weight[0][1][1] == "nan" and .rows_in_means == 4 and (.mean_entropy | type) == "number"' "$work/nan.json"

# --- table: a stats line under each tensor; every row counted while some are printed ----------
# (--block-rows 2: the planes in blocks of rows, where a table computes only the rows it prints
# unless --stats asks for all)
run trace --seq 40 --heads 1 --mask causal --stage masked,softmax --stats --color never --block-rows 2
check "table: a stats line under each tensor" test "$(grep -c '^   stats: min ' "$work/out")" -eq 2
check "table: the weights are summarised (only some rows printed)" grep -q 'summarised: --full prints all 1600' "$work/out"
check "table: the statistics are over all 1600 weights, 780 of them masked to 0" \
  grep -q 'over 1600 finite of 1600  zeros 780  nan 0' "$work/out"
check "table: masked's 780 -inf counted" grep -q 'over 820 finite of 1600 .* -inf 780' "$work/out"
check "table: each printed row of weights ends with its entropy and largest weight" \
  grep -Eq '^query 0 .*   H 0\.0000  max 1\.0000 @key 0$' "$work/out"
check "table: the last row printed is row 39" grep -Eq '^query 39 .*   H [0-9.]+  max [0-9.]+ @key [0-9]+$' "$work/out"
"$attn" trace --seq 40 --heads 1 --mask causal --stage softmax --stats --format json >"$work/40.json"
want=$(jq -r '.stages.softmax.tensors.weights.stats.mean_entropy * 10000 | round / 10000' "$work/40.json")
check "table: the mean entropy is the JSON's (all rows), $want" \
  grep -Eq "entropy mean $(printf '%.4f' "$want") nats" "$work/out"
want=$(jq -r '.stages.softmax.tensors.weights.stats.entropy[0][0][20] * 10000 | round / 10000' "$work/40.json")
run trace --seq 40 --heads 1 --mask causal --stage softmax --stats --color never --row 20 --format json
check "--row in JSON: the stats are still the whole tensor's, [1,1,40] rows" \
  jq -e '.stages.softmax.tensors.weights | (.data | length) == 1 and (.stats.entropy[0][0] | length) == 40' "$work/out"

# --- streamed in blocks of rows: the same statistics ------------------------------------------
"$attn" trace "${notebook[@]}" --stats --format json --block-rows 2 >"$work/blocks.json"
check "json: blocks of 2 rows give the whole planes' stats" \
  cmp -s <(jq -S '[.stages[].tensors[].stats]' "$work/blocks.json") <(jq -S '[.stages[].tensors[].stats]' "$work/stats.json")

# --- jsonl, torch, npz, html, heatmap, svg, png ---------------------------------------------------
run trace "${notebook[@]}" --stats --format jsonl
check "jsonl: each line's tensors have the json document's stats" \
  cmp -s <(jq -S '.tensors[].stats' "$work/out") <(jq -S '.stages[].tensors[].stats' "$work/stats.json")
run trace "${notebook[@]}" --stats --format torch
tensors=$(jq '[.stages[].tensors[]] | length' "$work/stats.json")
check "torch: a '# stats:' line after each of the run's $tensors tensors" \
  test "$(grep -c '^# stats: min ' "$work/out")" -eq "$tensors"
check "torch: the weights' line says the mean entropy" grep -q '^# stats: .*entropy mean [0-9.]* nats' "$work/out"
expect_ok "npz: --stats" trace "${notebook[@]}" --stats --format npz --out "$work/t.npz"
if $python -c 'import numpy' 2>/dev/null; then
  check "npz: stats.<stage>.<tensor>.<stat> members equal the JSON's (float32)" $python - "$work/t.npz" "$work/stats.json" <<'EOF'
import json, sys
import numpy as np
z = np.load(sys.argv[1])
doc = json.load(open(sys.argv[2]))
w = doc["stages"]["softmax"]["tensors"]["weights"]["stats"]
assert z["stats.softmax.weights.entropy"].shape == (2, 4, 5)
assert z["stats.softmax.weights.entropy"].dtype == np.float32
assert np.array_equal(z["stats.softmax.weights.entropy"], np.float32(w["entropy"]))
assert np.array_equal(z["stats.softmax.weights.max_key"], np.float32(w["max_key"]))
assert z["stats.masked.masked.neg_inf"] == 80 and z["stats.masked.masked.neg_inf"].shape == ()
assert z["stats.scores.scores.var"] == np.float32(doc["stages"]["scores"]["tensors"]["scores"]["stats"]["var"])
assert np.array_equal(z["softmax.weights"], np.float32(doc["stages"]["softmax"]["tensors"]["weights"]["data"]))
EOF
fi
expect_ok "npz with --stats replays with --from" trace --from "$work/t.npz" --stage softmax
run trace "${notebook[@]}" --stats --format html --out "$work/t.html"
check "html: a stats line under each of the $tensors tensors" \
  test "$(grep -c '<p class="stats"><code>stats: min ' "$work/t.html")" -eq "$tensors"
run trace "${notebook[@]}" --stage scaled,softmax --stats --format heatmap --color never
check "heatmap: a stats line under each drawn tensor" test "$(grep -c '^stats: min ' "$work/out")" -eq 2
run trace "${notebook[@]}" --stage scaled,softmax --stats --format svg --out "$work/t.svg"
check "svg: a text line of stats under each tensor" test "$(grep -o 'softmax.weights stats: min\|scaled.scaled stats: min' "$work/t.svg" | wc -l)" -eq 2
expect_ok "png: --stats, stacked" trace "${notebook[@]}" --stats --format png --out "$work/t.png"
expect_ok "png: --stats on a slide" trace "${notebook[@]}" --stats --stage scaled,softmax --layout slide --format png --out "$work/s.png"
run trace "${notebook[@]}" --stats --row 2 --color never
check "--row's bars: each chart's row entropy, and the tensor's stats line" \
  test "$(grep -c '^  row: H ' "$work/out")" -eq 8 -a "$(grep -c '^stats: min .*entropy mean' "$work/out")" -eq 1
check "--row's bars: row (batch 0, head 0, query 2)'s entropy is the JSON's" \
  grep -q "^  row: H $(jq -r "$w.entropy[0][0][2] * 10000 | round / 10000" "$work/stats.json" | xargs printf '%.4f') " "$work/out"
run trace "${notebook[@]}" --stats --stage softmax --format py
check "py: a '# softmax.weights stats:' comment after its check" grep -q '^# softmax.weights stats: min ' "$work/out"
expect_error "--stats with --shapes: nothing is computed" 2 \
  "attn: error: --shapes shows whole tensors' layouts in the right computation; --stats is for their numbers: leave out one of them" \
  trace --shapes --stats
check "--help teaches what --stats means" sh -c "'$attn' trace --help | grep -q 'Var(q·k) = dk'"

finish
