#!/usr/bin/env bash
# Command-line tests for tensors in and out: --input/--kv-input/--params/--q/--k/--v/
# --mask-file, --format npz and torch, dropout. Usage: files.sh path/to/attn
# Needs jq; the npz checks also need python3 with NumPy (Debian's python3-numpy).
set -u
attn=${1:?usage: files.sh path/to/attn}
. "$(dirname "$0")/common.sh"
io="$here/../reference/io"
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

# --- inputs from JSON: the sizes come from the files ----------------------------------
echo '[[[1,0,0,0],[0,1,0,0],[0,0,1,0]]]' >"$work/x.json"   # [B,Sq,Din] = [1,3,4]
expect_ok "--input sets B, Sq, Din (and D = Din)" trace --input "$work/x.json" --format json
check "sizes from the file" test "$(jq -c '.config | [.batch,.seq,.kv_seq,.d_model,.d_in]' "$work/out")" = '[1,3,3,4,4]'
check "the input stage holds the file's numbers" test "$(jq -c '.stages.input.tensors.x.data[0][1]' "$work/out")" = '[0,1,0,0]'
expect_ok "--d-model may differ from the file's Din" trace --input "$work/x.json" --d-model 6 --format json --stage params
check "w_q is [D,Din] = [6,4]" test "$(jq -c '.stages.params.tensors.w_q.shape' "$work/out")" = '[6,4]'
expect_error "a flag that contradicts a file names both" 2 \
  "attn: error: --input $work/x.json has shape [1,3,4] [B,Sq,Din], so Sq = 3, but --seq 5 says Sq = 5" \
  trace --input "$work/x.json" --seq 5

# a file draws nothing: params drawn from the seed are the same with or without --input
run trace --seed 4 --format json --stage params --seq 3 --d-model 4
jq -c .stages.params "$work/out" >"$work/p1"
run trace --seed 4 --format json --stage params --input "$work/x.json"
check "given x leaves the params' draws alone" test "$(jq -c .stages.params "$work/out")" = "$(cat "$work/p1")"

# --kv-input turns on cross-attention
echo '[[[1,2],[3,4],[5,6],[7,8],[9,10]]]' >"$work/xkv.json"  # [1,5,2]
expect_ok "--kv-input" trace --input "$work/x.json" --kv-input "$work/xkv.json" --format json --stage input,scores
check "cross: Sk and Dkv from x_kv" test "$(jq -c '[.config.kv_seq, .config.d_kv_in, .config.cross]' "$work/out")" = '[5,2,true]'
check "cross: scores are [1,2,3,5]" test "$(jq -c '.stages.scores.tensors.scores.shape' "$work/out")" = '[1,2,3,5]'

# NaN and infinity in an input are allowed and reported
echo '[[[1,NaN,0,0],[0,1,"inf",0],[0,0,1,0]]]' >"$work/nan.json"
expect_ok "NaN and inf in an input run" trace --input "$work/nan.json" --format json --stage input
check "the non-finite values are reported on stderr" grep -qx \
  "attn: warning: --input $work/nan.json holds 2 NaN or infinite values (the first at \[0\]\[0\]\[1\]); they will spread through the stages that use them" \
  "$work/err"
check "NaN reaches the JSON as a string" test "$(jq -r '.stages.input.tensors.x.data[0][0][1]' "$work/out")" = "nan"

# --- --q --k --v start at the projections ---------------------------------------------------
echo '[[[1,0,0,0],[0,1,0,0]]]' >"$work/q.json"            # [B,Sq,D] = [1,2,4]
echo '[[[1,0,0,0],[0,1,0,0],[1,1,0,0]]]' >"$work/k.json"  # [B,Sk,D] = [1,3,4]
echo '[[[1,2,3,4],[5,6,7,8],[9,10,11,12]]]' >"$work/v.json"
expect_ok "--q --k --v" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 1 --format jsonl
check "no input or params stage" test "$(jq -r .name "$work/out" | head -2 | paste -sd, -)" = "projections,view"
expect_ok "scores from the given Q and K" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 1 \
  --no-out-proj --format json --stage scores
