#!/usr/bin/env bash
# Command-line tests: attn check (an answer against a stage; the mistake a wrong one makes)
# and attn trace --mistake ID. The answers are PyTorch's (tests/reference/make_mistake_fixtures.py,
# plain torch ops), never attn's own.
# Usage: check.sh path/to/attn. Needs jq and python3 with NumPy.
set -u
attn=${1:?usage: check.sh path/to/attn}
. "$(dirname "$0")/common.sh"
ref=$(cd "$(dirname "$0")/../reference/mistakes" && pwd)
export PATH="/usr/bin:$PATH"  # Debian's python3, with NumPy
seed24=(--seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal)

# --- every PyTorch-made answer: right ones exit 0, wrong ones exit 1 with their mistake's id ---
bad=0 total=0
while IFS=$'\t' read -r args mistake stage tensor file; do
  total=$((total + 1))
  # shellcheck disable=SC2086
  "$attn" check $args --stage "$stage" --tensor "$tensor" --answer "$ref/$file" --format json >"$work/out" 2>"$work/err"
  rc=$?
  got=$(jq -r '.diagnosis.id // "none"' "$work/out")
  want_rc=1; [ "$mistake" = none ] && want_rc=0
  if [ "$rc" -ne "$want_rc" ] || [ "$got" != "$mistake" ]; then
    bad=$((bad + 1)); echo "     $file: exit $rc, diagnosis $got, wanted exit $want_rc, $mistake"
  fi
done < <(jq -r '.configs as $c | .answers[] | [($c[.config].args | join(" ")), .mistake, .stage, .tensor, .file] | @tsv' \
           "$ref/index.json")
check "each of the $total PyTorch answers: right ones match (exit 0), wrong ones name their mistake (exit 1)" test "$bad" -eq 0
check "... they are many, over every mistake" test "$(jq '[.answers[].mistake] | unique | length' "$ref/index.json")" -eq 32

# --- the table report ------------------------------------------------------------------------
run check "${seed24[@]}" --stage softmax --answer "$ref/seed24_causal/softmax_axis.softmax.json"
check "a mismatch exits 1" test "$rc" -eq 1
check "... with nothing on stderr" test ! -s "$work/err"
check "... the shape first" grep -qx 'shape      \[2,4,5,5\] \[B,H,Sq,Sk\], as expected' "$work/out"
check "... then how many elements differ" grep -q '^result     mismatch: [0-9]* of 200 elements differ by more than atol 1e-05 + rtol 0.0001·|expected|$' "$work/out"
check "... the largest error, where, and both values" grep -q '^largest    error 0\.[0-9]* at \[[0-9],[0-9],[0-9],[0-9]\]: yours .*, expected ' "$work/out"
check "... the diagnosis with the fix" grep -qx 'diagnosis  softmax_axis: your weights sum to 1 over the queries (dim=-2), not over the keys: use torch.softmax(scores, dim=-1)' "$work/out"
run check "${seed24[@]}" --stage 15 --answer "$ref/seed24_causal/softmax_axis.output.json"
check "a mistake made at an earlier stage says where" grep -qx '           (the mistake is made at the softmax stage; the output stage follows from it)' "$work/out"
run check "${seed24[@]}" --stage softmax --answer "$ref/seed24_causal/right.softmax.json"
check "a match exits 0" test "$rc" -eq 0
check "... and says so" grep -qx 'result     match: every element within atol 1e-05 + rtol 0.0001·|expected|' "$work/out"
check "... without a diagnosis" sh -c "! grep -q diagnosis '$work/out'"

# --- --format json -----------------------------------------------------------------------------
run check "${seed24[@]}" --stage scaled --answer "$ref/seed24_causal/wrong_scale.scaled.json" --format json
check "json: exit 1 on a mismatch" test "$rc" -eq 1
check "json: the fields, in order" test "$(jq -c 'keys_unsorted' "$work/out")" = \
  '["match","stage","step","tensor","expected_shape","expected_dims","answer_shape","max_error","max_error_at","answer_value","expected_value","mismatched","elements","atol","rtol","diagnosis"]'
