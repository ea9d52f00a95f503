#!/usr/bin/env bash
# Command-line tests for `attn mask` (one mask in PyTorch's four conventions),
# --causal-align and --safe-softmax.
#
# The fixtures tests/reference/mask_conventions/*.json come from
# make_mask_convention_fixtures.py, which ran each case's printed PyTorch expressions in
# torch 1.13: each builds its printed mask, and each mask applied the PyTorch way gives the
# weights stored there. Here: attn mask prints exactly what was checked, and attn trace,
# with the same q, k, v and mask flags, gives those weights bit for bit (and the
# --safe-softmax ones with --safe-softmax).
# Usage: mask_command.sh path/to/attn. Needs jq and python3 with NumPy.
set -u
attn=${1:?usage: mask_command.sh path/to/attn}
. "$(dirname "$0")/common.sh"
ref=$(cd "$(dirname "$0")/../reference/mask_conventions" && pwd)
export PATH="/usr/bin:$PATH"  # Debian's python3, with NumPy

# fixture_args CASE: the case's flags, one per line, with its directory filled in.
fixture_args() { jq -r --arg dir "$ref" '.args[] | gsub("\\{dir\\}"; $dir)' "$ref/$1.json"; }

# same_mask_output CASE: attn mask --format json prints what the fixture holds.
same_mask_output() {
  python3 - "$ref/$1.json" "$work/out" <<'PY'
import json, sys
want, got = (json.load(open(p)) for p in sys.argv[1:3])
for key in ("setup", "shape", "dims"):
    assert got[key] == want["mask"][key], (key, got[key], want["mask"][key])
assert [c["name"] for c in got["conventions"]] == ["keep", "mha", "sdpa", "additive"]
for g, w in zip(got["conventions"], want["conventions"]):
    for key, value in w.items():
        assert g.get(key) == value, (g["name"], key, g.get(key), value)
assert got["rows_without_key"] == want["rows_without_key"]
PY
}

# same_weights CASE FIELD: attn trace's softmax weights ($work/out) are the fixture's, bit for bit:
# FIELD safe_weights for --safe-softmax; else every convention's in the rows that have an allowed
# key, and keep's (NaN, or uniform with a finite fill) in the others.
same_weights() {
  python3 - "$ref/$1.json" "$work/out" "$2" <<'PY'
import json, sys
import numpy as np
want, got, field = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def array(t): return np.array([float(v) for v in t["data"]], dtype=np.float32).reshape(t["shape"])
w = np.array(got["stages"]["softmax"]["tensors"]["weights"]["data"], dtype=object)
ours = np.vectorize(float, otypes=[np.float32])(w)
def same(a, b): return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))
if field == "safe_weights":
    assert same(ours, array(want["safe_weights"])), "--safe-softmax weights differ"
    sys.exit(0)
keep = array(want["weights"]["keep"])
assert same(ours, keep), "weights differ from keep's"
empty = np.zeros(ours.shape[:3], dtype=bool)
for b, i in want["rows_without_key"]: empty[b, :, i] = True
for name, t in want["weights"].items():
    assert same(ours[~empty], array(t)[~empty]), name + ": weights differ in rows with an allowed key"
PY
}

