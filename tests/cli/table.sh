#!/usr/bin/env bash
# Command-line tests for --format table (the default): one notation per stage,
# the run header, warnings next to their stage, the params summary, the mask's
# labels and the notes for skipped stages. Usage: table.sh path/to/attn
set -u
attn=${1:?usage: table.sh path/to/attn}
. "$(dirname "$0")/common.sh"

# stage NAME: the lines of stage NAME in $work/out, from its heading to the blank line after it.
stage() { awk -v h="· $1 ──" 'index($0, h) {on = 1} on && /^$/ {exit} on' "$work/out"; }
# has_sci: the text on stdin holds a number in scientific notation.
has_sci() { grep -qE '[0-9]e[-+][0-9]'; }

# --- 1. one fixed notation per stage ------------------------------------------------
# PyTorch's print puts w_k of this run in scientific notation and w_q, w_v not.
expect_ok "d-model 16, seed 24" trace --d-model 16 --heads 4 --seed 24
check "no stage but params needs scientific notation here" bash -c "! grep -vE '^(w_|b_|d_model )' '$work/out' | grep -qE '[0-9]e[-+][0-9]'"
expect_ok "--stage params in full" trace --d-model 16 --heads 4 --seed 24 --stage params
check "w_k holds -1.5199e-05, so the whole stage is scientific, with a note" \
  grep -qx '   (scientific notation: some values are below 0.00005)' "$work/out"
check "... w_q too, not only w_k" grep -qE '^d_model 0 +1\.3221e-01 ' "$work/out"
check "... and w_k's tiny value is there" grep -q -- '-1.5199e-05' "$work/out"
expect_ok "--sci-mode off" trace --d-model 16 --heads 4 --seed 24 --stage params --sci-mode off
check "--sci-mode off: fixed, no note" bash -c "! grep -qE 'e-0|scientific' '$work/out'"
expect_ok "--sci-mode on" trace --stage softmax --sci-mode on
check "--sci-mode on: scientific" grep -qE '^query 0 +[0-9]\.[0-9]{4}e-01 ' "$work/out"
expect_ok "--format torch keeps PyTorch's per-tensor rule" trace --d-model 16 --heads 4 --seed 24 --stage params --format torch
check "... w_q fixed" bash -c "sed -n '/^# params.w_q/,/^# params.b_q/p' '$work/out' | grep -q '0.1322'"
check "... w_k scientific" bash -c "sed -n '/^# params.w_k/,/^# params.b_k/p' '$work/out' | grep -q '1.5199e-05'"
expect_ok "a single key" trace --seq 1 --stage softmax
check "exact 1 prints 1.0000, not PyTorch's '1.'" grep -qx 'query 0  1.0000' "$work/out"
expect_ok "fill -1e9" trace --batch 2 --mask padding --lengths 3,0 --fill -1e9 --stage masked
check "the fill as typed in the formula" grep -qx '   masked = scaled.masked_fill(mask == false, -1e9)' "$work/out"
check "the fill as typed in the table, the scores in fixed notation" grep -qE '^query 0 +0\.1799 +0\.1725 +0\.0786 +-1e9$' "$work/out"
check "no scientific notation in the masked stage" bash -c "! grep -qE '[0-9]e[-+][0-9]' '$work/out'"

# --- 2. the run header -------------------------------------------------------------------------
expect_ok "seed notebook 000" trace --seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj
printf '%s\n' 'run    self-attention: Q, K, V from x; seed 24; no output projection' \
  'sizes  B=2  Sq=5  Sk=5  Din=8  D=8  H=4  dk=2  √dk=1.4142' 'mask   causal, fill -inf' '' '── 1 · input ── the token embeddings' \
  >"$work/want"
check "the header states the run, then a blank line" diff "$work/want" <(head -n 5 "$work/out")
expect_ok "cross-attention, a typed fill, dropout" trace --kv-seq 6 --d-kv-in 12 --batch 2 --mask padding --lengths 6,2 \
  --fill -1e9 --dropout 0.5 --train --dropout-seed 3 --stage output
printf '%s\n' 'run      cross-attention: Q from x, K and V from x_kv; seed 0' \
  'sizes    B=2  Sq=4  Sk=6  Din=8  Dkv=12  D=8  H=2  dk=4  √dk=2' 'mask     padding (lengths 6,2), fill -1e9' \
  'dropout  p=0.5, training mode: stage 11, keep drawn with --dropout-seed 3' '' >"$work/want"
