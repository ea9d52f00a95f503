#!/usr/bin/env bash
# Command-line tests: --explain. Each stage of the run has its block (what, shape,
# einsum, torch, memory, why) under its heading, with this run's numbers; an opening
# and a summary; JSON and JSON lines carry the same texts; without --explain nothing
# changes. Usage: explain.sh path/to/attn. Needs jq and python3.
set -u
attn=${1:?usage: explain.sh path/to/attn}
. "$(dirname "$0")/common.sh"
schema="$(dirname "$0")/../../share/attn/trace.schema.json"

# line STAGE LABEL: the text of one labelled line of a stage's block in $work/out,
# its wrapped rows joined with spaces.
line() {
  awk -v stage="$1" -v label="$2" '
    /^── / { inside = ($0 ~ ("^── [0-9]+ · " stage " ──")) ; taking = 0; next }
    inside && substr($0, 1, 11) ~ /^   [a-z]+ +$/ { taking = (substr($0, 4, length(label)) == label && substr($0, 4 + length(label), 1) == " "); if (taking) text = substr($0, 12); next }
    inside && taking && substr($0, 1, 11) == "           " { text = text " " substr($0, 12); next }
    { taking = 0 }
    END { print text }' "$work/out"
}
# has STAGE LABEL TEXT: that line contains TEXT.
has() { case "$(line "$1" "$2")" in *"$3"*) return 0 ;; *) return 1 ;; esac; }
headings() { grep -E '^── [0-9]+ · [a-z]+ ── ' "$work/out" | grep -vc ' ── skipped: '; }
# joined: the output as one line, runs of spaces as one (for text that wraps).
joined() { tr '\n' ' ' <"$work/out" | tr -s ' '; }
blocks() { grep -c '^   what    ' "$work/out"; }

# --- notebook 000's shape: B=2 Sq=5 D=8 H=4, causal ------------------------------------
expect_ok "--explain with notebook 000's shape" trace --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --explain
cp "$work/out" "$work/nb.txt"

# a causal mask aligned lower-right says so, and its torch line moves the diagonal
expect_ok "--explain, causal lower-right with Sq < Sk" trace --seq 2 --kv-seq 5 --mask causal --causal-align lower-right --explain --stage mask
check "lower-right: the torch line has diagonal=Sk-Sq" test "$(line mask torch)" = "mask = torch.tril(torch.ones(2, 5, dtype=torch.bool), diagonal=3)"
check "lower-right: the rule says lower-right, not upper-left" has mask what "causal aligned lower-right, only keys j <= i + Sk - Sq = i + 3"
expect_ok "--explain, causal upper-left with Sq < Sk" trace --seq 2 --kv-seq 5 --mask causal --explain --stage mask
check "upper-left: plain torch.tril" test "$(line mask torch)" = "mask = torch.tril(torch.ones(2, 5, dtype=torch.bool))"
expect_ok "--explain with notebook 000's shape" trace --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --explain
check "the scores shape line, with this run's numbers" \
  test "$(line scores shape)" = "[2,4,5,2] · [2,4,2,5] -> [2,4,5,5]   ([B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk])"
check "the scores einsum" test "$(line scores einsum)" = "bhqd,bhkd->bhqk"
check "the scores torch line" test "$(line scores torch)" = "scores = q @ k.transpose(-2, -1)"
check "the view torch line" test "$(line view torch)" = "q = q.view(B, Sq, H, dk); k = k.view(B, Sk, H, dk); v = v.view(B, Sk, H, dk)"
check "the transpose memory line: a view, strides swapped, not contiguous" \
  has transpose memory "a view: no data moves; transpose swaps the strides of axes 1 and 2: (40, 8, 2, 1) -> (40, 2, 8, 1). q, k and v are no longer contiguous (q.is_contiguous() is False)"