check "Q·Kᵀ by hand" test "$(jq -c '.stages.scores.tensors.scores.data' "$work/out")" = '[[[[1,0,1],[0,1,1]]]]'
expect_error "a D from a file that --heads does not divide" 2 \
  "attn: error: --q $work/q.json has shape [1,2,4] [B,Sq,D], so D = 4, which is not divisible by --heads 3" \
  trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 3
expect_error "--q alone" 2 "attn: error: --q, --k and --v go together (got only --q); they start the run at the projections stage" \
  trace --q "$work/q.json"
expect_error "--k and --v without --q" 2 \
  "attn: error: --q, --k and --v go together (got only --k --v); they start the run at the projections stage" \
  trace --k "$work/k.json" --v "$work/v.json"
expect_error "--q with --input" 2 \
  "attn: error: --input $work/x.json cannot be used with --q/--k/--v (they replace the input and its projections)" \
  trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --input "$work/x.json"
expect_error "--stage input with --q" 2 \
  "attn: error: --stage input: this run has no input stage (the run starts at the projections, with --q --k --v)" \
  trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --stage input
expect_error "K and V of different lengths" 2 \
  "attn: error: --v $work/q.json has shape [1,2,4] [B,Sk,D], so Sk = 2, but --k $work/k.json has shape [1,3,4] [B,Sk,D], so Sk = 3" \
  trace --q "$work/q.json" --k "$work/k.json" --v "$work/q.json"

# --- --mask-file ------------------------------------------------------------------------------
echo '[[1,0,1],[0,1,1]]' >"$work/m2.json"   # [Sq,Sk], shared by the batch
expect_ok "a 2-D mask file" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 1 \
  --mask-file "$work/m2.json" --format json --stage mask,softmax
check "the mask as read" test "$(jq -c '.stages.mask.tensors.mask.data' "$work/out")" = '[[[[true,false,true],[false,true,true]]]]'
check "masked keys get weight 0" test "$(jq -c '.stages.softmax.tensors.weights.data[0][0][0][1]' "$work/out")" = '0'
check "config records the mask file" test "$(jq -c '.config.mask_file' "$work/out")" = 'true'
expect_ok "a mask file ANDed with --mask causal" trace --seq 2 --kv-seq 3 --mask causal --mask-file "$work/m2.json" \
  --format json --stage mask
check "causal AND file" test "$(jq -c '.stages.mask.tensors.mask.data' "$work/out")" = '[[[[true,false,false],[false,true,false]]]]'
echo '[[1,0],[0,1]]' >"$work/m22.json"
expect_error "a mask of the wrong shape" 2 \
  "attn: error: --mask-file $work/m22.json has shape [2,2] [Sq,Sk], so Sk = 2, but --k $work/k.json has shape [1,3,4] [B,Sk,D], so Sk = 3" \
  trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --mask-file "$work/m22.json"
echo '[[[[1,0,1]],[[0,1,1]]]]' >"$work/m4.json"   # [1,2,1,3]: axis 1 is not 1
expect_error "a 4-D mask whose axis 1 is not 1" 1 \
  "attn: error: --mask-file $work/m4.json: shape [1,2,1,3] is not a mask shape: expected [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk]" \
  trace --mask-file "$work/m4.json"
echo '[[1,0.5,1],[0,1,1]]' >"$work/mhalf.json"
expect_error "a mask value other than 0 or 1" 1 \
  "attn: error: --mask-file $work/mhalf.json: 0.5 at [0][1] is not 0 or 1 (read as --mask-convention keep: true/1 = may attend, false/0 = may not)" \
  trace --mask-file "$work/mhalf.json" --seq 2 --kv-seq 3

# --- --params -----------------------------------------------------------------------------------
expect_ok "a dump for --params" trace --seed 9 --seq 3 --format npz --out "$work/dump.npz"
run trace --seed 9 --seq 3 --format json
jq -c '.stages.input.tensors.x.data' "$work/out" >"$work/x9.json"
jq -c '.stages | del(.input, .params)' "$work/out" >"$work/want"
expect_ok "--params from our own npz dump (params.* keys) and --input from its JSON" \
  trace --seed 1234 --params "$work/dump.npz" --input "$work/x9.json" --format json
check "the same run comes back" test "$(jq -c '.stages | del(.input, .params)' "$work/out")" = "$(cat "$work/want")"
jq -c '.stages.params.tensors | map_values(.data)' "$work/out" >"$work/params.json"
expect_ok "--input, --params and --mask-file from one npz dump" \
  trace --input "$work/dump.npz" --params "$work/dump.npz" --format json