check "cross, Dkv, the fill as typed, dropout" diff "$work/want" <(head -n 5 "$work/out")
echo '[[[1,0,0,0],[0,1,0,0],[0,0,1,0]]]' >"$work/x.json"
expect_ok "x from a file" trace --input "$work/x.json" --stage scores
check "where x came from" grep -qx 'run    self-attention: Q, K, V from x (--input); seed 0' "$work/out"
"$attn" trace --heads 2 --d-model 4 --stage params --format npz --out "$work/p.npz"
expect_ok "x and the weights from files" trace --input "$work/x.json" --params "$work/p.npz" --heads 2 --stage scores
check "nothing drawn: no seed named" grep -qx 'run    self-attention: Q, K, V from x (--input)' "$work/out"
expect_ok "dropout in eval mode" trace --dropout 0.1 --stage scores
check "eval mode said" grep -qx 'dropout  p=0.1, eval mode: the identity (stage 11 needs --train)' "$work/out"
expect_ok "json" trace --format json --stage scores
check "no header in JSON" jq -e .format "$work/out"
expect_ok "torch" trace --format torch --stage scores
check "no header in torch's print" test "$(head -n 1 "$work/out")" = '# scores.scores'

# --- 3. warnings next to their stage, in plain words ------------------------------------
expect_ok "three empty rows" trace --batch 2 --seq 3 --mask padding --lengths 3,0 --stage masked,softmax
check "one warning per row on stderr" grep -qx \
  'attn: warning: batch 1, query 2: no key may be attended, so its weights are NaN (fill -inf)' "$work/err"
check "three lines on stderr" test "$(wc -l <"$work/err")" -eq 3
stage softmax >"$work/softmax"
check "the ! lines come right after the heading and formula" test "$(sed -n 3p "$work/softmax")" = \
  '   ! batch 1, query 0: no key may be attended, so its weights are NaN (fill -inf)'
check "... all three before the tensor" test "$(sed -n 6p "$work/softmax" | cut -c1-8)" = 'weights '
expect_ok "a finite fill" trace --batch 2 --seq 3 --mask padding --lengths 3,0 --fill -1e9 --stage softmax
check "uniform, the fill as typed" grep -qx \
  '   ! batch 1, query 0: no key may be attended, so its weights are uniform (fill -1e9), and its context is the plain mean of V' "$work/out"
expect_ok "many empty rows" trace --batch 2 --mask padding --lengths 3,0 --stage softmax
check "more than three rows: one summary on stderr" grep -qx \
  'attn: warning: no key may be attended in batch 1 queries 0..3: their weights are NaN (the fill is -inf; PyTorch gives NaN too)' \
  "$work/err"

# --- 4. params summarised unless asked for ------------------------------------------------
expect_ok "default run" trace
stage params >"$work/params"
check "params in at most 12 lines (was about 54)" test "$(wc -l <"$work/params")" -le 12
check "the stage says how to see all" grep -qx '   (each tensor as min, mean and max: --stage params or --full prints them whole)' "$work/params"
check "one line per tensor" grep -qE '^w_o \[8,8\] \(d_model, d_model\) +-?0\.[0-9]{4} +-?0\.[0-9]{4} +-?0\.[0-9]{4}$' "$work/params"
expect_ok "--stage params" trace --stage params
check "--stage params prints them whole" grep -qE '^d_model 7 ' "$work/out"
check "... without the summary" bash -c "! grep -q 'min, mean and max' '$work/out'"
expect_ok "--full" trace --full
stage params >"$work/params"
check "--full prints them whole" grep -qE '^d_model 7 ' "$work/params"

# --- 5. the mask [B,1,Sq,Sk] is shared by every head -----------------------------------------
expect_ok "padding mask" trace --batch 2 --heads 4 --mask padding --lengths 3,0 --stage mask,masked
check "mask slices by batch item, for every head" grep -qx 'mask\[batch=1\] (the same for every head)' "$work/out"
check "no mask[batch=0, head=0]" bash -c "! grep -q '^mask\[.*head=' '$work/out'"
check "masked has a slice per head" grep -qx 'masked\[batch=1, head=3\]' "$work/out"
expect_ok "dropout's keep" trace --dropout 0.5 --train --heads 2 --stage dropout
check "keep is per head" grep -qx 'keep\[batch=0, head=1\]' "$work/out"

