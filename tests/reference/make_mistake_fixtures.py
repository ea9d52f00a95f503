"""Fixtures for `attn check` and `attn trace --mistake`: right and wrong answers, made with PyTorch.

Run it with Debian's Python, which has torch 1.13 (attn is not needed):

    /usr/bin/python3 tests/reference/make_mistake_fixtures.py    # from the repository root

For each config below it draws the run as attn does (CLI.md: torch.manual_seed(seed); nn.Linear
for q, k, v and the output; x = torch.randn(B,Sq,Din); x_kv = torch.randn(B,Sk,Dkv) for
cross-attention), then computes multi-head attention with
plain torch ops, the way a student writes it: once right, and once per mistake, each made as a
student makes it (the comments in `attention` below). It saves, per mistake, the wrong answer at
the stage where the mistake is made and at later stages (context and output, or merge, concat and
output; the other ways attn check knows a mistake, `way` 1 and 2, at a stage or two; the cross-attention config: a few mistakes, K·Qᵀ at the scores and scaled stages, where its
[B,H,Sk,Sq] shape differs from the right one), and the right answer at every stage it checks, as .json (json.dump(t.tolist())) for the
first config and .npy (np.save) for the others, under tests/reference/mistakes/<config>/, and
tests/reference/mistakes/index.json:

    {"made_with": {"torch": "1.13.1"},
     "configs": {name: {"args": ["--seed", "24", ...], "seed": 24, "batch": 2, "seq": 5, "kv_seq": 5,
                        "d_model": 8, "heads": 4, "mask": "causal", "lengths": [...], "fill": "-inf"}},
     "answers": [{"config": name, "mistake": "softmax_axis" or "none", "way": 0, "stage": "softmax",
                  "tensor": "weights", "made_at": "softmax", "file": "seed24_causal/softmax_axis.softmax.json"}]}

Only new config folders are committed: a run of this script rewrites the old ones with other
last digits (restore them with git checkout). seed24_masks and seed24_window hold the mask
mistakes (causal+padding with lengths 3 and 0, so OR, causal only and padding only all differ,
and a window of 1), the softmax's stand-ins, × √dk and the interleaved heads. seed24_rope_* and
seed24_alibi_* hold the position mistakes (--pos rope: positions from 0 in a decoding step, the
other pairing; --pos alibi: the bias's sign), rope composed as Hugging Face's Llama (GPT-J's
rotate_every_two for interleaved) and ALiBi as Press et al., with make_fixtures.py's helpers;
the alibi answers are bit-exact (test_mistakes.cpp checks them so), rope's cos and sin are
SLEEF's (within 1 ulp of attn's, see make_position_fixtures.py).

tests/cli/check.sh and tests/teach/test_check.cpp check that attn check names each wrong answer's
mistake and passes each right one; tests/compute/test_mistakes.cpp that attn trace --mistake
computes the same wrong stages.
"""

import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402  (rotate_half, rotate_every_two, get_slopes)

OUT = os.path.join(HERE, "mistakes")

