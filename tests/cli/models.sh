#!/usr/bin/env bash
# models.sh ATTN: a real model's attention layer from its own weights file (issue 24):
# --params with GPT-2, BERT, Llama and nn.MultiheadAttention names, --layer, --arch, the
# config.json beside it, the norm stage, where each weight came from; and the refusals, each
# one `attn: error:` line with exit 2 (a flag against the file) or 1 (the file itself).
# The checkpoints are tests/reference/models/ (make_model_fixtures.py); their numbers are
# checked against PyTorch in tests/compute/test_model_fixtures.cpp.
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"
py=/usr/bin/python3

# --- detection, --layer, config.json -------------------------------------------------------
expect_ok "GPT-2 from its safetensors: layer 1, heads from config.json" \
  trace --params "$gpt2/model.safetensors" --layer 1 --input "$gpt2/hidden.npy" --format json
check "... 4 heads, causal, the fill torch.finfo(float32).min" \
  test "$(jq -c '[.config.heads, .config.mask, .config.fill_text]' "$work/out")" = '[4,"causal","-3.4028234663852886e+38"]'
check "... stage 2a norm after params, with x, weight, bias" \
  test "$(jq -c '[(.stages | keys_unsorted)[0:4], .stages.norm.step, (.stages.norm.tensors | keys_unsorted)]' "$work/out")" = \
  '[["input","params","norm","projections"],"2a",["x","weight","bias"]]'
check "... the params stage says where w_q came from: c_attn's first third, transposed" \
  test "$(jq -r '.stages.params.sources.w_q' "$work/out")" = 'h.1.attn.c_attn.weight[:, 0:16]ᵀ (Conv1D stores [in, out])'
check "... and b_o, w_o from c_proj" \
  test "$(jq -r '[.stages.params.sources.w_o, .stages.params.sources.b_o] | join("|")' "$work/out")" = \
  'h.1.attn.c_proj.weightᵀ (Conv1D stores [in, out])|h.1.attn.c_proj.bias'
check "... the norm stage says where its weight came from" test "$(jq -r '.stages.norm.sources.weight' "$work/out")" = 'h.1.ln_1.weight'
expect_ok "the BF16 GPT-2 file: the transformer. prefix, a BOOL buffer it skips" \
  trace --params "$gpt2/model-bf16.safetensors" --layer 1 --input "$gpt2/hidden.npy" --format json --stage params
check "... its names with the prefix" test "$(jq -r '.stages.params.sources.b_k' "$work/out")" = 'transformer.h.1.attn.c_attn.bias[16:32]'
expect_ok "the table shows the model line and a source line per weight" \
  trace --params "$gpt2/model.npz" --input "$gpt2/hidden.npy" --stage params
check "... model: gpt2 layer 0, causal with finfo.min, LayerNorm" \
  grep -q '^model  gpt2 layer 0 of .*model.npz; causal, fill torch.finfo(torch.float32).min, as its code; norm LayerNorm (eps 1e-05) before the projections; then the residual and the MLP (gelu_new, width 64)$' "$work/out"
check "... w_v ← its third of c_attn" grep -q 'w_v  *← h.0.attn.c_attn.weight\[:, 32:48\]ᵀ (Conv1D stores \[in, out\])' "$work/out"
expect_ok "--mask none on a GPT-2 layer: the user's choice, no mask stage" \
  trace --params "$gpt2/model.npz" --layer 1 --input "$gpt2/hidden.npy" --mask none --format json
check "... no mask stages" test "$(jq -c '[.config.mask, (.stages | has("mask", "masked"))]' "$work/out")" = '["none",false,false]'

expect_ok "BERT: nn.Linear as it is, no norm, no mask" trace --params "$bert/model.safetensors" --layer 1 --input "$bert/hidden.npy" --format json
check "... stages without norm and mask" \
  test "$(jq -c '[(.stages | has("norm", "mask")), .stages.params.sources.w_k]' "$work/out")" = \
  '[false,false,"bert.encoder.layer.1.attention.self.key.weight"]'
