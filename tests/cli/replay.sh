#!/usr/bin/env bash
# Command-line tests for --from DUMP: a dump (--format npz or json) replays the run
# that wrote it, flags given too override it, and bad dumps get one clear line.
# Usage: replay.sh path/to/attn. Needs jq.
set -u
attn=${1:?usage: replay.sh path/to/attn}
. "$(dirname "$0")/common.sh"
io="$here/../reference/io"

# same_run NAME ARGS...: the run of ARGS, dumped as .npz and as .json (only the stages in
# $dump_stages, when set), replays as the whole run: `attn trace --from DUMP --format json`
# is the run's own --format json document, keys sorted. Floats are written with the fewest
# digits that read back as the same float32, so equal text is equal bits.
# A replay does not repeat the hints about how the original --mask-file reads: they are
# about that file. Everything else must be the same.
without_file_hints() {
  jq -S 'def drop: map(select(startswith("--mask-file ") | not));
         .warnings |= drop
         | .stages |= map_values(if has("warnings") then (.warnings |= drop)
                                  | (if .warnings == [] then del(.warnings) else . end) else . end)' "$1"
}
dump_stages=
same_run() {
  local name=$1; shift
  "$attn" trace "$@" --format json >"$work/want.json" 2>"$work/want.err"
  if [ ! -s "$work/want.json" ]; then fail "$name" "the run itself failed: $(head -n 1 "$work/want.err")"; return; fi
  rm -f "$work/d.npz" "$work/d.json"
  "$attn" trace "$@" ${dump_stages:+--stage "$dump_stages"} --format npz --out "$work/d.npz" 2>/dev/null
  "$attn" trace "$@" ${dump_stages:+--stage "$dump_stages"} --format json --out "$work/d.json" 2>/dev/null
  for ext in npz json; do
    run trace --from "$work/d.$ext" --format json
    if [ "$rc" -ne 0 ]; then fail "$name (.$ext)" "exit $rc: $(head -n 1 "$work/err")"
    elif diff <(without_file_hints "$work/want.json") <(without_file_hints "$work/out") >"$work/diff"; then ok "$name (.$ext)"
    else fail "$name (.$ext)" "the replay differs: $(head -n 4 "$work/diff" | tr '\n' ' ')"; fi
  done
}

# Tensors to start from: Q [1,3,4], K and V [1,4,4], a mask [3,4]; x [1,3,4] and x_kv [1,5,2].
# -0.0 is in them on purpose: JSON readers take "-0" for the integer 0, a replay must not.
echo '[[[0.1,-0.0,0.3,-1.5],[1e-3,2,-0.25,0.7],[3.5,-2.25,0.125,1e-7]]]' >"$work/q.json"
echo '[[[1,0,0,0],[0,1,0,-0.0],[1,1,0,0],[0.5,-0.5,2,1]]]' >"$work/k.json"
echo '[[[1,2,3,4],[5,6,7,8],[9,10,11,12],[-1,-2,-3,-4]]]' >"$work/v.json"
echo '[[1,0,1,0],[0,1,1,0],[0,0,0,0]]' >"$work/m.json"
echo '[[[0.5,-0.0,1.25,-3],[2,0.1,-0.2,0.3],[1e-3,4,5,-6]]]' >"$work/x.json"
echo '[[[1,2],[3,4],[5,6],[7,8],[9,-0.0]]]' >"$work/xkv.json"
echo '[[[1,0,0,0],[0,1,0,0],[0,0,1,-1]]]' >"$work/q2.json"
"$attn" trace --seed 21 --seq 3 --kv-seq 5 --d-model 4 --d-kv-in 2 --format npz --stage params --out "$work/p.npz"

# --- a dump replays the run that wrote it ------------------------------------------------------
same_run "causal, 4 heads, seed 7" --seed 7 --heads 4 --batch 2 --seq 5 --mask causal
same_run "padding+window with --fill -1e9 (and a row with no allowed key)" \
  --seed 3 --batch 2 --seq 6 --mask padding+window --lengths 5,0 --window 1 --fill -1e9