check "the npz dump alone gives the same run" test "$(jq -c '.stages | del(.input, .params)' "$work/out")" = "$(cat "$work/want")"
expect_ok "--q --k --v from an npz dump" trace --q "$work/dump.npz" --k "$work/dump.npz" --v "$work/dump.npz" --format json
check "... the same scores" test "$(jq -c '.stages.scores' "$work/out")" = "$(jq -c '.scores' "$work/want")"
expect_error "an npz without the array a flag needs" 1 \
  "attn: error: --mask-file $work/dump.npz: no array mask.mask (an .npz here holds mask.mask, as our --format npz dumps do, or a single array)" \
  trace --mask-file "$work/dump.npz"
expect_ok "--params from a JSON object" trace --params "$work/params.json" --input "$work/x9.json" --format json
check "JSON params give the same run" test "$(jq -c '.stages | del(.input, .params)' "$work/out")" = "$(cat "$work/want")"
jq -c 'del(.b_o)' "$work/params.json" >"$work/no_bo.json"
expect_error "--params without b_o" 1 "attn: error: --params $work/no_bo.json: no array b_o (give it, or --no-out-proj)" \
  trace --params "$work/no_bo.json"
expect_error "--params with b_q but --no-qkv-bias" 2 \
  "attn: error: --params $work/params.json holds b_q, but --no-qkv-bias says there is none" \
  trace --params "$work/params.json" --no-qkv-bias
expect_error "--params whose D contradicts --d-model" 2 \
  "attn: error: --params $work/params.json w_q has shape [8,8] [D,Din], so D = 8, but --d-model 4 says D = 4" \
  trace --params "$work/params.json" --d-model 4
expect_ok "an npz of the params without the output layer" trace --no-out-proj --format npz --stage params --out "$work/no_o.npz"
expect_error "--params npz missing w_o" 1 "attn: error: --params $work/no_o.npz: no array w_o (give it, or --no-out-proj)" \
  trace --params "$work/no_o.npz"
expect_ok "... which is fine with --no-out-proj" trace --params "$work/no_o.npz" --no-out-proj
jq -c 'del(.w_k)' "$work/params.json" >"$work/no_wk.json"
expect_error "--params without w_k" 1 "attn: error: --params $work/no_wk.json: no array w_k (it is always needed)" \
  trace --params "$work/no_wk.json"
expect_error "--params that is neither .json nor .npz" 1 \
  "attn: error: --params $io/f4.npy: expected a .json object of named arrays, an .npz archive (np.savez), a .safetensors file or a sharded checkpoint's model.safetensors.index.json" \
  trace --params "$io/f4.npy"
jq -c '. + {weights: [1]}' "$work/params.json" >"$work/extra.json"
expect_error "--params with an unknown array" 1 \
  "attn: error: --params $work/extra.json: unexpected array 'weights' (expected w_q b_q w_k b_k w_v b_v w_o b_o)" \
  trace --params "$work/extra.json"

# --- bad files: one line naming the flag and file, exit 1, nothing on stdout --------------------
expect_error "a missing file" 1 "attn: error: --input $work/none.json: cannot open: No such file or directory" \
  trace --input "$work/none.json"
printf '[[1, 2],\n [3, 4]\n' >"$work/broken.json"
expect_error "malformed JSON gives line and column" 1 \
  "attn: error: --input $work/broken.json: line 3, column 1: unexpected end of input; expected ',' or ']'" \
  trace --input "$work/broken.json"
echo '[[[1,2,3],[4,5]]]' >"$work/ragged.json"
expect_error "ragged arrays" 1 \
  "attn: error: --input $work/ragged.json: ragged nested arrays: element [0][1] has 2 entries, element [0][0] has 3" \
  trace --input "$work/ragged.json"
echo '[[1,2,3]]' >"$work/rank2.json"
expect_error "an input with 2 axes" 1 \
  "attn: error: --input $work/rank2.json: shape [1,3] has 2 axes; expected 3, [B,Sq,Din]" trace --input "$work/rank2.json"
