#!/usr/bin/env bash
# -inf or -1e9? (seed notebooks 002 and 004)
#
# masked_fill writes the fill where the mask is false, then softmax runs over
# each row. In a row where NO key may be attended, every entry is the fill:
#   fill -inf:  max = -inf, x - max = -inf - (-inf) = NaN  -> NaN weights
#   fill -1e9:  max = -1e9, x - max = 0, e^0 = 1 each      -> uniform weights 1/Sk
# Elsewhere the two agree: e^(-1e9 - max) is exactly 0 in float32.
#
# Batch item 1 below has padding length 0: no valid key at all.
set -euo pipefail
for fill in -inf -1e9; do
  echo "--fill $fill: weights of batch 1, head 0, query 0"
  attn trace --batch 2 --mask padding --lengths 3,0 --fill "$fill" --format json --stage softmax 2>warning.txt |
    jq -c '.stages.softmax.tensors.weights.data[1][0][0]'
  cat warning.txt
  rm -f warning.txt
done

echo "batch 0 is the same with both fills:"
a=$(attn trace --batch 2 --mask padding --lengths 3,0 --fill -inf --format json --stage softmax 2>/dev/null |
  jq -c '.stages.softmax.tensors.weights.data[0]')
b=$(attn trace --batch 2 --mask padding --lengths 3,0 --fill -1e9 --format json --stage softmax 2>/dev/null |
  jq -c '.stages.softmax.tensors.weights.data[0]')
[ "$a" = "$b" ] && echo "identical"