check "json: match, stage, tensor, shapes" test "$(jq -c '[.match, .stage, .step, .tensor, .expected_shape, .answer_shape]' "$work/out")" = \
  '[false,"scaled",7,"scaled",[2,4,5,5],[2,4,5,5]]'
check "json: the largest error is a number at an index" test "$(jq -c '[(.max_error|type), (.max_error_at|length), (.mismatched > 0)]' "$work/out")" = '["number",4,true]'
check "json: the diagnosis" test "$(jq -c '.diagnosis | [.id, .made_at]' "$work/out")" = '["wrong_scale","scaled"]'
check "json: ... its message names √D and √dk" test "$(jq -r '.diagnosis.message' "$work/out")" = \
  "the scores are divided by √D = 2.8284, not by √dk = 1.4142 (dk = D / H, the head width): use scores / math.sqrt(dk)"
run check "${seed24[@]}" --stage scaled --answer "$ref/seed24_causal/right.scaled.json" --format json
check "json: a match has no diagnosis" test "$(jq -c '[.match, has("diagnosis")]' "$work/out")" = '[true,false]'
run check "${seed24[@]}" --stage output --answer "$ref/seed24_causal/mask_inverted.output.json" --format json
check "json: NaN in the answer, where the mistake gives NaN too" test "$(jq -r '.diagnosis.id' "$work/out")" = mask_inverted
check "json: ... the largest error is the string inf" test "$(jq -c '.max_error' "$work/out")" = '"inf"'

# --- wrong shapes ------------------------------------------------------------------------------
python3 - "$ref" "$work" <<'PY'
import json, sys
import numpy as np
ref, work = sys.argv[1:3]
load = lambda f: np.array(json.load(open(f"{ref}/seed24_causal/{f}")), dtype=np.float32)
t = load("right.transpose.json")                           # q [B,H,Sq,dk]
np.save(f"{work}/q_view.npy", t.transpose(0, 2, 1, 3))     # [B,Sq,H,dk]: the view stage's
w = load("right.softmax.json")                             # [B,H,Sq,Sk]
np.save(f"{work}/weights_one_head.npy", w[:, 0])           # [B,Sq,Sk]
np.save(f"{work}/merge_as_context.npy", load("right.context.json"))
PY
run check "${seed24[@]}" --stage transpose --answer "$work/q_view.npy"
check "transpose answered with [B,Sq,H,dk]: the view stage's shape, the transpose(1, 2) missing" grep -qx \
  'shape      \[2,5,4,2\], expected \[2,4,5,2\] \[B,H,Sq,dk\]: this is the view stage'"'"'s shape \[B,Sq,H,dk\]: the transpose(1, 2) is missing' "$work/out"
check "... exit 1, and the shapes differ" sh -c "[ $rc -eq 1 ] && grep -qx 'result     mismatch: the shapes differ' '$work/out'"
run check "${seed24[@]}" --stage softmax --answer "$work/weights_one_head.npy" --format json
check "softmax without the head axis" test "$(jq -r '.shape_note' "$work/out")" = \
  "the head axis (H = 4, axis 1 of [B,H,Sq,Sk]) is missing: the heads are not kept apart (one head's result, or summed or averaged over heads?)"
check "... json: no max_error for another shape" test "$(jq -c '[.max_error, .max_error_at, .answer_shape]' "$work/out")" = '[null,null,[2,5,5]]'
run check "${seed24[@]}" --stage merge --answer "$work/merge_as_context.npy" --format json
check "merge answered with context: the transpose back is missing" test "$(jq -r '.shape_note' "$work/out")" = \
  "this is the context stage's shape [B,H,Sq,dk]: the transpose(1, 2) back is missing"
