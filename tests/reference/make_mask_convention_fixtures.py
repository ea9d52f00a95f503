"""Fixtures for `attn mask`: one mask in PyTorch's four conventions, checked in torch 1.13.

Run it with Debian's Python, which has torch 1.13, and the attn program just built:

    /usr/bin/python3 tests/reference/make_mask_convention_fixtures.py build/attn   # from the repository root

For each case below it runs `attn mask <flags> --format json` and checks, in torch:

  * the keep-mask attn prints is the one plain torch builds from the same flags (tril with
    the diagonal of the alignment, arange < lengths, |i - j| <= W, torch.rand < P, a file);
  * every printed expression, run after the printed setup, builds exactly the printed data,
    with the printed dtype (bool, or float32 for additive), and the four agree:
    mha == ~keep, sdpa == keep, additive == 0 where keep else the fill;
  * every printed apply line, run on scores [B,H,Sq,Sk] (q·kᵀ/√dk from q, k below), gives the
    same weights as the others in every row that has an allowed key, bit for bit;
  * the printed pass lines do what they say: nn.MultiheadAttention (identity projections, no
    bias, so its q and k are ours) gives the weights of keep within 1e-6 and NaN in the same
    places; F.scaled_dot_product_attention, which torch 1.13 lacks, is applied by hand as
    PyTorch 2.x documents it (a boolean attn_mask: masked_fill(~mask, -inf); a float one: added).

It writes tests/reference/mask_conventions/<case>.json (the flags, the checked output of attn
mask, and the weights of each convention, and those of --safe-softmax (fill -inf only): torch._safe_softmax by
hand, a row with no allowed key gets 0) and the q, k, v (and mask) files they start from.
tests/cli/mask_command.sh compares attn with them: attn mask's JSON exactly, and attn trace
--q --k --v's softmax weights bit for bit. That holds on every machine: with dk = 2 and a few
keys, q·kᵀ and weights·v are products aten computes in its own loop (k·m·n < 400), not BLAS.
"""

import json
import math
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "mask_conventions")
D, H = 4, 2  # --d-model and --heads of every case: dk = 2

# name -> the mask flags (shapes included), as attn mask and attn trace take them.
# "{dir}" is the fixture directory (the CLI test puts its own path there).
CASES = {
    # the issue's example: a causal mask and padding, per batch item
    "causal_padding": ["--mask", "causal+padding", "--lengths", "3,5", "--batch", "2", "--seq", "5"],
    # causal with Sq != Sk: upper-left (torch.tril, SDPA's is_causal) and lower-right (flash-attention)
    "causal_upper_left_sq_lt_sk": ["--mask", "causal", "--seq", "3", "--kv-seq", "5"],
    "causal_lower_right_sq_lt_sk": ["--mask", "causal", "--seq", "3", "--kv-seq", "5",
                                    "--causal-align", "lower-right"],
    # lower-right with Sq > Sk: the first queries have no key (NaN; 0 with --safe-softmax)
    "causal_lower_right_sq_gt_sk": ["--mask", "causal", "--batch", "2", "--seq", "5", "--kv-seq", "3",
                                    "--causal-align", "lower-right"],
    # a finite fill: keep's masked_fill and the additive mask use it, a padded-out row is uniform
    "padding_fill_neg1e9": ["--mask", "padding", "--lengths", "2,0", "--batch", "2", "--seq", "3",
                            "--fill", "-1e9"],
    # comparisons next to & and |, the random draw, a 3-D attn_mask for nn.MultiheadAttention
    "window_random": ["--mask", "window+random", "--window", "1", "--mask-seed", "7", "--mask-keep",
                      "0.7", "--batch", "2", "--seq", "4"],
    # a key-padding mask file (true = padded, nn.MultiheadAttention's convention) with causal
    "causal_key_padding_file": ["--mask", "causal", "--batch", "2", "--seq", "4",
                                "--key-padding-mask", "{dir}/key_padding.npy"],
}
KEY_PADDING = np.array([[False, False, True, True], [False, False, False, False]])  # [B,Sk], true = padded


