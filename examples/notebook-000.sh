#!/usr/bin/env bash
# Seed notebook 000, cell by cell: the same numbers PyTorch printed.
#
#   torch.manual_seed(24)
#   w_query, w_key, w_value = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)
#   X = torch.randn(2, 5, 8)                       # [B,Sq,D]
#   q = w_query(X).view(2, 5, 4, 2).transpose(1, 2) # [B,H,Sq,dk], same for k and v
#   attn_scores = q @ k.transpose(-2, -1) / sqrt(dk)
#   attn_scores = attn_scores.masked_fill(tril(ones(5, 5)) == 0, -inf)
#   attn_weights = softmax(attn_scores, dim=-1)
#
# The notebook has no output projection (three nn.Linear, not four), hence
# --no-out-proj: a fourth layer would draw before randn and change X.
set -euo pipefail
args=(--seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj --format json)

# In [8]: X_input_tokens[0, 0] -> 1.5722, -1.5508, -0.9508, -0.8640, ...
attn trace "${args[@]}" --stage input | jq -c '.stages.input.tensors.x.data[0][0] | map(. * 10000 | round / 10000)'

# In [19]: the masked scores of batch 0, head 0 (-inf above the diagonal)
attn trace "${args[@]}" --stage masked |
  jq -c '.stages.masked.tensors.masked.data[0][0][] | map(if type == "number" then (. * 10000 | round / 10000) else . end)'

# In [21]: the attention weights of batch 0, head 0
attn trace "${args[@]}" --stage softmax |
  jq -c '.stages.softmax.tensors.weights.data[0][0][] | map(. * 10000 | round / 10000)'
