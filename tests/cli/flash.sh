#!/usr/bin/env bash
# Command-line tests: --flash-block N, the flash stage (flash attention's tiled online softmax).
# Its place (after context), tensors and shapes, max_abs_diff within the tolerance in JSON and the
# table, its refusals (N < 1, dropout in training), the memory estimate (--max-memory), --explain's
# worked row, every format, a replay, attn check, and query chunks (--block-rows) giving the whole
# context bit for bit. Usage: flash.sh path/to/attn. Needs jq.
set -u
attn=${1:?usage: flash.sh path/to/attn}
. "$(dirname "$0")/common.sh"
cd "$work" || exit 1

# --- the stage: where, what, how close ----------------------------------------------------
expect_ok "--flash-block 2, causal, notebook 000's shape, json" trace "${notebook[@]}" --flash-block 2 --format json
cp out nb.json
check "flash comes after context and before merge" \
  test "$(jq -c '.stages | keys_unsorted' nb.json)" = '["input","params","projections","view","transpose","scores","scaled","mask","masked","softmax","context","flash","merge","concat"]'
check "its step is 12a, after context's 12" test "$(jq -c '[.stages.context.step, .stages.flash.step]' nb.json)" = '[12,"12a"]'
check "m, l, rescale [B,H,Sq,nb] with nb = ceil(5/2) = 3; acc [B,H,Sq,nb,dk]; context [B,H,Sq,dk]" \
  test "$(jq -c '[.stages.flash.tensors[] | .shape]' nb.json)" = '[[2,4,5,3],[2,4,5,3],[2,4,5,3],[2,4,5,3,2],[2,4,5,2]]'
check "max_abs_diff is reported, above 0 and within the tolerance" \
  jq -e '.stages.flash.max_abs_diff > 0 and .stages.flash.max_abs_diff <= .stages.flash.tolerance' nb.json
check "the flash context is the exact one within the tolerance" \
  jq -e '[.stages.flash.tensors.context.data, .stages.context.tensors.context.data] | map(flatten) | transpose
         | map(.[0] - .[1] | fabs) | max < 1e-5' nb.json
check "rescale is 0 at the first block (nothing summed yet)" \
  jq -e '[.stages.flash.tensors.rescale.data | flatten(2)[] | .[0]] | all(. == 0)' nb.json
check "causal: query 0's keys 2.. are masked, so its m stays the same after block 0" \
  jq -e '.stages.flash.tensors.m.data[0][0][0] | (.[0] == .[1] and .[1] == .[2])' nb.json
check "the config has flash_block" test "$(jq '.config.flash_block' nb.json)" = 2
check "and a run without it has flash_block 0" sh -c "'$attn' trace --format json --stage input | jq -e '.config.flash_block == 0'"
check "no warnings" test "$(jq -c '.warnings' nb.json)" = '[]'

expect_ok "--stage flash alone" trace "${notebook[@]}" --flash-block 3 --stage flash --format json
check "... computes what it reads and shows only flash" test "$(jq -c '.stages | keys' out)" = '["flash"]'
check "... with the same max_abs_diff as the whole run" jq -e '.stages.flash.max_abs_diff > 0' out

expect_ok "table" trace "${notebook[@]}" --flash-block 2 --stage flash
check "the table shows max_abs_diff and the tolerance" grep -q '^   max_abs_diff = [0-9.e+-]*, tolerance = 1.[0-9]*e-05$' out
check "the heading" grep -q '^── 12a · flash ── flash attention: online softmax over blocks of keys$' out
check "the formula, with N and nb" grep -q 'keys in 3 block(s) of 2, per query row' out

# a row with no allowed key: flash gives 0, the exact softmax NaN; max_abs_diff leaves it out
expect_ok "padding with a length 0" trace --batch 2 --seq 4 --mask padding --lengths 4,0 --flash-block 2 --format json
check "flash context 0 on the empty rows, exact NaN" \
  jq -e '(.stages.flash.tensors.context.data[1] | flatten | all(. == 0)) and (.stages.context.tensors.context.data[1] | flatten | all(. == "nan"))' out