def flag(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def reference_keep(args, B, Sq, Sk):
    """[B,Sq,Sk] bool, true = may attend, from the flags with plain torch (not attn's output)."""
    kinds = flag(args, "--mask", "none").split("+")
    keep = torch.ones(B, Sq, Sk, dtype=torch.bool)
    i = torch.arange(Sq).view(1, Sq, 1)
    j = torch.arange(Sk).view(1, 1, Sk)
    if "causal" in kinds:
        diagonal = Sk - Sq if flag(args, "--causal-align") == "lower-right" else 0
        keep &= torch.tril(torch.ones(Sq, Sk, dtype=torch.bool), diagonal=diagonal)
    if "padding" in kinds:
        lengths = torch.tensor([int(n) for n in flag(args, "--lengths").split(",")])
        keep &= j < lengths.view(B, 1, 1)
    if "window" in kinds:
        keep &= (i - j).abs() <= int(flag(args, "--window"))
    if "random" in kinds:
        torch.manual_seed(int(flag(args, "--mask-seed", "0")))
        keep &= (torch.rand(B, 1, Sq, Sk) < float(flag(args, "--mask-keep", "0.5"))).view(B, Sq, Sk)
    if "--key-padding-mask" in args:
        keep &= ~torch.from_numpy(KEY_PADDING).view(B, 1, Sk)
    return keep


def data_tensor(convention):
    if convention["dtype"] == "bool":
        return torch.tensor(convention["data"], dtype=torch.bool)
    as_float = np.vectorize(float, otypes=[np.float32])  # float("-inf") is -inf
    return torch.from_numpy(as_float(np.array(convention["data"], dtype=object)))


class MultiheadAttentionShim:
    """nn.MultiheadAttention(D, H, batch_first=True) with identity projections and no bias,
    so that its q, k are the given x, x_kv; calling it returns the per-head weights."""

    def __init__(self, embed_dim, num_heads, batch_first):
        assert batch_first
        self.layer = nn.MultiheadAttention(embed_dim, num_heads, bias=False, batch_first=True)
        with torch.no_grad():
            self.layer.in_proj_weight.copy_(torch.eye(embed_dim).repeat(3, 1))

    def __call__(self, query, key, value, **masks):
        _, weights = self.layer(query, key, value, need_weights=True, average_attn_weights=False, **masks)
        return weights


def sdpa_weights(q, k, v, attn_mask=None, is_causal=False):
    """F.scaled_dot_product_attention's weights as PyTorch 2.x documents them (without the
    safe softmax of 2.5+): a boolean mask is true = may attend, a float mask is added."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    return torch.softmax(scores, dim=-1)


def safe_softmax(masked):
    """torch._safe_softmax, by hand: a row of -inf only gets 0 weights."""
    weights = torch.softmax(masked, dim=-1)
    return weights.masked_fill((masked == float("-inf")).all(dim=-1, keepdim=True), 0.0)


def same_bits(a, b):
    return torch.equal(a.isnan(), b.isnan()) and torch.equal(torch.nan_to_num(a, nan=7.0), torch.nan_to_num(b, nan=7.0))


def tensor_json(t):
    values = ["nan" if math.isnan(v) else ("-inf" if v == float("-inf") else v) for v in t.flatten().tolist()]
    return {"shape": list(t.shape), "data": values}


def make_case(attn, name, args):
    args_here = [a.replace("{dir}", OUT) for a in args]
    run = subprocess.run([attn, "mask", *args_here, "--d-model", str(D), "--heads", str(H), "--format", "json"],
                         capture_output=True, text=True, check=True)
    out = json.loads(run.stdout)
    c = out["config"]
    B, Sq, Sk = c["batch"], c["seq"], c["kv_seq"]
    fill = float("-inf") if c["fill"] == "-inf" else float(c["fill"])
    views = {v["name"]: v for v in out["conventions"]}
    assert list(views) == ["keep", "mha", "sdpa", "additive"], list(views)

    # attn's keep-mask is plain torch's; the others are its complement, itself, 0/fill
    keep = reference_keep(args_here, B, Sq, Sk)                            # [B,Sq,Sk]
    shown = {n: data_tensor(v) for n, v in views.items()}
    full = lambda t: t.expand(B, Sq, Sk) if t.dim() == 2 else t
    assert torch.equal(full(shown["keep"]), keep), name
    assert torch.equal(full(shown["mha"]), ~keep) and torch.equal(full(shown["sdpa"]), keep), name
    assert torch.equal(full(shown["additive"]), torch.zeros(B, Sq, Sk).masked_fill(~keep, fill)), name
    assert out["shape"] == list(shown["keep"].shape), name

    # each expression, after the setup, builds exactly the printed data
    env = {"torch": torch}
    exec(out["setup"], env)
    for n, v in views.items():
        env[n] = eval(v["torch"], env)
        built = env[n]
        assert built.dtype == (torch.bool if v["dtype"] == "bool" else torch.float32), (name, n, built.dtype)
        assert built.shape == shown[n].shape and torch.equal(built, shown[n]), (name, n, built, shown[n])

    # q, k, v [B,S,D]; scores [B,H,Sq,Sk] as a notebook computes them
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    q, k, v = torch.randn(B, Sq, D, generator=g), torch.randn(B, Sk, D, generator=g), torch.randn(B, Sk, D, generator=g)
    dk = D // H
    heads = lambda x: x.view(B, -1, H, dk).transpose(1, 2)               # [B,H,S,dk]
    scores = heads(q) @ heads(k).transpose(-2, -1) / math.sqrt(dk)        # [B,H,Sq,Sk]
    env["scores"] = scores
    weights = {n: eval(views[n]["apply"], env) for n in views}
    has_key = keep.any(dim=-1)[:, None, :, None].expand(B, H, Sq, Sk)    # rows with an allowed key
    for n in views:
        assert same_bits(weights[n][has_key], weights["keep"][has_key]), (name, n)
    masked = scores.masked_fill(~keep[:, None], fill)
    assert same_bits(weights["keep"], torch.softmax(masked, dim=-1)), name
    # attn refuses --safe-softmax with a finite fill, which leaves no row of -inf only
    safe = safe_softmax(masked) if math.isinf(fill) else None

    # the pass lines: nn.MultiheadAttention for real, F.scaled_dot_product_attention by hand
    env.update({"nn": type("nn", (), {"MultiheadAttention": MultiheadAttentionShim}),
                "F": type("F", (), {"scaled_dot_product_attention": staticmethod(sdpa_weights)}),
                "D": D, "H": H, "x": q, "x_kv": k, "q": heads(q), "k": heads(k), "v": heads(v)})
    with torch.no_grad():
        mha_weights = eval(views["mha"]["pass"], env)
    x_kv = k if "x_kv" in views["mha"]["pass"] else q  # self-attention: (x, x, x)
    by_hand = torch.softmax((heads(q) @ heads(x_kv).transpose(-2, -1) / math.sqrt(dk)).masked_fill(
        ~keep[:, None], float("-inf")), dim=-1)
    assert torch.equal(mha_weights.isnan(), by_hand.isnan()), name
    assert torch.allclose(torch.nan_to_num(mha_weights), torch.nan_to_num(by_hand), atol=1e-6), name
    for n in ("sdpa", "additive"):
        call = views[n]["pass"].split(";")[0]
        assert same_bits(eval(call, env), weights[n]), (name, n, call)

    # what attn trace --q --k --v needs, and what its weights must be
    files = {}
    for flag_name, t in (("q", q), ("k", k), ("v", v)):
        files[flag_name] = "%s.%s.npy" % (name, flag_name)
        np.save(os.path.join(OUT, files[flag_name]), t.numpy())
    fixture = {
        "name": name, "args": args, "d_model": D, "heads": H, "files": files,
        "made_with": {"torch": torch.__version__},
        "mask": {key: out[key] for key in ("setup", "shape", "dims")},
        "conventions": [{key: v[key] for key in ("name", "meaning", "torch", "apply", "pass", "dtype", "data")
                         if key in v} for v in out["conventions"]],
        "rows_without_key": out["rows_without_key"],
        "weights": {n: tensor_json(w) for n, w in weights.items()},
    }
    if safe is not None:
        fixture["safe_weights"] = tensor_json(safe)
    with open(os.path.join(OUT, name + ".json"), "w") as fh:
        json.dump(fixture, fh, separators=(",", ":"))
        fh.write("\n")
    print("%-28s %-14s %d rows without a key" % (name, "x".join(map(str, out["shape"])), len(out["rows_without_key"])))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: /usr/bin/python3 tests/reference/make_mask_convention_fixtures.py path/to/attn")
    attn = os.path.abspath(sys.argv[1])
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    np.save(os.path.join(OUT, "key_padding.npy"), KEY_PADDING)
    torch.set_num_threads(1)
    with torch.no_grad():
        for name, args in CASES.items():
            make_case(attn, name, args)


if __name__ == "__main__":
    main()