CONFIGS = {
    # seed notebook 000's run: three nn.Linear(8,8) and one for the output, randn(2,5,8), 4 heads, causal
    "seed24_causal": dict(seed=24, batch=2, seq=5, d_model=8, heads=4, mask="causal", lengths=None,
                          fill=float("-inf"), ext="json"),
    # padding with a finite fill; Din == D, so x·W multiplies too
    "padding_fill_1e9": dict(seed=7, batch=2, seq=4, d_model=6, heads=3, mask="padding", lengths=[4, 2],
                             fill=-1e9, ext="npy"),
    # cross-attention, Sq = 3 queries and Sk = 5 keys, no mask: K·Qᵀ has the shape [B,H,Sk,Sq] (it
    # stops there: weights·V cannot take it), so attn check must recognise it by shape and values
    "cross_sq3_sk5": dict(seed=5, batch=1, seq=3, kv_seq=5, d_model=4, heads=2, mask="none", lengths=None,
                          fill=float("-inf"), ext="npy",
                          mistakes={"q_k_swapped": ["scores", "scaled"], "softmax_axis": ["softmax", "output"],
                                    "wrong_scale": ["scaled", "context"], "missing_bias": ["projections", "output"],
                                    "split_without_transpose": ["transpose", "context"]}),
    # seed 24 again, with dropout in training mode (p = 0.25, torch.manual_seed(3) before the draws):
    # the dropout mistakes, and weightsᵀ·V after dropout
    "seed24_dropout": dict(seed=24, batch=2, seq=5, d_model=8, heads=4, mask="causal", lengths=None,
                           fill=float("-inf"), ext="npy", dropout=(0.25, 3),
                           mistakes={"dropout_not_rescaled": ["dropout", "output"],
                                     "dropout_keep_inverted": ["dropout", "context"],
                                     "weights_transposed": ["context", "output"]}),
    # seed 24 with causal+padding, lengths 3 and 0: causal OR padding, causal only and padding only
    # all differ from causal AND padding, and batch item 1 has no allowed key (NaN rows to replace).
    # The mask mistakes, the softmax's stand-ins, × √dk and the interleaved heads split
    "seed24_masks": dict(seed=24, batch=2, seq=5, d_model=8, heads=4, mask="causal+padding", lengths=[3, 0],
                         fill=float("-inf"), ext="npy",
                         mistakes={"mask_not_applied": ["masked", "softmax", "output"],
                                   "mask_or_instead_of_and": ["mask", "softmax", "context"],
                                   "causal_only": ["mask", "softmax", "output"],
                                   "padding_only": ["mask", "softmax", "context"],
                                   "padding_on_queries": ["mask", "masked", "softmax"],
                                   "diagonal_masked": ["mask", "softmax", "output"],
                                   "masked_after_softmax": ["softmax", "context"],
                                   "nan_replaced": ["softmax", "output"],
                                   "log_softmax": ["softmax", "context"],
                                   "sigmoid_instead_of_softmax": ["softmax", "output"],
                                   "scale_multiplied": ["scaled", "softmax", "context"],
                                   "heads_interleaved": ["transpose", "softmax", "output"]}),
    # a window of 1 around each query: the window one too narrow (way 0) and one too wide (way 1)
    "seed24_window": dict(seed=24, batch=1, seq=5, d_model=8, heads=2, mask="window", lengths=None, window=1,
                          fill=float("-inf"), ext="npy",
                          mistakes={"window_off_by_one": ["mask", "softmax", "output"]},
                          ways=[("window_off_by_one", 1, ["mask", "softmax", "context"])]),
    # a KV-cache step: 2 new queries over 5 keys (cross-attention's draws), the causal mask aligned
    # lower-right (the last query sees every key); upper-left is the mistake
    "seed24_kv_step": dict(seed=24, batch=1, seq=2, kv_seq=5, d_model=8, heads=2, mask="causal", lengths=None,
                           causal_align="lower-right", fill=float("-inf"), ext="npy",
                           mistakes={"causal_misaligned": ["mask", "softmax", "output"]}),
    # a decoding step with a KV cache (--past 4: 2 new tokens after 4 cached ones) and grouped-query
    # heads (--kv-heads 2 of 4): the cache's causal mask aligned upper-left, and k, v tiled with
    # repeat(1, H/G, 1, 1) instead of repeat_interleave(H/G, dim=1)
    "seed24_gqa_step": dict(seed=24, batch=1, seq=2, past=4, kv_heads=2, d_model=8, heads=4, mask="causal",
                            lengths=None, causal_align="lower-right", fill=float("-inf"), ext="npy",
                            mistakes={"causal_misaligned": ["mask", "softmax", "output"],
                                      "kv_heads_tiled": ["repeat_kv", "softmax", "output"]}),
    # rotary positions in a decoding step (--pos rope --past 3, dk = 4, 2 kv heads): the new q and k
    # rotated from position 0 (position_ids without the cache's offset), and the pairs of the other
    # style (rotate_every_two where the run says half), the cached keys rotated by the same code
    "seed24_rope_step": dict(seed=24, batch=1, seq=2, past=3, kv_heads=2, d_model=16, heads=4, mask="causal",
                             lengths=None, causal_align="lower-right", fill=float("-inf"), ext="npy",
                             pos="rope",
                             mistakes={"rope_positions_from_zero": ["rope", "softmax", "output"],
                                       "rope_pairs_mixed": ["rope", "scores", "output"]}),
    # rope interleaved (GPT-J, Meta's Llama) over a whole sequence, dk = 6: rotate_half instead
    "seed24_rope_interleaved": dict(seed=24, batch=2, seq=5, d_model=12, heads=2, mask="causal", lengths=None,
                                    fill=float("-inf"), ext="npy", pos="rope", rope_style="interleaved",
                                    mistakes={"rope_pairs_mixed": ["rope", "softmax", "context"]}),
    # ALiBi in a decoding step (--pos alibi --past 3, 4 heads): the bias with the wrong sign
    "seed24_alibi_step": dict(seed=24, batch=1, seq=2, past=3, d_model=8, heads=4, mask="causal", lengths=None,
                              causal_align="lower-right", fill=float("-inf"), ext="npy", pos="alibi",
                              mistakes={"alibi_sign": ["alibi", "biased", "softmax", "output"]}),
    # ALiBi with 6 heads (the interleaved extra slopes), no mask: far keys favoured everywhere
    "seed24_alibi_6_heads": dict(seed=24, batch=1, seq=4, d_model=12, heads=6, mask="none", lengths=None,
                                 fill=float("-inf"), ext="npy", pos="alibi",
                                 mistakes={"alibi_sign": ["alibi", "softmax", "output"]}),
}