check "the merge memory line: why merged.view fails" has merge memory "merged.view(B, Sq, D) raises"
check "the concat torch line" test "$(line concat torch)" = "concat = merged.contiguous().view(B, Sq, D)"
check "the concat memory line names the copy" \
  has concat memory "the copy: merged is not contiguous, so .contiguous() copies it into new memory in [2,5,4,2] order (strides (40, 8, 2, 1))"
check "scaled: √dk = √2" has scaled what "√dk = √2 = 1.4142"
check "scaled: why, in variance" has scaled why "Dividing by √dk brings the variance back near 1, so that softmax does not saturate"
check "mask: the torch line" test "$(line mask torch)" = "mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))"
check "masked: the torch line" test "$(line masked torch)" = "masked = scaled.masked_fill(~mask, float('-inf'))"
check "softmax: the torch line" test "$(line softmax torch)" = "weights = torch.softmax(masked, dim=-1)"
check "context: the shape line" has context shape "[2,4,5,5] · [2,4,5,2] -> [2,4,5,2]"
check "output: the torch line" test "$(line output torch)" = "out = w_o(concat)  # concat @ w_o.weight.T + w_o.bias"
check "every stage of the run has its block (14: all but dropout)" test "$(headings):$(blocks)" = "14:14"
check "each block comes right after its heading and formula" \
  test "$(awk '/^── [0-9]+ · [a-z]+ ── / && !/ ── skipped: / { want = NR + 2 } NR == want && !/^   what    / { bad++ } END { print bad + 0 }' "$work/out")" = 0
for label in what shape torch memory why; do
  check "every block has a '$label' line" test "$(sed '/^── summary/,$d' "$work/out" | grep -c "^   $label ")" = 14
done
check "the opening names the run's letters" grep -q "B = 2 sequences (the batch), Sq = 5 query tokens, Sk = 5 key and value tokens, Din = 8 input features per token, D = 8 model width, H = 4 heads of dk = 2 features" <(joined)
check "the opening's heading" grep -qx "── multi-head attention, explained ──" "$work/out"
check "the summary's shapes" grep -q "^   shapes  x \[2,5,8\] -> q \[2,5,8\] -> view \[2,5,4,2\] -> transpose \[2,4,5,2\] -> scores \[2,4,5,5\] ->" "$work/out"
check "no explanation line is wider than 100 columns" python3 -c '
import sys
lines = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]
wide = [l for l in lines if l.startswith("   ") and not l.startswith("   (") and len(l) > 100 and "mask[b,0,i,j]" not in l]
sys.exit(1 if wide else 0)' "$work/out"

# --- without --explain nothing changes ---------------------------------------------------
expect_ok "the same run without --explain" trace --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal
check "without --explain: no blocks, no opening, no summary" test "$(blocks):$(grep -c 'explained\|── summary' "$work/out")" = "0:0"
check "--explain only adds lines: the plain table is a subsequence of the explained one" python3 -c '
import sys
plain = open(sys.argv[1]).read().splitlines(); explained = open(sys.argv[2]).read().splitlines()
it = iter(explained)
sys.exit(0 if all(any(p == e for e in it) for p in plain) else 1)' "$work/out" "$work/nb.txt"

# --- variants ----------------------------------------------------------------------------
expect_ok "cross-attention" trace --batch 2 --seq 5 --kv-seq 6 --d-kv-in 12 --heads 4 --mask causal --explain
check "cross: the scores shape with Sk = 6" has scores shape "[2,4,5,2] · [2,4,2,6] -> [2,4,5,6]"
check "cross: x_kv with Dkv = 12" has input shape "x_kv [B,Sk,Dkv] = [2,6,12]"
check "cross: keys and values from x_kv" test "$(line projections torch)" = "q = w_q(x); k = w_k(x_kv); v = w_v(x_kv)  # each x @ w.weight.T + w.bias"
check "cross: k's projection with Dkv" has projections shape "x_kv [2,6,12] · w_kᵀ [12,8] + b_k [8] -> k [2,6,8]"
check "cross: w_k takes Dkv, in the first line" has input torch "w_k = nn.Linear(12, 8);"
check "cross: x_kv drawn after x, in the first line" has input torch "x = torch.randn(2, 5, 8); x_kv = torch.randn(2, 6, 12)"
check "cross: the causal mask is [Sq,Sk]" test "$(line mask torch)" = "mask = torch.tril(torch.ones(5, 6, dtype=torch.bool))"

