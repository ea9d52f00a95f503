"""PyTorch's memory layout of every stage tensor: strides, contiguity, shared storage.

Run it with Debian's Python, which has torch 1.13 (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_strides_fixtures.py     # from the repository root

It writes tests/reference/strides.json, next to this script. The output is committed, so the
C++ tests (tests/render/test_render_json_layout.cpp, tests/compute/test_tensor.cpp) never
need torch.

The tensors come from plain torch ops, written the way a student's notebook writes them,
NOT from attn's C++ code:

    q, k, v = w_q(x), w_k(x_kv), w_v(x_kv)                      # projections [B,S,D]
    q.view(B, S, H, dk)                                         # view        [B,S,H,dk]
    .transpose(1, 2)                                            # transpose   [B,H,S,dk]
    scores = q @ k.transpose(-2, -1); scaled = scores / math.sqrt(dk)
    masked = scaled.masked_fill(~mask, fill); weights = torch.softmax(masked, dim=-1)
    weights = weights * keep / (1 - p)                          # dropout (training mode)
    context = weights @ v                                       # [B,H,Sq,dk]
    merge = context.transpose(1, 2)                             # [B,Sq,H,dk]
    concat = merge.contiguous().view(B, Sq, D)                  # the copy
    out = w_o(concat)

For each stage tensor it records, as PyTorch reports them at that step:
    "shape"     list(t.shape)
    "strides"   list(t.stride()), in elements
    "contiguous" t.is_contiguous()
    "storage"   the first stage tensor, in stage order, whose storage t shares
                ("projections.q"), or null when t shares it with no earlier stage tensor.
Every stage tensor stays alive until the end, so two tensors have the same storage pointer
only when they share storage.

File format: {"made_with": {"torch": version},
              "cases": [{"name": ..., "config": {as attn's JSON "config" writes it},
                         "stages": {stage: {tensor: {"shape", "strides", "contiguous", "storage"}}}}]}
The values are not recorded: tests/reference/fixtures/ hold those.
"""

import json
import math
import os

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "strides.json")


def case(name, **kw):
    """A config with CLI.md's defaults, then kw on top (attn's JSON config keys)."""
    c = {"batch": 1, "seq": 4, "kv_seq": None, "d_model": 8, "heads": 2, "head_dim": None,
         "d_in": None, "d_kv_in": None, "cross": False, "qkv_bias": True, "out_proj": True,
         "seed": 0, "mask": "none", "fill": "-inf"}
    c.update(kw)
    c["kv_seq"] = c["kv_seq"] or c["seq"]
    c["head_dim"] = c["d_model"] // c["heads"]
    c["d_in"] = c["d_in"] or c["d_model"]
    c["d_kv_in"] = c["d_kv_in"] or c["d_in"]
    c["cross"] = c["cross"] or c["kv_seq"] != c["seq"] or c["d_kv_in"] != c["d_in"]
    return name, c


CASES = [
    case("defaults_causal", mask="causal"),
    # seed notebook 000: B=2, Sq=5, D=8, H=4, causal, no output projection
    case("notebook_000", seed=24, batch=2, seq=5, heads=4, mask="causal", out_proj=False),
    # cross-attention: k and v have their own length and input width
    case("cross", seed=14, batch=2, seq=3, kv_seq=6, d_in=6, d_kv_in=10),
    # one head: the transposes are contiguous (an axis of size 1 does not count)
    case("one_head", seed=1, batch=2, seq=3, heads=1),
    # one query: q's transpose and the merge are contiguous, k's and v's are not
    case("one_query_cross", seed=2, batch=2, seq=1, kv_seq=3),
    # one dimension per head: dk = 1
    case("head_dim_1", seed=3, batch=2, seq=3, d_model=4, heads=4),
    # dropout in training mode adds stage 11 with the keep mask
    case("dropout_train", seed=4, batch=1, seq=4, dropout=0.5, train=True, dropout_seed=0),
]