MISTAKES = ["softmax_axis", "missing_scale", "wrong_scale", "mask_inverted", "fill_value",
            "split_without_transpose", "merge_without_transpose", "weight_not_transposed",
            "q_k_swapped", "missing_bias"]  # (and, in seed24_dropout only, the three below)

# where each mistake is made (attn's mistake_stage), and the later stages its answers are saved at
MADE_AT = {"softmax_axis": "softmax", "missing_scale": "scaled", "wrong_scale": "scaled",
           "mask_inverted": "mask", "fill_value": "masked", "split_without_transpose": "transpose",
           "merge_without_transpose": "merge", "weight_not_transposed": "projections",
           "q_k_swapped": "scores", "missing_bias": "projections", "dropout_not_rescaled": "dropout",
           "dropout_keep_inverted": "dropout", "weights_transposed": "context",
           "mask_not_applied": "masked", "mask_or_instead_of_and": "mask", "causal_only": "mask",
           "padding_only": "mask", "padding_on_queries": "mask", "diagonal_masked": "mask",
           "window_off_by_one": "mask", "masked_after_softmax": "masked", "nan_replaced": "softmax",
           "log_softmax": "softmax", "sigmoid_instead_of_softmax": "softmax", "scale_multiplied": "scaled",
           "heads_interleaved": "transpose", "causal_misaligned": "mask", "kv_heads_tiled": "repeat_kv",
           "rope_positions_from_zero": "rope", "rope_pairs_mixed": "rope", "alibi_sign": "alibi"}
LATER = {"merge_without_transpose": ["concat", "output"]}
# the other ways attn check knows (mistake, way, stages), for the first two configs
WAYS = [("softmax_axis", 1, ["softmax", "output"]),           # dim=1, the heads
        ("wrong_scale", 1, ["scaled", "context"]),            # / D
        ("wrong_scale", 2, ["scaled", "output"]),             # / dk
        ("fill_value", 1, ["masked"]),                        # -1e9 for -inf, -inf for -1e9
        ("weight_not_transposed", 1, ["projections", "output"]),  # every nn.Linear as x·W
        ("weight_not_transposed", 2, ["output"]),             # the output projection only
        ("missing_bias", 1, ["output"]),                      # every bias forgotten
        ("missing_bias", 2, ["output"])]                      # b_o only
DEFAULT_LATER = ["context", "output"]
TENSOR = {"projections": "q", "view": "q", "transpose": "q", "rope": "q", "repeat_kv": "k", "scores": "scores",
          "scaled": "scaled", "alibi": "bias", "biased": "biased",
          "mask": "mask", "masked": "masked", "softmax": "weights", "dropout": "weights", "context": "context", "merge": "context",
          "concat": "concat", "output": "out"}


def args_of(cfg):
    args = ["--seed", str(cfg["seed"]), "--batch", str(cfg["batch"]), "--seq", str(cfg["seq"]),
            "--d-model", str(cfg["d_model"]), "--heads", str(cfg["heads"]), "--mask", cfg["mask"]]
    if "kv_seq" in cfg:
        args[6:6] = ["--kv-seq", str(cfg["kv_seq"])]
    if cfg["lengths"]:
        args += ["--lengths", ",".join(map(str, cfg["lengths"]))]
    if "window" in cfg:
        args += ["--window", str(cfg["window"])]
    if "causal_align" in cfg:
        args += ["--causal-align", cfg["causal_align"]]
    if "past" in cfg:
        args += ["--past", str(cfg["past"])]
    if "kv_heads" in cfg:
        args += ["--kv-heads", str(cfg["kv_heads"])]
    if "pos" in cfg:
        args += ["--pos", cfg["pos"]]
    if "rope_style" in cfg:
        args += ["--rope-style", cfg["rope_style"]]
    if not math.isinf(cfg["fill"]):
        args += ["--fill", "-1e9"]
    if "dropout" in cfg:
        args += ["--dropout", str(cfg["dropout"][0]), "--train", "--dropout-seed", str(cfg["dropout"][1])]
    return args