same_run "cross-attention: --kv-seq and --d-kv-in differ" --seed 16 --batch 2 --seq 3 --kv-seq 5 --d-in 6 --d-kv-in 10
same_run "--no-qkv-bias --no-out-proj" --seed 2 --no-qkv-bias --no-out-proj --mask causal
same_run "dropout --train, and a random mask" \
  --seed 5 --dropout 0.3 --train --dropout-seed 9 --mask random --mask-seed 4 --mask-keep 0.7
same_run "Q, K, V and a mask from files" --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" \
  --mask-file "$work/m.json" --mask causal --fill -1e9 --seed 3
same_run "x, x_kv and params from files, a negative seed" --input "$work/x.json" --kv-input "$work/xkv.json" \
  --params "$work/p.npz" --seed -2
same_run "x from a file, the weights drawn" --input "$work/x.json" --heads 1 --seed 8 --mask window --window 0

# --- a dump without the tensors: the config and the seed draw them as the run did ----------------
dump_stages=softmax
same_run "a dump of softmax alone" --seed 11 --batch 2 --heads 4 --mask causal
dump_stages=input
same_run "a dump of the input alone: the weights drawn before x" --seed 12 --seq 3
dump_stages=params
same_run "a dump of the params alone: x drawn after them" --seed 13 --kv-seq 6
dump_stages=projections
same_run "a dump of Q, K, V files alone: the output layer drawn" \
  --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --seed 14 --dropout 0.5 --train
dump_stages=

# --- flags given with --from override the dump ---------------------------------------------------
"$attn" trace --seed 7 --heads 4 --batch 2 --mask causal --format npz --out "$work/t.npz"
"$attn" trace --seed 7 --heads 4 --batch 2 --mask causal --format json --out "$work/t.json"
"$attn" trace --seed 7 --heads 4 --batch 2 --mask causal --stage softmax --format npz --out "$work/soft.npz"
"$attn" trace --seed 99 --batch 2 --format json --stage input | jq -c .stages.input.tensors.x.data >"$work/d2.json"
# override NAME 'ARGS OF THE RUN' 'ARGS WITH --from': the same output
override() {
  local name=$1 want=$2 got=$3
  # shellcheck disable=SC2086
  "$attn" trace $want >"$work/want" 2>/dev/null
  # shellcheck disable=SC2086
  run trace $got
  if [ "$rc" -ne 0 ]; then fail "$name" "exit $rc: $(head -n 1 "$work/err")"
  elif [ -s "$work/want" ] && { cmp -s "$work/want" "$work/out" ||
       diff -q <(without_file_hints "$work/want") <(without_file_hints "$work/out") >/dev/null 2>&1; }; then ok "$name"
  else fail "$name" "the output differs from: attn trace $want"; fi
}
override "--stage and --format" "--seed 7 --heads 4 --batch 2 --mask causal --stage softmax,context --format table" \
  "--from $work/t.npz --stage softmax,context --format table"
override "--format torch of a .json dump" "--seed 7 --heads 4 --batch 2 --mask causal --format torch" \
  "--from $work/t.json --format torch"
override "--heads" "--seed 7 --heads 2 --batch 2 --mask causal --format json" "--from $work/t.npz --heads 2 --format json"
override "--mask on a .json dump" "--seed 7 --heads 4 --batch 2 --mask causal+window --window 1 --format json" \
  "--from $work/t.json --mask causal+window --window 1 --format json"
override "--mask none drops the dump's kinds" "--seed 7 --heads 4 --batch 2 --format json" \
  "--from $work/t.npz --mask none --format json"
override "--fill and --dropout --train" \
  "--seed 7 --heads 4 --batch 2 --mask causal --fill -1e4 --dropout 0.2 --train --format json" \
  "--from $work/t.npz --fill -1e4 --dropout 0.2 --train --format json"
override "--input replaces the dump's x" "--seed 7 --heads 4 --batch 2 --mask causal --input $work/d2.json --format json" \
  "--from $work/t.npz --input $work/d2.json --format json"
override "--seed on a dump that holds no drawn tensor" "--seed 8 --heads 4 --batch 2 --mask causal --format json" \
  "--from $work/soft.npz --seed 8 --format json"
override "--seq on a self-attention dump: Sk follows, as without --from" \
  "--seed 7 --heads 4 --batch 2 --mask causal --seq 6 --format json" "--from $work/soft.npz --seq 6 --format json"