expect_ok "--no-qkv-bias" trace --no-qkv-bias --explain
check "--no-qkv-bias: the projections' torch line without a bias" test "$(line projections torch)" = \
  "q = w_q(x); k = w_k(x); v = w_v(x)  # each x @ w.weight.T (bias=False)"
check "--no-qkv-bias: nn.Linear(..., bias=False)" has input torch "w_q = nn.Linear(8, 8, bias=False)"
check "--no-qkv-bias: no b_q in the shapes" test "$(line projections shape | grep -c b_q)" = 0

expect_ok "--no-out-proj" trace --no-out-proj --explain
check "--no-out-proj: no output block, concat is the result" has concat why "this is the result"
check "--no-out-proj: a block for each of its 11 stages" test "$(headings):$(blocks)" = "11:11"

"$attn" trace --batch 2 --seq 3 --d-model 8 --format json --stage projections >"$work/t.json"
for t in q k v; do jq ".stages.projections.tensors.$t.data" "$work/t.json" >"$work/$t.json"; done
expect_ok "--q --k --v" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --heads 4 --explain
check "--q --k --v: no input and no params blocks" test "$(grep -cE '^── (1 · input|2 · params)' "$work/out")" = 0
check "--q --k --v: a block for each of its 10 stages" test "$(headings):$(blocks)" = "10:10"
check "--q --k --v: the projections are given" has projections torch "q, k, v given by --q, --k, --v"

expect_ok "dropout in training mode" trace --dropout 0.5 --train --explain
check "dropout: its block draws attn's keep mask" test "$(line dropout torch)" = "torch.manual_seed(0); keep = torch.rand(B, H, Sq, Sk) < 1 - 0.5; weights = weights * (keep / (1 - 0.5))"
check "dropout: the scale 1 / (1 - p)" has dropout what "multiplied by 1 / (1 - p) = 2"
check "dropout: the keep mask's shape" has dropout shape "[1,2,4,4] · keep [1,2,4,4] / 0.5 -> [1,2,4,4]"
expect_ok "dropout in eval mode" trace --dropout 0.5 --explain
check "eval mode: no dropout block" test "$(line dropout torch)" = ""

expect_ok "--fill -1e9" trace --mask causal --fill -1e9 --explain --stage masked
check "--fill -1e9 in the torch line" test "$(line masked torch)" = "masked = scaled.masked_fill(~mask, -1e9)"
check "--stage: only the asked stage's block" test "$(blocks)" = 1

expect_ok "one head" trace --heads 1 --explain --stage transpose,concat
check "one head: the transpose stays contiguous" has transpose memory "q, k and v are still contiguous"
check "one head: .contiguous() does not copy" has concat memory "no copy: merged is contiguous already"

# --- JSON and JSON lines -----------------------------------------------------------------
expect_ok "--format json --explain" trace --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --format json --explain
check "json: scores.explain.einsum" test "$(jq -r '.stages.scores.explain.einsum' "$work/out")" = "bhqd,bhkd->bhqk"
check "json: scores.explain.shapes" test "$(jq -r '.stages.scores.explain.shapes' "$work/out")" = \
  "[2,4,5,2] · [2,4,2,5] -> [2,4,5,5]   ([B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk])"
check "json: the same texts as the table" test "$(jq -r '.stages.concat.explain.memory' "$work/out" | cut -c1-60)" = \
  "$(cp "$work/out" "$work/json"; cp "$work/nb.txt" "$work/out"; line concat memory | cut -c1-60; cp "$work/json" "$work/out")"