for json_file in "$ref"/*.json; do
  case_name=$(basename "$json_file" .json)
  mapfile -t args < <(fixture_args "$case_name")
  qkv=(--q "$ref/$case_name.q.npy" --k "$ref/$case_name.k.npy" --v "$ref/$case_name.v.npy")
  expect_ok "$case_name: attn mask --format json" mask "${args[@]}" --d-model 4 --heads 2 --format json
  check "$case_name: the conventions, expressions and data that torch checked" same_mask_output "$case_name"
  expect_ok "$case_name: attn trace --q --k --v" trace "${qkv[@]}" "${args[@]}" --heads 2 --stage softmax --format json
  check "$case_name: the weights of every convention applied the PyTorch way, bit for bit" same_weights "$case_name" weights
  if jq -e 'has("safe_weights")' "$json_file" >/dev/null; then
    expect_ok "$case_name: attn trace --safe-softmax" trace "${qkv[@]}" "${args[@]}" --heads 2 --safe-softmax \
      --stage softmax --format json
    check "$case_name: --safe-softmax: torch._safe_softmax's weights, bit for bit" same_weights "$case_name" safe_weights
  else  # a finite fill: torch._safe_softmax would change nothing, attn refuses the pair
    run trace "${qkv[@]}" "${args[@]}" --heads 2 --safe-softmax --stage softmax --format json
    check "$case_name: --safe-softmax with a finite fill is refused (exit 2)" \
      bash -c "[ $rc -eq 2 ] && grep -q '^attn: error: --safe-softmax with --fill ' '$work/err'"
  fi
done
check "the fixtures are there" test "$(ls "$ref"/*.json | wc -l)" -ge 7

expect_error "--safe-softmax with a finite fill: refused, as torch._safe_softmax would leave the row uniform" 2 \
  "attn: error: --safe-softmax with --fill -1e9: PyTorch's safe softmax zeroes only rows that are all -inf, and a finite fill leaves none (a row with no allowed key stays uniform); use --fill -inf or drop --safe-softmax" \
  trace --mask padding --lengths 3,0 --batch 2 --seq 3 --fill -1e9 --safe-softmax

# --- the table: the four side by side, per batch item, and the PyTorch for each ------------
expect_ok "attn mask, the issue's example" mask --mask causal+padding --lengths 3,5 --batch 2 --seq 5
cp "$work/out" "$work/table"
check "per batch item, with its length" grep -qx "batch 1 (lengths\[1\] = 5)" "$work/table"
check "the four side by side" grep -qE "^ +keep +mha +sdpa +additive$" "$work/table"
check "batch 0, query 4: keys 3 and 4 are padding in each convention" \
  grep -qx "query 4   T T T F F   F F F T T   T T T F F      0    0    0 -inf -inf" "$work/table"
check "keep: torch.tril, and the padding lifted over the queries" grep -qxF \
  "  build   keep = torch.tril(torch.ones(Sq, Sk, dtype=torch.bool)) & (torch.arange(Sk) < lengths[:, None])[:, None, :]" "$work/table"
check "mha: notebook 003's triu(..., diagonal=1).bool(), and padding as arange >= lengths" grep -qxF \
  "  build   mha = torch.triu(torch.ones(Sq, Sk), diagonal=1).bool() | (torch.arange(Sk) >= lengths[:, None])[:, None, :]" "$work/table"
check "additive: zeros filled with -inf where keep is false" grep -qxF \
  "  build   additive = torch.zeros(B, Sq, Sk).masked_fill(~keep, float('-inf'))" "$work/table"
check "nn.MultiheadAttention takes attn_mask and key_padding_mask apart" grep -qF \
  "attn_mask=torch.triu(torch.ones(Sq, Sk), diagonal=1).bool(), key_padding_mask=torch.arange(Sk) >= lengths[:, None])" "$work/table"
check "a line each on what a row with no allowed key becomes" test "$(grep -c '^  empty   a row with no allowed key: ' "$work/table")" -eq 4
check "... 0 under recent F.scaled_dot_product_attention" grep -q "0 in PyTorch 2.5 and later" "$work/table"
check "no line over 100 columns but the Python" \
  bash -c "! grep -vE '^  (build|apply|pass) ' '$work/table' | awk 'length > 100 {bad = 1} END {exit !bad}'"
expect_ok "a mask the same for every batch item is shown once" mask --mask causal --batch 3 --seq 3
check "... and says so" grep -qx "every batch item (the same mask)" "$work/out"
check "... [Sq,Sk] in PyTorch" grep -qxF "  build   additive = torch.zeros(Sq, Sk).masked_fill(~keep, float('-inf'))" "$work/out"
expect_ok "an empty row is marked" mask --mask padding --lengths 2,0 --batch 2 --seq 3
check "... as such" grep -qE "^query 2 .* no allowed key$" "$work/out"
expect_ok "a finite fill" mask --mask causal --seq 2 --fill -1e9
check "... is the additive mask's value, as typed" grep -qE "^query 0 +T F +F T +T F +0 -1e9$" "$work/out"
expect_ok "--causal-align lower-right" mask --mask causal --seq 2 --kv-seq 4 --causal-align lower-right
check "... tril's diagonal Sk - Sq" grep -qxF \
  "  build   keep = torch.tril(torch.ones(Sq, Sk, dtype=torch.bool), diagonal=Sk - Sq)" "$work/out"
check "... the last query sees every key" grep -qx "query 1   T T T T   F F F F   T T T T      0    0    0    0" "$work/out"
check "... and the warning names the alignment and the other flag" grep -q \
  "^attn: warning: causal with Sq = 2 queries and Sk = 4 keys is aligned lower-right (--causal-align lower-right), .*: --causal-align upper-left$" "$work/err"

# --- the README's attn mask blocks are what the program prints ---------------------------------
readme=$(dirname "$0")/../../README.md
# the nth ``` block after the "### One mask, four conventions" heading
readme_block() { awk -v want="$1" '/^### One mask, four conventions/ {seen = 1; next}
  seen && /^```/ {if (inside) {inside = 0; if (++n == want) exit; next} inside = 1; next}
  inside && n + 1 == want' "$readme"; }
"$attn" mask --mask causal+padding --lengths 3,5 --batch 2 --seq 5 >"$work/actual" 2>/dev/null
readme_block 1 >"$work/readme-1"
readme_block 2 >"$work/readme-2"
check "README's attn mask output (the masks) is real" diff "$work/readme-1" <(head -n "$(wc -l <"$work/readme-1")" "$work/actual")
check "README's attn mask output (mha's PyTorch) is real" \
  python3 -c 'import sys; a, b = (open(p).read() for p in sys.argv[1:]); assert len(a) > 200 and a in b' "$work/readme-2" "$work/actual"

# --- a row at a time: bounded memory at any size; what cannot fit refused up front -------------
# Sq = Sk = 3000 is 9M cells a convention (the JSON is 200 MB, to /dev/null): the whole mask and its
# four conventions as floats took 263 MB; written a row at a time, attn mask holds a row and its text.
if [ -x /usr/bin/time ] && [ -z "${ATTN_SANITIZED:-}" ]; then  # ASan's shadow memory counts in RSS
  for args in "--mask causal --format json" "--mask causal --format table" \
              "--mask causal+random+padding --lengths 2000,3000 --batch 2 --format json"; do
    /usr/bin/time -f '%M' -o "$work/rss" "$attn" mask $args --seq 3000 >/dev/null 2>"$work/err"; rc=$?
    kib=$(tail -n 1 "$work/rss")
    if [ "$rc" -eq 0 ] && [ "$kib" -lt 32768 ]; then ok "attn mask $args --seq 3000: peak RSS ${kib} KiB"
    else fail "attn mask $args --seq 3000: peak RSS" "exit $rc, $kib KiB, wanted under 32 MiB"; fi
  done
else
  echo "skip peak RSS (no /usr/bin/time, or under ASan)"
fi
# what is written a row at a time is the mask NumPy builds whole, at a size of several rows of draws
expect_ok "attn mask in rows: causal+padding+random, Sq = 300, Sk = 350" \
  mask --mask causal+padding+random --lengths 200,350 --batch 2 --seq 300 --kv-seq 350 --fill -1e9 --format json
check "... keep, mha, sdpa and additive are tril & arange < lengths & the draws, in [B,Sq,Sk]" python3 - "$work/out" <<'PY'
import json, sys
import numpy as np
d = json.load(open(sys.argv[1]))
keep = np.array(d["conventions"][0]["data"])
assert keep.shape == (2, 300, 350) and d["shape"] == [2, 300, 350]
rules = np.tril(np.ones((300, 350), bool))[None] & (np.arange(350) < np.array([200, 350])[:, None])[:, None, :]
assert (keep <= rules).all() and 0.4 < keep[rules].mean() < 0.6  # the random half of what the rules allow
assert (np.array(d["conventions"][1]["data"]) == ~keep).all() and (np.array(d["conventions"][2]["data"]) == keep).all()
assert (np.array(d["conventions"][3]["data"], dtype=np.float32) == np.where(keep, 0, np.float32(-1e9))).all()
assert d["rows_without_key"] == [[b, i] for b in range(2) for i in range(300) if not keep[b, i].any()]
PY
expect_ok "... and the same mask's keep is attn trace's mask stage" \
  trace --mask causal+padding+random --lengths 200,350 --batch 2 --seq 300 --kv-seq 350 --stage mask --format npz --out "$work/m.npz"
"$attn" mask --mask causal+padding+random --lengths 200,350 --batch 2 --seq 300 --kv-seq 350 --fill -1e9 --format json >"$work/mask.json" 2>/dev/null
check "... bit for bit" python3 -c "
import json, numpy as np
a = np.load('$work/m.npz')['mask.mask'][:, 0]
assert (np.array(json.load(open('$work/mask.json'))['conventions'][0]['data']) == a).all()"
# a row of 50M keys in four conventions (4.7 GiB) cannot fit 1 GiB: refused before a row is made,
# under an address-space limit, by the mask's own need (no projection is computed)
limit_kb=400000 expect_refusal "a row that cannot fit --max-memory: refused up front, exit 1" 1 \
  "attn: error: these sizes need 4.7 GiB but the limit is 1.0 GiB (--max-memory); attn mask writes the mask [B,1,Sq,Sk] = [1,1,2,50000000] a row at a time: a row of 50000000 keys in four conventions takes 4.7 GiB" \
  mask --mask causal --seq 2 --kv-seq 50000000 --max-memory 1GiB
python3 -c "import json; print(json.dumps([[int(j <= i) for j in range(100)] for i in range(100)]))" >"$work/m100.json"
limit_kb=400000 expect_refusal "... the mask files, as read and expanded over --batch, count too" 1 \
  "attn: error: these sizes need 205.3 KiB but the limit is 100.0 KiB (--max-memory); attn mask writes the mask [B,1,Sq,Sk] = [20,1,100,100] a row at a time: a row of 100 keys in four conventions takes 10.0 KiB, and the mask files as read 195.3 KiB" \
  mask --mask-file "$work/m100.json" --batch 20 --max-memory 100KiB
expect_ok "... and fit with a batch of 2" mask --mask-file "$work/m100.json" --batch 2 --max-memory 100KiB

# --- attn mask's mistakes and help -------------------------------------------------------------
expect_error "attn mask without a mask" 2 \
  "attn: error: attn mask shows a mask: give --mask KINDS (causal, padding, window, random joined by '+'), --mask-file or --key-padding-mask, e.g. attn mask --mask causal" mask
expect_error "--causal-align takes upper-left or lower-right" 2 \
  "attn: error: --causal-align middle: expected one of upper-left or lower-right" mask --mask causal --causal-align middle
expect_error "attn mask has no --dropout" 2 \
  "attn: error: --dropout: attn mask has no such flag; see \`attn mask --help\`" mask --mask causal --dropout 0.1
expect_ok "attn mask --help" mask --help
check "mask help: the four conventions" grep -q "keep: true = may attend" "$work/out"
check "mask help: examples" grep -qx "  attn mask --mask causal+padding --lengths 3,5 --batch 2 --seq 5" "$work/out"
check "mask help: the mask flags, with --causal-align and --safe-softmax" \
  bash -c "grep -q -- '--causal-align WHERE' '$work/out' && grep -q -- '--safe-softmax' '$work/out'"
check "mask help fits in 100 columns" bash -c "! awk 'length > 100 {bad = 1} END {exit !bad}' '$work/out'"
expect_ok "attn --help" --help
check "attn --help lists the mask command" grep -qE "^  mask +Show one mask in PyTorch's four conventions" "$work/out"

# --- --causal-align and --safe-softmax in attn trace: config keys, replay, warnings -------------
expect_ok "trace --causal-align lower-right --safe-softmax" trace --mask causal --seq 5 --kv-seq 3 \
  --causal-align lower-right --safe-softmax --format json
check "config: causal_align and safe_softmax" \
  test "$(jq -c '.config | [.causal_align, .safe_softmax]' "$work/out")" = '["lower-right",true]'
check "the mask formula shows the alignment" \
  test "$(jq -r .stages.mask.formula "$work/out")" = "mask[b,0,i,j] = (j <= i + Sk - Sq = i - 2); true = query i may attend key j, the same for every head"
check "the softmax formula says what --safe-softmax does" \
  test "$(jq -r .stages.softmax.formula "$work/out")" = "weights = softmax(masked, dim=-1); a row with no allowed key (all -inf) gets 0 weights, not NaN (--safe-softmax, as torch._safe_softmax)"
check "the empty rows' warning says 0 (--safe-softmax)" grep -qx \
  "attn: warning: batch 0, query 1: no key may be attended, so its weights are 0 (--safe-softmax)" "$work/err"
check "... and their weights are 0" test "$(jq -c '.stages.softmax.tensors.weights.data[0][0][0:2]' "$work/out")" = "[[0,0,0],[0,0,0]]"
cp "$work/out" "$work/lr.json"
expect_ok "a dump with both replays" trace --from "$work/lr.json" --format json
check "... the same document" test "$(jq -S -c . "$work/out")" = "$(jq -S -c . "$work/lr.json")"
expect_ok "the defaults write neither key" trace --mask causal --seq 5 --kv-seq 3 --format json
check "... no causal_align, no safe_softmax" test "$(jq -c '.config | [has("causal_align"), has("safe_softmax")]' "$work/out")" = "[false,false]"
check "... upper-left: the warning names it and the flag for lower-right" grep -q \
  "^attn: warning: causal with Sq = 5 queries and Sk = 3 keys is aligned upper-left (--causal-align upper-left, the default), .*: --causal-align lower-right$" "$work/err"
check "... the empty rows would be NaN" test "$(jq -r '.stages.softmax.tensors.weights.data[0][0][0][0]' "$work/out")" = "1"
expect_ok "--from with --causal-align on top" trace --from "$work/lr.json" --causal-align upper-left --format json
check "... upper-left: no empty rows, so no NaN and no 0 rows" test "$(jq -c '.stages.softmax.tensors.weights.data[0][0][0]' "$work/out")" = "[1,0,0]"
expect_ok "the table's mask line" trace --mask causal --seq 2 --kv-seq 4 --causal-align lower-right --safe-softmax --stage mask
check "... names the alignment and --safe-softmax" grep -qx "mask   causal (lower-right), fill -inf, --safe-softmax" "$work/out"

finish