def keep_mask(cfg, mistake=None, way=0):
    """[B,1,Sq,Sk] bool, true = may attend (attn's mask stage), with the mask mistakes made as a
    student makes them."""
    B, S = cfg["batch"], cfg["seq"]
    Sk = cfg.get("kv_seq", S + cfg.get("past", 0))
    assert Sk == S or cfg["mask"] in ("none", "causal")
    kinds = cfg["mask"].split("+")
    parts = {}
    if "causal" in kinds:
        lower_right = cfg.get("causal_align") == "lower-right"
        if mistake == "causal_misaligned":
            lower_right = not lower_right                                     # the other alignment
        diagonal = Sk - S if lower_right else 0
        if mistake == "diagonal_masked":
            diagonal -= 1                                                     # tril(ones, -1): the diagonal out
        parts["causal"] = torch.tril(torch.ones(S, Sk, dtype=torch.bool), diagonal=diagonal)
    if "padding" in kinds:
        lengths = torch.tensor(cfg["lengths"]).view(B, 1, 1, 1)
        if mistake == "padding_on_queries":
            parts["padding"] = torch.arange(S).view(1, 1, S, 1) < lengths      # the rows, not the columns
        else:
            parts["padding"] = torch.arange(S).view(1, 1, 1, S) < lengths
    if "window" in kinds:
        i, j = torch.arange(S).view(S, 1), torch.arange(S).view(1, S)
        w = cfg["window"]
        if mistake == "window_off_by_one":
            parts["window"] = (i - j).abs() < w if way == 0 else (i - j).abs() <= w + 1
        else:
            parts["window"] = (i - j).abs() <= w
    if mistake == "causal_only":
        parts = {"causal": parts["causal"]}
    if mistake == "padding_only":
        parts = {"padding": parts["padding"]}
    keep = torch.zeros(B, 1, S, Sk, dtype=torch.bool) if mistake == "mask_or_instead_of_and" else \
        torch.ones(B, 1, S, Sk, dtype=torch.bool)
    for part in parts.values():
        keep = keep | part if mistake == "mask_or_instead_of_and" else keep & part  # OR: causal | padding
    return keep


def rotary(t, first, style):
    """t [B,H',S,dk] rotated at positions first..first+S-1 as Hugging Face's Llama (half:
    cat((freqs, freqs)) and rotate_half) or GPT-J (interleaved: repeat_interleave(2) and
    rotate_every_two), base 10000; and its cos."""
    dk = t.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, dk, 2).float() / dk))
    freqs = torch.outer(torch.arange(first, first + t.shape[2]).float(), inv_freq)   # [S,dk/2]
    if style == "interleaved":
        emb, rot = freqs.repeat_interleave(2, dim=-1), mf.rotate_every_two
    else:
        emb, rot = torch.cat((freqs, freqs), dim=-1), mf.rotate_half
    return t * emb.cos() + rot(t) * emb.sin()


