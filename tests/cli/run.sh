#!/usr/bin/env bash
# Command-line tests: runs the attn program as a user would and checks exit
# codes, messages on stderr, stdout and files. Usage: run.sh path/to/attn
# Needs jq and python3. Prints one line per check and "N passed, N failed".
set -u
attn=${1:?usage: run.sh path/to/attn}
. "$(dirname "$0")/common.sh"

# --- help and version ---------------------------------------------------------
expect_ok "help exits 0" --help
check "help names the trace command" grep -q "trace" "$work/out"
expect_ok "trace help exits 0" trace --help
check "trace help shows an example" grep -q "attn trace --heads 4 --mask causal" "$work/out"
check "trace help lists the mask kinds" grep -q "causal (j <= i)" "$work/out"
expect_ok "version exits 0" --version
check "version names attn" grep -q "^attn " "$work/out"

# --- the README's command ------------------------------------------------------
expect_ok "trace --heads 4 --mask causal" trace --heads 4 --mask causal
check "table shows the softmax stage heading" grep -q "10 · softmax" "$work/out"
check "table labels slices by batch and head" grep -q "weights\[batch=0, head=3\]" "$work/out"
check "no colour codes when stdout is not a terminal" bash -c "! grep -q $'\e' '$work/out'"
expect_ok "--color always" trace --stage scores --color always
check "--color always writes escape codes" grep -q $'\e\[' "$work/out"
NO_COLOR=1 "$attn" trace --stage scores --color auto >"$work/out" 2>&1
check "NO_COLOR: no escape codes" bash -c "! grep -q $'\e' '$work/out'"

# --- the README's output block is what the program prints ----------------------
readme=$(dirname "$0")/../../README.md
# the lines between the first pair of ``` fences after the "Output (" line
awk '/^Output \(/ {seen = 1; next} seen && /^```/ {if (inside) exit; inside = 1; next} inside' "$readme" >"$work/readme-block"
# the run header and its blank line (4 lines), stage 9's first head (9 lines), a blank line, stage 10's first head
"$attn" trace --heads 4 --mask causal --stage masked,softmax | sed -n '1,13p;/10 · softmax/,/^query 3/p' \
  | sed '13a\\' >"$work/actual-block"
check "README's output block is real" diff "$work/readme-block" "$work/actual-block"

# --- JSON ----------------------------------------------------------------------
# seed notebook 000: torch.manual_seed(24), three nn.Linear(8,8), randn(2,5,8), no output projection
expect_ok "json output" trace --seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj --format json
cp "$work/out" "$work/s24.json"
check "json is valid for jq" jq -e . "$work/s24.json"
check "json is valid for python json.load" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$work/s24.json"
check "json format tag" test "$(jq -r .format "$work/s24.json")" = "attn.trace/1"
check "json stage order" test "$(jq -c '.stages | keys_unsorted' "$work/s24.json")" = \
  '["input","params","projections","view","transpose","scores","scaled","mask","masked","softmax","context","merge","concat"]'
check "json one path to a weight" test "$(jq '.stages.softmax.tensors.weights.data[0][0][0][0]' "$work/s24.json")" = "1"
check "json first input value is the notebook's (seed 24: 1.5722)" \
  jq -e '.stages.input.tensors.x.data[0][0][0] | . - 1.5722 | (. < 0.00005 and . > -0.00005)' "$work/s24.json"
check "json config" test "$(jq -c '.config | [.batch,.seq,.kv_seq,.d_model,.heads,.head_dim,.mask,.fill]' "$work/s24.json")" = \
  '[2,5,5,8,4,2,"causal","-inf"]'
check "json -inf as a string" test "$(jq -r '.stages.masked.tensors.masked.data[0][0][0][1]' "$work/s24.json")" = "-inf"
check "json mask as booleans" test "$(jq -c '.stages.mask.tensors.mask.data[0][0][1]' "$work/s24.json")" = "[true,true,false,false,false]"
check "json shapes and dims" test "$(jq -c '.stages.scores.tensors.scores | [.shape,.dims]' "$work/s24.json")" = \
  '[[2,4,5,5],["batch","head","query","key"]]'
