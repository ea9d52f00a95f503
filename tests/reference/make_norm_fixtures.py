"""PyTorch fixtures for attn's LayerNorm and RMSNorm (lib/src/compute/norms.cpp, issue 24).

    /usr/bin/python3 tests/reference/make_norm_fixtures.py      # from the repository root

For each row width W below it draws x [R, W] (rows of several kinds: a plain normal row, one
whose mean is far from 0 (300 ± 1, which stresses the variance), a tiny one whose variance is
near eps, a wide uniform one, one with a few large outliers, a constant one), a weight and a
bias, and one eps per row (1e-5, 1e-6 and 1e-12 in turn), and writes what torch 1.13 computes:

    layer_norm          torch.nn.functional.layer_norm(x, [W], weight, bias, eps)
    layer_norm_no_bias  the same with bias None (aten's scalar loop, not its vector one), W <= 1024
    rms_norm            Hugging Face's LlamaRMSNorm:
                            variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
                            x = x * torch.rsqrt(variance + eps); return weight * x

each row with its own eps, to tests/reference/norms/norms.npz as "w<W>.<name>" (x, weight,
bias, eps [R] and the three outputs), all float32. tests/compute/test_norms.cpp compares attn
with them bit for bit.

Before writing, the script checks that a row's result does not depend on how the rows come:
[R, W] at once, [1, R, W] (the [B, S, D] the model layers give), and each row alone give the
same bits; it stops if not. The fixtures are what torch computes with the kernels it picks
here: Debian's torch 1.13 runs its AVX2 kernels, also on this CPU with AVX-512. The script
then prints how many rows would differ with the other kernels (ATEN_CPU_CAPABILITY=default,
=avx512). Measured on 2026-11-28 (AVX-512 CPU): default, LayerNorm 182 of 185 rows (its output
not fused), RMSNorm none; avx512, LayerNorm none, RMSNorm 46 of 185 (sum() in 16 lanes).
"""

import io
import os
import subprocess
import sys
import zipfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "norms", "norms.npz")

WIDTHS = [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255,
          256, 257, 511, 512, 513, 768, 1000, 1024, 1025, 2560, 4096, 8192]
EPS = [1e-5, 1e-6, 1e-12]


def rows_of(width, gen):
    """x [R, W]: every kind of row for the small widths, fewer for the large ones (the fixture's size)."""
    def normal(scale=1.0):
        return torch.randn(width, generator=gen) * scale

    kinds = [
        normal(),                                                        # N(0, 1)
        normal() + 300.0,                                                # mean far from 0
        normal(1e-3),                                                    # variance near eps
        (torch.rand(width, generator=gen) - 0.5) * 2e4 + 1e4,            # wide, large
        normal() + normal(50.0) * (torch.rand(width, generator=gen) < 0.02),  # a few outliers
        torch.full((width,), 0.7),                                       # constant: variance 0
    ]
    if width > 256:
        kinds = [kinds[k] for k in ((0, 1, 2, 4) if width <= 1024 else (0, 1) if width < 8192 else (1,))]
    return torch.stack(kinds).to(torch.float32).contiguous()


def llama_rms_norm(x, weight, eps):
    variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    return weight * x


def per_row(x, eps_of_row, norm):
    """Row r of norm(x, eps_of_row[r]), after checking that [R, W], [1, R, W] and each row alone agree."""
    out = torch.empty_like(x)
    for eps in sorted(set(eps_of_row)):
        whole = norm(x, eps)
        as_bsd = norm(x.view(1, *x.shape), eps).view(x.shape)
        alone = torch.stack([norm(x[r:r + 1], eps)[0] for r in range(x.shape[0])])
        for other, how in ((as_bsd, "[1, R, W]"), (alone, "each row alone")):
            if not torch.equal(whole.view(torch.int32), other.view(torch.int32)):
                sys.exit(f"width {x.shape[1]} eps {eps}: {how} differs from [R, W]")
        for r, e in enumerate(eps_of_row):
            if e == eps:
                out[r] = whole[r]
    return out