expect_ok "Llama: RMSNorm, rope from rope_theta, 2 kv heads from config.json, no biases" \
  trace --params "$llama/model.safetensors" --layer 1 --input "$llama/hidden.npy" --format json --stage params,norm,rope,repeat_kv
check "... kv heads, pos, params without biases, norm without bias" \
  test "$(jq -c '[.config.kv_heads, .config.pos, .config.qkv_bias, (.stages.params.tensors | keys_unsorted), (.stages.norm.tensors | keys_unsorted)]' "$work/out")" = \
  '[2,"rope",false,["w_q","w_k","w_v","w_o"],["x","weight"]]'
expect_ok "nn.MultiheadAttention's state_dict with --heads: in_proj's thirds, in_proj_bias too" \
  trace --params "$mha/model.safetensors" --heads 4 --input "$mha/hidden.npy" --format json --stage params
check "... b_v from in_proj_bias" test "$(jq -r '.stages.params.sources.b_v' "$work/out")" = 'in_proj_bias[32:48]'
expect_ok "--explain teaches the layout: Conv1D's x·W against nn.Linear's x·Wᵀ" \
  trace --params "$gpt2/model.npz" --input "$gpt2/hidden.npy" --stage params,norm,masked --explain --format json
check "... the params stage's why" jq -e '.stages.params.explain.why | contains("GPT-2 stores its projections as Conv1D")' "$work/out"
check "... the norm stage's what" jq -e '.stages.norm.explain.words | contains("ln_1")' "$work/out"
check "... the masked stage's why: finfo.min as GPT-2's code" \
  jq -e '.stages.masked.explain.why | contains("torch.finfo(torch.float32).min), the most negative float32")' "$work/out"

# --- refusals: a flag against the file (2), the file itself (1) ---------------------------
expect_error "--layer beyond the file's layers names the ones it has" 2 \
  "attn: error: --layer 5: $gpt2/model.safetensors holds GPT-2 layers 0, 1" \
  trace --params "$gpt2/model.safetensors" --layer 5 --input "$gpt2/hidden.npy"
expect_error "--layer with a state_dict of one layer" 2 \
  "attn: error: --layer 1: $mha/model.npz holds one attention layer (nn.MultiheadAttention's names, no layer numbers); leave --layer out" \
  trace --params "$mha/model.npz" --layer 1 --heads 4
expect_error "--layer without --params" 2 \
  "attn: error: --layer 1 says how to read --params FILE, a model's weights: give --params" trace --layer 1
expect_error "--arch forcing an architecture the file is not" 2 \
  "attn: error: --arch bert: $gpt2/model.npz has no BERT's encoder.layer.L.attention.self.query.weight; its names are GPT-2's: give --arch gpt2 or leave --arch out" \
  trace --params "$gpt2/model.npz" --arch bert
expect_ok "--arch naming the file's own architecture" trace --params "$gpt2/model.npz" --arch gpt2 --stage params
expect_error "--heads against config.json names both" 2 \
  "attn: error: --heads 2 contradicts $gpt2/config.json: n_head is 4 (leave --heads out)" \
  trace --params "$gpt2/model.npz" --heads 2
expect_error "--pos none against a Llama layer" 2 \
  "attn: error: --pos none contradicts --params $llama/model.npz: a Llama layer rotates q and k by their positions (--pos rope); leave --pos out" \
  trace --params "$llama/model.npz" --pos none
expect_error "a state_dict without config.json needs --heads, and says so" 2 \
  "attn: error: --params $mha/model.npz holds an nn.MultiheadAttention layer, whose head count a config.json beside it would give, and there is none: give --heads H" \
  trace --params "$mha/model.npz"

