"""PyTorch reference fixtures for attn's stage-by-stage multi-head attention.

Run it with Debian's Python, which has torch 1.13 (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_fixtures.py            # from the repository root

It writes one JSON file per case to tests/reference/fixtures/<case-name>.json, next to this
script, replacing the old ones (and file_inputs/, torch_text/, softmax_rows.json, below). The
output is committed, so the C++ tests (tests/test_fixtures.cpp, tests/cli/files.sh) never need
torch: rerun this script only when a case changes.

One set of bits per OpenBLAS kernel. torch's nn.Linear (addmm) runs OpenBLAS's sgemm, and
OpenBLAS (DYNAMIC_ARCH) picks its kernel per CPU, so the projections and every stage after
them differ in the last bits from one kernel to another. The script runs itself once per kernel
of KERNELS, each in a subprocess with OPENBLAS_CORETYPE=<kernel> (and checks, through
openblas_get_corename, that OpenBLAS really uses that kernel), then writes:

    fixtures/, file_inputs/, torch_text/  the bits of the Haswell kernel (the main set);
    openblas/<Set>/<same relative path>   only the files whose bits differ from the main set,
                                          once per distinct content (<Set> = its first kernel);
    openblas/kernels.txt                  "<kernel> <Set>" per line (Set Haswell = no overlay).

So the files for kernel K are openblas/<Set of K>/<path> where that exists, else <path>. Inputs
(x, params, the files of file_inputs/) and softmax_rows.json do not depend on the kernel; the
script checks that. The tests use the set of the kernel openblas_get_corename() names at run
time; for a kernel missing from kernels.txt they check the tolerance only and say so.

The numbers come from plain torch ops, written the way a student's notebook writes them
(seed notebook 000), and NOT from attn's C++ code:

    torch.manual_seed(seed)
    w_q = nn.Linear(Din, D, bias=qkv_bias); w_k = nn.Linear(Dkv, D, ...); w_v = nn.Linear(Dkv, D, ...)
    w_o = nn.Linear(D, D)                          # only with the output projection
    x = torch.randn(B, Sq, Din)
    x_kv = torch.randn(B, Sk, Dkv)                 # only for cross-attention, else x_kv = x
    q, k, v = w_q(x), w_k(x_kv), w_v(x_kv)          # [B,S,D]
    .view(B, S, H, dk) -> .transpose(1, 2)          # [B,H,S,dk]
    scores = q @ k.transpose(-2, -1); scaled = scores / math.sqrt(dk)
    mask [B,1,Sq,Sk] (true = may attend) = AND of causal, padding, window, random, where random is
        torch.manual_seed(mask_seed) (after x / x_kv were drawn); torch.rand(B,1,Sq,Sk) < mask_keep
        (causal is torch.tril(torch.ones(Sq, Sk, dtype=torch.bool), diagonal=Sk-Sq if lower-right else 0))
    masked = scaled.masked_fill(~mask, fill); weights = softmax(masked, dim=-1)
    with safe_softmax (fill -inf only): weights.masked_fill(rows of -inf only, 0), as torch._safe_softmax
    context = weights @ v; merge = context.transpose(1, 2); concat = merge.reshape(B, Sq, D)
    out = w_o(concat)

A decoding step with a KV cache (config "past": N) and grouped-query heads ("kv_heads": G),
composed as Hugging Face's Llama decodes (x holds all N + Sq tokens, drawn as x was):

    w_k = nn.Linear(Dkv, G*dk); w_v likewise                # drawn in the same order as above
    x = torch.randn(B, N + Sq, Din); x_past, x_new = x[:, :N], x[:, N:]
    q, k, v = w_q(x_new), w_k(x_new), w_v(x_new)               # [B,Sq,D], [B,Sq,G*dk]
    past_k = w_k(x_past).view(B, N, G, dk).transpose(1, 2)     # the cache stage, [B,G,N,dk]
    k = torch.cat((past_k, k_new), dim=2)                      # the append stage, [B,G,N+Sq,dk]
    k = k.repeat_interleave(H // G, dim=1)                     # the repeat_kv stage (G < H), [B,H,Sk,dk]
    causal aligned lower-right (the step's queries are tokens N..N+Sq-1)

File format (one case):
    {"name": ..., "config": {"batch", "seq", "kv_seq", "d_model", "heads", "d_in", "d_kv_in",
                             "qkv_bias", "out_proj", "seed", "mask": "none" | "causal+padding" ...,
                             ["causal_align": "lower-right"], ["lengths"], ["window"],
                             ["mask_seed", "mask_keep"], "fill": "-inf" | number, ["safe_softmax": true]},
     "made_with": {"torch": version, "cpu_capability": ...},
     "stages": {stage: {tensor: {"shape": [...], "data": [flat, row-major]}}}}
Stage and tensor names are CLI.md's. Floats are float32 values written with repr(float(v)), so they
round-trip exactly; non-finite values are the strings "-inf", "inf", "nan"; mask data are true/false.

randn with 16 or more elements depends on the CPU kernel (torch-rng.md, section 7): the script
refuses to run unless torch reports the AVX2 (or AVX512) kernel, which the seed notebooks used.
"""

import ctypes
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))

# OpenBLAS kernels (OPENBLAS_CORETYPE names) of x86-64 CPUs: Haswell (AVX2 Intel), Zen (AMD
# Zen 1-3), SkylakeX (AVX-512), Cooperlake (AVX-512 with BF16, also AMD Zen 4), Sandybridge
# (AVX without AVX2), Prescott (SSE3: what OpenBLAS 0.3 runs on a CPU it does not know, such
# as the project's virtual machine). The first is the main set.
KERNELS = ("Haswell", "Zen", "SkylakeX", "Cooperlake", "Sandybridge", "Prescott")
KERNEL_DIR = os.path.join(HERE, "openblas")
CANNOT_RUN_HERE = 75  # a kernel's run exits so when OpenBLAS runs another one on this CPU

MASK_KINDS = ("causal", "padding", "window", "random")  # the order of "+" in config["mask"]


# ----------------------------------------------------------------------------
# the cases


