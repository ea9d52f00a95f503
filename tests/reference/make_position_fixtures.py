"""PyTorch fixtures for --pos rope|alibi|sinusoidal (issue 23, item 3), beside make_fixtures.py.

    /usr/bin/python3 tests/reference/make_position_fixtures.py      # from the repository root

The stages come from make_fixtures.py's run(), which composes each encoding from torch ops as
its reference code does (see sinusoidal_pe, rope, get_slopes and alibi_bias there):

    rope:       Hugging Face's Llama, inv_freq = 1.0 / (base ** (torch.arange(0, dk, 2).float() / dk)),
                freqs = torch.outer(t, inv_freq), emb = cat((freqs, freqs), -1), q*cos + rotate_half(q)*sin;
                interleaved: GPT-J's repeat_interleave(2) and rotate_every_two
    alibi:      Press et al.'s get_slopes(H); bias = slopes.view(H,1,1) * (j - i).float(); biased = scaled + bias
    sinusoidal: the Annotated Transformer's PositionalEncoding table, added to x (and to x_kv, from
                position 0, in cross-attention)

One set of bits per OpenBLAS kernel, as make_fixtures.py: the script runs itself once per kernel
of make_fixtures.KERNELS with OPENBLAS_CORETYPE set, and writes

    positions/<Set>/<case>.json   one directory per distinct set of bits (<Set> = its first kernel)
    positions/kernels.txt         "<kernel> <Set>" per kernel that ran; "# <kernel> not run: why"

A kernel this CPU cannot run (SkylakeX and Cooperlake need AVX-512: SIGILL, or OpenBLAS runs
another kernel in its place) is left
out and said so in kernels.txt; the C++ test then checks that kernel against the Haswell set
within the tolerance only.

cos and sin: torch 1.13 runs SLEEF's Sleef_cosf8_u10 / Sleef_sinf8_u10 (1-ulp bound), as attn
does on a CPU with AVX2 (lib/src/compute/torch_trig.cpp: the bits are equal). Without AVX2 attn
rounds the double result (half an ulp). The script prints, per case, the largest difference in
ulp between torch's cos/sin (or pe) and the rounded double ones: the tolerance the C++ test
allows on those tensors on such a CPU (tests/compute/test_fixtures.cpp).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402

OUT = os.path.join(HERE, "positions")

CASES = [
    mf.case("pos_rope", seed=40, batch=2, seq=5, d_model=8, heads=2, mask="causal", pos="rope"),
    mf.case("pos_rope_interleaved_base500000", seed=41, batch=1, seq=6, d_model=12, heads=2, pos="rope",
            rope_style="interleaved", rope_base=500000.0),
    mf.case("pos_rope_long", seed=42, batch=1, seq=24, d_model=16, heads=2, mask="causal", pos="rope"),
    mf.case("pos_alibi", seed=43, batch=2, seq=5, d_model=8, heads=4, mask="causal", pos="alibi"),
    mf.case("pos_alibi_6_heads", seed=44, batch=1, seq=4, d_model=12, heads=6, pos="alibi"),
    mf.case("pos_sinusoidal", seed=45, batch=2, seq=5, d_model=8, heads=2, mask="causal", pos="sinusoidal"),
    mf.case("pos_sinusoidal_cross", seed=46, batch=1, seq=3, kv_seq=5, d_model=8, heads=2, d_in=6,
            d_kv_in=10, pos="sinusoidal"),
    # with a decoding step (--past), grouped heads (--kv-heads): positions over all N + Sq tokens
    mf.case("pos_rope_past_3_kv_heads_1", seed=47, batch=2, seq=2, past=3, d_model=8, heads=2, kv_heads=1,
            mask="causal", pos="rope"),
    mf.case("pos_rope_interleaved_past_4_kv_heads_2", seed=48, batch=1, seq=3, past=4, d_model=16, heads=4,
            kv_heads=2, pos="rope", rope_style="interleaved"),
    mf.case("pos_alibi_past_4", seed=49, batch=1, seq=2, past=4, d_model=8, heads=4, mask="causal", pos="alibi"),
    mf.case("pos_sinusoidal_past_2", seed=50, batch=2, seq=3, past=2, d_model=8, heads=2, mask="causal",
            pos="sinusoidal"),
]


def ulps(a, b):
    """The largest distance in units in the last place between two float32 tensors."""
    a = a.detach().contiguous().numpy().astype(np.float32).view(np.int32).astype(np.int64)
    b = b.detach().contiguous().numpy().astype(np.float32).view(np.int32).astype(np.int64)
    a = np.where(a < 0, -(a & 0x7FFFFFFF), a)  # ordered: -0 next to +0
    b = np.where(b < 0, -(b & 0x7FFFFFFF), b)
    return int(np.abs(a - b).max()) if a.size else 0


def rounded(f, x):
    """f of x in double, rounded to float32 (attn's cos and sin)."""
    return torch.from_numpy(f(x.double().numpy()).astype(np.float32))


def trig_ulps(c, stages):
    """{tensor: largest ulp difference} between torch's cos/sin and the rounded double ones."""
    out = {}
    if c.get("pos") == "rope":
        dk = c["d_model"] // c["heads"]
        inv = 1.0 / (c.get("rope_base", 10000.0) ** (torch.arange(0, dk, 2).float() / dk))
        N = c.get("past", 0)                                     # the queries at N..N+Sq-1
        freqs = torch.outer(torch.arange(N, N + c["seq"]).float(), inv)
        emb = (freqs.repeat_interleave(2, -1) if c.get("rope_style") == "interleaved"
               else torch.cat((freqs, freqs), -1))
        out["rope.cos"] = ulps(stages["rope"]["cos"], rounded(np.cos, emb))
        out["rope.sin"] = ulps(stages["rope"]["sin"], rounded(np.sin, emb))
    if c.get("pos") == "sinusoidal":
        for name, S, W in (("pe", c.get("past", 0) + c["seq"], c["d_in"]), ("pe_kv", c["kv_seq"], c["d_kv_in"])):
            if name not in stages["positions"]:
                continue
            div = torch.exp(torch.arange(0, W, 2) * -(np.log(10000.0) / W))
            angle = torch.arange(0, S).unsqueeze(1) * div
            mine = torch.zeros(S, W)
            mine[:, 0::2], mine[:, 1::2] = rounded(np.sin, angle), rounded(np.cos, angle)
            out["positions." + name] = ulps(stages["positions"][name], mine)
    return out


def write_one_kernel(root):
    cap = mf.cpu_capability()
    if cap not in ("AVX2", "AVX512"):
        sys.exit("make_position_fixtures.py: torch uses the %s kernel; the fixtures need AVX2" % cap)
    want, core = os.environ.get("OPENBLAS_CORETYPE"), mf.openblas_corename()
    if core != want:  # OpenBLAS falls back to the CPU's own kernel on a name it cannot run
        sys.stderr.write("make_position_fixtures.py: OPENBLAS_CORETYPE=%s, but OpenBLAS runs %s\n" % (want, core))
        sys.exit(3)
    torch.set_num_threads(1)
    os.makedirs(root)
    with torch.no_grad():
        for name, c in CASES:
            stages, mask = mf.run(c)
            obj = {"name": name, "config": mf.config_json(c),
                   "made_with": {"torch": torch.__version__, "cpu_capability": cap,
                                 "cos_sin_ulps": trig_ulps(c, stages)},
                   "stages": {s: {t: mf.tensor_json(v) for t, v in ts.items()} for s, ts in stages.items()}}
            with open(os.path.join(root, name + ".json"), "w") as fh:
                fh.write(mf.dumps(obj))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one-kernel":
        write_one_kernel(sys.argv[2])
        return
    ran, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for kernel in mf.KERNELS:
            env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-kernel",
                                os.path.join(tmp, kernel)], env=env, capture_output=True, text=True)
            if r.returncode in (-4, 3):  # SIGILL, or OpenBLAS ran another kernel: this CPU cannot run it
                skipped.append(kernel)
                continue
            sys.stderr.write(r.stderr)
            if r.returncode != 0:
                sys.exit("make_position_fixtures.py: the run with OPENBLAS_CORETYPE=%s failed" % kernel)
            ran.append(kernel)
        assert ran and ran[0] == mf.KERNELS[0], "the main kernel must run"
        sets, kernel_set = {}, {}
        for kernel in ran:
            root = os.path.join(tmp, kernel)
            content = tuple((f, open(os.path.join(root, f), "rb").read()) for f in sorted(os.listdir(root)))
            kernel_set[kernel] = sets.setdefault(content, kernel)
        shutil.rmtree(OUT, ignore_errors=True)
        for content, name in sets.items():
            os.makedirs(os.path.join(OUT, name))
            for f, data in content:
                with open(os.path.join(OUT, name, f), "wb") as fh:
                    fh.write(data)
    with open(os.path.join(OUT, "kernels.txt"), "w") as fh:
        fh.write("# OpenBLAS kernel and its set of position fixtures (positions/<Set>/); written by\n"
                 "# make_position_fixtures.py. A kernel not listed is checked within the tolerance only.\n")
        fh.writelines("%s %s\n" % (k, kernel_set[k]) for k in ran)
        fh.writelines("# %s not run: this CPU lacks its instructions (SIGILL, or OpenBLAS ran another kernel)\n"
                      % k for k in skipped)
    for name, c in CASES:
        doc = json.load(open(os.path.join(OUT, mf.KERNELS[0], name + ".json")))
        print("%-34s cos/sin ulps %s" % (name, doc["made_with"]["cos_sin_ulps"] or "-"))
    print("sets:", ", ".join("%s (%s)" % (s, " ".join(k for k in ran if kernel_set[k] == s))
                             for s in dict.fromkeys(kernel_set.values())), "; not run:", " ".join(skipped) or "none")


if __name__ == "__main__":
    main()