mkdir "$work/bare"
cp "$llama/model.npz" "$work/bare/"
expect_ok "a Llama file without config.json and --heads 4: kv heads from k_proj's rows" \
  trace --params "$work/bare/model.npz" --heads 4 --layer 1 --input "$llama/hidden.npy" --format json --stage repeat_kv
check "... G = 2, rope with the default base" test "$(jq -c '[.config.kv_heads, .config.pos, .config.rope_base]' "$work/out")" = '[2,"rope",10000]'
expect_error "... and without --heads: say so" 2 \
  "attn: error: --params $work/bare/model.npz holds a Llama layer, whose head count a config.json beside it would give, and there is none: give --heads H" \
  trace --params "$work/bare/model.npz"

mkdir "$work/bad"
cp "$gpt2/model.npz" "$work/bad/"
echo '{"n_head": "4"}' >"$work/bad/config.json"
expect_error "a config.json key of the wrong type: one line naming the file and the key" 1 \
  "attn: error: $work/bad/config.json: n_head is \"4\"; expected a whole number of at least 1" \
  trace --params "$work/bad/model.npz"
$py -c "import numpy as np; np.savez('$work/other.npz', **{n: np.zeros(2, np.float32) for n in ['wte.weight', 'h.0.ln_1.weight', 'h.0.mlp.c_fc.weight', 'lm_head.weight', 'ln_f.weight', 'ln_f.bias']})"
expect_error "a file of names no architecture has: what it found, what each expects" 1 \
  "attn: error: --params $work/other.npz: no attention weights I know: found wte.weight, h.0.ln_1.weight, h.0.mlp.c_fc.weight, lm_head.weight, ... (2 more); expected GPT-2's h.L.attn.c_attn.weight, BERT's encoder.layer.L.attention.self.query.weight, Llama's layers.L.self_attn.q_proj.weight, nn.MultiheadAttention's in_proj_weight, or attn's w_q b_q w_k b_k w_v b_v w_o b_o" \
  trace --params "$work/other.npz"
$py -c "import numpy as np; np.savez('$work/wide.npz', **{'h.0.attn.c_attn.weight': np.zeros((16, 40), np.float32)})"
expect_error "a c_attn of the wrong shape names the tensor and GPT-2's layout" 1 \
  "attn: error: --params $work/wide.npz: h.0.attn.c_attn.weight has shape [16,40]; GPT-2 stores it [D,3D] (Conv1D: [in, out])" \
  trace --params "$work/wide.npz" --heads 4
expect_error "a GPT-2 layer is self-attention: no --kv-input" 2 \
  "attn: error: gpt2 layer 0 of $gpt2/model.npz normalises x, from which queries, keys and values all come: it is self-attention; drop --kv-input, --cross, --kv-seq and --d-kv-in" \
  trace --params "$gpt2/model.npz" --input "$gpt2/hidden.npy" --kv-input "$mha/hidden.npy"

# --- only the layer's tensors are decoded: a large unwanted tensor costs nothing ------------
write_big_gpt2 "$work/big"  # a 4 MiB wte.weight the run never reads
expect_ok "a checkpoint with a 4 MiB embedding runs under --max-memory 1MiB: one layer is read" \
  trace --params "$work/big/model.safetensors" --layer 1 --input "$gpt2/hidden.npy" --max-memory 1MiB --stage output
expect_error "... and --arch forcing another reads nothing" 2 \
  "attn: error: --arch llama: $work/big/model.safetensors has no Llama's layers.L.self_attn.q_proj.weight; its names are GPT-2's: give --arch gpt2 or leave --arch out" \
  trace --params "$work/big/model.safetensors" --arch llama --max-memory 1MiB