def case(name, **kw):
    """A config with CLI.md's defaults, then kw on top."""
    c = {"batch": 1, "seq": 4, "kv_seq": None, "d_model": 8, "heads": 2, "d_in": None,
         "d_kv_in": None, "qkv_bias": True, "out_proj": True, "seed": 0, "mask": "none",
         "fill": "-inf"}
    c.update(kw)
    if c["kv_seq"] is None:
        c["kv_seq"] = c["seq"] + c.get("past", 0)
    if c["d_in"] is None:
        c["d_in"] = c["d_model"]
    if c["d_kv_in"] is None:
        c["d_kv_in"] = c["d_in"]
    return name, c


CASES = [
    # seed notebook 000: three nn.Linear(8,8), randn(2,5,8), 4 heads, causal, -inf, no fc
    case("notebook_000_seed24", seed=24, batch=2, seq=5, d_model=8, heads=4, mask="causal",
         out_proj=False),
    case("defaults"),
    case("heads_1", seed=1, batch=2, seq=3, d_model=8, heads=1),
    case("heads_eq_d_model", seed=2, batch=2, seq=3, d_model=8, heads=8),
    # each mask kind alone, then combinations
    case("mask_causal", seed=3, batch=2, seq=5, heads=2, mask="causal"),
    case("mask_padding", seed=4, batch=3, seq=5, heads=2, mask="padding", lengths=[5, 3, 1]),
    case("mask_window", seed=5, batch=1, seq=6, heads=2, mask="window", window=1),
    case("mask_random", seed=6, batch=2, seq=4, heads=2, mask="random", mask_seed=7,
         mask_keep=0.5),
    case("mask_causal_padding", seed=24, batch=2, seq=5, d_model=8, heads=4,
         mask="causal+padding", lengths=[5, 3]),
    case("mask_causal_window", seed=8, batch=1, seq=6, heads=2, mask="causal+window", window=2),
    case("mask_padding_random", seed=9, batch=2, seq=4, heads=2, mask="padding+random",
         lengths=[4, 2], mask_seed=11, mask_keep=0.7),
    # rows with no allowed key: uniform weights with a finite fill, NaN with -inf
    case("fill_neg1e9_fully_masked_random", seed=10, batch=2, seq=4, heads=2, mask="random",
         mask_seed=3, mask_keep=0.25, fill=-1e9),
    case("fill_neg1e9_fully_masked_padding", seed=11, batch=2, seq=3, heads=2, mask="padding",
         lengths=[3, 0], fill=-1e9),
    case("fill_neginf_fully_masked_random", seed=12, batch=2, seq=4, heads=2, mask="random",
         mask_seed=3, mask_keep=0.25),
    case("fill_neginf_fully_masked_padding", seed=13, batch=2, seq=3, heads=2,
         mask="causal+padding", lengths=[3, 0]),
    # causal with Sq != Sk, aligned upper-left (torch.tril, the default) and lower-right
    # (torch.tril(..., diagonal=Sk-Sq), --causal-align lower-right); with Sq > Sk lower-right
    # leaves the first queries no key: NaN, or 0 with --safe-softmax (torch._safe_softmax)
    case("causal_upper_left_sq_lt_sk", seed=30, batch=2, seq=3, kv_seq=5, heads=2, mask="causal"),
    case("causal_lower_right_sq_lt_sk", seed=30, batch=2, seq=3, kv_seq=5, heads=2, mask="causal",
         causal_align="lower-right"),
    case("causal_lower_right_sq_gt_sk_fully_masked", seed=31, batch=1, seq=5, kv_seq=3, heads=2,
         mask="causal", causal_align="lower-right"),
    case("safe_softmax_causal_lower_right_fully_masked", seed=31, batch=1, seq=5, kv_seq=3, heads=2,
         mask="causal", causal_align="lower-right", safe_softmax=True),
    case("safe_softmax_no_empty_row", seed=3, batch=2, seq=5, heads=2, mask="causal",
         safe_softmax=True),
    # cross-attention: x_kv is drawn after x
    case("cross_kv_seq", seed=14, batch=2, seq=3, kv_seq=5, d_model=8, heads=2),
    case("cross_kv_seq_padding", seed=15, batch=2, seq=3, kv_seq=6, d_model=8, heads=2,
         mask="padding", lengths=[6, 2]),
    case("cross_d_kv_in", seed=16, batch=2, seq=3, kv_seq=4, d_model=8, heads=2, d_in=6,
         d_kv_in=10),
    # switched-off layers draw nothing
    case("no_qkv_bias", seed=17, batch=2, seq=3, heads=2, qkv_bias=False),
    case("no_out_proj", seed=18, batch=2, seq=3, heads=2, out_proj=False),
    case("no_qkv_bias_no_out_proj", seed=19, batch=2, seq=3, heads=2, qkv_bias=False,
         out_proj=False, mask="causal"),
    # randn paths: N < 16 (Box-Muller with a cache), N >= 16 with N % 16 != 0 (tail block)
    case("randn_small_n8", seed=20, batch=1, seq=1, d_model=8, heads=2),
    case("randn_cache_carry_cross", seed=21, batch=1, seq=1, kv_seq=2, d_model=4, heads=2,
         d_in=3, d_kv_in=3),  # x has 3 values: its leftover normal starts x_kv (6 values)
    case("randn_tail", seed=22, batch=1, seq=3, d_model=6, heads=3, d_in=7, d_kv_in=5,
         kv_seq=5),  # x has 21 values, x_kv 25
    # seeds
    case("seed_1", seed=1, batch=2, seq=3, heads=2, mask="causal"),
    case("seed_42", seed=42, batch=2, seq=3, heads=2),
    case("seed_123", seed=123, batch=2, seq=3, heads=4, mask="causal"),
    case("seed_2p31_plus_5", seed=2**31 + 5, batch=2, seq=3, heads=2),
    # dropout in training mode: stage 11, keep = torch.rand(B,H,Sq,Sk) < 1 - p after manual_seed
    case("dropout_train", seed=26, batch=2, seq=4, heads=2, dropout=0.1, train=True,
         dropout_seed=5),
    case("dropout_train_causal_half", seed=27, batch=1, seq=6, heads=3, d_model=6, mask="causal",
         dropout=0.5, train=True, dropout_seed=0),
    case("dropout_eval_is_identity", seed=28, batch=1, seq=3, heads=2, dropout=0.5, train=False),
    case("dropout_train_p1_zeroes_all", seed=29, batch=1, seq=3, heads=2, dropout=1.0, train=True,
         dropout_seed=1),
    # larger: randn(2,16,32) fills 64 whole blocks of 16
    case("large_causal", seed=25, batch=2, seq=16, d_model=32, heads=4, mask="causal"),
    # input features past one k-block of OpenBLAS's GEMM (128 for Prescott, more for others):
    # F.linear is addmm, whose bias the blocks are added to one after another, and the last
    # blocks are halved (300: 128, 88, 84 on Prescott)
    case("long_projections", seed=30, batch=1, seq=3, kv_seq=4, d_model=8, heads=2, d_in=300,
         d_kv_in=200, mask="causal"),
    # a decoding step with a KV cache (--past N): one new token after 6 cached ones, causal
    # aligned lower-right by itself; two new tokens, two batch items, a padding mask
    case("past_6_one_token", seed=40, batch=1, seq=1, past=6, d_model=8, heads=2, mask="causal",
         causal_align="lower-right"),
    case("past_3_two_tokens_batch2", seed=41, batch=2, seq=2, past=3, d_model=8, heads=4,
         mask="causal+padding", causal_align="lower-right", lengths=[5, 4]),
    case("past_4_no_mask", seed=42, batch=1, seq=3, past=4, d_model=6, heads=3),
    case("past_5_causal_window_2", seed=47, batch=1, seq=2, past=5, d_model=8, heads=2,
         mask="causal+window", window=2, causal_align="lower-right"),  # the window from N + i
    # grouped-query heads (--kv-heads G): G = 2 of H = 4, multi-query G = 1, and with a cache
    case("kv_heads_2_of_4", seed=43, batch=2, seq=4, d_model=16, heads=4, kv_heads=2, mask="causal"),
    case("kv_heads_1_multi_query", seed=44, batch=1, seq=3, d_model=8, heads=4, kv_heads=1),
    case("kv_heads_2_of_4_past_5", seed=45, batch=2, seq=2, past=5, d_model=16, heads=4, kv_heads=2,
         mask="causal", causal_align="lower-right"),
    case("kv_heads_3_of_6_no_bias", seed=46, batch=1, seq=3, d_model=12, heads=6, kv_heads=3,
         qkv_bias=False, out_proj=False),
]


