#!/usr/bin/env bash
# Command-line tests: attn's PyTorch, run in PyTorch. The torch lines of --explain, put
# together top to bottom, are a script that makes attn's numbers; --format py writes a
# script that checks every stage against attn's numbers, and fails when a line is made
# wrong. Runs Debian's python3-torch (/usr/bin/python3); without it the test says
# "skipped", unless CI=true, where torch must be there. Usage: py.sh path/to/attn.
set -u
attn=${1:?usage: py.sh path/to/attn}
. "$(dirname "$0")/common.sh"
python=/usr/bin/python3

if ! "$python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' 2>/dev/null; then
  if [ "${CI:-}" = true ]; then
    fail "python3-torch is installed (CI=true: apt-get install python3-torch)"
    finish
    exit 1
  fi
  echo "skipped: $python cannot import torch (apt-get install python3-torch)"
  exit 0
fi

# Importing torch takes seconds, each script here milliseconds: the scripts are queued and
# run in one batch by torch_runs.py, which imports torch once and forks a child per script
# (each with a fresh namespace, its argv, and its output in a file of its own).
queued=() passes=()
# queue NAME SCRIPT ARG...: SCRIPT run with ARGs in the next batch; it must exit 0.
# queue_passing NAME SCRIPT: ... and its last line must say every check passed.
queue() {
  local i=${#queued[@]} name=$1; shift
  queued+=("$name") passes+=(no)
  (IFS=$'\t'; printf '%s\t%s\n' "$work/queued$i.out" "$*") >>"$work/jobs"
}
queue_passing() { queue "$@"; passes[${#passes[@]} - 1]=yes; }
# run_batch: runs the queued scripts (torch_runs.py), then empties the queue.
run_batch() {
  [ -s "$work/jobs" ] && "$python" "$(dirname "$0")/torch_runs.py" "$work/jobs"
  rm -f "$work/jobs"
}
# report_queued: runs the batch and says how each script ended, in order.
report_queued() {
  run_batch
  local i
  for i in "${!queued[@]}"; do
    local out="$work/queued$i.out"
    if [ "$(cat "$out.rc" 2>/dev/null)" != 0 ]; then fail "${queued[$i]}" "$(tail -n 1 "$out")"
    elif [ "${passes[$i]}" = yes ] && ! tail -n 1 "$out" | grep -q "^every check passed"; then
      fail "${queued[$i]}" "$(tail -n 1 "$out")"
    else ok "${queued[$i]}"; fi
  done
  queued=() passes=()
}

# --- --explain's torch lines, top to bottom ------------------------------------------------
# explain_runs NAME ARGS...: the torch lines of --explain --format json as one script, run in a
# fresh namespace; the last tensor it makes (out, or concat with --no-out-proj) must be attn's,
# bit for bit.
cat >"$work/explain_runs.py" <<'PY'
import json, subprocess, sys, torch
attn, args = sys.argv[1], sys.argv[2:]
doc = json.loads(subprocess.run([attn, "trace", *args, "--explain", "--format", "json"],
                                capture_output=True, text=True, check=True).stdout)
script = "\n".join(s["explain"]["torch"] for s in doc["stages"].values())
made = {}
exec(compile(script, "explain", "exec"), made)
stage, name = ("output", "out") if "output" in doc["stages"] else ("concat", "concat")
want = torch.tensor(doc["stages"][stage]["tensors"][name]["data"], dtype=torch.float32)
got = made[name].detach()
sys.exit(0 if got.shape == want.shape and torch.equal(got.view(torch.int32), want.view(torch.int32)) else 1)
PY
explain_runs() { queue "$1" "$work/explain_runs.py" "$attn" "${@:2}"; }
explain_runs "--explain's lines run: notebook 000 (B=2, H=4, causal)" --seed 24 --batch 2 --seq 5 --heads 4 --mask causal
explain_runs "--explain's lines run: no mask, one head" --heads 1
explain_runs "--explain's lines run: causal+padding, cross-attention (--kv-seq, --d-kv-in)" \
  --seed 3 --batch 2 --seq 5 --kv-seq 6 --d-kv-in 12 --mask causal+padding --lengths 5,3
explain_runs "--explain's lines run: window, --fill -1e9, --no-qkv-bias" --seq 6 --mask window --window 1 --fill -1e9 --no-qkv-bias
explain_runs "--explain's lines run: --train --dropout 0.3, attn's keep mask" \
  --seed 5 --batch 2 --mask causal --dropout 0.3 --train --dropout-seed 9
explain_runs "--explain's lines run: a random mask, --no-out-proj" --heads 4 --mask random --mask-seed 2 --mask-keep 0.7 --no-out-proj
explain_runs "--explain's lines run: lower-right causal, Sq < Sk, D != Din" \
  --seq 2 --kv-seq 5 --d-in 6 --d-kv-in 10 --d-model 12 --heads 3 --mask causal --causal-align lower-right
explain_runs "--explain's lines run: a decoding step (--past 4) with multi-query heads (--kv-heads 1)" \
  --past 4 --seq 2 --heads 4 --kv-heads 1 --mask causal
explain_runs "--explain's lines run: rope in a decoding step with grouped heads" \
  --pos rope --past 4 --seq 2 --heads 4 --kv-heads 2 --mask causal

# --- --format py: the run as a script that checks itself -------------------------------------
# script_runs NAME ARGS...: attn writes the script; python3 runs it to the end (exit 0), and
# its last line says every check passed.
script_runs() {
  local name=$1 script="$work/lab${#queued[@]}.py"; shift
  if ! "$attn" trace "$@" --format py >"$script" 2>"$work/err"; then fail "$name" "attn: $(head -n 1 "$work/err")"; return; fi
  queue_passing "$name" "$script"
}
script_runs "py: notebook 000 (B=2, H=4, causal, --no-out-proj) runs and passes" "${notebook[@]}"
script_runs "py: no mask, one head" --heads 1
script_runs "py: causal+padding, cross-attention, --fill -1e9" \
  --seed 3 --batch 2 --seq 5 --kv-seq 6 --d-kv-in 12 --mask causal+padding --lengths 5,3 --fill -1e9
script_runs "py: window, --no-qkv-bias" --seq 6 --mask window --window 1 --no-qkv-bias
script_runs "py: --train --dropout 0.3 (attn's keep mask)" --seed 5 --batch 2 --mask causal --dropout 0.3 --train --dropout-seed 9
script_runs "py: a random mask, lower-right causal with Sq < Sk" \
  --seq 2 --kv-seq 5 --d-in 6 --d-kv-in 10 --d-model 12 --heads 3 --mask causal+random --causal-align lower-right --mask-seed 2
script_runs "py: a row with no allowed key (NaN where attn has NaN)" --batch 2 --mask padding --lengths 0,2
script_runs "py: --mistake softmax_axis asserts the mistaken numbers" --mask causal --mistake softmax_axis
script_runs "py: --mistake mask_inverted" --mask causal --mistake mask_inverted
script_runs "py: --mistake dropout_not_rescaled" --mask causal --dropout 0.5 --train --mistake dropout_not_rescaled
script_runs "py: a decoding step (--past 3) with grouped heads (--kv-heads 2): cache, append, repeat_kv" \
  --batch 2 --past 3 --seq 2 --heads 4 --kv-heads 2 --mask causal+padding --lengths 5,4
script_runs "py: --mistake kv_heads_tiled: k.repeat(1, H/G, 1, 1)" --past 2 --seq 2 --heads 4 --kv-heads 2 --mistake kv_heads_tiled
for style in half interleaved; do
  script_runs "py: --pos rope --rope-style $style in a decoding step: the cache's keys rotated at 0..N-1" \
    --pos rope --rope-style $style --past 3 --seq 2 --heads 4 --kv-heads 2 --mask causal
done
script_runs "py: --pos alibi in a decoding step (i counts from N)" --pos alibi --past 3 --seq 2 --heads 4 --mask causal
script_runs "py: --pos sinusoidal in a decoding step (pe over all N + Sq tokens)" --pos sinusoidal --past 3 --seq 2 --kv-heads 1
script_runs "py: --mistake rope_positions_from_zero: torch.arange(0, Sq) in a decoding step" \
  --pos rope --past 3 --seq 2 --heads 4 --kv-heads 2 --d-model 16 --mask causal --mistake rope_positions_from_zero
for style in half interleaved; do
  script_runs "py: --mistake rope_pairs_mixed with --rope-style $style: the other pairing's lines, the cache's too" \
    --pos rope --rope-style $style --past 3 --seq 2 --heads 2 --mask causal --mistake rope_pairs_mixed
done
for m in log_softmax sigmoid_instead_of_softmax scale_multiplied; do
  script_runs "py: --mistake $m" --batch 2 --seq 4 --mask causal+padding --lengths 3,1 --mistake $m
done
script_runs "py: --mistake alibi_sign: slopes · (i - j)" --pos alibi --past 3 --seq 2 --heads 4 --mask causal --mistake alibi_sign
# numbers Python reads back exactly: floats with an exponent, never 0 ** nor an integer past int64
script_runs "py: --rope-base 1e-30 (1e-30 ** ..., not 0 ** ...)" --pos rope --rope-base 1e-30
script_runs "py: --rope-base 1e30 (1e+30, not an integer PyTorch cannot unpack)" --pos rope --rope-base 1e30
script_runs "py: --fill -100000000000000000000 (-1e+20, not an integer PyTorch cannot unpack)" \
  --mask causal --fill -100000000000000000000
script_runs "py: --safe-softmax with an all-masked row: 0 weights there, as attn" \
  --batch 2 --mask padding --lengths 0,3 --safe-softmax
# --flash-block: the loop over blocks of keys (--explain's torch line), each block's m, l, rescale
# and acc stacked and checked, and the flash context (0 for a row with no allowed key)
script_runs "py: --flash-block 2, notebook 000's causal run: m, l, rescale, acc and the flash context" \
  "${notebook[@]}" --flash-block 2
script_runs "py: --flash-block with rows with no allowed key and a fully masked block" \
  --seed 7 --batch 2 --seq 6 --heads 2 --mask padding --lengths 3,0 --flash-block 2
script_runs "py: --flash-block in a decoding step: rope, grouped heads, lower-right causal" \
  --pos rope --past 3 --seq 2 --heads 4 --kv-heads 2 --mask causal --flash-block 2
script_runs "py: --flash-block with alibi's bias in each block, Sk not a multiple of N, a finite fill" \
  --pos alibi --seq 7 --heads 4 --flash-block 3 --mask window --window 2 --fill -1e9
# --input and --kv-input: the script loads the same files with NumPy (load_tensor), as float32
"$python" - "$work" <<'PY'
import json, os, sys
import numpy as np
work = sys.argv[1]
rng = np.random.default_rng(5)
np.save(os.path.join(work, "x64.npy"), rng.standard_normal((2, 5, 8)))  # float64, made float32 as attn does
json.dump(rng.standard_normal((1, 3, 8)).tolist(), open(os.path.join(work, "x.json"), "w"))
np.savez(os.path.join(work, "dump.npz"), **{"input.x": rng.standard_normal((1, 4, 8)).astype(np.float32),
                                            "other": np.zeros(3)})  # a dump's member, among others
np.savez(os.path.join(work, "one.npz"), rng.standard_normal((1, 6, 8)).astype(np.float16))  # its only array
np.save(os.path.join(work, "we'ird \"name\"\n\u00e9.npy"), rng.standard_normal((1, 4, 8)).astype(np.float32))
np.save(os.path.join(work, "keep.npy"), np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1]], dtype=bool))  # --mask-file
np.save(os.path.join(work, "additive.npy"), np.where(np.eye(3, dtype=bool), -np.inf, 0).astype(np.float32))
np.save(os.path.join(work, "padded.npy"), np.array([[False, False, True]]))  # --key-padding-mask, B = 1
PY
"$attn" trace --seq 3 --stage params --format npz --out "$work/params.npz" --quiet
"$attn" trace --seed 7 --seq 3 --stage projections --format npz --out "$work/qkv.npz" --quiet
script_runs "py: --input FILE.npy (float64), loaded with NumPy as float32" --input "$work/x64.npy" --mask causal+padding --lengths 3,5
script_runs "py: --input FILE.json (nested lists)" --input "$work/x.json" --mask causal
script_runs "py: --input an .npz dump: its input.x among other arrays" --input "$work/dump.npz"
script_runs "py: --kv-input an .npz of one float16 array, x drawn" --kv-input "$work/one.npz" --seq 4
script_runs "py: --input with quotes, a newline and é in its name (a bytes literal)" \
  --input "$work/we'ird \"name\""$'\n'"é.npy" --flash-block 2 --mask causal
# the first line holds the command: PEP 263 reads "coding:" there as the file's encoding, and a
# byte that is not UTF-8 makes the file unreadable
"$attn" trace --seed 1 --format py --out "$work/coding:latin-x.py" 2>/dev/null
queue_passing "py: an --out name holding 'coding:' on the first line" "$work/coding:latin-x.py"
"$attn" trace --seed 1 --format py --out "$work/"$'byte\xff.py' 2>/dev/null
queue_passing "py: an --out name holding the byte 0xff on the first line" "$work/"$'byte\xff.py'
report_queued
# The scripts below are written first, then run in one batch (later FILE: FILE's output in
# FILE.ran, its exit status in FILE.ran.rc), then checked.
later() { printf '%s\t%s\n' "$1.ran" "$1" >>"$work/jobs"; }
status_of() { cat "$1.ran.rc" 2>/dev/null; }

"$attn" trace --pos alibi --past 3 --seq 2 --heads 4 --mask causal --mistake alibi_sign --format py >"$work/sign.py" 2>/dev/null
check "py: --mistake alibi_sign writes the flipped distance" grep -q '^bias = (slopes.view(H, 1, 1) \* (i - j).float()).unsqueeze(0)$' "$work/sign.py"
sed 's/(i - j).float()/(j - i).float()/' "$work/sign.py" >"$work/sign-wrong.py"
later "$work/sign-wrong.py"

# attn mask's build lines, run in torch after its setup lines, make the masks it shows: a
# window in a decoding step measures from the queries' positions N..N+Sq-1
cat >"$work/mask_lines.py" <<'PY'
import json, sys
import torch
doc = json.load(sys.stdin)
names = {"torch": torch}
exec(doc["setup"], names)
for conv in doc["conventions"]:
    made = eval(conv["torch"], names)
    names[conv["name"]] = made
    data = json.loads(json.dumps(conv["data"]).replace('"-inf"', "-Infinity"))  # -inf is written as a string
    want = torch.tensor(data, dtype=torch.bool if conv["dtype"] == "bool" else torch.float32)
    assert torch.equal(made.reshape(want.shape), want), conv["name"] + ": " + conv["torch"]
PY
for args in "--past 4 --seq 2 --mask causal+window --window 2" "--past 3 --seq 3 --mask window --window 1" \
            "--seq 3 --kv-seq 5 --mask window --window 1"; do
  check "attn mask $args: the build lines make the masks shown" \
    sh -c "'$attn' mask $args --format json | '$python' '$work/mask_lines.py'"
done

# the notebook run's script, for what follows
"$attn" trace "${notebook[@]}" --format py --out "$work/nb.py"
check "py: --out writes the script" test -s "$work/nb.py"
check "py: its first line is the command that made it" \
  test "$(head -n 1 "$work/nb.py")" = "# attn trace --seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj --format py --out $work/nb.py"
check "py: a check after each computed stage" test "$(grep -c '^check("softmax.weights", weights, f32(\[\[\[\[' "$work/nb.py")" = 1
check "py: the views are checked by shape and strides" grep -qx 'check_layout("transpose.q", q, (2, 4, 5, 2), (40, 2, 8, 1))' "$work/nb.py"
check "py: a lab starter: a 'Your turn' comment for each stage computed" test "$(grep -c '^# Your turn: ' "$work/nb.py")" = 12
check "py: numbers in the fewest digits that read back as the same float32" grep -q '^check("input.x", x, f32(\[\[\[1.5721657, -1.5507966, -0.9507501, ' "$work/nb.py"
later "$work/nb.py"

# made wrong: softmax over the queries, the split without its transpose
sed 's/torch.softmax(masked, dim=-1)/torch.softmax(masked, dim=-2)/' "$work/nb.py" >"$work/softmax-wrong.py"
check "py: the script made wrong differs from the right one" test -n "$(diff "$work/nb.py" "$work/softmax-wrong.py")"
later "$work/softmax-wrong.py"
sed 's/^q = q.transpose(1, 2)$/q = q.reshape(B, H, Sq, dk)/' "$work/nb.py" >"$work/split-wrong.py"
later "$work/split-wrong.py"
"$attn" trace --mask causal --mistake softmax_axis --format py >"$work/mistake.py" 2>/dev/null
check "py: --mistake says so in a comment where it is made" grep -q "^# --mistake softmax_axis: softmax over the queries (dim=-2)" "$work/mistake.py"
sed 's/dim=-2)$/dim=-1)/' "$work/mistake.py" >"$work/mistake-wrong.py"
later "$work/mistake-wrong.py"

# --stage: only those stages checked (and limited), all computed
expect_ok "py: --seq 64 --stage output: the [B,H,Sq,Sk] stages computed, not embedded" trace --seq 64 --mask causal --format py --stage output
check "py: --stage output: one check" test "$(grep -c '^check' "$work/out")" = 1
check "py: --stage output: every stage's code still there" grep -qx "weights = torch.softmax(masked, dim=-1)" "$work/out"
mv "$work/out" "$work/lab.py"
later "$work/lab.py"

# the README's excerpt (below): its script, made wrong as the README says
readme="$(dirname "$0")/../../README.md"
awk '/--format py --out lab.py`$/ {seen = 1; next} seen && /^```/ {if (inside) exit; inside = 1; next} inside' "$readme" >"$work/readme-block"
"$attn" trace --seq 3 --d-model 4 --mask causal --stage softmax --format py --out "$work/readme.py"
sed -n '/^# ── 10 · softmax/,/^$/p' "$work/readme.py" | sed '$d' >"$work/actual-block"
sed 's/torch.softmax(masked, dim=-1)/torch.softmax(masked, dim=-2)/' "$work/readme.py" >"$work/readme-wrong.py"
later "$work/readme-wrong.py"
"$attn" trace --input "$work/x.json" --format py --out "$work/loaded.py" 2>/dev/null
sed 's/^x = load_tensor(.*/x = torch.randn(1, 3, 8)/' "$work/loaded.py" >"$work/loaded-wrong.py"
later "$work/loaded-wrong.py"
"$attn" trace --seq 5 --mask causal --flash-block 2 --format py --out "$work/flash.py" 2>/dev/null
sed 's/acc = rescale\[..., None\] \* acc + /acc = acc + /' "$work/flash.py" >"$work/flash-wrong.py"
later "$work/flash-wrong.py"

# the files a run read, loaded by the script with numpy (issue 40): a model's checkpoint (GPT-2's
# Conv1D c_attn split and transposed, BERT's nn.Linear, Llama's q/k/v/o_proj with RMSNorm and
# rotary, nn.MultiheadAttention's state_dict; F32, BF16, F16, npz, a sharded index), --tokens,
# --q --k --v, mask files. Before: "--format py: ... it cannot read --params" (and the others).
script_runs "py: --params GPT-2's layer 1 (.safetensors: c_attn split, Conv1D transposed, ln_1)" \
  --params "$gpt2/model.safetensors" --layer 1 --seq 3
script_runs "py: --params GPT-2 in BF16 (a BOOL tensor beside it, skipped)" --params "$gpt2/model-bf16.safetensors" --seq 3
script_runs "py: --params BERT's layer 0 (nn.Linear query/key/value)" --params "$bert/model.safetensors" --seq 3
script_runs "py: --params Llama's layer 1 in F16 (q/k/v/o_proj, RMSNorm, rotary, G = 2)" \
  --params "$llama/model-f16.safetensors" --layer 1 --seq 3
script_runs "py: --params Llama, a decoding step (--past 2)" --params "$llama/model.safetensors" --seq 2 --past 2
script_runs "py: --params nn.MultiheadAttention's state_dict (in_proj split)" --params "$mha/model.safetensors" --heads 4 --seq 3
script_runs "py: --params GPT-2 from its .npz" --params "$gpt2/model.npz" --seq 3
script_runs "py: --params attn's own names (a dump's params.w_q ...), --input x" --input "$work/x.json" --params "$work/params.npz"
script_runs "py: --tokens through GPT-2's wte and wpe" --params "$gpt2/model.safetensors" --tokens 1,2,3
script_runs "py: --tokens through BERT's embeddings and their LayerNorm" --params "$bert/model.safetensors" --tokens 1,2,3
script_runs "py: --tokens through Llama's embed_tokens" --params "$llama/model.safetensors" --tokens 3,1
"$python" "$(dirname "$0")/split_safetensors.py" "$llama/model.safetensors" "$work/sharded" 2 && cp "$llama/config.json" "$work/sharded/"
script_runs "py: --params a sharded checkpoint's index" --params "$work/sharded/model.safetensors.index.json" --seq 3 --layer 1
script_runs "py: --q --k --v from a dump's members (w_o drawn from the seed)" \
  --seed 2 --q "$work/qkv.npz" --k "$work/qkv.npz" --v "$work/qkv.npz" --mask causal
script_runs "py: --mask-file, read as keep, ANDed with causal" --seq 3 --mask causal --mask-file "$work/keep.npy"
script_runs "py: --mask-file read as additive" --seq 3 --mask-file "$work/additive.npy" --mask-convention additive
script_runs "py: --key-padding-mask (mha: true = padded)" --seq 3 --key-padding-mask "$work/padded.npy"
"$attn" trace --params "$gpt2/model.safetensors" --layer 1 --seq 3 --format py --out "$work/gpt2.py" 2>/dev/null
sed 's/\[:, 0:16\]\.T)$/[:, 0:16])/' "$work/gpt2.py" >"$work/gpt2-wrong.py"
later "$work/gpt2-wrong.py"
"$attn" trace --params "$llama/model.safetensors" --seq 3 --format py --out "$work/llama.py" 2>/dev/null
sed 's/^w_o.bias = None .*/w_o.bias.fill_(0.5)/' "$work/llama.py" >"$work/llama-wrong.py"
later "$work/llama-wrong.py"

run_batch
check "py: GPT-2's c_attn third taken without its transpose fails at params.w_q (exit 1)" \
  bash -c "[ '$(status_of "$work/gpt2-wrong.py")' = 1 ] && grep -q '^AssertionError: params.w_q: ' '$work/gpt2-wrong.py.ran'"
check "py: Llama's o_proj given a bias fails at output.out, after every stage before it passed" \
  bash -c "[ '$(status_of "$work/llama-wrong.py")' = 1 ] && grep -q '^AssertionError: output.out: ' '$work/llama-wrong.py.ran' && grep -qx 'ok  concat.concat' '$work/llama-wrong.py.ran'"
check "py: a script drawing x instead of loading --input's file fails at input.x (exit 1)" \
  bash -c "[ '$(status_of "$work/loaded-wrong.py")' = 1 ] && grep -q '^AssertionError: input.x: ' '$work/loaded-wrong.py.ran'"
check "py: a flash loop without the rescale of acc fails at flash.acc (exit 1)" \
  bash -c "[ '$(status_of "$work/flash-wrong.py")' = 1 ] && grep -q '^AssertionError: flash.acc: ' '$work/flash-wrong.py.ran' && grep -qx 'ok  flash.rescale' '$work/flash-wrong.py.ran'"
check "py: --mistake alibi_sign's script with the sign put right fails at the alibi stage" \
  grep -q '^AssertionError: alibi.bias: ' "$work/sign-wrong.py.ran"
check "py: torch.randn's x equals the embedded numbers bit for bit" grep -qx "ok  input.x" "$work/nb.py.ran"
check "py: softmax over dim=-2 fails its check (exit 1)" test "$(status_of "$work/softmax-wrong.py")" = 1
check "py: ... with an AssertionError naming the stage" grep -q "^AssertionError: softmax.weights: .* numbers differ from attn's" "$work/softmax-wrong.py.ran"
check "py: ... after the stages before it passed" grep -qx "ok  masked.masked" "$work/softmax-wrong.py.ran"
check "py: a split without its transpose fails on the strides" grep -q "^AssertionError: transpose.q: strides (40, 10, 2, 1), attn's are (40, 2, 8, 1)" "$work/split-wrong.py.ran"
check "py: --mistake's script with the mistake put right fails" test "$(status_of "$work/mistake-wrong.py")" = 1
check "py: --stage output: the script runs" test "$(status_of "$work/lab.py")" = 0

# what a script cannot hold or make
expect_error "py: a run too large to embed is refused" 2 \
  "attn: error: --format py: stage scores has 8192 numbers, more than the 4096 a script embeds per stage: make the run smaller (--seq, --kv-seq, --batch, --heads, --d-model, --d-in) or check fewer stages (--stage)" \
  trace --seq 64 --format py
"$attn" trace --input "$work/x.json" --format json --out "$work/dump.json" --quiet
expect_error "py: --from a dump of a run that read x is refused (the script loads --input's file)" 2 \
  "attn: error: --format py: the script loads the files attn read; with --from they are inside the dump: pass them as --input and --kv-input files" \
  trace --from "$work/dump.json" --format py
"$attn" trace --seed 2 --q "$work/qkv.npz" --k "$work/qkv.npz" --v "$work/qkv.npz" --format npz --out "$work/qkv-dump.npz"
expect_error "py: --from a dump of a run that started at --q --k --v is refused the same way" 2 \
  "attn: error: --format py: the script loads the files attn read; with --from they are inside the dump: pass them as --q, --k and --v files" \
  trace --from "$work/qkv-dump.npz" --format py
expect_error "py: --q --k --v with --params (w_o from the file) is refused before computing" 2 \
  "attn: error: --format py: no script for --q --k --v with --past or --params yet" \
  trace --q "$work/qkv.npz" --k "$work/qkv.npz" --v "$work/qkv.npz" --params "$work/params.npz" --format py
expect_error "py: a view flag is refused" 2 \
  "attn: error: --format py: the script checks whole tensors; leave out --batch-index, --head and --row" \
  trace --format py --head 1
expect_error "py: a mistake without a PyTorch line is refused" 2 \
  "attn: error: --format py: no PyTorch line for --mistake split_without_transpose yet (the script writes softmax_axis, missing_scale, wrong_scale, mask_inverted, fill_value, q_k_swapped, missing_bias, dropout_not_rescaled, dropout_keep_inverted, weights_transposed, log_softmax, sigmoid_instead_of_softmax, scale_multiplied, kv_heads_tiled, rope_positions_from_zero, rope_pairs_mixed, alibi_sign)" \
  trace --format py --mistake split_without_transpose
expect_error "py: a mask mistake, whose line the script cannot write yet, is refused (not a script that fails)" 2 \
  "attn: error: --format py: no PyTorch line for --mistake causal_only yet (the script writes softmax_axis, missing_scale, wrong_scale, mask_inverted, fill_value, q_k_swapped, missing_bias, dropout_not_rescaled, dropout_keep_inverted, weights_transposed, log_softmax, sigmoid_instead_of_softmax, scale_multiplied, kv_heads_tiled, rope_positions_from_zero, rope_pairs_mixed, alibi_sign)" \
  trace --format py --batch 2 --mask causal+padding --lengths 3,1 --mistake causal_only
# --- the README's excerpt is what the program writes, and its failure what python3 says -----
check "README's py excerpt is there" test "$(wc -l <"$work/readme-block")" -ge 10
# The same text, and the same numbers within 1e-6: their last digits depend on OpenBLAS's
# kernel (the README shows Haswell's; Sandybridge's products differ in a last bit).
same_within() {  # same_within A B: the texts equal once numbers are masked, the numbers within 1e-6
    "$python" - "$1" "$2" <<'PY'
import re, sys
number = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")
a, b = (open(path).read() for path in sys.argv[1:3])
same_text = number.sub("#", a) == number.sub("#", b)
x, y = number.findall(a), number.findall(b)
sys.exit(0 if same_text and len(x) == len(y) and all(abs(float(p) - float(q)) <= 1e-6 for p, q in zip(x, y)) else 1)
PY
}
check "README's py excerpt is real" same_within "$work/readme-block" "$work/actual-block"
said=$(tail -n 1 "$work/readme-wrong.py.ran")
check "README's py failure is what python3 says" grep -qF "with \`dim=-2\` there it stops with \`$said\`" <(tr '\n' ' ' <"$readme" | tr -s ' ')

expect_ok "trace --help" trace --help
check "py: trace --help names the py format" grep -q "py (a runnable PyTorch script" "$work/out"

finish