check "every softmax row sums to 1" jq -e \
  '[.stages.softmax.tensors.weights.data[][][] | add | . - 1 | (. < 0.00001 and . > -0.00001)] | all' "$work/s24.json"
check "weights above the causal diagonal are exactly 0" jq -e \
  '[.stages.softmax.tensors.weights.data[][] | to_entries[] | .key as $i | .value | to_entries[]
    | select(.key > $i) | .value] | (length == 80 and all(. == 0))' "$work/s24.json"

expect_ok "--stage selects stages" trace --format json --stage softmax,scores
check "--stage keeps stage order" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = '["scores","softmax"]'

expect_ok "jsonl output" trace --format jsonl --mask causal
check "jsonl has one line per stage" test "$(wc -l <"$work/out")" -eq 14
check "jsonl lines are JSON" jq -e .step "$work/out"
check "jsonl lines carry their name" test "$(jq -r .name "$work/out" | paste -sd, -)" = \
  "input,params,projections,view,transpose,scores,scaled,mask,masked,softmax,context,merge,concat,output"

# --- masks -----------------------------------------------------------------------
expect_ok "padding with -inf on an empty row warns" trace --batch 2 --mask padding --lengths 4,0 --format json
check "warning names the rows on stderr" grep -qx \
  "attn: warning: no key may be attended in batch 1 queries 0..3: their weights are NaN (the fill is -inf; PyTorch gives NaN too)" \
  "$work/err"
check "-inf fill on an empty row gives NaN weights" test "$(jq -r '.stages.softmax.tensors.weights.data[1][0][0][0]' "$work/out")" = "nan"
# NaN prints as nan, as PyTorch prints it, never -nan (x86's 0/0 has its sign bit set),
# in every text view; an input NaN with the sign bit set too.
python3 -c "
import struct, sys
h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 8), }\"
h += ' ' * (63 - (10 + len(h)) % 64) + '\\n'
x = [struct.pack('<f', 0.1 * i) for i in range(32)]
x[5] = struct.pack('<I', 0xFFC00000)
open(sys.argv[1], 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + b''.join(x))
" "$work/negative_nan.npy"
for view in "--format table" "--format torch" "--format heatmap" "--format table --row 0" "--format table --explain"; do
  # shellcheck disable=SC2086  # $view is several flags
  expect_ok "an empty row's NaN weights, $view" trace --batch 2 --seq 3 --mask padding --lengths 2,0 --fill -inf $view
  check "... print nan, never -nan ($view)" sh -c "grep -qi nan '$work/out' && ! grep -qi -- -nan '$work/out'"
  # shellcheck disable=SC2086
  expect_ok "an input NaN with its sign bit set, $view" trace --input "$work/negative_nan.npy" $view
  check "... prints nan, never -nan ($view)" sh -c "grep -qi nan '$work/out' && ! grep -qi -- -nan '$work/out'"
done
expect_ok "padding with -1e9 on an empty row" trace --batch 2 --mask padding --lengths 4,0 --fill -1e9 --format json
check "finite fill on an empty row gives uniform weights" \
  test "$(jq -c '.stages.softmax.tensors.weights.data[1][0][0]' "$work/out")" = "[0.25,0.25,0.25,0.25]"
check "warning says uniform" grep -q "uniform" "$work/err"
expect_ok "window mask" trace --seq 5 --mask window --window 1 --format json --stage mask
check "window mask row 2" test "$(jq -c '.stages.mask.tensors.mask.data[0][0][2]' "$work/out")" = "[false,true,true,true,false]"
expect_ok "causal+padding" trace --batch 2 --mask causal+padding --lengths 3,2 --format json --stage mask
check "causal+padding row 3 of item 1" test "$(jq -c '.stages.mask.tensors.mask.data[1][0][3]' "$work/out")" = "[true,true,false,false]"
expect_ok "random mask is seeded" trace --mask random --mask-seed 7 --format json --stage mask
cp "$work/out" "$work/r1"
run trace --mask random --mask-seed 7 --format json --stage mask
check "same mask seed, same mask" cmp -s "$work/out" "$work/r1"