# tensors from files (--input, --kv-input, --params, --q --k --v, --mask-file): each case is a
# directory file_inputs/<name>/ holding the files, written by numpy from torch tensors, and
# expected.json (the fixture format plus "files": {flag: file name}). The sizes are left to
# the files: the C++ test passes no size flag and checks that the config comes out as here.


def linear_params(seed, d_in, d_kv_in, d, qkv_bias=True, out_proj=True):
    """Weights from torch, NOT drawn the way attn draws (another seed, randn scaled)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *shape: torch.randn(*shape, generator=g) * 0.4
    p = {"w_q": r(d, d_in), "w_k": r(d, d_kv_in), "w_v": r(d, d_kv_in)}
    if qkv_bias:
        p.update({"b_q": r(d), "b_k": r(d), "b_v": r(d)})
    if out_proj:
        p.update({"w_o": r(d, d), "b_o": r(d)})
    return p


def file_randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def file_cases():
    """(name, config, given tensors, files {flag: (file name, tensor or dict, how)}[, size flags]):
    the size flags are those no file implies (here, B and Sq when x is drawn)."""
    cases = []

    c = case("input_npy_params_npz", batch=2, seq=5, d_model=8, heads=4, mask="causal")[1]
    x, p = file_randn(101, 2, 5, 8), linear_params(102, 8, 8, 8)
    cases.append(("input_npy_params_npz", c, {"x": x, "params": p},
                  {"input": ("x.npy", x, "f4"), "params": ("params.npz", p, "savez")}))

    c = case("x", batch=2, seq=3, kv_seq=4, d_model=8, heads=2, d_in=6, d_kv_in=10)[1]
    x, x_kv, p = file_randn(103, 2, 3, 6), file_randn(104, 2, 4, 10), linear_params(105, 6, 10, 8)
    cases.append(("input_f64_kv_input_params_json", c, {"x": x, "x_kv": x_kv, "params": p},
                  {"input": ("x.npy", x, "f8"), "kv_input": ("x_kv.npy", x_kv, "f4"),
                   "params": ("params.json", {"params." + k: v for k, v in p.items()}, "json")}))

    c = case("x", seed=7, batch=2, seq=3, d_model=8, heads=2, fill=-1e9)[1]
    q, k, v = (file_randn(s, 2, 3, 8) for s in (106, 107, 108))
    mask = torch.rand(2, 1, 3, 3, generator=torch.Generator().manual_seed(109)) < 0.5
    cases.append(("qkv_npy_mask_npy_drawn_w_o", c, {"qkv": (q, k, v), "mask": mask},
                  {"q": ("q.npy", q, "f4"), "k": ("k.npy", k, "f4"), "v": ("v.npy", v, "f4"),
                   "mask": ("mask.npy", mask, "b1")}))

    c = case("x", batch=1, seq=3, kv_seq=5, d_model=6, heads=3, out_proj=False, mask="causal")[1]
    q, k, v = file_randn(110, 1, 3, 6), file_randn(111, 1, 5, 6), file_randn(112, 1, 5, 6)
    mask2d = torch.tensor([[1, 1, 0, 1, 1], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    cases.append(("qkv_json_mask_2d_ints", c,
                  {"qkv": (q, k, v), "mask": mask2d.bool().view(1, 1, 3, 5)},
                  {"q": ("q.json", q, "json"), "k": ("k.json", k, "json"),
                   "v": ("v.json", v, "json"), "mask": ("mask.json", mask2d, "json")}))

    c = case("x", seed=3, batch=1, seq=4, d_model=8, heads=2)[1]
    x = file_randn(113, 1, 4, 8)
    cases.append(("input_json_params_drawn", c, {"x": x}, {"input": ("x.json", x, "json")}))

    c = case("x", seed=5, batch=2, seq=3, d_model=4, heads=2, qkv_bias=False)[1]
    p = linear_params(114, 4, 4, 4, qkv_bias=False)
    cases.append(("params_npz_compressed_x_drawn", c, {"params": p},
                  {"params": ("params.npz", p, "savez_compressed")}, {"batch": 2, "seq": 3}))

    c = case("x", batch=1, seq=3, d_model=4, heads=2)[1]
    x = file_randn(115, 1, 3, 4)
    x[0, 1, 2] = float("nan")
    p = linear_params(116, 4, 4, 4)
    cases.append(("input_with_nan", c, {"x": x, "params": p},
                  {"input": ("x.npy", x, "f4"), "params": ("params.npz", p, "savez")}))
    return cases


def write_given_file(path, value, how):
    import numpy as np
    if how in ("f4", "f8", "b1"):
        np.save(path, value.numpy().astype({"f4": "<f4", "f8": "<f8", "b1": "|b1"}[how]))
    elif how in ("savez", "savez_compressed"):
        getattr(np, how)(path, **{k: t.numpy() for k, t in value.items()})
    elif how == "json":
        obj = {k: t.tolist() for k, t in value.items()} if isinstance(value, dict) else value.tolist()
        with open(path, "w") as fh:
            json.dump(obj, fh)
    else:
        raise ValueError(how)


# ----------------------------------------------------------------------------
# the notebook computation


def build_mask(c, B, Sq, Sk):
    """[B,1,Sq,Sk] bool, true = may attend; None when no mask is requested."""
    kinds = [] if c["mask"] == "none" else c["mask"].split("+")
    assert all(k in MASK_KINDS for k in kinds), c["mask"]
    if not kinds:
        return None
    i = torch.arange(Sq).view(1, 1, Sq, 1) + c.get("past", 0)   # positions: N + i in a decoding step
    j = torch.arange(Sk).view(1, 1, 1, Sk)
    mask = torch.ones(B, 1, Sq, Sk, dtype=torch.bool)
    if "causal" in kinds:  # torch.tril's diagonal: 0 upper-left, Sk - Sq lower-right
        diagonal = Sk - Sq if c.get("causal_align") == "lower-right" else 0
        mask = mask & torch.tril(torch.ones(Sq, Sk, dtype=torch.bool), diagonal=diagonal)
    if "padding" in kinds:
        lengths = torch.tensor(c["lengths"]).view(B, 1, 1, 1)
        mask = mask & (j < lengths)
    if "window" in kinds:
        mask = mask & ((i - j).abs() <= c["window"])
    if "random" in kinds:
        torch.manual_seed(c["mask_seed"])
        mask = mask & (torch.rand(B, 1, Sq, Sk) < c["mask_keep"])
    return mask


def draw_linear(given, name, d_in, d_out, bias):
    """nn.Linear(d_in, d_out) from the generator, or the weight and bias of a given params file."""
    if given is None:
        return nn.Linear(d_in, d_out, bias=bias)
    return GivenLinear(given["w_" + name], given["b_" + name] if bias else None)


class GivenLinear:
    """nn.Linear's forward (F.linear) with given weights: constructing one draws nothing."""

    def __init__(self, weight, bias):
        self.weight, self.bias = weight, bias

    def __call__(self, x):
        return torch.nn.functional.linear(x, self.weight, self.bias)


