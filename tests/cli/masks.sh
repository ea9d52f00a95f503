#!/usr/bin/env bash
# Command-line tests: masks from files in PyTorch's conventions (--mask-file,
# --key-padding-mask, --mask-convention), checked against nn.MultiheadAttention
# and seed notebook 003's mask (tests/reference/make_cli_fixtures.py).
# Usage: masks.sh path/to/attn. Needs jq and python3 with NumPy.
set -u
attn=${1:?usage: masks.sh path/to/attn}
. "$(dirname "$0")/common.sh"
ref=$(cd "$(dirname "$0")/../reference/cli" && pwd)
export PATH="/usr/bin:$PATH"  # Debian's python3, with NumPy

py() { python3 -c "$@"; }
py 'import numpy as np
np.save("'"$work"'/m24.npy", np.array([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=np.int64))   # notebook 002: 1 = real token
np.save("'"$work"'/m34.npy", np.ones((3, 4), dtype=bool))
np.save("'"$work"'/triu4.npy", np.triu(np.ones((4, 4)), 1).astype(bool))
np.save("'"$work"'/tril4_additive.npy", np.where(np.tril(np.ones((4, 4))) == 1, 0.0, -np.inf).astype(np.float32))
np.save("'"$work"'/bias.npy", np.full((4, 4), 0.5, dtype=np.float32))'

# --- a [B,Sk] mask is never read as [Sq,Sk] silently -------------------------------
expect_error "--mask-file [2,4] with --batch 2 reads two ways: an error naming both" 2 \
  "attn: error: --mask-file $work/m24.npy: shape [2,4] reads two ways: [Sq,Sk], a mask of 2 queries by 4 keys, or [B,Sk], a key-padding mask of one row per batch item (B = 2). For [B,Sk] give --key-padding-mask $work/m24.npy (true = padded key; with --mask-convention keep if 1 marks real tokens); for [Sq,Sk] save it as [1,2,4]" \
  trace --batch 2 --mask-file "$work/m24.npy"
expect_error "--mask-file [2,4] with --batch 2 --seq 4 is [B,Sk] only" 2 \
  "attn: error: --mask-file $work/m24.npy: shape [2,4] is [B,Sk], a key-padding mask of one row per batch item, not [Sq,Sk] (--seq 4 says Sq = 4): give --key-padding-mask $work/m24.npy (true = padded key; with --mask-convention keep if 1 marks real tokens)" \
  trace --batch 2 --seq 4 --mask-file "$work/m24.npy"
expect_ok "--mask-file [3,4] with --batch 2 is [Sq,Sk], shared by the batch" trace --batch 2 --mask-file "$work/m34.npy" --format json
check "... so Sq = 3 and Sk = 4" test "$(jq -c '.config | [.batch,.seq,.kv_seq]' "$work/out")" = "[2,3,4]"

# --- --key-padding-mask against nn.MultiheadAttention --------------------------------
# same weights (seed 7, four nn.Linear(8,8)), x = randn(2,4,8), key 3 of batch 0 padded
compare_to_mha() {  # $1: the JSON trace; prints the largest |diff| and checks padded weights are exactly 0
  python3 - "$1" "$ref/key_padding.expected.json" <<'PY'
import json, sys
import numpy as np
ours, ref = (json.load(open(p)) for p in sys.argv[1:3])
def arr(t): return np.array(t["data"], dtype=np.float64).reshape(t["shape"])
w = np.array(ours["stages"]["softmax"]["tensors"]["weights"]["data"], dtype=np.float64)
out = np.array(ours["stages"]["output"]["tensors"]["out"]["data"], dtype=np.float64)
dw, do = np.abs(w - arr(ref["tensors"]["weights"])).max(), np.abs(out - arr(ref["tensors"]["out"])).max()
assert dw < 1e-6 and do < 1e-6, (dw, do)
assert (w[0, :, :, 3] == 0).all(), "padded key 3 of batch 0 has weight"
assert (w[1] > 0).all(), "batch 1 has no padding"
PY
}
expect_ok "--key-padding-mask (true = padded)" trace --seed 7 --batch 2 --seq 4 --d-model 8 --heads 2 \
  --key-padding-mask "$ref/key_padding.npy" --format json
cp "$work/out" "$work/kpm.json"
check "--key-padding-mask gives nn.MultiheadAttention's weights and output; padded keys weigh 0" compare_to_mha "$work/kpm.json"
expect_ok "--key-padding-mask with --mask-convention keep (1 = real token, notebook 002)" trace --seed 7 --batch 2 \
  --d-model 8 --heads 2 --key-padding-mask "$ref/key_padding_keep.npy" --mask-convention keep --format json
check "... the same weights and output" compare_to_mha "$work/out"
check "--key-padding-mask alone gives Sq = Sk (self-attention)" test "$(jq -c '.config | [.seq,.kv_seq,.cross]' "$work/kpm.json")" = "[4,4,false]"
check "the key-padding mask is broadcast over queries in the mask stage" \
  test "$(jq -c '.stages.mask.tensors.mask.data[0][0][2]' "$work/kpm.json")" = "[true,true,true,false]"
run trace --seed 7 --batch 2 --d-model 8 --heads 2 --key-padding-mask "$ref/key_padding_keep.npy"
check "a key-padding mask that pads a whole batch item is questioned" grep -q \
  "key-padding-mask $ref/key_padding_keep.npy: every key of batch 1 is padding (read as mha: true = padded key); if your file marks the other way, give --mask-convention keep" "$work/err"
expect_error "--key-padding-mask whose B disagrees with --batch" 2 \
  "attn: error: --key-padding-mask $ref/key_padding.npy has shape [2,4] [B,Sk], so B = 2, but --batch 3 says B = 3" \
  trace --batch 3 --key-padding-mask "$ref/key_padding.npy"

# --- notebook 003's mask: triu(ones, 1).bool(), true = not allowed -------------------
causal_weights() { "$attn" trace --seq 5 --heads 2 --seed 3 --mask causal --stage softmax --format json | jq -c .stages.softmax.tensors; }
expect_ok "--mask-file triu(...,1).bool() --mask-convention mha" trace --seq 5 --heads 2 --seed 3 \
  --mask-file "$ref/causal_triu.npy" --mask-convention mha --stage softmax --format json
check "... gives the causal weights, bit for bit" test "$(jq -c .stages.softmax.tensors "$work/out")" = "$(causal_weights)"
expect_ok "--mask-file of 0/-inf --mask-convention additive" trace --seq 5 --heads 2 --seed 3 \
  --mask-file "$ref/causal_additive.npy" --mask-convention additive --stage softmax --format json
check "... gives the causal weights, bit for bit" test "$(jq -c .stages.softmax.tensors "$work/out")" = "$(causal_weights)"
run trace --seq 5 --heads 2 --mask-file "$ref/causal_triu.npy"
check "triu(...,1).bool() read as keep: a hint naming --mask-convention mha" grep -q \
  "^attn: warning: --mask-file $ref/causal_triu.npy is strictly upper-triangular: read as keep (true = may attend), every query may attend only later keys. It looks like nn.MultiheadAttention's convention (torch.triu(..., diagonal=1).bool(), true = not allowed): give --mask-convention mha$" "$work/err"
check "... printed in the table next to the mask stage" grep -q "^   ! --mask-file .*strictly upper-triangular" "$work/out"
run trace --mask-file "$work/triu4.npy" --mask-convention mha
check "no hint when the convention is right" test ! -s "$work/err"
expect_error "an additive mask read as keep: a hint naming --mask-convention additive" 1 \
  "attn: error: --mask-file $work/tril4_additive.npy: -inf at [0][1] is not 0 or 1 (read as --mask-convention keep: true/1 = may attend, false/0 = may not); it looks like an additive mask of 0 and -inf: give --mask-convention additive" \
  trace --mask-file "$work/tril4_additive.npy"
expect_error "an additive mask with biases other than 0 and -inf" 1 \
  "attn: error: --mask-file $work/bias.npy: 0.5 at [0][0] is not 0 or a large negative (an additive mask holds 0 = may attend, -inf or <= -1e4 = may not; other values are score biases, which attn does not apply)" \
  trace --mask-file "$work/bias.npy" --mask-convention additive
expect_error "--mask-convention without a mask file" 2 \
  "attn: error: --mask-convention mha says how to read a mask file: give --mask-file or --key-padding-mask" \
  trace --mask-convention mha
expect_error "--mask-convention takes keep, mha or additive" 2 \
  "attn: error: --mask-convention bogus: expected one of keep, mha or additive" trace --mask-file "$work/triu4.npy" --mask-convention bogus

finish