check "json: every stage has the schema's explain keys, in order" test \
  "$(jq -c '[.stages[] | .explain | keys_unsorted] | unique' "$work/out")" = "[$(jq -c '."$defs".explanation.required' "$schema")]"
check "json: explain comes before the tensors" test "$(jq -c '.stages.scores | keys_unsorted' "$work/out")" = \
  '["step","title","formula","explain","tensors"]'
expect_ok "--format json without --explain" trace --format json
check "json without --explain: no explain key" test "$(jq '[.stages[] | has("explain")] | any' "$work/out")" = false
expect_ok "--format jsonl --explain" trace --mask causal --format jsonl --explain
check "jsonl: every line has its explanation" test "$(jq -c 'has("explain")' "$work/out" | sort -u)" = true
check "jsonl: the mask line's torch" test "$(jq -r 'select(.name == "mask") | .explain.torch' "$work/out")" = \
  "mask = torch.tril(torch.ones(4, 4, dtype=torch.bool))"

# --- the torch lines are the ones run in PyTorch (make_explain_torch_lines.py) -------------
root=$(cd "$(dirname "$0")/../.." && pwd)
verified="$root/tests/reference/explain_torch_lines.json"
for i in $(seq 0 $(($(jq '.runs | length' "$verified") - 1))); do
  mapfile -t run_args < <(jq -r ".runs[$i].args[]" "$verified")
  (cd "$root" && "$attn" trace "${run_args[@]}" --explain --format json) >"$work/out" 2>/dev/null
  check "the torch lines of trace ${run_args[*]} are those PyTorch ran" test \
    "$(jq -cS '.stages | map_values(.explain.torch)' "$work/out")" = "$(jq -cS ".runs[$i].torch" "$verified")"
done

# --- the README's excerpt is what the program prints --------------------------------------
readme="$(dirname "$0")/../../README.md"
# the lines between the ``` fences after the line that gives the --explain command
awk '/--explain --stage scores` prints/ {seen = 1; next} seen && /^```/ {if (inside) exit; inside = 1; next} inside' "$readme" >"$work/readme-block"
"$attn" trace --batch 2 --seq 5 --heads 4 --mask causal --explain --stage scores \
  | sed -n '/^── 6 · scores/,/^scores \[/p' | sed '$d' >"$work/actual-block"
check "README's --explain excerpt is there" test "$(wc -l <"$work/readme-block")" -ge 14
check "README's --explain excerpt is real" diff "$work/readme-block" "$work/actual-block"

# --- the README's lecture: each slide's output is what the program prints ------------------
awk '/^## A lecture with attn/ {on = 1; next} on && /^## / {exit} on' "$readme" >"$work/lecture"
{
  "$attn" trace --heads 2 --stage view,transpose --explain
  "$attn" mask --seq 4 --mask causal
  "$attn" trace --heads 2 --mask causal --mistake softmax_axis --stage softmax --format json \
    | jq .stages.softmax.tensors.weights.data >"$work/wrong.json"
  "$attn" check --heads 2 --mask causal --stage softmax --answer "$work/wrong.json"
} >"$work/lecture-actual" 2>/dev/null
# the output lines inside the lecture's fences, without the commands and the "..."
awk '/^   ```/ {inside = !inside; next} inside' "$work/lecture" | sed 's/^   //' \
  | grep -v -e '^attn ' -e '^  | jq' -e '^\.\.\.$' >"$work/lecture-lines"
check "README's lecture shows output" test "$(wc -l <"$work/lecture-lines")" -ge 5
check "README's lecture output is real" test -z "$(grep -vxFf "$work/lecture-actual" "$work/lecture-lines")"

# --- --help ------------------------------------------------------------------------------
expect_ok "trace --help" trace --help
check "--help lists --explain" grep -q -- "--explain" "$work/out"

finish
