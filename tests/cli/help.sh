#!/usr/bin/env bash
# Command-line tests for attn's own voice: help text, usage-error messages (never
# CLI11's own words), --stage by name, number and tensor, and the README's install
# step. Usage: help.sh path/to/attn
# Needs jq. Prints one line per check and "N passed, N failed".
set -u
attn=${1:?usage: help.sh path/to/attn}
. "$(dirname "$0")/common.sh"

# --- --help: one style of defaults, no CLI11 decorations, at most 100 columns ---------------
# widest FILE: the longest line's length in characters (UTF-8: "·" is one).
widest() { (LC_ALL=C.UTF-8; w=0; while IFS= read -r line; do [ ${#line} -gt $w ] && w=${#line}; done <"$1"; echo $w); }
for args in "--help" "trace --help"; do
  run $args
  cp "$work/out" "$work/help"
  check "attn $args fits in 100 columns (widest: $(widest "$work/help"))" test "$(widest "$work/help")" -le 100
  check "attn $args: no CLI11 default display (TYPE=value)" bash -c "! grep -qE '^  -[-a-z,]+ [A-Z.,]+=' '$work/help'"
  check "attn $args: no doubled ellipsis or CLI11 type decorations" \
    bash -c "! grep -qE '\.\.\. \.\.\.|:\{|\[0 - |SIZE \[b|:INT|:UINT|:FLOAT| INT | UINT | FLOAT ' '$work/help'"
  check "attn $args: defaults only as (default: X)" bash -c "! grep -qE '\(default [^:]|\[default' '$work/help'"
  check "attn $args: one blank line between parts" bash -c "! awk 'prev == \"\" && \$0 == \"\" && NR > 1 {bad = 1} {prev = \$0} END {exit !bad}' '$work/help'"
done
run trace --help
check "trace help: a default from default_val" grep -qE '^  --heads N +H, attention heads; dk = D / H must be whole \(default: 2\)$' "$work/out"
check "trace help: a default that depends on another flag" \
  grep -qE '^  --d-in N +Din, query-side input width \(default: --d-model\)$' "$work/out"
check "trace help: a list's form, once" grep -qE '^  --lengths N,N,\.\.\. +padding' "$work/out"
check "trace help: the stages by number" grep -qE '^ +1 input +5 transpose +7 scaled +11 dropout +15a residual$' "$work/out"
check "trace help: flash, 12a, among them" grep -qE '^ +.* 12a flash( |$)' "$work/out"
check "trace help: every default in the same words" test "$(grep -c '(default: ' "$work/out")" -ge 15
run --help
check "attn help: commands, not subcommands" grep -qx 'Usage: attn \[OPTIONS\] COMMAND' "$work/out"

# --- usage errors in attn's words: the flag, what it got, what it expects ---------------
expect_error "no command" 2 "attn: error: no command given: try \`attn trace --heads 4 --mask causal\`, or \`attn --help\`"
expect_error "an unknown command" 2 "attn: error: foo: no command is called foo (the commands: trace, mask, check, exercise or tokens); see \`attn --help\`" foo
expect_error "a misspelt command" 2 "attn: error: tarce: no command is called tarce; did you mean trace?" tarce --heads 4
expect_error "trace's flags before the command" 2 \
  "attn: error: no command given (--heads is a flag of trace): try \`attn trace --heads 4 --mask causal\`" --heads 4 --mask causal
expect_error "an unknown flag before the command" 2 \
  "attn: error: --bogus: attn has no such flag; try \`attn trace --heads 4 --mask causal\`, or \`attn --help\`" --bogus
expect_error "a flag given twice" 2 "attn: error: --format given twice (json, then table); give it once" \
  trace --format json --format table
expect_error "a flag given three times" 2 "attn: error: --heads given 3 times (1, 2, then 4); give it once" \
  trace --heads 1 --heads 2 --heads 4
expect_error "an unknown flag" 2 "attn: error: --bogus: attn trace has no such flag; see \`attn trace --help\`" trace --bogus
expect_error "a misspelt flag" 2 "attn: error: --masks: attn trace has no such flag; did you mean --mask?" trace --masks causal
expect_error "a misspelt flag with =" 2 "attn: error: --dmodel: attn trace has no such flag; did you mean --d-model?" \
  trace --dmodel=16
expect_error "a value missing at the end" 2 "attn: error: --heads given without a value; expected a whole number" \
  trace --heads
expect_error "an empty value" 2 "attn: error: --heads given without a value; expected a whole number" trace --heads=
expect_error "a value missing before the next flag" 2 \
  "attn: error: --heads given without a value before --seq; expected a whole number" trace --heads --seq 4
expect_error "a file flag's value missing before the next flag" 2 \
  "attn: error: --out given without a value before --format; expected a file name" trace --out --format json
expect_error "a missing value names the choices" 2 \
  "attn: error: --format given without a value; expected one of table, json, jsonl, npz, torch, py, heatmap, svg, png, html or dot" trace --format
expect_error "not a number" 2 "attn: error: --heads abc: expected a whole number" trace --heads abc
expect_error "not a whole number" 2 "attn: error: --seq 1.5: expected a whole number" trace --seq 1.5
expect_error "a whole number too large" 2 \
  "attn: error: --seq 99999999999999999999: expected a whole number from -9223372036854775808 to 9223372036854775807" \
  trace --seq 99999999999999999999
expect_error "a list's value missing" 2 \
  "attn: error: --lengths given without a value; expected whole numbers joined by commas, such as 5,3" trace --lengths
expect_error "a list with a non-number" 2 "attn: error: --lengths x: expected a whole number" \
  trace --mask padding --lengths 1,x
expect_error "a seed that is not a number" 2 \
  "attn: error: --dropout-seed x: expected a whole number (negative ones wrap as in torch.manual_seed)" \
  trace --dropout-seed x
expect_error "a probability that is not a number" 2 "attn: error: --mask-keep x: expected a number" \
  trace --mask random --mask-keep x
expect_error "--precision not a number" 2 "attn: error: --precision abc: expected a whole number from 0 to 12" \
  trace --precision abc
expect_error "--precision out of range" 2 "attn: error: --precision 20: expected a whole number from 0 to 12" \
  trace --precision 20
expect_error "--format not one of the formats" 2 \
  "attn: error: --format xml: expected one of table, json, jsonl, npz, torch, py, heatmap, svg, png, html or dot" trace --format xml
expect_error "--color not one of its choices" 2 "attn: error: --color red: expected one of auto, always or never" \
  trace --color red
expect_error "--max-memory not a size" 2 \
  "attn: error: --max-memory lots: expected a size such as 4GiB, 512MiB or 1000000 (bytes)" trace --max-memory lots
expect_error "a flag given a value" 2 "attn: error: --train takes no value (got maybe)" trace --train=maybe
expect_error "a size too large" 2 "attn: error: --max-memory 99999999EiB: expected a size below 16EiB" \
  trace --max-memory 99999999EiB
expect_error "a hidden flag is named too" 2 \
  "attn: error: --block-rows 0: expected a whole number from 1 to 9223372036854775807" trace --block-rows 0
expect_error "a hidden flag's missing value is named too" 2 \
  "attn: error: --mistake given without a value; expected one of none, softmax_axis, missing_scale, wrong_scale, mask_inverted, fill_value, split_without_transpose, merge_without_transpose, weight_not_transposed, q_k_swapped, missing_bias, dropout_not_rescaled, dropout_keep_inverted, weights_transposed, mask_not_applied, mask_or_instead_of_and, causal_only, padding_only, padding_on_queries, diagonal_masked, window_off_by_one, masked_after_softmax, nan_replaced, log_softmax, sigmoid_instead_of_softmax, scale_multiplied, heads_interleaved, causal_misaligned, kv_heads_tiled, rope_positions_from_zero, rope_pairs_mixed or alibi_sign" \
  check --mistake
expect_error "an argument that is no flag" 2 \
  "attn: error: unexpected argument extra: attn trace takes only flags, each with at most one value (a list is one value, joined by commas)" \
  trace extra
expect_error "a second value" 2 \
  "attn: error: unexpected argument scores: attn trace takes only flags, each with at most one value (a list is one value, joined by commas)" \
  trace --stage softmax scores
expect_ok "whole numbers are decimal (010 is 10, not octal 8)" trace --heads 010 --d-model 20 --format json --stage input
check "--heads 010 is 10 heads" test "$(jq .config.heads "$work/out")" = 10
expect_ok "--max-memory takes units" trace --max-memory 1GiB --stage input

# Every usage error is one line, attn's own: none of CLI11's phrases, exit 2.
while IFS= read -r line; do
  eval "set -- $line"
  run "$@"
  if [ "$rc" -ne 2 ]; then fail "one line, attn's words: attn $line" "exit $rc"
  elif [ "$(wc -l <"$work/err")" -ne 1 ]; then fail "one line, attn's words: attn $line" "$(cat "$work/err")"
  elif ! grep -q '^attn: error: ' "$work/err"; then fail "one line, attn's words: attn $line" "$(cat "$work/err")"
  elif grep -qiE 'not expected|could not convert|required but received|not in range|not in \{|subcommand|is required|unit not recognized|should be true|Run `attn' "$work/err"; then
    fail "one line, attn's words: attn $line" "$(cat "$work/err")"
  else ok "one line, attn's words: attn $line"; fi
done <<'LIST'
trace --window x
trace --window
trace --mask
trace --input
trace --dropout x
trace --mask-seed x
trace --mask-seed 1 --mask-seed 2
trace --full=maybe
trace --seed
trace --sci-mode
trace --max-memory 99999999EiB
trace --kv-seq 1e3
trace --batch 0x10
trace -x
trace --heads 4 5
trace --heads 4 -5
trace trace
--heads
LIST

# --- --stage takes numbers, ranges, and tells a tensor name where it lives ------------
expect_ok "--stage by number" trace --format json --stage 10
check "--stage 10 is softmax" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = '["softmax"]'
expect_ok "--stage numbers and names mixed" trace --format json --stage 7,6,softmax
check "--stage 7,6,softmax keeps stage order" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = \
  '["scores","scaled","softmax"]'
expect_ok "--stage a range" trace --format json --mask causal --stage 6-10
check "--stage 6-10 with a mask" test "$(jq -c '.stages | keys_unsorted' "$work/out")" = \
  '["scores","scaled","mask","masked","softmax"]'
expect_ok "--stage a range over absent stages" trace --format json --stage 6-10
check "--stage 6-10 without a mask takes the stages this run has" \
  test "$(jq -c '.stages | keys_unsorted' "$work/out")" = '["scores","scaled","softmax"]'
expect_error "--stage a tensor name" 2 \
  "attn: error: --stage weights: no stage is called weights; the tensor weights is in stage softmax (10) and dropout (11): --stage softmax" \
  trace --stage weights
expect_error "--stage a tensor of three stages" 2 \
  "attn: error: --stage q: no stage is called q; the tensor q is in stage projections (3), view (4), transpose (5) and rope (5a): --stage projections" \
  trace --stage q
expect_error "--stage a tensor of a stage absent from this run" 2 \
  "attn: error: --stage keep: no stage is called keep; the tensor keep is in stage dropout (11), which this run does not have (it needs --dropout P with P > 0 and --train)" \
  trace --stage keep
expect_error "--stage a number absent from this run" 2 \
  "attn: error: --stage 8: this run has no mask stage (it needs --mask, --mask-file or --key-padding-mask)" trace --stage 8
expect_error "--stage a number absent with --no-out-proj" 2 \
  "attn: error: --stage 15: this run has no output stage (it is off with --no-out-proj)" trace --no-out-proj --stage 15
expect_error "--stage a number no stage has" 2 \
  "attn: error: --stage 26: there is no stage 26 (the stages are numbered 0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a, 15a to 15d)" trace --stage 26
expect_error "--stage a stage of --pos in a run without it" 2 \
  "attn: error: --stage 2b: this run has no positions stage (it needs --pos sinusoidal)" trace --stage 2b
expect_error "--stage a range downwards" 2 "attn: error: --stage 10-6: a range goes up, as in 6-10" trace --stage 10-6
expect_error "--stage a range of absent stages" 2 \
  "attn: error: --stage 8-9: this run has none of these stages (mask: it needs --mask, --mask-file or --key-padding-mask)" trace --stage 8-9
# --- stage numbers: increasing down the page, the classic fifteen kept, the added ones lettered ---
# headings ARGS...: the numbers the table prints beside the stages, in order, on one line.
headings() { run "$@" --color never; grep -o '^── [0-9a-z-]* ·' "$work/out" | awk '{print $2}' | paste -sd ' '; }
gqa_alibi_step=(trace --past 2 --seq 2 --heads 4 --kv-heads 2 --pos alibi --mask causal)
check "GQA + ALiBi + --past: every number larger than the one above it" \
  test "$(headings "${gqa_alibi_step[@]}")" = "1 2 3 4 5 5b 5c 5d 6 7 7a 7b 8 9 10 11 12 13 14 15"
check "--pos rope, --flash-block, --pos sinusoidal, a model's norm: 5a, 12a, 2b, 2a in their places" \
  test "$(headings trace --pos rope --flash-block 2 --stage 5-6,12-13),$(headings trace --pos sinusoidal --stage 2-3)" = \
  "5 5a 6 12 12a 13,2 2b 3"
check "--pos alibi without a mask: the skipped 8-9 said between 7b and 10, as between 7 and 10" \
  test "$(headings trace --pos alibi)" = "1 2 3 4 5 6 7 7a 7b 8-9 10 11 12 13 14 15"
run trace --pos alibi --past 1 --seq 2 --format html --out "$work/alibi.html"
check "... and in html: 8 mask and 9 masked skipped after biased, nothing before rope's or alibi's numbers" \
  test "$(grep -o '<p class="skipped">[0-9a-z]* <code>[a-z_]*</code>' "$work/alibi.html" | sed 's/<[^>]*>//g' | paste -sd ' ')" = \
  "8 mask 9 masked 11 dropout"
check "--stage 10 is softmax, in a run with every kind of added stage" \
  test "$(headings "${gqa_alibi_step[@]}" --stage 10)" = "10"
check "--stage 6-10 takes what is printed from 6 to 10: alibi (7a) and biased (7b) too, not 5a-5d" \
  test "$(headings "${gqa_alibi_step[@]}" --stage 6-10)" = "6 7 7a 7b 8 9 10"
check "--stage 5a-7, 7a,7b and 5c-5d: lettered numbers, alone and in ranges" \
  test "$(headings trace --pos rope --stage 5a-7),$(headings "${gqa_alibi_step[@]}" --stage 7a,7b),$(headings "${gqa_alibi_step[@]}" --stage 5c-5d)" = \
  "5a 6 7,7a 7b,5c 5d"
run "${gqa_alibi_step[@]}" --format json
check "JSON's step: an integer for the classic fifteen, a string for a lettered one" \
  test "$(jq -c '[.stages[] | .step]' "$work/out")" = '[1,2,3,4,5,"5b","5c","5d",6,7,"7a","7b",8,9,10,12,13,14,15]'
run "${gqa_alibi_step[@]}" --shapes --format json
check "... and in --shapes" test "$(jq -c '[.stages.softmax.step, .stages.repeat_kv.step]' "$work/out")" = '[10,"5d"]'
expect_error "--stage 5e: a letter no stage has" 2 \
  "attn: error: --stage 5e: there is no stage 5e (the stages are numbered 0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a, 15a to 15d)" trace --stage 5e
expect_error "--stage 6-7z: a range's end that is no number" 2 \
  "attn: error: --stage 6-7z: there is no stage 7z (the stages are numbered 0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a, 15a to 15d)" trace --stage 6-7z
expect_error "--stage 7b-7a: a range goes up" 2 "attn: error: --stage 7b-7a: a range goes up, as in 7a-7b" trace --pos alibi --stage 7b-7a
# the numbers 16 to 25 the added stages had before: still taken, with a warning naming the new one
run "${gqa_alibi_step[@]}" --stage 21 --color never
check "--stage 21 (alibi's old number): alibi, and one warning naming 7a" \
  test "$rc,$(grep -c '^── ' "$work/out"),$(grep -c '^── 7a · alibi' "$work/out"),$(cat "$work/err")" = \
  "0,1,1,attn: warning: --stage 21: 21 is the old number of alibi; it is numbered 7a now"
run "${gqa_alibi_step[@]}" --stage 18-20 --color never
check "--stage 18-20: cache to repeat_kv, a warning for each end" \
  test "$rc,$(grep -o '^── [0-9a-z]* ·' "$work/out" | paste -sd ' '),$(wc -l <"$work/err")" = "0,── 5b · ── 5c · ── 5d ·,2"
check "... the second names 5d" grep -qx 'attn: warning: --stage 18-20: 20 is the old number of repeat_kv; it is numbered 5d now' "$work/err"
run trace --stage 16
check "--stage 16 in a run without positions: the warning, then the refusal naming 2b's stage" \
  test "$rc,$(sed -n 2p "$work/err")" = "2,attn: error: --stage 16: this run has no positions stage (it needs --pos sinusoidal)"
expect_error "--stage an unknown name" 2 \
  "attn: error: --stage foo: no stage is called foo (the stages: embed, input, params, norm, positions, projections, view, transpose, rope, cache, append, repeat_kv, scores, scaled, alibi, biased, mask, masked, softmax, dropout, context, flash, merge, concat, output, residual, mlp_norm, mlp, block; or their numbers, 0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a, 15a to 15d)" \
  trace --stage foo

# --- the README stands alone, and its install step works -------------------------------------
root="$here/../.."
for doc in README.md share/attn/doc/torch-rng.md; do
  check "$doc links nothing outside the repository" \
    bash -c "test -f '$root/$doc' && ! grep -qE '\]\((\.\./|/|[a-z]+:)|<https?:|\.\./shared' '$root/$doc'"
done
for link in $(grep -oE '\]\([^)#][^)]*\)' "$root/README.md" | sed 's/^](//; s/)$//; s/#.*//'); do
  check "README's link $link is a file of the repository" test -e "$root/$link"
done
check "README links the generator doc" grep -qF '](share/attn/doc/torch-rng.md)' "$root/README.md"
# README.md and docs/*.md (for developers): every relative link is a file of the repository
# (never ../shared), and every #anchor one of that file's headings, as GitHub spells them
if links=$(python3 - "$root" 2>&1 <<'PY'
import os, re, sys
root = os.path.abspath(sys.argv[1])
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
def anchors(path):
    found, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            heading = line.split(" ", 1)[1].strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return found
bad = []
for doc in docs:
    text = re.sub(r"```.*?```", "", open(os.path.join(root, doc), encoding="utf-8").read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(root, os.path.dirname(doc), path)) if path else os.path.join(root, doc)
        if re.match(r"[a-z]+:|/|<", target) or "shared/" in target or not full.startswith(root + os.sep):
            bad.append(f"{doc}: {target} is outside the repository")
        elif not os.path.exists(full):
            bad.append(f"{doc}: {target}: no such file")
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            bad.append(f"{doc}: {target}: no such heading")
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY
); then ok "README's and docs/'s links lead to files and headings of the repository"
else fail "README's and docs/'s links lead to files and headings of the repository" "$links"; fi
check "README says how to install" grep -qE '^cmake --install build( |$)' "$root/README.md"
check "README says how to install for one user" grep -qF 'cmake --install build --prefix ~/.local' "$root/README.md"
build=$(dirname "$attn")  # the build directory holds attn
if [ -f "$build/cmake_install.cmake" ]; then
  cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1
  check "cmake --install puts attn in PREFIX/bin" test -x "$work/prefix/bin/attn"
  "$work/prefix/bin/attn" trace --heads 4 --mask causal >"$work/out" 2>"$work/err"
  check "the installed attn runs the README's first command" grep -q "10 · softmax" "$work/out"
  check "cmake --install puts the generator doc in PREFIX/share/attn/doc" \
    cmp -s "$root/share/attn/doc/torch-rng.md" "$work/prefix/share/attn/doc/torch-rng.md"
else
  fail "cmake --install" "no cmake_install.cmake next to $attn"
fi

finish