# --- seeds -----------------------------------------------------------------------
run trace --seed -1 --format json --stage input,params
jq -c .stages "$work/out" >"$work/neg"
run trace --seed 18446744073709551615 --format json --stage input,params
check "--seed -1 wraps to 2^64-1 as torch.manual_seed(-1) does" test "$(jq -c .stages "$work/out")" = "$(cat "$work/neg")"
run trace --seed 4294967296 --format json --stage input
jq -c .stages "$work/out" >"$work/big"
run trace --seed 0 --format json --stage input
check "only the seed mod 2^32 reaches MT19937" test "$(jq -c .stages "$work/out")" = "$(cat "$work/big")"
run trace --seed 1 --format json --stage input
check "another seed, other numbers" test "$(jq -c .stages "$work/out")" != "$(cat "$work/big")"

# --- cross-attention -------------------------------------------------------------
expect_ok "cross-attention" trace --seq 3 --kv-seq 6 --d-in 4 --d-kv-in 12 --d-model 8 --format json
check "cross: x_kv present" test "$(jq -c '.stages.input.tensors.x_kv.shape' "$work/out")" = "[1,6,12]"
check "cross: scores are [B,H,Sq,Sk]" test "$(jq -c '.stages.scores.tensors.scores.shape' "$work/out")" = "[1,2,3,6]"
check "cross: w_k is [D,Dkv]" test "$(jq -c '.stages.params.tensors.w_k.shape' "$work/out")" = "[8,12]"
expect_ok "no biases, no output projection" trace --no-qkv-bias --no-out-proj --format json
check "no b_q, no w_o" test "$(jq -c '.stages.params.tensors | keys_unsorted' "$work/out")" = '["w_q","w_k","w_v"]'
check "no output stage" test "$(jq -c '.stages | has("output")' "$work/out")" = "false"

# --- --out: whole or nothing ------------------------------------------------------
expect_ok "--out writes the file" trace --format json --out "$work/t.json"
check "--out file is valid JSON" jq -e .format "$work/t.json"
check "--out leaves stdout empty" test ! -s "$work/out"
echo "old" >"$work/keep.json"
expect_error "--out is left alone on a bad flag" 2 "attn: error: --d-model 10 is not divisible by --heads 4" \
  trace --d-model 10 --heads 4 --out "$work/keep.json"
check "--out kept its old content" test "$(cat "$work/keep.json")" = "old"
check "no temporary files are left" test -z "$(ls "$work" | grep tmp-)"
expect_error "--out into a missing directory" 1 \
  "attn: error: --out $work/none/t.json: cannot create a file in $work/none: No such file or directory" \
  trace --out "$work/none/t.json"
mkdir "$work/ro" && chmod 500 "$work/ro"
if [ "$(id -u)" != 0 ]; then
  expect_error "--out into a read-only directory" 1 \
    "attn: error: --out $work/ro/t.json: cannot create a file in $work/ro: Permission denied" trace --out "$work/ro/t.json"
fi
mkdir "$work/adir"
run trace --out "$work/adir"
check "--out onto a directory fails with exit 1" test "$rc" -eq 1
check "--out onto a directory names --out" grep -qx "attn: error: --out $work/adir: is a directory; give a file name" "$work/err"

if [ -w /dev/full ]; then
  "$attn" trace >/dev/full 2>"$work/err"; rc=$?
  check "a failed write to stdout exits 1" test "$rc" -eq 1
  check "a failed write to stdout says so" grep -qx "attn: error: standard output: No space left on device" "$work/err"
fi

# --- bad input: one line naming the flag, exit 2 ------------------------------------
expect_error "zero batch" 2 "attn: error: --batch 0 must be at least 1" trace --batch 0
expect_error "negative seq" 2 "attn: error: --seq -3 must be at least 1" trace --seq -3
expect_error "zero heads" 2 "attn: error: --heads 0 must be at least 1" trace --heads 0
expect_error "zero kv-seq" 2 "attn: error: --kv-seq 0 must be at least 1" trace --kv-seq 0
expect_error "zero d-in" 2 "attn: error: --d-in 0 must be at least 1" trace --d-in 0
expect_error "d-model not divisible" 2 "attn: error: --d-model 10 is not divisible by --heads 4" trace --d-model 10 --heads 4
expect_error "unknown mask kind" 2 \
  "attn: error: --mask foo: unknown kind 'foo' (expected none, or causal, padding, window, random joined by '+')" \
  trace --mask foo