# --- a dump of a model's layer replayed with --from ----------------------------------------
run trace --params "$bert/model.npz" --layer 1 --input "$bert/hidden.npy" --format npz --out "$work/bert.npz"
run trace --from "$work/bert.npz" --format npz --out "$work/bert-again.npz"
check "a BERT layer's dump replays to the same numbers (its attention stages)" $py -c "
import numpy as np, sys
a, b = np.load('$work/bert.npz'), np.load('$work/bert-again.npz')
block = ('residual.', 'mlp_norm.', 'mlp.', 'block.')
sys.exit(not all(np.array_equal(a[k], b[k]) for k in a if k != 'config' and not k.startswith(block)))"
check "... the dump held the block's stages, the replay says it leaves them out" \
  grep -q "the stages after attention (residual, mlp_norm, mlp, block) are not replayed: a dump holds no MLP weights" "$work/err"
run trace --params "$gpt2/model.npz" --layer 1 --input "$gpt2/hidden.npy" --format npz --out "$work/gpt2.npz"
expect_error "a GPT-2 layer's dump (a norm before attention) is refused, saying what to do" 1 \
  "attn: error: --from $work/gpt2.npz: a model layer with a norm before attention (gpt2 layer 1 of $gpt2/model.npz) does not replay with --from; run it again with --params and --input" \
  trace --from "$work/gpt2.npz"

# --- the README's "Inspect a real model" output is what the program prints -----------------
readme_output '^### Inspect a real model' >"$work/readme-model"
(cd "$gpt2" && "$attn" trace --params model.safetensors --layer 1 --input hidden.npy --stage softmax --head 2) >"$work/actual-model"
check "README's real-model output block is real" diff "$work/readme-model" "$work/actual-model"


# --- what config.json says is blamed on its key; a flag a Llama layer cannot honour is refused ---
mkdir -p "$work/kv3" && cp "$llama/model.npz" "$work/kv3/"
sed 's/"num_key_value_heads": 2/"num_key_value_heads": 3/' "$llama/config.json" >"$work/kv3/config.json"
expect_error "config.json's num_key_value_heads against w_k: named as the file's key (was: '--kv-heads 3', never given)" 1 \
  "attn: error: $work/kv3/config.json: num_key_value_heads is 3, but --params $work/kv3/model.npz's w_k has shape [8,16]: 3 key/value heads of dk = D / H = 16 / 4 = 4 need 12 rows" \
  trace --params "$work/kv3/model.npz"
expect_error "--rope-style interleaved with a Llama layer: refused (was: accepted and ignored)" 2 \
  "attn: error: --rope-style interleaved contradicts --params $llama/model.npz: a Llama layer pairs dimension i with i + dk/2 (Hugging Face's rotate_half, --rope-style half); leave --rope-style out" \
  trace --params "$llama/model.npz" --rope-style interleaved
expect_ok "--rope-style half with a Llama layer: what it does anyway" trace --params "$llama/model.npz" --rope-style half

# --- config.json's other attention keys: honoured, refused naming the key, or warned about ---
# (each was ignored before: rope_scaling printed unscaled angles with exit 0)
with_config() {  # with_config DIR MODEL JQ: a copy of MODEL's checkpoint whose config.json jq has changed
  mkdir -p "$work/$1" && cp "$2/model.safetensors" "$2/hidden.npy" "$work/$1/" &&
    jq "$3" "$2/config.json" >"$work/$1/config.json"
}
with_config swa "$llama" '. + {sliding_window: 2}'
expect_ok "Mistral's sliding_window 2: the window mask beside the causal one (keys j > i - 2)" \
  trace --params "$work/swa/model.safetensors" --layer 1 --input "$work/swa/hidden.npy" --format json --stage mask
check "... the mask keeps key i - 1 and i only, as Hugging Face's sliding_window_overlay" \
  test "$(jq -c '[.config.mask, .config.window, .stages.mask.tensors.mask.data[0][0][4]]' "$work/out")" = \
  '["causal+window",1,[false,false,false,true,true]]'
"$attn" trace --params "$work/swa/model.safetensors" --layer 1 --input "$work/swa/hidden.npy" --stage output --format json >"$work/swa.json"
"$attn" trace --params "$llama/model.safetensors" --layer 1 --input "$llama/hidden.npy" --mask causal+window --window 1 \
  --stage output --format json >"$work/window.json"