cross=(--seed 5 --batch 1 --seq 3 --kv-seq 5 --d-model 4 --heads 2)
run check "${cross[@]}" --stage scores --answer "$ref/cross_sq3_sk5/q_k_swapped.scores.npy" --format json
check "K·Qᵀ with Sq != Sk: a transposed plane, still diagnosed by its values" test \
  "$(jq -c '[.answer_shape, .expected_shape, .diagnosis.id]' "$work/out")" = '[[1,2,5,3],[1,2,3,5],"q_k_swapped"]'
check "... the note says the last two axes are swapped" sh -c "jq -r .shape_note '$work/out' | grep -q '^the last two axes are swapped (\[B,H,Sk,Sq\], not \[B,H,Sq,Sk\])'"

# --- the structure: where a mask mistake first shows; what departs when no mistake fits ---------
masks=(--seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal+padding --lengths 3,0)
run check "${masks[@]}" --stage softmax --answer "$ref/seed24_masks/mask_not_applied.softmax.npy"
check "mask_not_applied: the fix, and where it first shows against the run's mask kinds" grep -qx \
  "diagnosis  mask_not_applied: your scores are not masked: every query attends keys the mask forbids: use scores.masked_fill(mask == 0, float('-inf')) before the softmax; it shows first where query 0 → key 1 (batch 0, head 0) has weight 0.2101 where the causal mask forbids it" "$work/out"
check "... a NaN expected prints as nan, never -nan" grep -qx 'largest    error inf at \[1,0,0,0\]: yours 0.231166, expected nan' "$work/out"
run check "${masks[@]}" --stage softmax --answer "$ref/seed24_masks/causal_only.softmax.npy" --format json
check "causal_only: the padding mask named where it was left out" sh -c \
  "jq -r .diagnosis.message '$work/out' | grep -q 'it shows first where query 3 → key 3 (batch 0, head 0) has weight 0.2034 where the padding mask forbids it\$'"
python3 - "$ref" "$work" <<'PY'
import json, sys
import numpy as np
ref, work = sys.argv[1:3]
w = np.load(f"{ref}/seed24_masks/right.softmax.npy")       # [2,4,5,5], batch 1 all NaN
a = w.copy(); a[0, 2, 1, 4] = 0.25                          # weight on a padded, future key
np.save(f"{work}/weight_where_masked.npy", a)
a = w.copy(); a[0, 1, 2, 1] = 0.0                           # none on an allowed key
np.save(f"{work}/zero_where_allowed.npy", a)
np.save(f"{work}/half_rows.npy", w * 0.5)                   # rows summing to 0.5
np.save(f"{work}/bmm.npy", w.reshape(8, 5, 5))              # torch.bmm's [B·H,Sq,Sk]
np.save(f"{work}/leading.npy", w[None])                     # an extra leading axis
np.save(f"{work}/sigmoid_bmm.npy", np.load(f"{ref}/seed24_masks/sigmoid_instead_of_softmax.softmax.npy").reshape(8, 5, 5))
PY
run check "${masks[@]}" --stage softmax --answer "$work/weight_where_masked.npy" --format json
check "weight where the mask forbids, no mistake fits: weight_where_masked, which kinds, where" test \
  "$(jq -r '[.diagnosis.id, .diagnosis.message] | join(": ")' "$work/out")" = \
  "weight_where_masked: query 1 → key 4 (batch 0, head 2) has weight 0.25 where the causal and padding masks forbid it: the causal and padding masks were not applied there; fill the forbidden scores with float('-inf') before the softmax: scores.masked_fill(mask == 0, ...)"
run check "${masks[@]}" --stage softmax --answer "$work/zero_where_allowed.npy" --format json
check "no weight where the mask allows: zero_where_allowed" sh -c \
  "jq -r .diagnosis.message '$work/out' | grep -q '^query 2 → key 1 (batch 0, head 1) has weight 0 where the mask allows it (expected 0\.'"
run check "${masks[@]}" --stage softmax --answer "$work/half_rows.npy" --format json
check "rows not summing to 1: rows_not_normalized" test "$(jq -r .diagnosis.message "$work/out")" = \
  "the weights of query 0 (batch 0, head 0) sum to 0.5, not 1: softmax over the keys makes each row sum to 1: torch.softmax(scores, dim=-1)"