check "m is -inf there, never NaN" jq -e '.stages.flash.tensors.m.data[1] | flatten | all(. == "-inf")' out
check "max_abs_diff within the tolerance" jq -e '.stages.flash.max_abs_diff <= .stages.flash.tolerance' out

# --- refusals ------------------------------------------------------------------------------
expect_error "--flash-block 0 is refused" 2 \
  "attn: error: --flash-block 0: expected a whole number from 1 to 1099511627776" trace --flash-block 0
expect_error "--flash-block -3 is refused" 2 \
  "attn: error: --flash-block -3: expected a whole number from 1 to 1099511627776" trace --flash-block -3
expect_error "--flash-block with dropout in training is refused, saying why" 2 \
  "attn: error: --flash-block with --train and --dropout 0.1: the flash stage is compared with the exact context, and dropout's weights exist only in the exact path (flash never forms the weights); drop --train or --flash-block" \
  trace --flash-block 2 --dropout 0.1 --train
expect_ok "--format py writes the flash loop (py.sh runs it in PyTorch)" trace --flash-block 2 --mask causal --format py
check "... a loop over the blocks of N = 2 keys, each block's m, l, rescale and acc kept" \
  bash -c "grep -qx 'for j in range(0, Sk, N):' '$work/out' && grep -qx 'N, fill = 2, -inf' '$work/out' && grep -q '^check(\"flash.acc\", torch.stack(acc_blocks, dim=3), ' '$work/out'"
expect_error "--format py with --flash-block and --mistake: refused (the loop is the right recurrence)" 2 \
  "attn: error: --format py: no script for the flash stage with --mistake yet (the loop computes the right scores)" \
  trace --flash-block 2 --mask causal --mistake missing_scale --format py
expect_ok "--flash-block with --dropout in eval mode is fine" trace --flash-block 2 --dropout 0.1 --stage flash
expect_error "--stage flash without --flash-block" 2 \
  "attn: error: --stage flash: this run has no flash stage (it needs --flash-block N (keys per block))" trace --stage flash
# m, l, rescale [1,2,64,64], acc [1,2,64,64,4] (nb = 64 times the context), context: 226 KiB
expect_ok "--max-memory leaves room for flash when it fits" trace --seq 64 --flash-block 1 --max-memory 300KiB --stage flash --format json
expect_error "--max-memory counts the flash tensors" 1 \
  "attn: error: these sizes need 239.4 KiB but the limit is 100.0 KiB (--max-memory); the largest stage is flash at 226.0 KiB, for [B,H,Sq,Sk] = [1,2,64,64]" \
  trace --seq 64 --flash-block 1 --max-memory 100KiB --stage flash --format json

# --- explain -------------------------------------------------------------------------------
expect_ok "--explain" trace "${notebook[@]}" --flash-block 2 --stage flash --explain
check "the recurrence for one row with this run's numbers" grep -q '^   row     batch 0, head 0, query 4: m = -inf, l = 0, acc = 0; block 0 (keys 0-1): m = ' out
check "the memory O(Sq·N) against O(Sq·Sk), with bytes" grep -q 'O(Sq·N) instead of O(Sq·Sk)' out
check "chunked queries: bit for bit" sh -c "tr '\n' ' ' < out | tr -s ' ' | grep -q 'gives the whole result bit for bit'"
expect_ok "--explain, json" trace "${notebook[@]}" --flash-block 2 --stage flash --explain --format json
check "explain.row in JSON" jq -e '.stages.flash.explain.row | startswith("batch 0, head 0, query 4: m = -inf")' out
check "explain.torch is the loop" jq -e '.stages.flash.explain.torch | contains("torch.exp(m - m_safe)")' out