expect_error "an unknown extension" 1 \
  "attn: error: --input $work/x.txt: unknown file type '.txt'; expected .json (nested arrays) or .npy (NumPy)" trace --input "$work/x.txt"
dtype_list="expected little-endian float16, float32, float64, bool or integers"
expect_error "a Fortran-order npy" 1 \
  "attn: error: --input $io/fortran.npy: Fortran-order (column-major) arrays are not supported; save it with np.save(f, np.ascontiguousarray(a))" \
  trace --input "$io/fortran.npy"
expect_error "a big-endian npy" 1 "attn: error: --input $io/big_endian.npy: unsupported dtype '>f4' (big-endian); $dtype_list" \
  trace --input "$io/big_endian.npy"
expect_error "a complex npy" 1 "attn: error: --input $io/complex.npy: unsupported dtype '<c8' (complex64); $dtype_list" \
  trace --input "$io/complex.npy"
expect_error "a truncated npy" 1 \
  "attn: error: --input $io/truncated_half.npy: truncated: shape [2,3] of float32 needs 24 bytes of data after the header, found 12" \
  trace --input "$io/truncated_half.npy"
expect_error "a truncated npz" 1 "attn: error: --params $io/params_truncated.npz: truncated (not a complete zip archive)" \
  trace --params "$io/params_truncated.npz"
expect_error "an npz that is not a zip" 1 "attn: error: --params $io/not_zip.npz: not an .npz file (not a zip archive)" \
  trace --params "$io/not_zip.npz"
expect_error "an npz with a bad member" 1 \
  "attn: error: --params $io/bad_member.npz: w_k: unsupported dtype '<c8' (complex64); $dtype_list" \
  trace --params "$io/bad_member.npz"
echo old >"$work/keep.out"
run trace --input "$work/ragged.json" --out "$work/keep.out"
check "a bad file leaves --out alone" test "$(cat "$work/keep.out")" = old

# --- --format npz -------------------------------------------------------------------------------
expect_ok "--format npz --out" trace --batch 2 --mask causal --format npz --out "$work/t.npz"
check "--format npz writes nothing to stdout" test ! -s "$work/out"
run trace --batch 2 --mask causal --format json
jq -r '.stages | to_entries[] | .key as $s | .value.tensors | to_entries[] | "\($s).\(.key) [\(.value.shape | map(tostring) | join(","))]"' \
  "$work/out" >"$work/want-shapes"
if "$python" -c "import numpy" 2>/dev/null; then
  "$python" "$here/../io/numpy_reads_npz.py" "$work/t.npz" >"$work/got-shapes" 2>"$work/err"
  check "numpy.load reads every tensor with the JSON's shape" \
    diff <(grep -v '^config' "$work/got-shapes" | sed -E 's/ (float32|bool) / /') "$work/want-shapes"
  check "npz holds the config as JSON text" grep -q '^config ' "$work/got-shapes"
else
  echo "skip numpy checks (no NumPy)"
fi
"$attn" trace --format npz --stage softmax >"$work/stdout.npz" 2>"$work/err"
check "--format npz to a redirected stdout is a zip" bash -c "head -c 2 '$work/stdout.npz' | grep -q PK"

# --- --format torch -----------------------------------------------------------------------------
expect_ok "--format torch" trace --format torch --stage softmax,mask --mask causal --seq 3
check "a header line per tensor" test "$(grep '^#' "$work/out" | paste -sd, -)" = "# mask.mask,# softmax.weights"
check "booleans as PyTorch prints them" grep -q "tensor(\[\[\[\[ True, False, False\]," "$work/out"
# whole runs, character for character as PyTorch printed every tensor (tests/reference/torch_text),
# in the set of the OpenBLAS kernel running here: openblas/<Set>/torch_text/<case>.txt where that
# exists, <Set> from openblas/kernels.txt (make_fixtures.py). ctest sets ATTN_OPENBLAS_CORENAME to
# tests/openblas_corename. A kernel with no set: the same text, numbers within 1e-4 abs + 1e-4 rel.
ref="$here/../reference"
kernel=$("${ATTN_OPENBLAS_CORENAME:-openblas_corename}" 2>/dev/null)
check "the OpenBLAS kernel is known (ATTN_OPENBLAS_CORENAME=tests/openblas_corename): '$kernel'" test -n "$kernel"
blas_set=$(awk -v k="$kernel" '$1 == k { print $2 }' "$ref/openblas/kernels.txt")
[ -n "$blas_set" ] || echo "note: OpenBLAS kernel '$kernel' has no set in tests/reference/openblas/kernels.txt: --format torch" \
  "is compared with the Haswell set's print to 1e-4 abs + 1e-4 rel per number; bit equality is NOT checked"