expect_error "mask kind twice" 2 "attn: error: --mask causal+causal: 'causal' is given twice" trace --mask causal+causal
expect_error "padding without lengths" 2 \
  "attn: error: --mask padding needs --lengths n1,n2,... (one valid key length per batch item)" trace --mask padding
expect_error "lengths count differs from batch" 2 \
  "attn: error: --lengths has 1 value but --batch is 2 (one length per batch item)" \
  trace --batch 2 --mask padding --lengths 3
expect_error "length above kv-seq" 2 "attn: error: --lengths 9 is outside 0..4 (the key length, --kv-seq)" \
  trace --mask padding --lengths 9
expect_error "lengths without padding" 2 "attn: error: --lengths is given but --mask has no padding (use --mask padding)" \
  trace --lengths 3
expect_error "negative window" 2 "attn: error: --window -1 must be 0 or more" trace --mask window --window -1
expect_error "window without --window" 2 \
  "attn: error: --mask window needs --window W (query i may attend keys j with |i - j| <= W)" trace --mask window
expect_error "mask-keep out of range" 2 "attn: error: --mask-keep 1.5 must be between 0 and 1" \
  trace --mask random --mask-keep 1.5
expect_error "bad seed" 2 "attn: error: --seed x: expected a whole number (negative ones wrap as in torch.manual_seed)" \
  trace --seed x
expect_error "bad fill" 2 "attn: error: --fill abc: expected -inf or a finite number such as -1e9" trace --fill abc
expect_error "unknown stage" 2 \
  "attn: error: --stage foo: no stage is called foo (the stages: embed, input, params, norm, positions, projections, view, transpose, rope, cache, append, repeat_kv, scores, scaled, alibi, biased, mask, masked, softmax, dropout, context, flash, merge, concat, output, residual, mlp_norm, mlp, block; or their numbers, 0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a, 15a to 15d)" \
  trace --stage foo
expect_error "stage absent from this run" 2 "attn: error: --stage mask: this run has no mask stage (it needs --mask, --mask-file or --key-padding-mask)" \
  trace --stage mask
expect_error "unknown format" 2 "attn: error: --format xml: expected one of table, json, jsonl, npz, torch, py, heatmap, svg, png, html or dot" trace --format xml
expect_error "not a number" 2 "attn: error: --heads abc: expected a whole number" trace --heads abc
expect_error "unknown flag" 2 "attn: error: --bogus: attn trace has no such flag; see \`attn trace --help\`" trace --bogus
expect_error "no subcommand" 2 "attn: error: no command given: try \`attn trace --heads 4 --mask causal\`, or \`attn --help\`"

# --- sizes that would not fit: refused before allocating, exit 1 -------------------
expect_error "sizes too large for memory" 1 \
  "attn: error: these sizes need 85.3 PiB but the limit is 20.0 GiB (--max-memory); the largest stages are scores, scaled, softmax at 28.4 PiB each, for [B,H,Sq,Sk] = [100000,8,100000,100000]" \
  trace --batch 100000 --seq 100000 --heads 8 --d-model 64 --max-memory 20GiB
expect_error "sizes that overflow 64 bits" 1 \
  "attn: error: these sizes need more than 16 EiB but the limit is 1.0 GiB (--max-memory); the largest stages are scores, scaled, softmax at more than 16 EiB each, for [B,H,Sq,Sk] = [1000000,8,1000000,1000000]" \
  trace --batch 1000000 --seq 1000000 --heads 8 --max-memory 1GiB