# --- a flag that contradicts a tensor taken from the dump names both (exit 2) --------------------
expect_error "a size flag against the dump's input.x" 2 \
  "attn: error: --from $work/t.npz input.x has shape [2,4,8] [B,Sq,Din], so Sq = 4, but --seq 6 says Sq = 6" \
  trace --from "$work/t.npz" --seq 6
expect_error "--d-model against the dump's params" 2 \
  "attn: error: --from $work/t.json w_q has shape [8,8] [D,Din], so D = 8, but --d-model 4 says D = 4" \
  trace --from "$work/t.json" --d-model 4
expect_error "--heads that does not divide the dump's D" 2 \
  "attn: error: --from $work/t.npz w_q has shape [8,8] [D,Din], so D = 8, which is not divisible by --heads 3" \
  trace --from "$work/t.npz" --heads 3
expect_error "--no-qkv-bias against the dump's biases" 2 \
  "attn: error: --from $work/t.npz holds b_q, but --no-qkv-bias says there is none" trace --from "$work/t.npz" --no-qkv-bias
expect_error "--seed against tensors the dump's run drew" 2 \
  "attn: error: --seed 3 contradicts --from $work/t.npz, whose input.x and params were drawn with --seed 7 (a replay takes them as they are)" \
  trace --from "$work/t.npz" --seed 3
expect_error "--q on a dump whose run starts at the input" 2 \
  "attn: error: --q $work/q.json cannot be used with --from $work/t.npz: its run starts at the input, not at the projections" \
  trace --from "$work/t.npz" --q "$work/q.json" --k "$work/k.json" --v "$work/v.json"
"$attn" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --mask-file "$work/m.json" --mask causal 2>/dev/null \
  --format npz --out "$work/qkv.npz"
expect_error "--input on a dump whose run starts at the projections" 2 \
  "attn: error: --input $work/x.json cannot be used with --from $work/qkv.npz: its run starts at the projections (--q --k --v)" \
  trace --from "$work/qkv.npz" --input "$work/x.json"
expect_error "--mask dropping a kind the dump's mask file was ANDed with" 2 \
  "attn: error: --mask none drops causal, but --from $work/qkv.npz mask.mask holds it already (ANDed with the run's mask file); give --mask-file to replace that mask" \
  trace --from "$work/qkv.npz" --mask none
override "... adding a kind is fine" \
  "--q $work/q.json --k $work/k.json --v $work/v.json --mask-file $work/m.json --mask causal+window --window 1 --format json" \
  "--from $work/qkv.npz --mask causal+window --window 1 --format json"
override "... and --mask-file replaces the dump's mask" \
  "--q $work/q.json --k $work/k.json --v $work/v.json --mask-file $work/m.json --format json" \
  "--from $work/qkv.npz --mask none --mask-file $work/m.json --format json"
override "--q alone replaces the dump's Q" \
  "--q $work/q2.json --k $work/k.json --v $work/v.json --mask-file $work/m.json --mask causal --format json" \
  "--from $work/qkv.npz --q $work/q2.json --format json"

# --- tensors the run read from files must be in the dump (exit 1) -------------------------------
"$attn" trace --input "$work/x.json" --stage softmax --format npz --out "$work/x-soft.npz"
expect_error "a dump without the input the run read from --input" 1 \
  "attn: error: --from $work/x-soft.npz: no array input.x: the run read it from --input, and the dump does not hold it (give --input FILE, or dump the input stage)" \
  trace --from "$work/x-soft.npz"
override "... which --input gives" "--input $work/x.json --format json" "--from $work/x-soft.npz --input $work/x.json --format json"
"$attn" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --mask-file "$work/m.json" --stage softmax 2>/dev/null \
  --format json --out "$work/qkv-soft.json"
expect_error "a dump without the Q the run read from --q" 1 \
  "attn: error: --from $work/qkv-soft.json: no array projections.q: the run read it from --q, and the dump does not hold it (give --q FILE, or dump the projections stage)" \
  trace --from "$work/qkv-soft.json"
"$attn" trace --q "$work/q.json" --k "$work/k.json" --v "$work/v.json" --mask-file "$work/m.json" --stage projections 2>/dev/null \
  --format json --out "$work/qkv-proj.json"
