"""PyTorch reference fixtures for attn's flash stage (--flash-block N): the tiled online softmax.

Run it with Debian's Python, which has torch 1.13 (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_flash_fixtures.py      # from the repository root

For each case below it draws the run as make_fixtures.py does (its `run`: nn.Linear for q, k, v,
x = torch.randn, the mask, the exact stages), then runs flash attention's recurrence on the
transposed q, k, v [B,H,S,dk] in float32 torch ops, one block of N keys at a time (`flash` below):

    m = -inf, l = 0, acc = 0                                       # [B,H,Sq], [B,H,Sq], [B,H,Sq,dk]
    for j in range(0, Sk, N):
        s = (q @ k[:, :, j:j+N].transpose(-2, -1)) / math.sqrt(dk)  # [B,H,Sq,n]
        s = s.masked_fill(~mask[..., j:j+N], fill)                  # with a mask
        m_new = torch.maximum(m, s.amax(-1))
        m_safe = torch.where(m_new == -inf, 0, m_new)               # FlashAttention-2: no -inf - -inf
        rescale = torch.exp(m - m_safe)                             # 0 at the first block (m = -inf)
        p = torch.exp(s - m_safe[..., None])
        l = rescale * l + (p[..., 0] + p[..., 1] + ...)             # summed left to right
        acc = rescale[..., None] * acc + p @ v[:, :, j:j+N]
        m = m_new
    context = acc / torch.where(l == 0, 1, l)[..., None]            # a row with no allowed key: 0

and writes tests/reference/flash/<case>.json:

    {"name", "config": make_fixtures.py's config and "flash_block": N,
     "made_with", "max_abs_diff": max |flash context - exact context| over elements where neither
     is NaN (float64), "stages": {"context": {"context": exact}, "flash": {"m", "l", "rescale", "acc",
     "context"}}}

m, l, rescale [B,H,Sq,nb] and acc [B,H,Sq,nb,dk] hold the values after each block. The row sum is
a loop of elementwise adds so that its order is fixed (p.sum(-1) reduces in vector lanes). Every
tensor is compared with attn's to the bit (tests/compute/test_flash.cpp): the block products go
through torch.matmul's bmm as attn's bmm_rows makes them, exp is torch.exp's Sleef expf as attn's,
the rest are single float32 operations in the same order. The flash context against the exact
context is compared with a tolerance instead: the two reorder the sums (max_abs_diff, held to
1e-5 × max(1, max|v|)).

One set of bits per OpenBLAS kernel, as make_fixtures.py: the script runs itself once per kernel
with OPENBLAS_CORETYPE set, writes the Haswell kernel's files to flash/, and for each other kernel
the files that differ to openblas/<Set>/flash/, <Set> being the kernel's set in
openblas/kernels.txt (make_fixtures.py's); a kernel whose files differ from its set's first
kernel's stops the script. A kernel this CPU cannot run (SkylakeX and Cooperlake need AVX-512:
OpenBLAS dies of an illegal instruction, or runs another kernel) is skipped; flash/kernels.txt lists the kernels made, and
for the others the test checks the tolerance only, and says so.
"""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402  (the draws, the exact stages, the writers, the kernels)

OUT = os.path.join(HERE, "flash")
CANNOT_RUN = 3  # the exit status of a kernel run on a CPU that cannot run that kernel


def case(name, flash_block, **kw):
    name, c = mf.case(name, **kw)
    c["flash_block"] = flash_block
    return name, c