# --- 6. stages a run has not, between two shown ones ------------------------------------------
expect_ok "no mask, no dropout" trace --stage scaled,softmax,context
check "8-9 skipped without a mask" grep -qx '── 8-9 · mask, masked ── skipped: no --mask, --mask-file or --key-padding-mask, so every query may attend every key' "$work/out"
check "11 skipped without dropout" grep -qx '── 11 · dropout ── skipped: no --dropout, so the weights go on unchanged' "$work/out"
expect_ok "dropout in eval mode" trace --dropout 0.5 --mask causal --stage softmax,context
check "11 skipped: eval mode" grep -qx '── 11 · dropout ── skipped: eval mode (--dropout acts only with --train), so the weights go on unchanged' "$work/out"
check "no 8-9 line with a mask" bash -c "! grep -q '8-9' '$work/out'"
expect_ok "dropout in training mode" trace --dropout 0.5 --train
check "no skipped line for 11 when it is there" bash -c "! grep -q '11 · dropout ── skipped' '$work/out'"
check "... which is shown" grep -q '^── 11 · dropout ── weights after dropout' "$work/out"
expect_ok "neighbours not shown" trace --stage softmax
check "no skipped line for a lone stage" bash -c "! grep -q 'skipped' '$work/out'"

# --- view and merge: one [S, H·dk] table per batch item, the heads side by side -----------
# Notebook 000's table was 842 lines, its view stage 186 (30 tables of [H,dk] = 4x2).
expect_ok "notebook 000, the whole table" trace "${notebook[@]}"
check "notebook 000's table: under 700 lines" test "$(wc -l <"$work/out")" -lt 700
check "the view stage: under 60 lines" test "$(stage view | wc -l)" -lt 60
check "the view stage: a table per batch item, none per position" \
  test "$(stage view | grep -c '^[qkv]\[batch=[01]\]$'),$(stage view | grep -c 'seq=')" = "6,0"
check "the heads named over their columns, between separators" \
  grep -qxE ' +│ head 0 +│ head 1 +│ head 2 +│ head 3' "$work/out"
check "... and each head's head_dim indices under them" \
  grep -qxE 'head_dim +│ +0 +1 +│ +0 +1 +│ +0 +1 +│ +0 +1' "$work/out"
"$attn" trace "${notebook[@]}" --format json >"$work/nb.json"
# every value of view (q, k, v) and merge, read back from the table, is the JSON's at
# [b][s][h][e] to the table's 4 decimals
check "view and merge: each row holds position s's heads, each head's dk values in order" python3 -c '
import json, re, sys
data = json.load(open(sys.argv[1]))["stages"]
name = head = None
seen = 0
for line in open(sys.argv[2]):
    m = re.match(r"^(── \d+ · (\w+) ──)", line)
    if m: stage = m.group(2); continue
    m = re.match(r"^(\w+)\[batch=(\d)\]$", line)
    if m: name, b = m.group(1), int(m.group(2)); continue
    m = re.match(r"^(?:kv_)?seq (\d) +│(.*)$", line)
    if m and stage in ("view", "merge"):
        s = int(m.group(1))
        for h, group in enumerate(m.group(2).split("│")):
            for e, text in enumerate(group.split()):
                want = data[stage]["tensors"][name]["data"][b][s][h][e]
                assert abs(float(text) - want) <= 0.00005 + 1e-7, (stage, name, b, s, h, e, text, want)
                seen += 1
assert seen == 4 * 80, seen  # q, k, v and merge: 2*5*4*2 each
' "$work/nb.json" "$work/out"
expect_ok "a summarised [B,S,H,dk]: the heads and head_dims a summary keeps" \
  trace --batch 9 --seq 40 --d-model 64 --heads 8 --stage merge
check "... heads 0-2, ..., 5-7 named" grep -qxE ' +│ head 0 +│ head 1 +│ head 2 +│ +\.\.\. │ head 5 +│ head 6 +│ head 7' "$work/out"
check "... head_dims 0-2, ..., 5-7 under each" grep -qE '^head_dim +│ +0 +1 +2 +\.\.\. +5 +6 +7 │' "$work/out"
check "... batch items 3-5 left out, said once" grep -qx '... (3 more batch items: batch=3..5) ...' "$work/out"
expect_ok "--format torch keeps PyTorch's own print of view" trace "${notebook[@]}" --stage view --format torch
check "... no separators there" bash -c "! grep -q '│' '$work/out'"

finish