expect_error "--max-memory is honoured" 1 \
  "attn: error: these sizes need 3.1 MiB but the limit is 1.0 MiB (--max-memory); the largest stages are scores, scaled, softmax at 1.0 MiB each, for [B,H,Sq,Sk] = [1,4,256,256]" \
  trace --seq 256 --heads 4 --max-memory 1MiB --row 0

# table and torch keep only the rows they print of the [B,H,Sq,Sk] stages: a run whose
# stages need 135 MiB whole prints under 24 MiB, the same text as without a limit
for format in torch table; do
  run trace --seq 1024 --heads 8 --d-model 64 --mask causal --format $format --max-memory 24MiB
  cp "$work/out" "$work/limited"
  check "--format $format of Sq=1024 under --max-memory 24MiB" test "$rc" = 0
  run trace --seq 1024 --heads 8 --d-model 64 --mask causal --format $format --max-memory none
  check "... prints what the run without a limit prints" cmp -s "$work/out" "$work/limited"
done
expect_error "--full prints every value: whole stages, counted by --max-memory" 1 \
  "attn: error: these sizes need 98.1 MiB but the limit is 24.0 MiB (--max-memory); the largest stages are scores, scaled, softmax at 32.0 MiB each, for [B,H,Sq,Sk] = [1,8,1024,1024]" \
  trace --seq 1024 --heads 8 --d-model 64 --format torch --full --max-memory 24MiB

# --- a decoding step with a KV cache (--past N) and grouped-query heads (--kv-heads G) ---------
run trace --past 6 --seq 1 --mask causal --format json
check "--past 6 --seq 1: exit 0" test "$rc" = 0
check "... the run is self-attention with a cache, never cross-attention" \
  test "$(jq -c '[.config.past, .config.seq, .config.kv_seq, .config.cross, .config.causal_align]' "$work/out")" = '[6,1,7,false,"lower-right"]'
check "... x holds all N + Sq tokens, the cache N, append N + Sq" \
  test "$(jq -c '[.stages.input.tensors.x.shape, .stages.cache.tensors.k.shape, .stages.append.tensors.v.shape, .stages.cache.step, .stages.append.step]' "$work/out")" = '[[1,7,8],[1,2,6,4],[1,2,7,4],"5b","5c"]'
check "... one new token sees every cached key" test "$(jq -c '.stages.mask.tensors.mask.data[0][0][0]' "$work/out")" = '[true,true,true,true,true,true,true]'
run trace --past 6 --seq 1 --mask causal
check "... the table's run line says so" grep -q '^run    self-attention, decoding with a KV cache (6 cached, 1 new)' "$work/out"
check "... and nowhere cross-attention" sh -c "! grep -q cross-attention '$work/out'"
run trace --past 6 --seq 1 --mask causal --format json --stage context
cp "$work/out" "$work/step.json"
run trace --seq 7 --mask causal --format json --stage context
check "... its context row is the full causal pass's last (within 1e-6)" test "$(jq -n --slurpfile a "$work/step.json" --slurpfile b "$work/out" \
  '[range(2) as $h | range(4) as $d | ($a[0].stages.context.tensors.context.data[0][$h][0][$d] - $b[0].stages.context.tensors.context.data[0][$h][6][$d]) | fabs] | max < 1e-6')" = true
run trace --past 2 --seq 3 --kv-seq 6
check "--kv-seq other than N + Sq: exit 2" test "$rc" = 2
check "... naming both flags" grep -qx 'attn: error: --kv-seq 6 must equal --past 2 + --seq 3 = 5 (the keys are the cached tokens and the new ones; or leave --kv-seq out)' "$work/err"
expect_error "--past refuses --cross" 2 \
  "attn: error: --past 2 is a decoding step of self-attention: keys and values come from the same tokens as the queries, so it takes no --cross or --kv-input" \
  trace --past 2 --cross
expect_error "--past refuses a --d-kv-in other than --d-in" 2 \
  "attn: error: --past 2 is a decoding step of self-attention: --d-kv-in 6 must equal --d-in 8 (or be left out)" \
  trace --past 2 --d-kv-in 6