CASES = [
    # seed notebook 000's run, causal; Sk = 5 keys in blocks of 2 (the last of 1)
    case("causal_seed24_n2", 2, seed=24, batch=2, seq=5, d_model=8, heads=4, mask="causal"),
    # padding with lengths 3 and 0: batch item 1 has no allowed key at all (flash 0, exact NaN), and
    # batch item 0's second block is fully masked (m stays, rescale 1)
    case("padding_fully_masked_n2", 2, seed=7, batch=2, seq=6, d_model=8, heads=2, mask="padding",
         lengths=[3, 0]),
    # no mask, Sk = 7 not a multiple of N = 3
    case("no_mask_sk7_n3", 3, seed=3, batch=1, seq=7, d_model=8, heads=2),
    # one block holding every key: flash is softmax·V computed as (exp·V) / sum
    case("one_block_causal_n8", 8, seed=5, batch=1, seq=6, d_model=8, heads=2, mask="causal"),
    # cross-attention, 3 queries over 7 keys, padding with the fill -1e9 (finite: no -inf anywhere)
    case("cross_padding_fill_1e9_n4", 4, seed=11, batch=2, seq=3, kv_seq=7, d_model=8, heads=2,
         mask="padding", lengths=[7, 2], fill=-1e9),
    # blocks large enough for BLAS (Sq·N·dk >= 400: bmm's GEMM, not its small loop), causal, 16 keys by 5
    case("blas_causal_sk16_n5", 5, seed=2, batch=1, seq=16, d_model=32, heads=2, mask="causal"),
]


def flash(q, k, v, mask, fill, N):
    """The recurrence above on q [B,H,Sq,dk], k and v [B,H,Sk,dk]; per-block values stacked."""
    B, H, Sq, dk = q.shape
    Sk = k.shape[2]
    inf = float("inf")
    m = torch.full((B, H, Sq), -inf)
    l = torch.zeros(B, H, Sq)
    acc = torch.zeros(B, H, Sq, dk)
    ms, ls, rescales, accs = [], [], [], []
    for j in range(0, Sk, N):
        s = (q @ k[:, :, j:j + N].transpose(-2, -1)) / math.sqrt(dk)   # [B,H,Sq,n]
        if mask is not None:
            s = s.masked_fill(~mask[..., j:j + N], fill)
        m_new = torch.maximum(m, s.amax(-1))                          # [B,H,Sq]
        m_safe = torch.where(m_new == -inf, torch.zeros_like(m_new), m_new)
        rescale = torch.exp(m - m_safe)
        p = torch.exp(s - m_safe[..., None])                          # [B,H,Sq,n]
        row_sum = torch.zeros(B, H, Sq)
        for col in range(p.shape[-1]):
            row_sum = row_sum + p[..., col]
        l = rescale * l + row_sum
        acc = rescale[..., None] * acc + p @ v[:, :, j:j + N]         # [B,H,Sq,dk]
        m = m_new
        ms.append(m)
        ls.append(l)
        rescales.append(rescale)
        accs.append(acc)
    context = acc / torch.where(l == 0, torch.ones_like(l), l)[..., None]
    return {"m": torch.stack(ms, dim=-1), "l": torch.stack(ls, dim=-1),
            "rescale": torch.stack(rescales, dim=-1), "acc": torch.stack(accs, dim=-2),
            "context": context}


def max_abs_diff(a, b):
    keep = ~(a.isnan() | b.isnan())
    if not keep.any():
        return 0.0
    return (a.double() - b.double()).abs()[keep].max().item()