# --- the right numbers in another shape ------------------------------------------------------------
run check "${masks[@]}" --stage softmax --answer "$work/bmm.npy"
check "bmm's [B·H,Sq,Sk]: the shape note names the joined axes and the view" grep -qx \
  'shape      \[8,5,5\], expected \[2,4,5,5\] \[B,H,Sq,Sk\]: \[B·H,Sq,Sk\]: the axes B and H joined into one, as torch.bmm takes them; the numbers are right, in order: .view(2, 4, 5, 5) gives \[B,H,Sq,Sk\]' "$work/out"
check "... and the diagnosis agrees: right_values_other_shape, exit 1" sh -c "[ $rc -eq 1 ] && grep -qx \
  'diagnosis  right_values_other_shape: your numbers are right; only the shape differs: .view(2, 4, 5, 5) gives \[B,H,Sq,Sk\]' '$work/out'"
run check "${masks[@]}" --stage softmax --answer "$work/leading.npy" --format json
check "an extra leading axis of 1: the same id, the note says .squeeze(0)" test "$(jq -r '[.diagnosis.id, .shape_note] | join(" | ")' "$work/out")" = \
  "right_values_other_shape | an extra axis of size 1 at position 0: .squeeze(0); the numbers are right, in order: .view(2, 4, 5, 5) gives [B,H,Sq,Sk]"
run check "${masks[@]}" --stage softmax --answer "$work/sigmoid_bmm.npy" --format json
check "a mistake's numbers in bmm's shape: the mistake and the reshape" test "$(jq -r .diagnosis.id "$work/out")" = sigmoid_instead_of_softmax
check "... the message adds the view" sh -c "jq -r .diagnosis.message '$work/out' | grep -qF '; and the shape differs too: the numbers are the mistake'\''s in order, so .view(2, 4, 5, 5) gives its shape'"
"$attn" trace --seed 3 --seq 4 --heads 1 --mask causal --stage softmax --format json | jq '.stages.softmax.tensors.weights.data[0][0]' >"$work/plane.json"
run check --seed 3 --seq 4 --heads 1 --mask causal --stage softmax --answer "$work/plane.json" --format json
check "[Sq,Sk] for B = H = 1: right_values_other_shape, .view(1, 1, 4, 4)" test "$(jq -r .diagnosis.message "$work/out")" = \
  "your numbers are right; only the shape differs: .view(1, 1, 4, 4) gives [B,H,Sq,Sk]"

# --- usage errors: exit 2 ------------------------------------------------------------------------
expect_error "--answer is required" 2 \
  "attn: error: --answer is required: the tensor to check, .json nested arrays (tensor.tolist()) or .npy (np.save)" \
  check --stage softmax
expect_error "--stage is required" 2 \
  "attn: error: --stage is required: the stage the answer is for, by name or number (e.g. --stage softmax or --stage 10)" \
  check --answer "$ref/seed24_causal/right.softmax.json"
expect_error "a stage the run lacks" 2 \
  "attn: error: --stage masked: this run has no masked stage (it needs --mask, --mask-file or --key-padding-mask)" \
  check --stage masked --answer "$ref/seed24_causal/right.masked.json"
expect_error "a tensor name is not a stage" 2 \
  "attn: error: --stage weights: no stage is called weights; the tensor weights is in stage softmax (10) and dropout (11): --stage softmax" \
  check --stage weights --answer "$ref/seed24_causal/right.softmax.json"
expect_error "one stage only" 2 "attn: error: --stage 9-10: attn check checks one stage; give one name or number" \
  check "${seed24[@]}" --stage 9-10 --answer "$ref/seed24_causal/right.softmax.json"
expect_error "a tensor the stage lacks" 2 "attn: error: --tensor weights: the transpose stage has no tensor weights (it has q, k, v)" \
  check --stage transpose --tensor weights --answer "$ref/seed24_causal/right.transpose.json"