check "... the same bits as --mask causal+window --window 1 on the layer" \
  test "$(jq -c .stages.output "$work/swa.json")" = "$(jq -c .stages.output "$work/window.json")"
run trace --params "$work/swa/model.safetensors" --layer 1 --input "$work/swa/hidden.npy" --stage mask
check "... the model line says so" grep -q 'causal, a sliding window of 2 keys, fill torch.finfo' "$work/out"
with_config swa-off "$llama" '. + {sliding_window: 2, use_sliding_window: false}'
expect_ok "Qwen2's use_sliding_window false: no window" \
  trace --params "$work/swa-off/model.safetensors" --layer 1 --input "$work/swa-off/hidden.npy" --format json --stage mask
check "... mask causal" test "$(jq -r .config.mask "$work/out")" = causal
with_config swa-late "$llama" '. + {sliding_window: 2, use_sliding_window: true, max_window_layers: 2}'
expect_ok "Qwen2's max_window_layers 2: layer 1 has no window" \
  trace --params "$work/swa-late/model.safetensors" --layer 1 --input "$work/swa-late/hidden.npy" --format json --stage mask
check "... mask causal" test "$(jq -r .config.mask "$work/out")" = causal
with_config scaled "$llama" '. + {rope_scaling: {type: "linear", factor: 2.0}}'
expect_ok "rope_scaling linear 2: honoured (was: unscaled angles, exit 0)" \
  trace --params "$work/scaled/model.safetensors" --layer 1 --input "$work/scaled/hidden.npy" --format json --stage rope
check "... config.rope_scaling, and the angle at position 4 is the unscaled one at 2 (inv_freq / 2, exact in float32)" \
  test "$(jq -c '[.config.rope_scaling, .stages.rope.tensors.cos.data[4]]' "$work/out")" = \
  "$("$attn" trace --params "$llama/model.safetensors" --layer 1 --input "$llama/hidden.npy" --format json --stage rope |
     jq -c '[{rope_type: "linear", factor: 2.0}, .stages.rope.tensors.cos.data[2]]')"
with_config llama3 "$llama" '. + {rope_scaling: {rope_type: "llama3", factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8}}'
run trace --params "$work/llama3/model.safetensors" --layer 1 --input "$work/llama3/hidden.npy" --stage rope --explain
check "Llama 3.1's rope_type llama3: honoured, the model line and --explain's torch line say so" \
  test "$rc:$(grep -c 'rope_scaling llama3 (factor 8)' "$work/out"):$(grep -c 'w = 2 \* math.pi' "$work/out")" = 0:1:1
with_config yarn "$llama" '. + {rope_scaling: {rope_type: "yarn", factor: 4.0}}'
expect_error "rope_scaling yarn: refused, naming the key" 1 \
  "attn: error: $work/yarn/config.json: rope_scaling is {\"factor\":4,\"rope_type\":\"yarn\"}: Hugging Face rescales rope's angles by it; attn does not reproduce it" \
  trace --params "$work/yarn/model.safetensors" --layer 1 --input "$work/yarn/hidden.npy"
with_config dynamic "$llama" '. + {rope_scaling: {type: "dynamic", factor: 2.0}}'
expect_ok "rope_scaling dynamic within max_position_embeddings: the unscaled rope" \
  trace --params "$work/dynamic/model.safetensors" --layer 1 --input "$work/dynamic/hidden.npy" --format json --stage rope
check "... no rope_scaling in the config" test "$(jq -c .config.rope_scaling "$work/out")" = null
with_config default-rope "$llama" '. + {rope_scaling: {rope_type: "default"}}'
expect_ok "rope_type default: no scaling, accepted" \
  trace --params "$work/default-rope/model.safetensors" --layer 1 --input "$work/default-rope/hidden.npy"
