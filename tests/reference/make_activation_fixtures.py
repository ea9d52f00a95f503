"""PyTorch fixtures for attn's MLP activations (lib/src/compute/activations.cpp, issue 38).

    /usr/bin/python3 tests/reference/make_activation_fixtures.py      # from the repository root

The three activations of the models attn opens, as torch 1.13 computes them on the CPU:

    gelu_new   GPT-2's (Hugging Face's NewGELUActivation, the tanh approximation, composed of
               separate float32 ops): 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
               * (x + 0.044715 * torch.pow(x, 3.0))))
    gelu       BERT's, torch.nn.functional.gelu(x) (exact, with erf)
    silu       Llama's, torch.nn.functional.silu(x) = x * sigmoid(x)

For each count n below it draws x [n] (normal values of several scales, and a few special
ones: 0, -0, ±1e-30, ±10, ±30, ±100) and writes x and the three outputs to
tests/reference/activations/activations.npz as "n<n>.<name>", float32, torch on one thread.
Counts that are not a multiple of 16 reach aten's scalar tail (std::exp for silu's last
n % 16 elements); "t2n<n>" are the same computed with torch.set_num_threads(2), where silu
splits a tensor of more than 32768 elements into two chunks, each with its own scalar tail: the
last element of the first chunk is one whose scalar and vector results differ. (torch's gelu
goes to oneDNN's eltwise_gelu_erf, which computes every element alike.)
tests/compute/test_activations.cpp compares attn with them bit for bit.
"""

import math
import os

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "activations", "activations.npz")
COUNTS = [1, 7, 8, 15, 16, 17, 31, 33, 100, 1000, 4099]
THREADED = [20001, 40001]


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def draw(n, g):
    x = torch.randn(n, generator=g) * torch.tensor([0.1, 1.0, 3.0, 8.0])[torch.arange(n) % 4]
    special = torch.tensor([0.0, -0.0, 1e-30, -1e-30, 10.0, -10.0, 30.0, -30.0, 100.0, -100.0])
    k = min(n, len(special))
    x[n - k:] = special[:k]  # at the end: the scalar tail meets them too
    return x.to(torch.float32)


def scalar_differs(g):
    """A value whose silu aten's scalar op (one element: glibc's expf) and vector op (16
    elements: SLEEF's) give different bits, so that a fixture can tell the chunks apart."""
    while True:
        v = (torch.randn(1, generator=g) * 3).to(torch.float32)
        if F.silu(v)[0].item() != F.silu(v.repeat(16))[0].item():
            return v[0]


def outputs(x):
    return {"gelu_new": gelu_new(x), "gelu": F.gelu(x), "silu": F.silu(x)}


def main():
    g = torch.Generator().manual_seed(38)
    members = {}
    torch.set_num_threads(1)
    for n in COUNTS:
        x = draw(n, g)
        members[f"n{n}.x"] = x.numpy()
        for name, y in outputs(x).items():
            members[f"n{n}.{name}"] = y.numpy()
    torch.set_num_threads(2)
    for n in THREADED:
        x = draw(n, g)
        x[(n + 1) // 2 - 1] = scalar_differs(g)  # silu's first chunk's scalar tail on two threads
        members[f"t2n{n}.x"] = x.numpy()
        for name, y in outputs(x).items():
            members[f"t2n{n}.{name}"] = y.numpy()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    np.savez(OUT, **members)
    print(f"wrote {OUT}: {len(members)} members")


if __name__ == "__main__":
    main()