expect_error "--mistake belongs to attn trace" 2 \
  "attn: error: --mistake makes a mistake on purpose in attn trace; attn check compares the answer with the right run and names the mistake itself" \
  check --stage softmax --mistake softmax_axis --answer "$ref/seed24_causal/right.softmax.json"
expect_error "a negative tolerance" 2 "attn: error: --atol must be 0 or more" \
  check --stage softmax --atol -1 --answer "$ref/seed24_causal/right.softmax.json"
expect_error "an unknown format" 2 "attn: error: --format csv: expected one of table or json" \
  check --stage softmax --format csv --answer "$ref/seed24_causal/right.softmax.json"
expect_error "an answer that cannot be read exits 1" 1 "attn: error: --answer $work/none.npy: cannot open: No such file or directory" \
  check --stage softmax --answer "$work/none.npy"
run check --help
check "check --help: the ids and examples" sh -c "grep -q 'merge_without_transpose' '$work/out' && grep -q 'attn check --seed 24' '$work/out'"

# --- attn trace --mistake ID -------------------------------------------------------------------
run trace "${seed24[@]}" --mistake softmax_axis --stage softmax --format json
check "trace --mistake softmax_axis: every column of every head sums to 1" test \
  "$(jq -c '[.stages.softmax.tensors.weights.data[][] | transpose[] | add * 1e5 | round / 1e5] | unique' "$work/out")" = '[1]'
check "... and not every row" test \
  "$(jq -c '[.stages.softmax.tensors.weights.data[][][] | add * 1e5 | round / 1e5] | unique | length > 1' "$work/out")" = true
check "... the warning on stderr says it is on purpose" grep -qx \
  'attn: warning: --mistake softmax_axis: softmax over the queries (dim=-2) instead of the keys (dim=-1), on purpose; every later stage follows from it' "$work/err"
check "... the formula says so too" test "$(jq -r '.stages.softmax.formula' "$work/out")" = \
  "weights = softmax(masked, dim=-2): over the queries, not the keys (--mistake softmax_axis, on purpose)"
check "... and the warning is in the document, on the softmax stage" test "$(jq -c '[.warnings[] | select(test("--mistake"))] | length' "$work/out")" -ge 1
run trace "${seed24[@]}" --mistake softmax_axis --format json
python3 - "$work/out" "$ref" <<'PY' >"$work/diff" 2>&1
import json, sys
import numpy as np
ours, ref = json.load(open(sys.argv[1])), sys.argv[2]
for stage, tensor in [("softmax", "weights"), ("context", "context"), ("output", "out")]:
    a = np.array(ours["stages"][stage]["tensors"][tensor]["data"], dtype=np.float64)
    b = np.array(json.load(open(f"{ref}/seed24_causal/softmax_axis.{stage}.json")), dtype=np.float64)
    assert np.allclose(a, b, rtol=1e-4, atol=1e-5), (stage, np.abs(a - b).max())
r = np.array(ours["stages"]["scaled"]["tensors"]["scaled"]["data"], dtype=np.float64)
assert np.allclose(r, np.array(json.load(open(f"{ref}/seed24_causal/right.scaled.json"))), rtol=1e-6, atol=1e-7)
PY
check "trace --mistake softmax_axis: softmax, context and output are PyTorch's dim=-2 ones; scaled is untouched" test ! -s "$work/diff"
run trace "${seed24[@]}" --mistake wrong_scale --stage scaled
check "trace --mistake wrong_scale: the run line says so" grep -qx \
  'run    self-attention: Q, K, V from x; seed 24; --mistake wrong_scale, on purpose, at the scaled stage' "$work/out"
check "trace --mistake wrong_scale: the table's formula line" grep -qx \
  '   scaled = scores / √D = 2.8284, not / √dk = 1.4142 (--mistake wrong_scale, on purpose)' "$work/out"