expect_error "a dump without the mask the run read from --mask-file" 1 \
  "attn: error: --from $work/qkv-proj.json: no array mask.mask: the run read it from --mask-file, and the dump does not hold it (give --mask-file FILE, or dump the mask stage)" \
  trace --from "$work/qkv-proj.json"

# --- files that are not dumps: one line naming --from and the file, exit 1 -----------------------
expect_error "a missing dump" 1 "attn: error: --from $work/none.npz: cannot open: No such file or directory" \
  trace --from "$work/none.npz"
expect_error "an .npz without a config" 1 \
  "attn: error: --from $io/params.npz: not a dump of attn trace --format npz (it has no config text member)" \
  trace --from "$io/params.npz"
expect_error "a JSON file that is not a dump" 1 \
  "attn: error: --from $work/q.json: not a dump of attn trace --format json (it has no \"format\": \"attn.trace/1\")" \
  trace --from "$work/q.json"
jq '.format = "attn.trace/9"' "$work/t.json" >"$work/format9.json"
expect_error "a dump of another format" 1 \
  "attn: error: --from $work/format9.json: \"format\" is \"attn.trace/9\"; this attn replays \"attn.trace/1\"" \
  trace --from "$work/format9.json"
jq 'del(.config)' "$work/t.json" >"$work/noconfig.json"
expect_error "a JSON dump without a config" 1 \
  "attn: error: --from $work/noconfig.json: no \"config\" (attn trace --format json writes one)" trace --from "$work/noconfig.json"
jq '.config.seq = "4"' "$work/t.json" >"$work/badseq.json"
expect_error "a config value of the wrong type" 1 \
  "attn: error: --from $work/badseq.json: config \"seq\" is \"4\"; expected a whole number" trace --from "$work/badseq.json"
jq '.config.colour = "blue"' "$work/t.json" >"$work/unknown.json"
expect_error "a config key this attn does not know" 1 \
  "attn: error: --from $work/unknown.json: config \"colour\" is not a setting this attn knows (a dump of a newer attn?)" \
  trace --from "$work/unknown.json"
jq '.stages.input.tensors.x.data[0][0] = [1]' "$work/t.json" >"$work/ragged.json"
expect_error "a tensor whose data does not fit its shape" 1 \
  "attn: error: --from $work/ragged.json input.x: data[0][0] is not a list of 8 (\"shape\" is [2,4,8])" \
  trace --from "$work/ragged.json"
head -c 200 "$work/t.json" >"$work/cut.json"
run trace --from "$work/cut.json"
check "a cut-off JSON dump: exit 1, one line naming --from and the file" \
  test "$rc" -eq 1 -a "$(wc -l <"$work/err")" -eq 1 -a ! -s "$work/out"
check "... that says where" grep -q "^attn: error: --from $work/cut.json: parse error at line 1, column " "$work/err"
"$attn" trace --format jsonl --out "$work/t.jsonl"
expect_error "a jsonl file" 1 \
  "attn: error: --from $work/t.jsonl: --format jsonl has no config to replay; dump with --format json or --format npz" \
  trace --from "$work/t.jsonl"
expect_error "an .npy" 1 \
  "attn: error: --from $io/f4.npy: expected a dump of attn trace: .npz (--format npz) or .json (--format json)" \
  trace --from "$io/f4.npy"
expect_error "an .npz that is not a zip" 1 "attn: error: --from $io/not_zip.npz: not an .npz file (not a zip archive)" \
  trace --from "$io/not_zip.npz"

# --- --help documents --from next to the other file flags ------------------------------------------
run trace --help
check "--help lists --from among the tensors from files" \
  bash -c "sed -n '/^Tensors from files/,/^\$/p' '$work/out' | grep -q -- '--from DUMP'"

# --- masks in PyTorch's conventions and --cross replay too ---------------------------------------
ref=$(cd "$(dirname "$0")/../reference/cli" && pwd)
same_run "a key-padding mask read as keep (1 = real token)" --seed 7 --batch 2 --d-model 8 --heads 2 \
  --key-padding-mask "$ref/key_padding_keep.npy" --mask-convention keep
same_run "notebook 003's mask read as mha, with causal on top" --seq 5 --heads 2 \
  --mask-file "$ref/causal_triu.npy" --mask-convention mha --mask causal
same_run "--cross with equal sizes" --cross --seed 24 --batch 2 --seq 5 --d-model 16 --heads 4

finish