expect_error "--past must be 0 or more" 2 "attn: error: --past -1 must be 0 or more" trace --past -1
run trace --past 2 --seq 2 --mask causal --causal-align upper-left --format json --stage mask
check "--causal-align upper-left stays allowed with --past (it is the mistake)" \
  test "$(jq -c '.stages.mask.tensors.mask.data[0][0][0]' "$work/out")" = '[true,false,false,false]'
run trace --past 0 --format json --stage output
cp "$work/out" "$work/past0.json"
run trace --format json --stage output
check "--past 0 is today's run" test "$(jq -c .stages "$work/out")" = "$(jq -c .stages "$work/past0.json")"
run trace --heads 4 --d-model 8 --kv-heads 2 --format json
check "--kv-heads 2: w_k [G·dk,Dkv], k [B,G,S,dk], repeat_kv [B,H,Sk,dk]" \
  test "$(jq -c '[.config.kv_heads, .stages.params.tensors.w_k.shape, .stages.transpose.tensors.k.shape, .stages.repeat_kv.tensors.k.shape, .stages.repeat_kv.step]' "$work/out")" = '[2,[4,8],[1,2,4,2],[1,4,4,2],"5d"]'
check "... repeat_interleave: query heads 0 and 1 read kv head 0" \
  test "$(jq -c '[.stages.repeat_kv.tensors.k.data[0][0] == .stages.transpose.tensors.k.data[0][0], .stages.repeat_kv.tensors.k.data[0][1] == .stages.transpose.tensors.k.data[0][0], .stages.repeat_kv.tensors.k.data[0][2] == .stages.transpose.tensors.k.data[0][1]]' "$work/out")" = '[true,true,true]'
expect_error "--kv-heads must divide --heads" 2 \
  "attn: error: --kv-heads 3 must divide --heads 4 (1 <= G <= H: each kv head serves H/G query heads)" \
  trace --heads 4 --kv-heads 3
run trace --heads 4 --kv-heads 2 --shapes
check "--shapes: repeat_kv is a copy" grep -q 'copy of transpose (repeat_interleave)' "$work/out"
check "--shapes: the cache is absent without --past" sh -c "! grep -q '^ *18 ' '$work/out'"
run trace --past 3 --seq 2 --heads 4 --kv-heads 1 --format json
cp "$work/out" "$work/gqa.json"
run trace --from "$work/gqa.json" --format json
check "--from replays past and kv_heads" test "$(jq -c '[.config.past, .config.kv_heads, .stages.output.tensors.out.data]' "$work/out")" = \
  "$(jq -c '[.config.past, .config.kv_heads, .stages.output.tensors.out.data]' "$work/gqa.json")"
run trace --past 3 --stage cache
check "--stage cache alone" test "$(grep -c '^── ' "$work/out")" = 1
expect_error "--stage cache without --past" 2 \
  "attn: error: --stage cache: this run has no cache stage (it needs --past N with N > 0 (a decoding step with a KV cache))" \
  trace --stage cache
run mask --mask causal --past 4 --seq 2 --format json
check "attn mask --past 4: [Sq,Sk] = [2,6], aligned lower-right" test "$(jq -c '.conventions[0].data' "$work/out")" = '[[true,true,true,true,true,false],[true,true,true,true,true,true]]'
check "... with no advice to align it otherwise" test ! -s "$work/err"
run mask --mask window --window 1 --past 3 --seq 1 --format json
check "attn mask --past 3 --mask window: the window counts from the query's position N + i" \
  test "$(jq -c '.conventions[0].data' "$work/out")" = '[[false,false,true,true]]'
run trace --past 4 --seq 2 --mask causal --causal-align upper-left --stage mask
check "--past with --causal-align upper-left: the advice names lower-right" grep -q 'a KV-cache decoder aligns lower-right' "$work/err"
# --- positions: --pos rope|alibi|sinusoidal, --rope-base, --rope-style (issue 23, item 3) ------
expect_ok "--pos rope: stage rope in the json" trace --pos rope --seq 5 --stage rope --format json
check "... cos and sin [Sq,dk], q [B,H,Sq,dk] rotated, the config says how" test \
  "$(jq -c '[.stages.rope.step, .stages.rope.tensors.cos.shape, .stages.rope.tensors.q.shape, .config.pos, .config.rope_base, .config.rope_style]' "$work/out")" \
  = '["5a",[5,4],[1,2,5,4],"rope",10000,"half"]'