with_config partial "$llama" '. + {partial_rotary_factor: 0.5}'
expect_error "partial_rotary_factor 0.5: refused" 1 \
  "attn: error: $work/partial/config.json: partial_rotary_factor is 0.5: Hugging Face rotates only that part of each head's coordinates, attn all of them; attn does not reproduce it" \
  trace --params "$work/partial/model.safetensors" --layer 1 --input "$work/partial/hidden.npy"
with_config head-dim "$llama" '. + {head_dim: 2}'
expect_error "an explicit head_dim against q_proj: named as the key (was: a shape error about w_o)" 1 \
  "attn: error: $work/head-dim/config.json: head_dim is 2, but --params $work/head-dim/model.safetensors's w_q has shape [16,16]: 4 heads of 2 need 8 rows" \
  trace --params "$work/head-dim/model.safetensors" --layer 1 --input "$work/head-dim/hidden.npy"
with_config head-dim-ok "$llama" '. + {head_dim: 4}'
expect_ok "head_dim = hidden / heads: accepted" \
  trace --params "$work/head-dim-ok/model.safetensors" --layer 1 --input "$work/head-dim-ok/hidden.npy"
with_config bias "$llama" '. + {attention_bias: true}'
expect_error "attention_bias true without biases in the file" 1 \
  "attn: error: $work/bias/config.json: attention_bias is true, but --params $work/bias/model.safetensors has no biases for q, k and v in layer 1" \
  trace --params "$work/bias/model.safetensors" --layer 1 --input "$work/bias/hidden.npy"
with_config short "$llama" '. + {max_position_embeddings: 3}'
expect_error "more positions than max_position_embeddings" 1 \
  "attn: error: $work/short/config.json: max_position_embeddings is 3, but the run's queries reach position 4 (positions count from 0): more tokens than the model was made for" \
  trace --params "$work/short/model.safetensors" --layer 1 --input "$work/short/hidden.npy"
with_config capped "$llama" '. + {attn_logit_softcapping: 50.0}'
expect_ok "attn_logit_softcapping: computed without it, with a warning naming the key" \
  trace --params "$work/capped/model.safetensors" --layer 1 --input "$work/capped/hidden.npy" --stage scores
