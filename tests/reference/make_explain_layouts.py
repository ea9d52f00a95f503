"""What PyTorch does with memory at each stage of multi-head attention, for --explain.

Run with Debian's Python, which has torch 1.13:

    /usr/bin/python3 tests/reference/make_explain_layouts.py     # from the repository root

For a few shapes (B, Sq, Sk, D, H), it runs the notebook lines that `attn trace --explain`
prints (q = w_q(x); q = q.view(B, Sq, H, dk); q = q.transpose(1, 2); scores =
q @ k.transpose(-2, -1); ...; concat = merged.contiguous().view(B, Sq, D)) and records
what PyTorch reports: every tensor's shape, stride() and is_contiguous(), how many copies
(aten::copy_) each matmul makes, whether merged.view(B, Sq, D) raises, and whether
.contiguous() copies. Writes tests/reference/explain_layouts.json, read by
tests/teach/test_explain.cpp. The output is committed; the tests never need torch.
"""

import json
import math
import os

import torch
import torch.nn as nn
from torch.profiler import profile

HERE = os.path.dirname(os.path.abspath(__file__))

# (B, Sq, Sk, D, H): the seed notebooks' shape, attn's default, one head, one query,
# one key, one feature per head, cross-attention, a single position and head per feature.
CASES = [(2, 5, 5, 8, 4), (1, 4, 4, 8, 2), (1, 4, 4, 8, 1), (2, 4, 4, 8, 1), (2, 1, 3, 8, 2),
         (2, 4, 1, 8, 2), (2, 3, 3, 8, 8), (3, 4, 6, 12, 3), (1, 1, 1, 4, 4), (2, 5, 7, 16, 2)]


def copies(run):
    """How many aten::copy_ calls `run` makes, and its result."""
    with profile() as prof:
        result = run()
    return sum(e.name == "aten::copy_" for e in prof.events()), result


def layout(t):
    return {"shape": list(t.shape), "stride": list(t.stride()), "contiguous": t.is_contiguous()}


def case(B, Sq, Sk, D, H):
    dk = D // H
    torch.manual_seed(0)
    w_q, w_k, w_v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
    x, x_kv = torch.randn(B, Sq, D), torch.randn(B, Sk, D)
    out = {"B": B, "Sq": Sq, "Sk": Sk, "D": D, "H": H}
    with torch.no_grad():
        q, k, v = w_q(x), w_k(x_kv), w_v(x_kv)
        out["projections"] = {"q": layout(q), "k": layout(k)}
        qv, kv, vv = q.view(B, Sq, H, dk), k.view(B, Sk, H, dk), v.view(B, Sk, H, dk)
        assert qv.data_ptr() == q.data_ptr()
        out["view"] = {"q": layout(qv), "k": layout(kv)}
        q, k, v = qv.transpose(1, 2), kv.transpose(1, 2), vv.transpose(1, 2)
        out["transpose"] = {"q": layout(q), "k": layout(k)}
        out["k_t"] = layout(k.transpose(-2, -1))
        n, scores = copies(lambda: q @ k.transpose(-2, -1))
        out["scores"] = {"scores": layout(scores), "matmul_copies": n}
        weights = torch.softmax(scores / math.sqrt(dk), dim=-1)
        n, context = copies(lambda: weights @ v)
        out["context"] = {"context": layout(context), "matmul_copies": n}
        merged = context.transpose(1, 2)
        out["merge"] = {"context": layout(merged)}
        try:
            merged.view(B, Sq, D)
            out["merge"]["view_raises"] = None
        except RuntimeError as e:
            out["merge"]["view_raises"] = str(e)
        n, contiguous = copies(lambda: merged.contiguous())
        concat = contiguous.view(B, Sq, D)
        out["concat"] = {"concat": layout(concat), "contiguous_copies": n,
                         "same_memory": contiguous.data_ptr() == merged.data_ptr()}
        n, _ = copies(lambda: merged.reshape(B, Sq, D))
        out["concat"]["reshape_copies"] = n
    return out


def main():
    doc = {"made_with": {"torch": torch.__version__}, "cases": [case(*c) for c in CASES]}
    with open(os.path.join(HERE, "explain_layouts.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