check "... position 0 is not rotated: q[.,.,0] is the transposed q" test \
  "$(jq -c '.stages.rope.tensors.q.data[0][0][0]' "$work/out")" = "$("$attn" trace --stage transpose --seq 5 --format json | jq -c '.stages.transpose.tensors.q.data[0][0][0]')"
expect_ok "--rope-style interleaved: cos repeats each angle on (2i, 2i+1)" trace --pos rope --rope-style interleaved --stage rope --format json
check "... cos[1] = cos 1, cos 1, cos 0.01, cos 0.01" test \
  "$(jq -c '.stages.rope.tensors.cos.data[1] | map(. * 1000 | round)' "$work/out")" = '[540,540,1000,1000]'
expect_ok "--pos alibi: alibi and biased, in their place" trace --pos alibi --heads 4 --mask causal --format json
check "... in computation order: scaled, alibi, biased, mask, masked" test \
  "$(jq -c '.stages | keys_unsorted | .[6:11]' "$work/out")" = '["scaled","alibi","biased","mask","masked"]'
check "... head 0's slope is 1/4 for H = 4: bias[0,0,3,0] = -0.75" test "$(jq -c '.stages.alibi.tensors.bias.data[0][0][3][0]' "$work/out")" = "-0.75"
check "... biased = scaled + bias" test "$(jq -c '[.stages.scaled.tensors.scaled.data[0][1][2][0] + .stages.alibi.tensors.bias.data[0][1][2][0] - .stages.biased.tensors.biased.data[0][1][2][0] | fabs < 1e-6]' "$work/out")" = "[true]"
"$attn" trace --pos alibi --heads 4 --seq 9 --mask causal --stage biased,softmax --format json >"$work/whole.json"
expect_ok "--pos alibi in blocks of 2 rows (--block-rows) gives the whole run's numbers" \
  trace --pos alibi --heads 4 --seq 9 --mask causal --stage biased,softmax --format json --block-rows 2
check "... biased and softmax equal" test "$(jq -c '.stages' "$work/out")" = "$(jq -c '.stages' "$work/whole.json")"
expect_ok "--pos sinusoidal: pe and x + pe before the projections" trace --pos sinusoidal --seq 3 --stage input,positions --format json
check "... pe[1][0] = sin 1, x = input.x + pe" test \
  "$(jq -c '[(.stages.positions.tensors.pe.data[1][0] * 1e6 | round), ((.stages.input.tensors.x.data[0][2][3] + .stages.positions.tensors.pe.data[2][3] - .stages.positions.tensors.x.data[0][2][3]) | fabs < 1e-6)]' "$work/out")" = '[841471,true]'
expect_ok "--pos sinusoidal in cross-attention: x_kv gets its own positions" trace --pos sinusoidal --kv-seq 5 --d-kv-in 6 --stage positions --format json
check "... pe_kv [Sk,Dkv]" test "$(jq -c '.stages.positions.tensors.pe_kv.shape' "$work/out")" = '[5,6]'
"$attn" trace --pos rope --rope-base 500 --rope-style interleaved --format json --out "$work/rope.json"
expect_ok "a --pos rope dump replays (--from)" trace --from "$work/rope.json" --stage rope --format json
check "... with its base and style" test "$(jq -c '[.config.rope_base, .config.rope_style, .stages.rope.tensors.k.data]' "$work/out")" = \
  "$(jq -c '[.config.rope_base, .config.rope_style, .stages.rope.tensors.k.data]' "$work/rope.json")"
jq '.stages.rope.tensors.q.data' "$work/rope.json" >"$work/rope_q.json"
expect_ok "attn check --stage rope --tensor q accepts the rotated q" check --pos rope --rope-base 500 --rope-style interleaved \
  --stage rope --tensor q --answer "$work/rope_q.json"