def write_one_kernel(root):
    cap = mf.cpu_capability()
    if cap not in ("AVX2", "AVX512"):
        sys.exit("make_flash_fixtures.py: torch uses the %s kernel; the fixtures need AVX2" % cap)
    want, core = os.environ.get("OPENBLAS_CORETYPE"), mf.openblas_corename()
    if core != want:  # OpenBLAS falls back to the CPU's own kernel on a name it cannot run
        sys.stderr.write("make_flash_fixtures.py: OPENBLAS_CORETYPE=%s, but OpenBLAS runs %s\n" % (want, core))
        sys.exit(CANNOT_RUN)
    torch.set_num_threads(1)
    os.makedirs(os.path.join(root, "flash"))
    with torch.no_grad():
        for name, c in CASES:
            stages, mask = mf.run(c)
            t = stages["transpose"]
            fill = float("-inf") if c["fill"] == "-inf" else float(c["fill"])
            f = flash(t["q"], t["k"], t["v"], mask, fill, c["flash_block"])
            exact = stages["context"]["context"]
            diff = max_abs_diff(f["context"], exact)
            tolerance = 1e-5 * max(1.0, t["v"].abs().max().item())
            assert diff <= tolerance, (name, diff, tolerance)
            if "fully_masked" in name:
                assert exact.isnan().any() and not f["context"].isnan().any(), name
            config = mf.config_json(c)
            config["flash_block"] = c["flash_block"]
            obj = {"name": name, "config": config,
                   "made_with": {"torch": torch.__version__, "cpu_capability": cap},
                   "stages": {"context": {"context": mf.tensor_json(exact)},
                              "flash": {k: mf.tensor_json(v) for k, v in f.items()}}}
            text = mf.dumps(obj).replace('"made_with":', '"max_abs_diff":%s,\n"made_with":' % repr(diff), 1)
            json.loads(text)
            with open(os.path.join(root, "flash", name + ".json"), "w") as fh:
                fh.write(text)
            print("%-32s max_abs_diff %.3g (tolerance %.3g)" % (name, diff, tolerance))


def kernel_sets():
    """openblas/kernels.txt (make_fixtures.py's): kernel -> set."""
    sets = {}
    with open(os.path.join(mf.KERNEL_DIR, "kernels.txt")) as fh:
        for line in fh:
            words = line.split()
            if len(words) == 2 and not line.startswith("#"):
                sets[words[0]] = words[1]
    return sets


def install(tmp, made):
    sets = kernel_sets()
    main = mf.KERNELS[0]
    names = sorted(os.listdir(os.path.join(tmp, main, "flash")))
    contents = {}  # set -> {file: bytes} of its first kernel
    for kernel in made:
        files = {n: mf.read(os.path.join(tmp, kernel), os.path.join("flash", n)) for n in names}
        first = contents.setdefault(sets[kernel], files)
        if first != files:
            sys.exit("make_flash_fixtures.py: kernel %s differs from its set %s; rerun make_fixtures.py"
                     % (kernel, sets[kernel]))
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.copytree(os.path.join(tmp, main, "flash"), OUT)
    for set_name, files in contents.items():
        overlay = os.path.join(mf.KERNEL_DIR, set_name, "flash")
        shutil.rmtree(overlay, ignore_errors=True)
        differ = {n: d for n, d in files.items() if d != contents[sets[main]][n]}
        for n, data in differ.items():
            os.makedirs(overlay, exist_ok=True)
            with open(os.path.join(overlay, n), "wb") as fh:
                fh.write(data)
        print("set %-12s %d of %d flash files differ from %s" % (set_name, len(differ), len(names), main))
    with open(os.path.join(OUT, "kernels.txt"), "w") as fh:
        fh.write("# OpenBLAS kernels whose flash fixtures make_flash_fixtures.py made (their set as in\n"
                 "# openblas/kernels.txt); for another kernel the test checks the tolerance only.\n")
        fh.writelines("%s %s\n" % (k, sets[k]) for k in made)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one-kernel":
        write_one_kernel(sys.argv[2])
        return
    if len(sys.argv) != 1:
        sys.exit("usage: /usr/bin/python3 tests/reference/make_flash_fixtures.py")
    with tempfile.TemporaryDirectory() as tmp:
        made = []
        for kernel in mf.KERNELS:
            env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-kernel",
                                os.path.join(tmp, kernel)], env=env, capture_output=True, text=True)
            if r.returncode in (-signal.SIGILL, CANNOT_RUN) and kernel != mf.KERNELS[0]:
                print("OpenBLAS kernel %s: skipped, this CPU cannot run it" % kernel)
                continue
            if r.returncode != 0 or kernel == mf.KERNELS[0]:
                sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
            if r.returncode != 0:
                sys.exit("make_flash_fixtures.py: the run with OPENBLAS_CORETYPE=%s failed" % kernel)
            made.append(kernel)
        install(tmp, made)


if __name__ == "__main__":
    main()
