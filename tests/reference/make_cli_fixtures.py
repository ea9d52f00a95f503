"""Fixtures for the command-line tests of masks from files and of --cross, from PyTorch.

Run with Debian's Python, which has torch 1.13:

    /usr/bin/python3 tests/reference/make_cli_fixtures.py     # from the repository root

It writes tests/reference/cli/: the mask files (.npy) and what PyTorch computes
(<case>.expected.json), read by tests/cli/masks.sh and tests/cli/polish.sh. The output is committed; the tests never
need torch.

Cases:
  key_padding      nn.MultiheadAttention(D, H, batch_first=True) with key_padding_mask
                   [B,Sk] (true = padded key), its in_proj/out_proj set to the weights that
                   torch.manual_seed(seed) and four nn.Linear(D, D) draw (attn's order), on
                   x = torch.randn(B, S, D). Expected: its per-head weights and its output.
  key_padding_keep the same mask written as 1 = real token (seed notebook 002's padding mask).
  causal_triu      seed notebook 003's mask, torch.triu(torch.ones(S, S), diagonal=1).bool()
                   (true = not allowed), applied as notebook 003 applies it
                   (masked_fill_(mask, -inf), then softmax(scores / sqrt(dk))).
  additive         the same causal mask as 0 / -inf floats, added to the scores.
  cross_equal      cross-attention with Sq = Sk and Din = Dkv (seed notebook 000's decoder and
                   encoder inputs, both [2,5,16]): x and then x_kv = torch.randn(2, 5, 16) after
                   the weights; plain torch ops as in seed notebook 000. Expected: x_kv, weights, out.
"""

import json
import math
import os

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cli")


def floats(t):
    return [v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
            for v in (float(x) for x in t.detach().reshape(-1).tolist())]


def write(name, config, tensors):
    doc = {"name": name, "config": config, "made_with": {"torch": torch.__version__},
           "tensors": {k: {"shape": list(v.shape), "data": floats(v)} for k, v in tensors.items()}}
    with open(os.path.join(OUT, name + ".expected.json"), "w") as f:
        json.dump(doc, f)
        f.write("\n")


def drawn_mha(seed, batch, seq, d_model, heads):
    """attn's draw order: manual_seed, nn.Linear x4 (q, k, v, out), then x; as an nn.MultiheadAttention."""
    torch.manual_seed(seed)
    w_q, w_k, w_v, w_o = (nn.Linear(d_model, d_model) for _ in range(4))
    x = torch.randn(batch, seq, d_model)
    mha = nn.MultiheadAttention(d_model, heads, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w_q.weight, w_k.weight, w_v.weight]))
        mha.in_proj_bias.copy_(torch.cat([w_q.bias, w_k.bias, w_v.bias]))
        mha.out_proj.weight.copy_(w_o.weight)
        mha.out_proj.bias.copy_(w_o.bias)
    return mha.eval(), x


def key_padding_cases():
    seed, batch, seq, d_model, heads = 7, 2, 4, 8, 2
    padded = torch.tensor([[False, False, False, True], [False, False, False, False]])  # notebook 002: A has 1 pad
    mha, x = drawn_mha(seed, batch, seq, d_model, heads)
    with torch.no_grad():
        out, weights = mha(x, x, x, key_padding_mask=padded, need_weights=True, average_attn_weights=False)
    config = {"seed": seed, "batch": batch, "seq": seq, "d_model": d_model, "heads": heads}
    np.save(os.path.join(OUT, "key_padding.npy"), padded.numpy())
    write("key_padding", config, {"weights": weights, "out": out})
    np.save(os.path.join(OUT, "key_padding_keep.npy"), (~padded).to(torch.int64).numpy())  # 1 = real token


def notebook_003_cases():
    seq = 5
    triu = torch.triu(torch.ones(seq, seq), diagonal=1)
    np.save(os.path.join(OUT, "causal_triu.npy"), triu.bool().numpy())
    additive = torch.zeros(seq, seq).masked_fill(triu.bool(), float("-inf"))
    np.save(os.path.join(OUT, "causal_additive.npy"), additive.numpy())


def cross_equal_case():
    seed, batch, seq, d_model, heads = 24, 2, 5, 16, 4
    dk = d_model // heads
    torch.manual_seed(seed)
    w_q, w_k, w_v, w_o = (nn.Linear(d_model, d_model) for _ in range(4))
    x = torch.randn(batch, seq, d_model)      # the decoder's input
    x_kv = torch.randn(batch, seq, d_model)   # the encoder's output
    with torch.no_grad():
        def heads_of(t):
            return t.view(batch, seq, heads, dk).transpose(1, 2)
        q, k, v = heads_of(w_q(x)), heads_of(w_k(x_kv)), heads_of(w_v(x_kv))
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dk), dim=-1)
        out = w_o((weights @ v).transpose(1, 2).reshape(batch, seq, d_model))
    config = {"seed": seed, "batch": batch, "seq": seq, "d_model": d_model, "heads": heads, "cross": True}
    write("cross_equal", config, {"x_kv": x_kv, "weights": weights, "out": out})


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    key_padding_cases()
    notebook_003_cases()
    cross_equal_case()
