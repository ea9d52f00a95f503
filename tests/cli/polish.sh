#!/usr/bin/env bash
# Command-line tests: each stage's text is true of the run, settings that do
# nothing or teach a bug are named, and --cross. Usage: polish.sh path/to/attn
# Needs jq and python3 with NumPy.
set -u
attn=${1:?usage: polish.sh path/to/attn}
. "$(dirname "$0")/common.sh"
ref=$(cd "$(dirname "$0")/../reference/cli" && pwd)
export PATH="/usr/bin:$PATH"  # Debian's python3, with NumPy

formula() { jq -r ".stages.$1.formula" "$work/out"; }

# --- each formula describes this run ----------------------------------------------
expect_ok "a default run" trace --mask causal --format json
check "x drawn: torch.randn" test "$(formula input)" = "x = torch.randn(B,Sq,Din); keys and values also come from x (self-attention)"
check "with biases: + b_q" test "$(formula projections)" = "Q = X·W_qᵀ + b_q, K = X·W_kᵀ + b_k, V = X·W_vᵀ + b_v"
check "the fill as typed: -inf" test "$(formula masked)" = "masked = scaled.masked_fill(mask == false, -inf)"
check "the mask names its kinds, shared by every head" test "$(formula mask)" = \
  "mask[b,0,i,j] = (j <= i); true = query i may attend key j, the same for every head"
check "softmax of the masked scores" test "$(formula softmax)" = "weights = softmax(masked, dim=-1)"
expect_ok "no mask" trace --format json --stage softmax
check "softmax of the scaled scores without a mask" test "$(formula softmax)" = "weights = softmax(scaled, dim=-1)"
expect_ok "--no-qkv-bias" trace --no-qkv-bias --format json --stage params,projections
check "--no-qkv-bias: no + b_q" test "$(formula projections)" = "Q = X·W_qᵀ, K = X·W_kᵀ, V = X·W_vᵀ"
check "--no-qkv-bias: params say which layers have a bias" test "$(formula params)" = \
  "y = x·Wᵀ for q, k, v (no bias); y = x·Wᵀ + b for the output"
expect_ok "--fill -1e9" trace --mask causal --fill -1e9 --format json --stage masked
check "--fill -1e9 is written as typed" test "$(formula masked)" = "masked = scaled.masked_fill(mask == false, -1e9)"
"$attn" trace --batch 2 --seq 3 --d-model 4 --format json --stage input,projections >"$work/t.json"
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["stages"]["input"]["tensors"]["x"]["data"], open(sys.argv[2], "w"))' \
  "$work/t.json" "$work/x.json"
expect_ok "--input x.json" trace --input "$work/x.json" --heads 2 --format json --stage input
check "x from a file is not torch.randn" test "$(formula input)" = "x from --input [B,Sq,Din]; keys and values also come from x (self-attention)"
jq '.stages.projections.tensors.q.data' "$work/t.json" >"$work/q.json"
jq '.stages.projections.tensors.k.data' "$work/t.json" >"$work/k.json"
jq '.stages.projections.tensors.v.data' "$work/t.json" >"$work/v.json"
expect_ok "--q --k --v" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 2 --format json --stage projections
check "with --q --k --v there is no X" test "$(formula projections)" = "Q, K, V from --q --k --v (no input and no weights before them)"
expect_ok "cross-attention" trace --kv-seq 6 --format json --stage input,projections
check "cross-attention: x_kv drawn" test "$(formula input)" = \
  "x = torch.randn(B,Sq,Din); x_kv = torch.randn(B,Sk,Dkv) (cross-attention: keys and values come from x_kv)"
check "cross-attention: K and V from X_kv" test "$(formula projections)" = "Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v"
expect_ok "table shows the run's formula" trace --mask causal --fill -1e9 --stage masked
check "... under the masked heading" grep -qx "   masked = scaled.masked_fill(mask == false, -1e9)" "$work/out"