def run(c, given=None):
    """Every stage of one case: {stage: {tensor: torch tensor}}, in CLI.md's order.

    `given` holds tensors read from files ("x", "x_kv", "params" {w_q: ...}, "qkv" (q, k, v),
    "mask" [B,1,Sq,Sk]); a given tensor draws nothing, the rest keep CLI.md's draw order."""
    given = given or {}
    B, Sq, Sk = c["batch"], c["seq"], c["kv_seq"]
    D, H, Din, Dkv = c["d_model"], c["heads"], c["d_in"], c["d_kv_in"]
    dk = D // H
    N, G = c.get("past", 0), c.get("kv_heads", H)
    qkv_given = "qkv" in given
    cross = (N == 0 and Sk != Sq) or Dkv != Din or "x_kv" in given

    torch.manual_seed(c["seed"])
    p = given.get("params")
    if not qkv_given:
        w_q = draw_linear(p, "q", Din, D, c["qkv_bias"])
        w_k = draw_linear(p, "k", Dkv, G * dk, c["qkv_bias"])       # nn.Linear(Dkv, G*dk)
        w_v = draw_linear(p, "v", Dkv, G * dk, c["qkv_bias"])
    w_o = draw_linear(p, "o", D, D, True) if c["out_proj"] else None
    stages = {}
    if qkv_given:
        q, k, v = given["qkv"]
    elif N > 0:  # a decoding step: the whole sequence drawn, queries from its last Sq tokens
        x = given["x"] if "x" in given else torch.randn(B, N + Sq, Din)        # [B,N+Sq,Din]
        stages.update(input_and_params(x, x, False, w_q, w_k, w_v, w_o))
        if c.get("pos") == "sinusoidal":                         # positions 0..N+Sq-1, the cache's too
            pe = sinusoidal_pe(N + Sq, Din)                      # [N+Sq,Din]
            x = x + pe
            stages["positions"] = {"pe": pe, "x": x}
        x_past, x_new = x[:, :N], x[:, N:]
        q, k, v = w_q(x_new), w_k(x_new), w_v(x_new)               # [B,Sq,D], [B,Sq,G*dk], [B,Sq,G*dk]
        past = {"k": w_k(x_past).view(B, N, G, dk).transpose(1, 2),  # [B,G,N,dk]
                "v": w_v(x_past).view(B, N, G, dk).transpose(1, 2)}
        return attend(c, stages, q, k, v, w_o, given.get("mask"), past)
    else:
        x = given["x"] if "x" in given else torch.randn(B, Sq, Din)                # [B,Sq,Din]
        if cross:
            x_kv = given["x_kv"] if "x_kv" in given else torch.randn(B, Sk, Dkv)  # [B,Sk,Dkv]
        else:
            x_kv = x
        stages.update(input_and_params(x, x_kv, cross, w_q, w_k, w_v, w_o))
        if c.get("pos") == "sinusoidal":
            pe = sinusoidal_pe(Sq, Din)                          # [Sq,Din]
            x = x + pe                                           # [B,Sq,Din]
            stages["positions"] = {"pe": pe, "x": x}
            if cross:
                pe_kv = sinusoidal_pe(Sk, Dkv)                   # the keys' own positions, from 0
                x_kv = x_kv + pe_kv
                stages["positions"].update({"pe_kv": pe_kv, "x_kv": x_kv})
            else:
                x_kv = x
        q, k, v = w_q(x), w_k(x_kv), w_v(x_kv)                   # [B,Sq,D], [B,Sk,D], [B,Sk,D]
    return attend(c, stages, q, k, v, w_o, given.get("mask"))