def attention(cfg, mistake=None, way=0):
    """Every stage of the run as a dict, with `mistake` made as a student makes it, in way `way`
    (attn's mistake_variants: 0 is what attn trace --mistake makes; WAYS below the others)."""
    B, S, D, H = cfg["batch"], cfg["seq"], cfg["d_model"], cfg["heads"]
    N, G = cfg.get("past", 0), cfg.get("kv_heads", H)
    Sk = cfg.get("kv_seq", S + N)
    dk = D // H
    torch.manual_seed(cfg["seed"])
    layers = [nn.Linear(D, D), nn.Linear(D, G * dk), nn.Linear(D, G * dk), nn.Linear(D, D)]  # q, k, v, output
    x = torch.randn(B, N + S, D)
    x_kv = torch.randn(B, Sk, D) if Sk != S and N == 0 else x  # cross-attention: keys and values from x_kv
    if N > 0:  # a decoding step: queries, keys and values of the last S tokens, the cache of the first N
        x_past, x = x[:, :N], x[:, N:]
        x_kv = x
    st = {}
    with torch.no_grad():
        def project(layer, t, output=False):
            made_here = way == 1 or (way == 2) == output   # way 0: q, k, v; 1: all four; 2: the output
            if mistake == "weight_not_transposed" and made_here:
                return t @ layer.weight + layer.bias        # x·W: W is [out, in]
            if mistake == "missing_bias" and made_here:
                return t @ layer.weight.T                   # the bias forgotten
            return layer(t)
        q, k, v = project(layers[0], x), project(layers[1], x_kv), project(layers[2], x_kv)
        st["projections"] = q
        if mistake == "split_without_transpose":
            qh, kh, vh = (t.view(B, H, t.shape[1], dk) for t in (q, k, v))  # a plain reshape
        elif mistake == "heads_interleaved":
            qh, kh, vh = (t.view(B, t.shape[1], dk, H).permute(0, 3, 1, 2) for t in (q, k, v))  # dk before H
        else:
            qh, kh, vh = (t.view(B, t.shape[1], t.shape[2] // dk, dk).transpose(1, 2) for t in (q, k, v))
        st["transpose"] = qh
        style = cfg.get("rope_style", "half")
        if mistake == "rope_pairs_mixed":
            style = "half" if style == "interleaved" else "interleaved"      # the other code's pairs
        if cfg.get("pos") == "rope":
            first = 0 if mistake == "rope_positions_from_zero" else N          # position_ids from 0, not N
            qh, kh = rotary(qh, first, style), rotary(kh, first, style)
            st["rope"] = qh
        if N > 0:  # the cache, then torch.cat((past, new), dim=2)
            past_k = layers[1](x_past).view(B, N, G, dk).transpose(1, 2)
            past_v = layers[2](x_past).view(B, N, G, dk).transpose(1, 2)
            if cfg.get("pos") == "rope":
                past_k = rotary(past_k, 0, style)                             # kept rotated at 0..N-1
            kh, vh = torch.cat((past_k, kh), dim=2), torch.cat((past_v, vh), dim=2)
        if G < H:
            if mistake == "kv_heads_tiled":
                kh, vh = kh.repeat(1, H // G, 1, 1), vh.repeat(1, H // G, 1, 1)        # tiled: head h reads h % G
            else:
                kh, vh = kh.repeat_interleave(H // G, dim=1), vh.repeat_interleave(H // G, dim=1)
            st["repeat_kv"] = kh
        if mistake == "q_k_swapped":
            scores = kh @ qh.transpose(-2, -1)                                # K·Qᵀ
        else:
            scores = qh @ kh.transpose(-2, -1)
        st["scores"] = scores
        if mistake == "missing_scale":
            scaled = scores
        elif mistake == "scale_multiplied":
            scaled = scores * math.sqrt(dk)                                   # × √dk
        elif mistake == "wrong_scale":
            scaled = scores / [math.sqrt(D), D, dk][way]                      # the model width; D; dk
        else:
            scaled = scores / math.sqrt(dk)
        st["scaled"] = scaled
        if cfg.get("pos") == "alibi":  # Press et al.: bias = -m·(i - j), as slopes · (j - i)
            slopes = torch.Tensor(mf.get_slopes(H))
            i, j = torch.arange(N, N + S).unsqueeze(1), torch.arange(0, Sk).unsqueeze(0)
            distance = (i - j).float() if mistake == "alibi_sign" else (j - i).float()   # the sign flipped
            st["alibi"] = (slopes.view(H, 1, 1) * distance).unsqueeze(0)
            scaled = st["biased"] = scaled + st["alibi"]
        if mistake == "q_k_swapped" and Sk != S:
            return st  # [B,H,Sk,Sq]: weights·V cannot take it (PyTorch would stop at the matmul)
        keep = keep_mask(cfg, mistake, way) if cfg["mask"] != "none" else torch.ones(B, 1, S, Sk, dtype=torch.bool)
        if mistake == "mask_inverted":
            keep = ~keep                                                      # triu for tril, == 1 for == 0
        st["mask"] = keep
        fill = cfg["fill"]
        if mistake == "fill_value":                       # "zero the masked scores"; or -1e9 for -inf and back
            fill = 0.0 if way == 0 else (-1e9 if math.isinf(cfg["fill"]) else float("-inf"))
        masked = scaled.masked_fill(~keep, fill) if cfg["mask"] != "none" else scaled
        if mistake in ("mask_not_applied", "masked_after_softmax"):
            masked = scaled                                                   # the mask never used (yet)
        st["masked"] = masked
        weights = torch.softmax(masked, dim=(-2 if way == 0 else 1) if mistake == "softmax_axis" else -1)
        if mistake == "masked_after_softmax":
            weights = weights.masked_fill(~keep, 0.0)                         # zeroed after the softmax
        elif mistake == "nan_replaced":
            weights = torch.nan_to_num(weights)                               # NaN rows -> 0
        elif mistake == "log_softmax":
            weights = torch.log_softmax(masked, dim=-1)
        elif mistake == "sigmoid_instead_of_softmax":
            weights = torch.sigmoid(masked)
        st["softmax"] = weights
        if "dropout" in cfg:  # nn.Dropout(p) in training mode, written out: keep = torch.rand(...) < 1 - p
            p, dropout_seed = cfg["dropout"]
            torch.manual_seed(dropout_seed)
            drop_keep = torch.rand(B, H, S, Sk) < 1 - p
            if mistake == "dropout_not_rescaled":
                weights = weights * drop_keep                                 # no / (1 - p)
            elif mistake == "dropout_keep_inverted":
                weights = weights * (~drop_keep).float().div_(1 - p)          # the dropped ones kept
            else:
                weights = weights * drop_keep.float().div_(1 - p)             # aten's noise, as F.dropout
            st["dropout"] = weights
        if mistake == "weights_transposed":
            context = weights.transpose(-2, -1) @ vh                         # weightsᵀ·V
        else:
            context = weights @ vh
        st["context"] = context
        if mistake == "merge_without_transpose":
            concat = context.reshape(B, S, D)                                 # a plain reshape
            st["merge"] = context.reshape(B, S, H, dk)
        else:
            st["merge"] = context.transpose(1, 2)
            concat = st["merge"].contiguous().view(B, S, D)
        st["concat"] = concat
        st["output"] = project(layers[3], concat, output=True)
    return st


def save(t, path):
    if path.endswith(".npy"):
        np.save(path, t.numpy())
    else:
        with open(path, "w") as f:
            json.dump(t.tolist(), f)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    index = {"made_with": {"torch": torch.__version__}, "configs": {}, "answers": []}
    for name, cfg in CONFIGS.items():
        os.makedirs(os.path.join(OUT, name))
        index["configs"][name] = {"args": args_of(cfg), "seed": cfg["seed"], "batch": cfg["batch"],
                                  "seq": cfg["seq"], "kv_seq": cfg.get("kv_seq", cfg["seq"] + cfg.get("past", 0)),
                                  "d_model": cfg["d_model"], "heads": cfg["heads"],
                                  "mask": cfg["mask"], "lengths": cfg["lengths"] or [],
                                  "fill": "-inf" if math.isinf(cfg["fill"]) else "-1e9"}
        if "window" in cfg:
            index["configs"][name]["window"] = cfg["window"]
        if "causal_align" in cfg:
            index["configs"][name]["causal_align"] = cfg["causal_align"]
        for key in ("past", "kv_heads", "pos", "rope_style"):
            if key in cfg:
                index["configs"][name][key] = cfg[key]
        if "dropout" in cfg:
            index["configs"][name]["dropout"] = {"p": cfg["dropout"][0], "seed": cfg["dropout"][1]}
        right = attention(cfg)
        checked = set()
        chosen = [(m, 0, stages) for m, stages in cfg["mistakes"].items()] + cfg.get("ways", []) \
            if "mistakes" in cfg else [(m, 0, [MADE_AT[m]] + LATER.get(m, DEFAULT_LATER)) for m in MISTAKES] + WAYS
        for mistake, way, stages in chosen:
            wrong = attention(cfg, mistake, way)
            made_at = "output" if way == 2 and mistake in ("weight_not_transposed", "missing_bias") else MADE_AT[mistake]
            for stage in stages:
                assert not torch.equal(wrong[stage], right[stage]), (name, mistake, way, stage)
                file = f"{name}/{mistake}{'.way' + str(way) if way else ''}.{stage}.{cfg['ext']}"
                save(wrong[stage], os.path.join(OUT, file))
                index["answers"].append({"config": name, "mistake": mistake, "way": way, "stage": stage,
                                         "tensor": TENSOR[stage], "made_at": made_at, "file": file})
                checked.add(stage)
        for stage in sorted(checked, key=list(TENSOR).index):
            file = f"{name}/right.{stage}.{cfg['ext']}"
            save(right[stage], os.path.join(OUT, file))
            index["answers"].append({"config": name, "mistake": "none", "way": 0, "stage": stage,
                                     "tensor": TENSOR[stage], "made_at": "", "file": file})
    with open(os.path.join(OUT, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    print(f"{len(index['answers'])} answers in {OUT}")


if __name__ == "__main__":
    main()
