#!/usr/bin/python3
"""Write generator_vectors.json: PyTorch's own numbers for tests/test_generator.cpp.

Run with Debian's PyTorch 1.13 on an AVX2/AVX512 CPU (randn >= 16 and uniform_ differ on
the no-AVX kernel), e.g. `/usr/bin/python3 make_generator_vectors.py`.
The file is a JSON list of cases. Each case is {seed, calls, bits}: torch.manual_seed(seed), then the calls in order, and
bits = the uint32 pattern of every float32 the calls produced, in order (for "linear":
the weight row-major, then the bias). See share/attn/doc/torch-rng.md.

Call forms:
  {"op": "randn", "n": N}               torch.randn(N)
  {"op": "rand", "n": N}                torch.rand(N)
  {"op": "uniform", "n": N, "a": A, "b": B}   torch.empty(N).uniform_(A, B)
  {"op": "linear", "in": I, "out": O, "bias": true|false}   torch.nn.Linear(I, O, bias)
  {"op": "skip", "n": N}                N u32 draws that produce no values (torch.rand(N), dropped)
"""
import json
import os
import sys

import torch


def float_bits(t):
    """The uint32 bit patterns of a float32 tensor, row-major."""
    return [v & 0xFFFFFFFF for v in t.detach().contiguous().view(torch.int32).flatten().tolist()]


def run(call):
    op = call["op"]
    if op == "randn":
        return float_bits(torch.randn(call["n"]))
    if op == "rand":
        return float_bits(torch.rand(call["n"]))
    if op == "uniform":
        return float_bits(torch.empty(call["n"]).uniform_(call["a"], call["b"]))
    if op == "skip":
        torch.rand(call["n"])  # one u32 per element (torch-rng.md 3)
        return []
    if op == "linear":
        layer = torch.nn.Linear(call["in"], call["out"], bias=call["bias"])
        bits = float_bits(layer.weight)
        if layer.bias is not None:
            bits += float_bits(layer.bias)
        return bits
    raise ValueError(op)


def randn(n):
    return {"op": "randn", "n": n}


def rand(n):
    return {"op": "rand", "n": n}


def uniform(n, a, b):
    return {"op": "uniform", "n": n, "a": a, "b": b}


def skip(n):
    return {"op": "skip", "n": n}


def linear(i, o, bias=True):
    return {"op": "linear", "in": i, "out": o, "bias": bias}


def cases():
    seeds = [0, 1, 24, 42, 123, 2**31 + 5, 2**64 - 1]
    out = []
    # randn sizes 1..40 (both paths, every tail length), spread over the seeds.
    for n in range(1, 41):
        out.append((seeds[n % len(seeds)], [randn(n)]))
    # Larger randn, including a tail across the first MT twist (4097 + 16 draws > 624).
    for n, seed in [(64, 0), (100, 42), (1000, 123), (4097, 2**31 + 5), (1000, 2**64 - 1)]:
        out.append((seed, [randn(n)]))
    # rand and uniform_ with non-trivial bounds.
    out.append((1, [rand(700)]))
    out.append((24, [uniform(50, -0.37, 0.37), uniform(50, -3.0, 5.5), uniform(10, 0.0, 0.0)]))
    # span = f32(f32(b) - f32(a)), not f32(b - a): they differ for these bounds.
    out.append((5, [uniform(40, 0.1, 0.3), uniform(40, 0.3, 0.7)]))
    # Linear shapes (weight, then bias).
    for seed, (i, o, b) in [(0, (8, 8, True)), (0, (3, 2, True)), (1, (16, 2, False)),
                            (42, (7, 5, True)), (123, (1, 1, True)), (24, (100, 3, True)),
                            (2**64 - 1, (5, 7, False))]:
        out.append((seed, [linear(i, o, b)]))
    # Multi-call sequences: the normal cache across calls and across other ops.
    out.append((0, [randn(1), randn(1), randn(1)]))
    out.append((42, [randn(3), rand(5), randn(1), randn(20), randn(1)]))
    out.append((0, [linear(8, 8), linear(8, 8), linear(8, 8), randn(80)]))
    out.append((0, [linear(16, 2, False)] * 3 + [linear(2, 2)]))
    out.append((123, [linear(8, 8), randn(2 * 4 * 8), randn(5), linear(8, 16), randn(7), randn(15)]))
    out.append((2**31 + 5, [randn(17), linear(3, 2), randn(33), rand(3), randn(9), randn(16)]))
    out.append((1, [randn(15), randn(16), randn(1), randn(31), randn(32), randn(33)]))
    # Single randn blocks of seed 0's stream (skip 16*k words, then randn(16)) where
    # one fused step of the AVX2 transform (torch-rng.md 5.3) changes a bit when
    # computed unfused: rare, so found by comparing 2^22 values of torch.randn.
    for start in [208,        # LOG: fma(y, z, e*Q1)
                  17168,      # SINCOS: sin-poly second step
                  17376,      # LOG: last Horner step
                  136624,     # SINCOS: cos-poly second step
                  1037648,    # SINCOS: sin-poly first step
                  2642704]:   # SINCOS: cos-poly first step
        out.append((0, [skip(start), randn(16)]))
    # Two steps matter for only a handful of the 2^24 possible inputs (found by an
    # exhaustive sweep of the transform); these blocks of seed 0 contain one.
    out.append((0, [skip(11684640), randn(16)]))  # SINCOS: third reduction step, u2 word 0xC00000
    out.append((0, [skip(11790384), randn(16)]))  # LOG: first Horner step, u1 word 4681109
    return out


def main():
    capability = torch.__config__.show()
    if "CPU capability usage: AVX2" not in capability and "CPU capability usage: AVX512" not in capability:
        sys.exit("need torch's AVX2/AVX512 kernel (check ATEN_CPU_CAPABILITY)")
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "generator_vectors.json")
    result = []
    for seed, calls in cases():
        torch.manual_seed(seed)
        bits = []
        for call in calls:
            bits += run(call)
        result.append({"seed": seed, "calls": calls, "bits": bits})
    with open(path, "w") as f:
        json.dump(result, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(result)} cases, {sum(len(c['bits']) for c in result)} values",
          file=sys.stderr)


if __name__ == "__main__":
    main()