check "... the warning" grep -q "attn: warning: $work/capped/config.json: attn_logit_softcapping is 50: a setting that changes attention" "$work/err"
for key in scale_attn_by_inverse_layer_idx:true reorder_and_upcast_attn:true scale_attn_weights:false; do
  with_config "gpt2-${key%%:*}" "$gpt2" ". + {${key%%:*}: ${key#*:}}"
  run trace --params "$work/gpt2-${key%%:*}/model.safetensors" --layer 1 --input "$work/gpt2-${key%%:*}/hidden.npy"
  check "GPT-2's ${key%%:*} ${key#*:}: refused, exit 1, naming the key" \
    test "$rc:$(grep -c "config.json: ${key%%:*} is ${key#*:}: GPT-2 then .*attn does not reproduce it" "$work/err")" = 1:1
done
with_config relative "$bert" '. + {position_embedding_type: "relative_key"}'
run trace --params "$work/relative/model.safetensors" --layer 1 --input "$work/relative/hidden.npy"
check "BERT's relative_key positions: refused" grep -q 'position_embedding_type is "relative_key": BERT then adds' "$work/err"

with_config odd-dk "$llama" '.num_attention_heads = 16 | .num_key_value_heads = 8'
expect_error "config.json's heads making dk odd under rope: named as its key (was: '--pos rope ... --d-model 16 / --heads 16', flags never given)" 1 \
  "attn: error: $work/odd-dk/config.json: num_attention_heads is 16: dk = D / H = 16 / 16 = 1 is odd, and a Llama layer rotates pairs of coordinates" \
  trace --params "$work/odd-dk/model.safetensors" --layer 1 --input "$work/odd-dk/hidden.npy"
mkdir -p "$work/bare-llama" && cp "$llama/model.npz" "$work/bare-llama/"
expect_error "... and as --heads when the flag gave it" 2 \
  "attn: error: --heads 16: dk = D / H = 16 / 16 = 1 is odd, and a Llama layer rotates pairs of coordinates" \
  trace --params "$work/bare-llama/model.npz" --heads 16

# --- a sharded checkpoint: model.safetensors.index.json and its shards, as save_pretrained writes a large model ---
$py "$here/split_safetensors.py" "$llama/model.safetensors" "$work/sharded" 3 && cp "$llama/config.json" "$work/sharded/"
expect_ok "--params model.safetensors.index.json: a Llama layer from 3 shards" \
  trace --params "$work/sharded/model.safetensors.index.json" --layer 1 --input "$llama/hidden.npy" --format json
"$attn" trace --params "$llama/model.safetensors" --layer 1 --input "$llama/hidden.npy" --format json >"$work/whole.json"
check "... every stage's bits as from the one file" \
  test "$(jq -c .stages "$work/out" | md5sum)" = "$(jq -c .stages "$work/whole.json" | md5sum)"
$py "$here/split_safetensors.py" "$gpt2/model.safetensors" "$work/sharded-gpt2" 2 && cp "$gpt2/config.json" "$work/sharded-gpt2/"
expect_ok "GPT-2 from 2 shards with --tokens: the token table's rows from its shard" \
  trace --params "$work/sharded-gpt2/model.safetensors.index.json" --tokens @"$gpt2/tokens.txt" --format json --stage embed
"$attn" trace --params "$gpt2/model.safetensors" --tokens @"$gpt2/tokens.txt" --format json --stage embed >"$work/whole.json"
check "... the same embed stage" test "$(jq -c .stages "$work/out")" = "$(jq -c .stages "$work/whole.json")"
index="$work/sharded/model.safetensors.index.json"
jq '.weight_map["model.layers.1.self_attn.q_proj.weight"] = "../model.safetensors"' "$index" >"$work/sharded/up.safetensors.index.json"
expect_error "a shard named with a folder: refused, naming the key" 1 \
  "attn: error: --params $work/sharded/up.safetensors.index.json: weight_map[\"model.layers.1.self_attn.q_proj.weight\"] is \"../model.safetensors\"; expected a file name beside the index (no folder)" \
  trace --params "$work/sharded/up.safetensors.index.json" --layer 1
jq '.weight_map["model.layers.1.self_attn.q_proj.weight"] = "model-00009-of-00009.safetensors"' "$index" >"$work/sharded/gone.safetensors.index.json"
expect_error "a missing shard" 1 \
  "attn: error: --params $work/sharded/model-00009-of-00009.safetensors: cannot open: No such file or directory" \
  trace --params "$work/sharded/gone.safetensors.index.json" --layer 1
q_shard=$(jq -r '.weight_map["model.layers.1.self_attn.q_proj.weight"]' "$index")
other=$(jq -r --arg q "$q_shard" '[.weight_map[] | select(. != $q)][0]' "$index")
jq --arg o "$other" '.weight_map["model.layers.1.self_attn.q_proj.weight"] = $o' "$index" >"$work/sharded/moved.safetensors.index.json"
expect_error "a tensor its shard does not hold" 1 \
  "attn: error: --params $work/sharded/moved.safetensors.index.json: weight_map puts \"model.layers.1.self_attn.q_proj.weight\" in $other, which does not hold it" \
  trace --params "$work/sharded/moved.safetensors.index.json" --layer 1
echo '{"metadata": {}}' >"$work/sharded/bare.safetensors.index.json"
expect_error "an index without a weight_map" 1 \
  "attn: error: --params $work/sharded/bare.safetensors.index.json: expected a sharded checkpoint's index, an object with a \"weight_map\" object ({\"tensor name\": \"model-00001-of-00002.safetensors\", ...})" \
  trace --params "$work/sharded/bare.safetensors.index.json"

finish