def sinusoidal_pe(max_len, d_model):
    """The Annotated Transformer's PositionalEncoding table [max_len, d_model]."""
    pe = torch.zeros(max_len, d_model)
    position = torch.arange(0, max_len).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def rotate_half(x):
    """Hugging Face's Llama: the two halves of the last axis, (-x2, x1)."""
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    """GPT-J: the pairs (2i, 2i+1) of the last axis, (-x[2i+1], x[2i])."""
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def rope(c, q, k, first=0):
    """Hugging Face's LlamaRotaryEmbedding + apply_rotary_pos_emb (interleaved: GPT-J's
    repeat_interleave and rotate_every_two), positions first..first+S-1."""
    dk = q.shape[-1]
    base = c.get("rope_base", 10000.0)
    inv_freq = 1.0 / (base ** (torch.arange(0, dk, 2).float() / dk))
    t = torch.arange(first, first + q.shape[2]).float()
    freqs = torch.outer(t, inv_freq)                             # [S,dk/2]
    if c.get("rope_style", "half") == "interleaved":
        emb, rot = freqs.repeat_interleave(2, dim=-1), rotate_every_two
    else:
        emb, rot = torch.cat((freqs, freqs), dim=-1), rotate_half
    cos, sin = emb.cos(), emb.sin()                              # [S,dk]
    return cos, sin, q * cos + rot(q) * sin, k * cos + rot(k) * sin


def get_slopes(n):
    """Press et al.'s ALiBi slopes (github.com/ofirpress/attention_with_linear_biases)."""
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (get_slopes_power_of_2(closest_power_of_2)
            + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2])


def alibi_bias(H, Sq, Sk, first=0):
    """bias [1,H,Sq,Sk] = -m_h·(i - j), i and j absolute positions, as slopes·(j - i)."""
    slopes = torch.Tensor(get_slopes(H))                         # [H] float32
    i = torch.arange(first, first + Sq).unsqueeze(1)
    j = torch.arange(0, Sk).unsqueeze(0)
    distance = (j - i).float()                                   # [Sq,Sk]
    return (slopes.view(H, 1, 1) * distance).unsqueeze(0)


def input_and_params(x, x_kv, cross, w_q, w_k, w_v, w_o):
    stages = {}
    stages["input"] = {"x": x, **({"x_kv": x_kv} if cross else {})}
    params = {}
    for n, layer in (("q", w_q), ("k", w_k), ("v", w_v), ("o", w_o)):
        if layer is None:
            continue
        params["w_" + n] = layer.weight                          # [out, in]
        if layer.bias is not None:
            params["b_" + n] = layer.bias
    stages["params"] = params

    return stages