# --- settings that do nothing or teach a bug ---------------------------------------
expect_ok "--dropout without --train" trace --dropout 0.5 --stage softmax
check "--dropout without --train warns" grep -qx \
  "attn: warning: --dropout 0.5 does nothing without --train: in eval mode (model.eval()) dropout is the identity, so there is no stage 11; add --train to apply it" "$work/err"
check "... and the table says so under softmax" grep -q "^   ! --dropout 0.5 does nothing without --train" "$work/out"
expect_ok "--train without --dropout" trace --train --stage softmax
check "--train without --dropout warns" grep -qx \
  "attn: warning: --train does nothing without --dropout P (P > 0): dropout is the only layer that training mode changes here" "$work/err"
expect_ok "--dropout with --train" trace --dropout 0.5 --train --stage dropout
check "--dropout with --train: no warning" test ! -s "$work/err"
expect_ok "--fill 0" trace --mask causal --fill 0 --format json
check "--fill 0 warns that masked keys keep weight, with the numbers" grep -qE \
  "^attn: warning: --fill 0 is not far below the scores \(the scaled scores of allowed keys lie in -?[0-9.]+ \.\. -?[0-9.]+\), so masked keys still get weight: up to 0\.[0-9]+ at batch 0, head [01], query [0-3], key [1-3]\. Use -inf, or a fill such as -1e9$" "$work/err"
check "... which the JSON keeps with the masked stage" jq -e '.stages.masked.warnings[0] | startswith("--fill 0 is not far below")' "$work/out"
check "... and the weight it names is real" jq -e '[.stages.softmax.tensors.weights.data[0][][1][2]] | max > 0.01' "$work/out"
expect_ok "--fill -1e9" trace --mask causal --fill -1e9
check "--fill -1e9: no warning" test ! -s "$work/err"
expect_ok "causal with Sq < Sk" trace --mask causal --seq 3 --kv-seq 5 --stage mask
check "causal with Sq != Sk names its alignment" grep -qx \
  "attn: warning: causal with Sq = 3 queries and Sk = 5 keys is aligned upper-left (--causal-align upper-left, the default), as torch.tril(torch.ones(3, 5)) and SDPA's is_causal: query i may attend keys j <= i, so the last 2 keys are attended by no query; a KV-cache decoder aligns lower-right: --causal-align lower-right" "$work/err"
check "... next to the mask stage in the table" grep -q "^   ! causal with Sq = 3 queries" "$work/out"
expect_ok "causal with Sq > Sk" trace --mask causal --seq 5 --kv-seq 3 --stage mask
check "... the other way round" grep -q "so queries 3..4 may attend every key" "$work/err"

# --- --cross: a separate x_kv even when the sizes match (notebook 000's decoder and encoder) ---
expect_ok "--cross" trace --cross --seed 24 --batch 2 --seq 5 --d-model 16 --heads 4 --format json
check "--cross is cross-attention with equal sizes" test "$(jq -c '.config | [.cross,.seq,.kv_seq]' "$work/out")" = "[true,5,5]"
check "--cross draws x_kv after x, and the weights and output are PyTorch's" python3 - "$work/out" "$ref/cross_equal.expected.json" <<'PY'
import json, sys
import numpy as np
ours, ref = (json.load(open(p)) for p in sys.argv[1:3])
def exp(name): t = ref["tensors"][name]; return np.array(t["data"], dtype=np.float64).reshape(t["shape"])
got = {"x_kv": ours["stages"]["input"]["tensors"]["x_kv"]["data"],
       "weights": ours["stages"]["softmax"]["tensors"]["weights"]["data"],
       "out": ours["stages"]["output"]["tensors"]["out"]["data"]}
assert (np.array(got["x_kv"], dtype=np.float32) == exp("x_kv").astype(np.float32)).all(), "x_kv"
for name in ("weights", "out"):
    assert np.abs(np.array(got[name]) - exp(name)).max() < 1e-6, name
PY
expect_error "--cross with --q --k --v" 2 \
  "attn: error: --cross draws a separate x_kv, but --q/--k/--v start the run after the inputs" \
  trace --cross --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 2

finish