def inputs():
    """x, weight, bias and eps per width, as "w<W>.<name>" numpy arrays."""
    arrays = {}
    for i, width in enumerate(WIDTHS):
        gen = torch.Generator().manual_seed(2400 + width)
        x = rows_of(width, gen)
        name = f"w{width}"
        arrays[f"{name}.x"] = x
        arrays[f"{name}.weight"] = (1.0 + 0.2 * torch.randn(width, generator=gen)).to(torch.float32)
        arrays[f"{name}.bias"] = (0.1 * torch.randn(width, generator=gen)).to(torch.float32)
        arrays[f"{name}.eps"] = torch.tensor([EPS[(r + i) % len(EPS)] for r in range(x.shape[0])])
    return {k: v.numpy() for k, v in arrays.items()}


def outputs(arrays):
    """The three norms of every width's inputs, as torch computes them here."""
    out = {}
    for width in WIDTHS:
        name = f"w{width}"
        x, weight, bias = (torch.from_numpy(arrays[f"{name}.{k}"]) for k in ("x", "weight", "bias"))
        eps = [float(e) for e in arrays[f"{name}.eps"]]
        out[f"{name}.layer_norm"] = per_row(x, eps, lambda t, e: F.layer_norm(t, [width], weight, bias, e))
        if width <= 1024:  # aten's scalar loop: no vectors, no tails; small widths say it all
            out[f"{name}.layer_norm_no_bias"] = per_row(
                x, eps, lambda t, e: F.layer_norm(t, [width], weight, None, e))
        out[f"{name}.rms_norm"] = per_row(x, eps, lambda t, e: llama_rms_norm(t, weight, e))
    return {k: v.numpy() for k, v in out.items()}


def ulps(a, b):
    """|a - b| in units in the last place, as distances between float32 bit patterns."""
    def ordered(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


def compare_with_other_kernels(arrays, capability):
    """Recomputes the outputs under ATEN_CPU_CAPABILITY=capability and counts the rows that differ."""
    tmp = OUT + f".{capability}.npz"
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability)
    subprocess.run([sys.executable, __file__, "--recompute", OUT, tmp], check=True, env=env)
    other = np.load(tmp)
    os.remove(tmp)
    for kind in ("layer_norm", "layer_norm_no_bias", "rms_norm"):
        rows = differ = worst = 0
        apart = 0.0
        for width in WIDTHS:
            if f"w{width}.{kind}" not in arrays:
                continue
            a, b = arrays[f"w{width}.{kind}"], other[f"w{width}.{kind}"]
            d = ulps(a, b).max(axis=1)
            rows += len(d)
            differ += int((d > 0).sum())
            worst = max(worst, int(d.max()))
            apart = max(apart, float(np.abs(a.astype(np.float64) - b).max()))
        print(f"{kind}: {capability} kernels against these: {differ} of {rows} rows differ, at most {worst} ulp"
              f" (near 0, where ulps are tiny), at most {apart:.3g} apart")


def save_npz(path, arrays):
    """np.savez's archive (stored .npy members), dated 1980-01-01 so that equal arrays give an equal file."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue())


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--recompute":  # the outputs of another file's inputs
        given = dict(np.load(sys.argv[2]))
        save_npz(sys.argv[3], outputs(given))
        return
    capability = [line.strip() for line in torch.__config__.show().splitlines() if "CPU capability" in line]
    print("torch", torch.__version__, *capability)
    arrays = inputs()
    arrays.update(outputs(arrays))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    save_npz(OUT, arrays)
    print(f"wrote {OUT}: {len(arrays)} arrays, {os.path.getsize(OUT)} bytes;"
          " [R, W], [1, R, W] and rows alone agree for every width")
    for capability in ("default", "avx512"):  # avx512: the AVX2 kernels again on a CPU without AVX-512
        compare_with_other_kernels(arrays, capability)


if __name__ == "__main__":
    main()