run check --pos rope --stage rope --tensor q --answer "$work/rope_q.json"
check "... and refuses it for another base (exit 1)" test "$rc" -eq 1
expect_error "--pos rope with an odd head width" 2 \
  "attn: error: --pos rope rotates pairs of coordinates, but dk = --d-model 6 / --heads 2 = 3 is odd; give an even head width" \
  trace --pos rope --d-model 6 --heads 2
expect_error "--pos rope in cross-attention" 2 \
  "attn: error: --pos rope encodes the distance i - j between a query and a key of the same sequence; in cross-attention (--kv-seq, --d-kv-in, --cross or --kv-input) the keys come from another sequence; use --pos sinusoidal or none" \
  trace --pos rope --kv-seq 6
expect_error "--pos alibi with --cross" 2 \
  "attn: error: --pos alibi encodes the distance i - j between a query and a key of the same sequence; in cross-attention (--kv-seq, --d-kv-in, --cross or --kv-input) the keys come from another sequence; use --pos sinusoidal or none" \
  trace --pos alibi --cross
expect_error "--rope-base without --pos rope" 2 \
  "attn: error: --rope-base says how --pos rope rotates q and k, but --pos is none; add --pos rope" trace --rope-base 500
expect_error "--rope-style without --pos rope" 2 \
  "attn: error: --rope-style says how --pos rope rotates q and k, but --pos is alibi; add --pos rope" trace --pos alibi --rope-style interleaved
expect_error "--rope-base 0" 2 "attn: error: --rope-base 0 must be a finite number above 0 (10000 by default)" trace --pos rope --rope-base 0
expect_error "--pos sinusoidal with an odd --d-in" 2 \
  "attn: error: --pos sinusoidal pairs sin and cos over the input width, but --d-in 5 is odd; give an even width" trace --pos sinusoidal --d-in 5
expect_error "an unknown --pos" 2 "attn: error: --pos bogus: expected one of none, rope, alibi or sinusoidal" trace --pos bogus
expect_error "--stage rope without --pos rope" 2 "attn: error: --stage rope: this run has no rope stage (it needs --pos rope)" trace --stage rope

# --- positions in a decoding step, with grouped heads and flash: all combine ---------------------
for pos in rope alibi sinusoidal; do
  "$attn" trace --pos $pos --seq 7 --heads 4 --kv-heads 2 --mask causal --stage context --format json >"$work/full.json"
  expect_ok "--pos $pos --past 5 --kv-heads 2 --flash-block 3" \
    trace --pos $pos --past 5 --seq 2 --heads 4 --kv-heads 2 --mask causal --flash-block 3 --format json
  check "... positions count over all N + Sq tokens: the step's context rows are the full causal pass's last two (within 1e-6)" \
    test "$(jq -n --slurpfile a "$work/out" --slurpfile b "$work/full.json" \
      '[range(4) as $h | range(2) as $i | range(2) as $d | ($a[0].stages.context.tensors.context.data[0][$h][$i][$d] - $b[0].stages.context.tensors.context.data[0][$h][5 + $i][$d]) | fabs] | max < 1e-6')" = true
  check "... flash agrees with the exact context" test "$(jq '.stages.flash.max_abs_diff < .stages.flash.tolerance' "$work/out")" = true
done
"$attn" trace --pos rope --seq 7 --kv-heads 1 --stage rope --format json >"$work/full.json"
run trace --pos rope --past 5 --seq 2 --kv-heads 1 --stage rope,cache --format json
check "--pos rope --past 5: rope's angles start at position 5, the cache's keys are rotated at 0..4" \
  test "$(jq -c '[.stages.rope.tensors.cos.data[0], .stages.cache.tensors.k.data[0][0]]' "$work/out")" = \
  "$(jq -c '[.stages.rope.tensors.cos.data[5], .stages.rope.tensors.k.data[0][0][0:5]]' "$work/full.json")"
run trace --pos sinusoidal --past 3 --seq 2 --stage positions --format json
check "--pos sinusoidal --past 3: pe covers all 5 tokens of x" test "$(jq -c '.stages.positions.tensors.pe.shape' "$work/out")" = '[5,8]'

finish