# --- every format --------------------------------------------------------------------------
for f in jsonl torch; do
  expect_ok "--format $f" trace "${notebook[@]}" --flash-block 2 --stage flash --format $f
done
expect_ok "--format jsonl again" trace "${notebook[@]}" --flash-block 2 --stage flash --format jsonl
check "jsonl: one flash line with max_abs_diff" test "$(jq -c 'select(.name == "flash") | (.max_abs_diff <= .tolerance)' out)" = true
expect_ok "--format npz" trace "${notebook[@]}" --flash-block 2 --stage flash --format npz --out f.npz
check "npz holds flash.acc" sh -c "unzip -l f.npz | grep -q 'flash.acc.npy'"
expect_ok "--format png next to softmax" trace "${notebook[@]}" --flash-block 2 --stage softmax,flash --format png --out f.png
check "a PNG" sh -c "head -c 8 f.png | od -An -c | grep -q 'P   N   G'"

# --- replay and check ----------------------------------------------------------------------
expect_ok "a json dump" trace "${notebook[@]}" --flash-block 2 --format json --out dump.json
expect_ok "--from the dump replays the flash stage" trace --from dump.json --stage flash --format json
check "... with the dump's flash_block" test "$(jq '.config.flash_block' out)" = 2
jq '.stages.flash.tensors.context.data' dump.json > answer.json
expect_ok "attn check --stage flash --tensor context: the flash context" \
  check "${notebook[@]}" --flash-block 2 --stage flash --tensor context --answer answer.json

# --- query chunks (notebook 002's chunked attention done right) ------------------------------
# Each query row's softmax needs only its own row: blocks of query rows (--block-rows, what
# --max-memory chooses) give the whole context. Bit for bit while each row's products are summed
# in one order (aten's small loop, k·Sq·Sk < 400, as here: dk 2, Sq = Sk = 9)...
expect_ok "whole planes" trace --seq 9 --d-model 8 --heads 4 --mask causal --stage context --format json
jq -c '.stages.context.tensors.context.data' out > whole.txt
for rows in 1 2 4; do
  expect_ok "--block-rows $rows" trace --seq 9 --d-model 8 --heads 4 --mask causal --stage context --format json --block-rows $rows
  check "... the context of query chunks of $rows rows equals the whole, bit for bit" \
    test "$(jq -c '.stages.context.tensors.context.data' out)" = "$(cat whole.txt)"
done
# ... and within float32 rounding when the products go to BLAS, whose kernel may tile a chunk
# of rows otherwise than the whole plane (dk 8: k·Sq·Sk = 648)
expect_ok "whole planes, BLAS products" trace --seq 9 --d-model 16 --heads 2 --mask causal --stage context --format json
jq -c '[.stages.context.tensors.context.data | flatten[]]' out > whole.txt
for rows in 1 2; do
  expect_ok "--block-rows $rows, BLAS products" trace --seq 9 --d-model 16 --heads 2 --mask causal --stage context --format json --block-rows $rows
  jq -c '[.stages.context.tensors.context.data | flatten[]]' out > chunked.txt
  check "... query chunks of $rows rows: the whole context within 1e-6" \
    jq -e -n --slurpfile a whole.txt --slurpfile b chunked.txt '[$a[0], $b[0]] | transpose | map(.[0] - .[1] | fabs) | max < 1e-6'
done

# the recurrence's row sum is attn's: left to right in float32 (p.sum(-1) reduces in vector lanes)
run trace --flash-block 2 --explain --stage flash
check "--explain's flash line sums p left to right, as attn does" \
  sh -c "tr -s ' \n' ' ' <'$work/out' | grep -qF 'l = rescale * l + sum(p.unbind(-1))'"
run trace --help
check "--help's flash recurrence says the sum's order" \
  sh -c "tr -s ' \n' ' ' <'$work/out' | grep -qF '(summed left to right in float32)'"

finish