expect_error "trace --mistake weight_not_transposed with Din != D: a shape error, said clearly" 2 \
  'attn: error: --mistake weight_not_transposed: x·W_q multiplies x [B,S,Din] = [1,4,6] by W_q [D,Din] = [8,6], which needs Din == D (here Din = 6, D = 8); PyTorch stops with "mat1 and mat2 shapes cannot be multiplied (4x6 and 8x6)". Give --d-in 8 to see this mistake' \
  trace --d-in 6 --mistake weight_not_transposed
expect_error "trace --mistake q_k_swapped with Sq != Sk" 2 \
  "attn: error: --mistake q_k_swapped: K·Qᵀ is [B,H,Sk,Sq] = [1,2,6,4], which the softmax's weights·V ([B,H,Sk,dk]) and a mask [B,1,Sq,Sk] cannot take when Sq != Sk (here Sq = 4, Sk = 6); give --kv-seq 4 to see this mistake" \
  trace --kv-seq 6 --mistake q_k_swapped
expect_error "trace --mistake weights_transposed with Sq != Sk" 2 \
  "attn: error: --mistake weights_transposed: weightsᵀ·V multiplies weightsᵀ [B,H,Sk,Sq] = [1,2,6,4] by V [B,H,Sk,dk], which needs Sq == Sk (here Sq = 4, Sk = 6); give --kv-seq 4 to see this mistake" \
  trace --kv-seq 6 --mistake weights_transposed
expect_error "trace --mistake dropout_not_rescaled without dropout in training mode" 2 \
  "attn: error: --mistake dropout_not_rescaled: it needs dropout in training mode (--dropout P with P > 0 and --train): without it no weight is dropped" \
  trace --dropout 0.25 --mistake dropout_not_rescaled
expect_error "trace --mistake mask_inverted without a mask" 2 \
  "attn: error: --mistake mask_inverted: it needs a mask (--mask, --mask-file or --key-padding-mask): without one nothing is masked" \
  trace --mistake mask_inverted
expect_error "trace --mistake rope_positions_from_zero without a decoding step" 2 \
  "attn: error: --mistake rope_positions_from_zero: it needs a decoding step (--past N with N > 0): without a cache the new tokens are at positions 0..Sq-1, where counting from 0 is right" \
  trace --pos rope --mistake rope_positions_from_zero
expect_error "trace --mistake rope_pairs_mixed with dk = 2" 2 \
  "attn: error: --mistake rope_pairs_mixed: with dk = 2 both pairings rotate the one pair (0, 1); give a head width dk = --d-model / --heads of 4 or more to see this mistake" \
  trace --pos rope --heads 4 --mistake rope_pairs_mixed
expect_error "trace --mistake alibi_sign with --pos rope" 2 \
  "attn: error: --mistake alibi_sign: it needs ALiBi's bias (--pos alibi): without it there is no sign to flip" \
  trace --pos rope --mistake alibi_sign
run check --pos rope --past 3 --seq 2 --heads 4 --kv-heads 2 --d-model 16 --mask causal --stage softmax \
  --answer "$ref/seed24_rope_step/rope_positions_from_zero.softmax.npy" --seed 24 --causal-align lower-right
check "check: positions from 0 in a cache step, named at the softmax with the fix" test "$(sed -n 's/^diagnosis  //p' "$work/out")" = \
  "rope_positions_from_zero: your new q and k are rotated at positions 0..1, as if no token came before them, but 3 tokens are in the cache, whose keys keep their positions 0..2: the distances to them come out 3 too short (the new tokens' scores among themselves are unchanged). Rotate the new tokens at positions 3..4: position_ids = torch.arange(N, N + Sq), the cache's length as the offset (Hugging Face's cache_position)"
run check --seed 24 --batch 1 --seq 2 --past 3 --d-model 8 --heads 4 --mask causal --pos alibi --stage alibi \
  --answer "$ref/seed24_alibi_step/alibi_sign.alibi.npy" --format json