def stage_tensors(c):
    """The stages of one run as {stage: {tensor: torch.Tensor}}, in CLI.md's order."""
    B, Sq, Sk, D, H = c["batch"], c["seq"], c["kv_seq"], c["d_model"], c["heads"]
    dk = D // H
    torch.manual_seed(c["seed"])
    w_q = nn.Linear(c["d_in"], D, bias=c["qkv_bias"])
    w_k = nn.Linear(c["d_kv_in"], D, bias=c["qkv_bias"])
    w_v = nn.Linear(c["d_kv_in"], D, bias=c["qkv_bias"])
    w_o = nn.Linear(D, D) if c["out_proj"] else None
    x = torch.randn(B, Sq, c["d_in"])
    x_kv = torch.randn(B, Sk, c["d_kv_in"]) if c["cross"] else x

    s = {}
    s["input"] = {"x": x, **({"x_kv": x_kv} if c["cross"] else {})}
    params = {}
    for name, layer in (("q", w_q), ("k", w_k), ("v", w_v), ("o", w_o)):
        if layer is None:
            continue
        params["w_" + name] = layer.weight.detach()
        if layer.bias is not None:
            params["b_" + name] = layer.bias.detach()
    s["params"] = params
    with torch.no_grad():
        q, k, v = w_q(x), w_k(x_kv), w_v(x_kv)
        s["projections"] = {"q": q, "k": k, "v": v}
        q_view, k_view, v_view = q.view(B, Sq, H, dk), k.view(B, Sk, H, dk), v.view(B, Sk, H, dk)
        s["view"] = {"q": q_view, "k": k_view, "v": v_view}
        q, k, v = q_view.transpose(1, 2), k_view.transpose(1, 2), v_view.transpose(1, 2)
        s["transpose"] = {"q": q, "k": k, "v": v}
        scores = q @ k.transpose(-2, -1)
        s["scores"] = {"scores": scores}
        scaled = scores / math.sqrt(dk)
        s["scaled"] = {"scaled": scaled}
        weights_from = scaled
        if c["mask"] == "causal":
            mask = torch.ones(B, 1, Sq, Sk, dtype=torch.bool).tril()  # a fresh [B,1,Sq,Sk]
            s["mask"] = {"mask": mask}
            weights_from = scaled.masked_fill(~mask, float("-inf"))
            s["masked"] = {"masked": weights_from}
        elif c["mask"] != "none":
            raise ValueError("only causal masks here")
        weights = torch.softmax(weights_from, dim=-1)
        s["softmax"] = {"weights": weights}
        if c.get("train"):
            p = c["dropout"]
            torch.manual_seed(c["dropout_seed"])
            keep = torch.rand(B, H, Sq, Sk) < 1 - p
            weights = weights * keep / (1 - p)
            s["dropout"] = {"weights": weights, "keep": keep}
        context = weights @ v
        s["context"] = {"context": context}
        merge = context.transpose(1, 2)
        s["merge"] = {"context": merge}
        concat = merge.contiguous().view(B, Sq, D)
        s["concat"] = {"concat": concat}
        if w_o is not None:
            s["output"] = {"out": w_o(concat)}
    return s


def layouts(stages):
    """{stage: {tensor: {"shape", "strides", "contiguous", "storage"}}}."""
    first_holder = {}  # storage pointer -> "stage.tensor" that held it first
    out = {}
    for stage, tensors in stages.items():
        out[stage] = {}
        for name, t in tensors.items():
            pointer = t.storage().data_ptr()
            holder = first_holder.setdefault(pointer, stage + "." + name)
            out[stage][name] = {
                "shape": list(t.shape),
                "strides": list(t.stride()),
                "contiguous": t.is_contiguous(),
                "storage": None if holder == stage + "." + name else holder,
            }
    return out


def main():
    cases = [{"name": name, "config": c, "stages": layouts(stage_tensors(c))} for name, c in CASES]
    doc = {"made_with": {"torch": torch.__version__}, "cases": cases}
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(OUT))


if __name__ == "__main__":
    main()
