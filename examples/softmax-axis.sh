#!/usr/bin/env bash
# Softmax over which axis? (seed notebook 001 uses dim=1, the query axis)
#
# Attention weights come from softmax over the LAST axis of [B,H,Sq,Sk]: for each
# query, a distribution over the keys. So each ROW of a head's matrix sums to 1.
# Softmax over the query axis (001's mistake; dim=-2 of [B,H,Sq,Sk]) makes each
# COLUMN sum to 1 instead: every key distributes itself over the queries.
# `--mistake softmax_axis` makes that mistake on purpose, and `attn check` names it.
set -euo pipefail
right=$(attn trace --seq 4 --heads 1 --format json --stage softmax)
wrong=$(attn trace --seq 4 --heads 1 --format json --stage softmax --mistake softmax_axis 2>/dev/null)
rows()    { jq -c '[.stages.softmax.tensors.weights.data[0][0][] | add * 1000 | round / 1000]'; }
columns() { jq -c '.stages.softmax.tensors.weights.data[0][0] | transpose | map(add * 1000 | round / 1000)'; }

echo "softmax(scores, dim=-1), right: row sums (over keys) and column sums (over queries)"
rows <<<"$right"
columns <<<"$right"

echo "softmax(scores, dim=-2), the mistake: row sums and column sums"
rows <<<"$wrong"
columns <<<"$wrong"

echo "attn check names it (exit status 1: the answer does not match):"
answer=$(mktemp --suffix .json)
jq '.stages.softmax.tensors.weights.data' <<<"$wrong" >"$answer"
status=0
attn check --seq 4 --heads 1 --stage softmax --answer "$answer" --format json >"$answer.report" || status=$?
echo "exit $status: $(jq -r '.diagnosis | .id + ": " + .message' "$answer.report")"
rm -f "$answer" "$answer.report"