tokens() { awk '{ gsub(/[][(),]/, " "); for (i = 1; i <= NF; i++) print $i }' "$1"; }
same_print_within_1e-4() {
  paste -d ' ' <(tokens "$1") <(tokens "$2") | awk '
    function num(s) { return s ~ /^-?([0-9]+\.?[0-9]*|\.[0-9]+)(e[-+][0-9]+)?$/ }
    NF != 2 { exit 1 }
    num($1) && num($2) { d = $1 - $2; if (d < 0) d = -d; b = $1 < 0 ? -$1 : $1; if (d > 1e-4 + 1e-4 * b) exit 1; next }
    $1 != $2 { exit 1 }'
}
while read -r case args; do
  # shellcheck disable=SC2086
  "$attn" trace $args --format torch >"$work/torch.txt" 2>/dev/null
  want="$ref/openblas/$blas_set/torch_text/$case.txt"
  [ -f "$want" ] || want="$ref/torch_text/$case.txt"
  if [ -n "$blas_set" ]; then
    check "--format torch equals PyTorch's print, every tensor: $case" diff "$want" "$work/torch.txt"
  else
    check "--format torch is PyTorch's print to 1e-4, every tensor: $case" same_print_within_1e-4 "$want" "$work/torch.txt"
  fi
done <<'CASES'
notebook_000_seed24 --seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj
fill_neg1e9_fully_masked_padding --seed 11 --batch 2 --seq 3 --heads 2 --mask padding --lengths 3,0 --fill -1e9
cross_d_kv_in --seed 16 --batch 2 --seq 3 --kv-seq 4 --d-model 8 --heads 2 --d-in 6 --d-kv-in 10
CASES

# the README's --format torch block is what the program prints
readme="$here/../../README.md"
awk '/--stage softmax --format torch` prints:/ {seen = 1; next} seen && /^```/ {if (inside) exit; inside = 1; next} inside' \
  "$readme" >"$work/readme-torch"
"$attn" trace --seq 3 --mask causal --stage softmax --format torch >"$work/actual-torch"
check "README's --format torch block is real" diff "$work/readme-torch" "$work/actual-torch"
expect_ok "--sci-mode on" trace --format torch --stage scaled --sci-mode on
check "scientific notation" grep -q "e-0\|e+0" "$work/out"
expect_error "a bad --sci-mode" 2 "attn: error: --sci-mode maybe: expected one of auto, on or off" trace --sci-mode maybe

# --- dropout ---------------------------------------------------------------------------------------
expect_ok "--dropout --train adds stage 11" trace --dropout 0.5 --train --format jsonl
check "dropout stage in order" test "$(jq -r .name "$work/out" | sed -n '8,10p' | paste -sd, -)" = "softmax,dropout,context"
run trace --dropout 0.5 --train --dropout-seed 3 --format json --stage softmax,dropout
check "kept weights are scaled by 1/(1-p), dropped ones are 0" jq -e \
  '[.stages.softmax.tensors.weights.data[][][][]] as $w | [.stages.dropout.tensors.keep.data[][][][]] as $k
   | [.stages.dropout.tensors.weights.data[][][][]] | to_entries
   | all(.value == (if $k[.key] then $w[.key] * 2 else 0 end) or ((.value - $w[.key] * 2) | fabs) < 1e-6)' "$work/out"
expect_ok "--dropout without --train is the identity" trace --dropout 0.5 --format jsonl
check "no dropout stage in eval mode" bash -c "! jq -r .name '$work/out' | grep -qx dropout"
expect_error "--stage dropout without --train" 2 \
  "attn: error: --stage dropout: this run has no dropout stage (it needs --dropout P with P > 0 and --train)" \
  trace --dropout 0.5 --stage dropout
expect_error "--dropout out of range" 2 "attn: error: --dropout 1.5 must be between 0 and 1" trace --dropout 1.5

finish
