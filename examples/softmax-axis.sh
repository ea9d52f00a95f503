#!/usr/bin/env bash
# Softmax over which axis? (seed notebook 001 uses dim=1, the query axis)
#
# Attention weights come from softmax over the LAST axis of [B,H,Sq,Sk]: for each
# query, a distribution over the keys. So each ROW of a head's matrix sums to 1.
# Softmax over dim=1 of a [B,Sq,Sk] tensor (001's mistake) makes each COLUMN sum
# to 1 instead: every key distributes itself over the queries.
set -euo pipefail
trace=$(attn trace --seq 4 --heads 1 --format json --stage softmax)

echo "row sums (over keys, what attention needs):"
jq -c '[.stages.softmax.tensors.weights.data[0][0][] | add * 1000 | round / 1000]' <<<"$trace"

echo "column sums (over queries, not 1 in general):"
jq -c '.stages.softmax.tensors.weights.data[0][0] | transpose | map(add * 1000 | round / 1000)' <<<"$trace"