def attend(c, stages, q, k, v, w_o, mask_file, past=None):
    """Stages 3-15 from the projections; with `past` ({"k", "v"} [B,G,N,dk]) a decoding step."""
    B, Sq, Sk = c["batch"], c["seq"], c["kv_seq"]
    D, H = c["d_model"], c["heads"]
    dk = D // H
    G = c.get("kv_heads", H)
    S_new = k.shape[1]                                           # Sk, or the Sq new tokens of a step
    stages["projections"] = {"q": q, "k": k, "v": v}
    q = q.view(B, Sq, H, dk)                                     # [B,Sq,H,dk]
    k = k.view(B, S_new, G, dk)                                  # [B,S,G,dk]
    v = v.view(B, S_new, G, dk)
    stages["view"] = {"q": q, "k": k, "v": v}
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # [B,H,S,dk], [B,G,S,dk]
    stages["transpose"] = {"q": q, "k": k, "v": v}
    if c.get("pos") == "rope":
        N = past["k"].shape[2] if past is not None else 0        # the queries and new keys at N..N+Sq-1
        cos, sin, q, k = rope(c, q, k, first=N)                  # q [B,H,Sq,dk], k [B,G,S_new,dk]
        stages["rope"] = {"cos": cos, "sin": sin, "q": q, "k": k}
        if past is not None:                                     # a model's cache keeps its keys rotated
            past = dict(past, k=rope(c, past["k"], past["k"], first=0)[3])
    if past is not None:
        stages["cache"] = dict(past)                             # [B,G,N,dk]
        k = torch.cat((past["k"], k), dim=2)                     # [B,G,N+Sq,dk]
        v = torch.cat((past["v"], v), dim=2)
        stages["append"] = {"k": k, "v": v}
    if G < H:
        k = k.repeat_interleave(H // G, dim=1)                   # [B,H,Sk,dk]
        v = v.repeat_interleave(H // G, dim=1)
        stages["repeat_kv"] = {"k": k, "v": v}

    scores = q @ k.transpose(-2, -1)                             # [B,H,Sq,Sk]
    stages["scores"] = {"scores": scores}
    scaled = scores / math.sqrt(dk)
    stages["scaled"] = {"scaled": scaled}
    if c.get("pos") == "alibi":
        bias = alibi_bias(H, Sq, Sk, first=Sk - Sq if past is not None else 0)  # [1,H,Sq,Sk], queries at N..
        scaled = scaled + bias
        stages["alibi"] = {"bias": bias}
        stages["biased"] = {"biased": scaled}

    mask = build_mask(c, B, Sq, Sk)                              # [B,1,Sq,Sk]
    if mask_file is not None:
        mask = mask_file if mask is None else mask & mask_file
    masked = scaled
    if mask is not None:
        fill = float("-inf") if c["fill"] == "-inf" else float(c["fill"])
        masked = scaled.masked_fill(~mask, fill)
        stages["mask"] = {"mask": mask}
        stages["masked"] = {"masked": masked}

    weights = torch.softmax(masked, dim=-1)                      # [B,H,Sq,Sk]
    if c.get("safe_softmax", False):
        # torch._safe_softmax (F.scaled_dot_product_attention, PyTorch 2.5+): a row of -inf only
        # gets 0 weights (attn refuses --safe-softmax with a finite fill, which leaves none)
        empty = (masked == float("-inf")).all(dim=-1, keepdim=True)  # [B,H,Sq,1]
        weights = weights.masked_fill(empty, 0.0)
    stages["softmax"] = {"weights": weights}
    p = c.get("dropout", 0.0)
    if c.get("train", False) and p > 0:
        # nn.Dropout's own formula (aten _dropout_impl: noise.bernoulli_(1 - p); noise.div_(1 - p);
        # input * noise) with the keep mask drawn reproducibly instead of by bernoulli_
        torch.manual_seed(c["dropout_seed"])
        keep = torch.rand(B, H, Sq, Sk) < 1 - p
        if p == 1:  # aten: input * zeros (no 0/0)
            weights = weights * torch.zeros(())
        else:
            weights = weights * keep.float().div_(1 - p)
        stages["dropout"] = {"weights": weights, "keep": keep}
    context = weights @ v                                        # [B,H,Sq,dk]
    stages["context"] = {"context": context}
    merge = context.transpose(1, 2)                              # [B,Sq,H,dk]
    stages["merge"] = {"context": merge}
    concat = merge.reshape(B, Sq, D)                             # [B,Sq,D]
    stages["concat"] = {"concat": concat}
    if w_o is not None:
        stages["output"] = {"out": w_o(concat)}                  # [B,Sq,D]
    return stages, mask


# ----------------------------------------------------------------------------
# writing


def json_value(v):
    if isinstance(v, bool):
        return v
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def tensor_json(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bool:
        data = [bool(b) for b in t.flatten().tolist()]
    else:
        assert t.dtype == torch.float32, t.dtype
        data = [json_value(f) for f in t.flatten().tolist()]  # float32 -> exact double
    return {"shape": list(t.shape), "data": data}


def config_json(c):
    kinds = [] if c["mask"] == "none" else c["mask"].split("+")
    out = {k: c[k] for k in ("batch", "seq", "kv_seq", "d_model", "heads", "d_in", "d_kv_in",
                             "qkv_bias", "out_proj", "seed", "mask")}
    if c.get("causal_align", "upper-left") != "upper-left":
        out["causal_align"] = c["causal_align"]
    if "padding" in kinds:
        out["lengths"] = c["lengths"]
    if "window" in kinds:
        out["window"] = c["window"]
    if "random" in kinds:
        out["mask_seed"] = c["mask_seed"]
        out["mask_keep"] = c["mask_keep"]
    out["fill"] = c["fill"]
    if c.get("safe_softmax", False):
        out["safe_softmax"] = True
    if c.get("past", 0):
        out["past"] = c["past"]
    if c.get("kv_heads", c["heads"]) != c["heads"]:
        out["kv_heads"] = c["kv_heads"]
    if "pos" in c:
        out["pos"] = c["pos"]
        out["rope_base"] = c.get("rope_base", 10000.0)
        out["rope_style"] = c.get("rope_style", "half")
    if "dropout" in c:
        out["dropout"] = c["dropout"]
        out["train"] = c["train"]
        out["dropout_seed"] = c.get("dropout_seed", 0)
    return out


def dumps(obj):
    """Compact JSON, one tensor per line, so diffs stay readable."""
    d = lambda o: json.dumps(o, separators=(",", ":"), allow_nan=False)
    lines = ["{" + d("name") + ":" + d(obj["name"]) + ",",
             d("config") + ":" + d(obj["config"]) + ",",
             d("made_with") + ":" + d(obj["made_with"]) + ",",
             d("stages") + ":{"]
    stage_items = list(obj["stages"].items())
    for si, (sname, tensors) in enumerate(stage_items):
        lines.append(" " + d(sname) + ":{")
        items = list(tensors.items())
        for ti, (tname, t) in enumerate(items):
            lines.append("  " + d(tname) + ":" + d(t) + ("," if ti + 1 < len(items) else ""))
        lines.append(" }" + ("," if si + 1 < len(stage_items) else ""))
    lines.append("}}")
    return "\n".join(lines) + "\n"


def cpu_capability():
    m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    return m.group(1) if m else "unknown"


def check_case(name, c, stages, mask):
    """The fixtures must show what their names promise."""
    if "fully_masked" in name:
        rows_empty = ~mask.any(dim=-1)                           # [B,1,Sq]
        assert rows_empty.any() and not rows_empty.all(), name + ": want some fully masked rows"
        has_nan = stages["softmax"]["weights"].isnan().any().item()
        assert has_nan == (c["fill"] == "-inf" and not c.get("safe_softmax", False)), name
    if c.get("safe_softmax", False):
        w = stages["softmax"]["weights"]
        empty = ~mask.any(dim=-1)                                  # [B,1,Sq]
        assert (w.sum(dim=-1)[empty.expand(-1, w.shape[1], -1)] == 0).all(), name
        assert ("fully_masked" in name) == bool(empty.any()), name
    if c.get("past", 0):  # a step's rows are the last rows of the full causal pass over N + Sq tokens
        N, Sq = c["past"], c["seq"]
        full = dict(c, seq=N + Sq, kv_seq=N + Sq, past=0, causal_align="upper-left")
        if "padding" in c["mask"]:
            full["mask"] = c["mask"]  # the lengths count all N + Sq keys either way
        whole, _ = run(full)
        for stage, tensor in (("context", "context"), ("concat", "concat")):
            step_rows = stages[stage][tensor]
            full_rows = whole[stage][tensor][..., N:, :] if stage == "context" else whole[stage][tensor][:, N:]
            same = torch.equal(step_rows, full_rows)
            diff = (step_rows - full_rows).abs().max().item()
            assert diff <= 1e-6, (name, stage, diff)
            print("  %s: %s rows %s the full causal pass's last %d (max |diff| %.3g)" % (
                name, stage, "bit-equal to" if same else "within 1e-6 of", Sq, diff))
    n_x = stages["input"]["x"].numel()
    if name == "randn_small_n8":
        assert n_x == 8, n_x
    if name == "randn_cache_carry_cross":
        assert n_x % 2 == 1 and stages["input"]["x_kv"].numel() < 16
    if name == "randn_tail":
        assert n_x >= 16 and n_x % 16 != 0 and stages["input"]["x_kv"].numel() % 16 != 0


def openblas_corename():
    """The kernel OpenBLAS runs in this process: openblas_get_corename() of the library torch
    loaded (found in /proc/self/maps, so it is torch's and not another copy)."""
    with open("/proc/self/maps") as fh:
        libs = sorted({line.split()[-1] for line in fh if "libopenblas" in line.split()[-1]})
    if len(libs) != 1:
        sys.exit("make_fixtures.py: torch should use one OpenBLAS library, it maps %s" % (libs or "none"))
    get = ctypes.CDLL(libs[0]).openblas_get_corename
    get.restype = ctypes.c_char_p
    return get().decode()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one-kernel":
        write_one_kernel(sys.argv[2])  # a subprocess of the run below
        return
    if len(sys.argv) != 1:
        sys.exit("usage: /usr/bin/python3 tests/reference/make_fixtures.py")
    unrunnable = []  # kernels this CPU cannot run (AVX-512 ones on an AVX2 machine)
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in KERNELS:
            env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-kernel",
                                os.path.join(tmp, kernel)], env=env, capture_output=True, text=True)
            # SIGILL (no such instructions here) or OpenBLAS running another kernel instead
            if r.returncode in (-4, 132, CANNOT_RUN_HERE) and kernel != KERNELS[0]:
                print("OpenBLAS kernel %s cannot run on this CPU; its committed set is kept, and the "
                      "files made anew are listed in openblas/not_made.txt" % kernel)
                unrunnable.append(kernel)
                continue
            if r.returncode != 0 or kernel == KERNELS[0]:
                sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
            if r.returncode != 0:
                sys.exit("make_fixtures.py: the run with OPENBLAS_CORETYPE=%s failed" % kernel)
        install(tmp, unrunnable)


def write_one_kernel(root):
    """Every output of this script, for the OpenBLAS kernel OPENBLAS_CORETYPE names, under root."""
    cap = cpu_capability()
    if cap not in ("AVX2", "AVX512"):
        sys.exit("make_fixtures.py: torch uses the %s kernel; the fixtures need AVX2 "
                 "(torch-rng.md, section 7)" % cap)
    want, core = os.environ.get("OPENBLAS_CORETYPE"), openblas_corename()
    if core != want:  # OpenBLAS falls back to the CPU's own kernel on a name it cannot run
        sys.stderr.write("make_fixtures.py: OPENBLAS_CORETYPE=%s, but OpenBLAS runs %s\n" % (want, core))
        sys.exit(CANNOT_RUN_HERE)
    print("OpenBLAS kernel %s (openblas_get_corename)" % core)
    torch.set_num_threads(1)
    write_fixtures(root, cap)
    write_file_cases(root, cap)
    write_printed_cases(root)
    write_softmax_rows(root)


def write_fixtures(root, cap):
    out_dir = os.path.join(root, "fixtures")
    os.makedirs(out_dir, exist_ok=True)
    names = [n for n, _ in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    total = 0
    with torch.no_grad():
        for name, c in CASES:
            assert c["d_model"] % c["heads"] == 0, name
            stages, mask = run(c)
            check_case(name, c, stages, mask)
            obj = {"name": name, "config": config_json(c),
                   "made_with": {"torch": torch.__version__, "cpu_capability": cap},
                   "stages": {s: {t: tensor_json(v) for t, v in ts.items()}
                              for s, ts in stages.items()}}
            text = dumps(obj)
            json.loads(text)  # well-formed
            with open(os.path.join(out_dir, name + ".json"), "w") as fh:
                fh.write(text)
            total += len(text)
            print("%-36s %8d bytes" % (name + ".json", len(text)))
    print("%d fixtures, %d bytes in fixtures/" % (len(CASES), total))


# ----------------------------------------------------------------------------
# the sets, one per distinct content


def kernel_files(root):
    """The outputs that depend on the kernel (every stage from the projections on), relative."""
    rel = ["fixtures/" + f for f in os.listdir(os.path.join(root, "fixtures"))]
    rel += ["file_inputs/%s/expected.json" % d for d in os.listdir(os.path.join(root, "file_inputs"))]
    rel += ["torch_text/" + f for f in os.listdir(os.path.join(root, "torch_text"))]
    return sorted(rel)


def read(root, rel):
    with open(os.path.join(root, rel), "rb") as fh:
        return fh.read()


def check_inputs_equal(kernel, rel, mine, main):
    """Only GEMM-derived stages may differ: the inputs and params of a fixture may not."""
    if not rel.endswith(".json"):
        return
    a, b = json.loads(mine), json.loads(main)
    for stage in ("input", "params"):
        assert a["stages"].get(stage) == b["stages"].get(stage), (kernel, rel, stage)
    assert {k: v for k, v in a.items() if k != "stages"} == {k: v for k, v in b.items() if k != "stages"}


def committed_sets():
    """{kernel: set} of the committed openblas/kernels.txt, and its not_made.txt lines."""
    kernel_set, not_made = {}, set()
    if os.path.exists(os.path.join(KERNEL_DIR, "kernels.txt")):
        with open(os.path.join(KERNEL_DIR, "kernels.txt")) as fh:
            for line in fh:
                if line.strip() and not line.startswith("#"):
                    k, name = line.split()
                    kernel_set[k] = name
    if os.path.exists(os.path.join(KERNEL_DIR, "not_made.txt")):
        with open(os.path.join(KERNEL_DIR, "not_made.txt")) as fh:
            not_made = {tuple(line.split()) for line in fh if line.strip() and not line.startswith("#")}
    return kernel_set, not_made


def install(tmp, unrunnable=()):
    """The main kernel's outputs in place; for every other kernel the files that differ from
    them, once per distinct content, in openblas/<Set>/; openblas/kernels.txt. A kernel this CPU
    cannot run keeps its committed set; the files whose main bits changed or are new have no
    overlay of it, and openblas/not_made.txt lists them ("<Set> <path>"): the tests check them to
    the tolerance only under that kernel."""
    main_root = os.path.join(tmp, KERNELS[0])
    files = kernel_files(main_root)
    old_sets, old_not_made = committed_sets()
    kept = {}  # (set, rel) -> bytes: the committed overlays of the sets no kernel here can remake
    not_made = set()
    for kernel in unrunnable:
        name = old_sets.get(kernel)
        if name is None:
            sys.exit("make_fixtures.py: kernel %s cannot run here and has no committed set" % kernel)
        for rel in files:
            committed = os.path.join(HERE, rel)
            same_main = os.path.exists(committed) and read(HERE, rel) == read(main_root, rel)
            overlay = os.path.join(KERNEL_DIR, name, rel)
            if same_main and (name, rel) not in old_not_made:
                if os.path.exists(overlay):
                    kept[(name, rel)] = read(os.path.join(KERNEL_DIR, name), rel)
            else:
                not_made.add((name, rel))
    sets = {}        # content (the differing files) -> set name, its first kernel
    kernel_set = {}  # kernel -> set name
    for kernel in unrunnable:
        kernel_set[kernel] = old_sets[kernel]
    for kernel in KERNELS:
        if kernel in unrunnable:
            continue
        root = os.path.join(tmp, kernel)
        assert kernel_files(root) == files, kernel
        assert read(root, "softmax_rows.json") == read(main_root, "softmax_rows.json"), kernel
        differ = tuple((rel, read(root, rel)) for rel in files if read(root, rel) != read(main_root, rel))
        for rel, data in differ:
            check_inputs_equal(kernel, rel, data, read(main_root, rel))
        kernel_set[kernel] = sets.setdefault(differ, kernel)

    for d in ("fixtures", "file_inputs", "torch_text"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
        shutil.copytree(os.path.join(main_root, d), os.path.join(HERE, d))
    shutil.copy(os.path.join(main_root, "softmax_rows.json"), HERE)
    shutil.rmtree(KERNEL_DIR, ignore_errors=True)
    os.makedirs(KERNEL_DIR)
    for differ, name in sets.items():
        for rel, data in differ:
            path = os.path.join(KERNEL_DIR, name, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(data)
        print("set %-12s %-40s %3d of %d files differ from %s, %7d bytes" % (
            name, " ".join(k for k in KERNELS if kernel_set[k] == name), len(differ), len(files),
            KERNELS[0], sum(len(data) for _, data in differ)))
    for (name, rel), data in kept.items():
        path = os.path.join(KERNEL_DIR, name, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
    if not_made:
        with open(os.path.join(KERNEL_DIR, "not_made.txt"), "w") as fh:
            fh.write("# <Set> <path>: files make_fixtures.py could not make for that set (its kernels do not\n"
                     "# run on the CPU it ran on); the tests check them to the tolerance only under it.\n")
            fh.writelines("%s %s\n" % nr for nr in sorted(not_made))
        print("%d files not made for the sets %s (openblas/not_made.txt)" % (
            len(not_made), " ".join(sorted({n for n, _ in not_made}))))
    with open(os.path.join(KERNEL_DIR, "kernels.txt"), "w") as fh:
        fh.write("# OpenBLAS kernel (openblas_get_corename()) and its fixture set; written by\n"
                 "# make_fixtures.py. Set %s is tests/reference/{fixtures,file_inputs,torch_text};\n"
                 "# set S is those with openblas/S/<path> in place of <path> where that exists.\n"
                 % KERNELS[0])
        fh.writelines("%s %s\n" % (k, kernel_set[k]) for k in KERNELS)


def write_softmax_rows(root):
    """softmax_rows.json: torch.softmax of rows of many widths (under and over the 8 lanes of
    an AVX2 vector, with a tail or not), small and large spreads, -inf entries, all -inf."""
    g = torch.Generator().manual_seed(7)
    cases = []
    for width in list(range(1, 21)) + [23, 31, 32, 33, 64, 100, 257]:
        for scale in (0.01, 1.0, 8.0, 60.0):
            x = torch.randn(3, width, generator=g) * scale
            if width > 1:
                x[1, torch.rand(width, generator=g) < 0.4] = float("-inf")
                x[1, 0] = 0.5
                x[2] = float("-inf") if scale == 60.0 else x[2]
            y = torch.softmax(x, dim=-1)
            cases.append({"width": width, "scale": scale, "x": tensor_json(x), "softmax": tensor_json(y)})
    with open(os.path.join(root, "softmax_rows.json"), "w") as fh:
        fh.write("[\n" + ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases) + "\n]\n")
    print("softmax_rows.json: %d cases" % len(cases))


# What `print(t)` shows for every tensor of a few whole runs, as `attn trace --format torch`
# must print them: torch_text/<case>.txt, each tensor under "# stage.tensor".
PRINTED_CASES = ("notebook_000_seed24", "fill_neg1e9_fully_masked_padding", "cross_d_kv_in")


def write_printed_cases(root):
    text_dir = os.path.join(root, "torch_text")
    os.makedirs(text_dir, exist_ok=True)
    with torch.no_grad():
        for name, c in CASES:
            if name not in PRINTED_CASES:
                continue
            stages, _ = run(c)
            lines = []
            for sname, tensors in stages.items():
                for tname, t in tensors.items():
                    lines.append("# %s.%s\n%s\n" % (sname, tname, t.detach()))
            with open(os.path.join(text_dir, name + ".txt"), "w") as fh:
                fh.write("".join(lines))
            print("%-36s printed" % name)


def write_file_cases(root, cap):
    with torch.no_grad():
        for name, c, given, files, *size_flags in file_cases():
            case_dir = os.path.join(root, "file_inputs", name)
            os.makedirs(case_dir)
            for flag, (file_name, value, how) in files.items():
                write_given_file(os.path.join(case_dir, file_name), value, how)
            stages, _ = run(c, given)
            obj = {"name": name, "config": config_json(c),
                   "made_with": {"torch": torch.__version__, "cpu_capability": cap},
                   "stages": {s: {t: tensor_json(v) for t, v in ts.items()}
                              for s, ts in stages.items()}}
            text = dumps(obj)
            files_line = json.dumps({flag: f for flag, (f, _, _) in files.items()})
            flags_line = json.dumps(size_flags[0] if size_flags else {})
            text = text.replace('"made_with":', '"files":' + files_line + ',\n"size_flags":' + flags_line +
                                ',\n"made_with":', 1)
            json.loads(text)
            with open(os.path.join(case_dir, "expected.json"), "w") as fh:
                fh.write(text)
            print("%-36s %s" % (name, ", ".join(sorted(os.listdir(case_dir)))))


if __name__ == "__main__":
    main()