check "check: ALiBi's bias with the wrong sign, at the alibi stage (exit 1)" test "$rc:$(jq -r '.diagnosis.id' "$work/out")" = "1:alibi_sign"
expect_error "trace --mistake with an unknown id" 2 \
  "attn: error: --mistake softmax: expected one of none, softmax_axis, missing_scale, wrong_scale, mask_inverted, fill_value, split_without_transpose, merge_without_transpose, weight_not_transposed, q_k_swapped, missing_bias, dropout_not_rescaled, dropout_keep_inverted, weights_transposed, mask_not_applied, mask_or_instead_of_and, causal_only, padding_only, padding_on_queries, diagonal_masked, window_off_by_one, masked_after_softmax, nan_replaced, log_softmax, sigmoid_instead_of_softmax, scale_multiplied, heads_interleaved, causal_misaligned, kv_heads_tiled, rope_positions_from_zero, rope_pairs_mixed or alibi_sign" \
  trace --mistake softmax
run trace "${seed24[@]}" --mistake fill_value --stage masked --format json
check "trace --mistake fill_value: 0 where the mask is false, not -inf" test \
  "$(jq -c '.stages.masked.tensors.masked.data[0][0][0][1:]' "$work/out")" = '[0,0,0,0]'
run trace --mask causal --mistake mask_inverted --format npz --out "$work/inverted.npz"
run trace --from "$work/inverted.npz" --stage mask --format json
check "a dump records --mistake in its config, and --from makes it again" test \
  "$(jq -c '[.config.mistake, .stages.mask.tensors.mask.data[0][0][0]]' "$work/out")" = '["mask_inverted",[false,true,true,true]]'
run trace --from "$work/inverted.npz" --mistake none --stage mask --format json
check "... unless --mistake none" test "$(jq -c '[.config.mistake, .stages.mask.tensors.mask.data[0][0][0]]' "$work/out")" = '[null,[true,false,false,false]]'
run trace "${seed24[@]}" --mistake none --stage softmax --format json
check "trace --mistake none: no warning" test ! -s "$work/err"

# --- the README's report and JSON are what the program prints ------------------------------------
readme="$(dirname "$0")/../../README.md"
awk '/^\$ attn check --seed 24/{on=1; next} /^\$ echo/{on=0} on' "$readme" >"$work/readme-table"
run check --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --stage softmax --answer "$ref/seed24_causal/softmax_axis.softmax.json"
check "README's attn check report is there" test "$(wc -l <"$work/readme-table")" -eq 5
check "README's attn check report is real" diff "$work/readme-table" "$work/out"
awk '/^### Checking an answer/{s=1} s && /^```json$/{on=1; next} on && /^```$/{exit} on' "$readme" >"$work/readme-json"
run check "${seed24[@]}" --stage context --answer "$ref/seed24_causal/softmax_axis.context.json" --format json
# expected_value is computed, so its last bit is the running OpenBLAS kernel's (the README's is Haswell's)
check "README's attn check JSON is real" test "$(jq -S -c 'del(.expected_value)' "$work/readme-json")" = "$(jq -S -c 'del(.expected_value)' "$work/out")"
check "... and its expected value, to the kernel's last bit" \
  jq -e --slurpfile got "$work/out" '(.expected_value - $got[0].expected_value) | fabs < 1e-6' "$work/readme-json"

# under --mistake, the heading of the stage where it is made says what the run computes there
expect_ok "trace --mistake missing_scale" trace "${notebook[@]}" --mistake missing_scale --stage scaled,softmax
check "... the scaled stage's heading says the scores are not divided" \
  grep -qx '── 7 · scaled ── the scores are not divided by √dk = 1.4142 (--mistake missing_scale, on purpose)' "$work/out"
check "... the softmax stage's heading is the usual one" \
  grep -qx '── 10 · softmax ── attention weights: softmax over the key axis (last)' "$work/out"
expect_ok "trace --mistake softmax_axis --format json" trace "${notebook[@]}" --mistake softmax_axis --format json
check "... the JSON title of softmax says so too" test "$(jq -r .stages.softmax.title "$work/out")" = \
  "softmax over the queries (dim=-2) instead of the keys (dim=-1) (--mistake softmax_axis, on purpose)"
finish
