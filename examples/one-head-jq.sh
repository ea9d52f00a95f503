#!/usr/bin/env bash
# One head of one stage, one jq path away.
#
# The weights of stage 10 are [B,H,Sq,Sk]; .data nests like tensor.tolist(), so
# .data[b][h] is the [Sq,Sk] matrix of batch item b, head h, and .data[b][h][i]
# is query i's distribution over the keys.
set -euo pipefail
trace=$(attn trace --heads 4 --seq 4 --mask causal --format json)

echo "shape and dimension names:"
jq -c '.stages.softmax.tensors.weights | [.shape, .dims]' <<<"$trace"

echo "batch 0, head 2, rounded to 3 decimals:"
jq -c '.stages.softmax.tensors.weights.data[0][2][] | map(. * 1000 | round / 1000)' <<<"$trace"

echo "every query's weights sum to 1 (softmax over the key axis):"
jq '[.stages.softmax.tensors.weights.data[][][] | add | (. - 1) | (. < 1e-6 and . > -1e-6)] | all' <<<"$trace"

echo "the key that the last query attends most, per head:"
jq -c '[.stages.softmax.tensors.weights.data[0][] | last | index(max)]' <<<"$trace"
