#!/usr/bin/python3
"""rope_scaling/inv_freq.json: rope's inverse frequencies rescaled as Hugging Face's
modeling_rope_utils computes them for config.json's rope_scaling, in torch (float32):
linear (_compute_linear_scaling_rope_parameters: inv_freq /= factor) and llama3
(_compute_llama3_parameters, Llama 3.1 and 3.2). Each value as its float32 bits, so that
tests/compute/test_positions.cpp compares attn's bit for bit. Run with Debian's python3-torch:
    /usr/bin/python3 tests/reference/make_rope_scaling_fixtures.py"""
import json
import math
import os
import struct

import torch


def default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def linear(inv_freq, factor):
    inv_freq = inv_freq.clone()
    inv_freq /= factor
    return inv_freq


def llama3(inv_freq, factor, low_freq_factor, high_freq_factor, old_context_len):
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)


def bits(t):
    return [struct.unpack('<I', struct.pack('<f', float(x)))[0] for x in t.tolist()]


cases = []
for dim in (8, 64, 128):
    for base in (10000.0, 500000.0):
        inv = default_inv_freq(base, dim)
        for factor in (2.0, 8.0, 3.0):
            cases.append({"head_dim": dim, "base": base, "rope_type": "linear", "factor": factor,
                          "inv_freq_bits": bits(linear(inv, factor))})
        # Llama 3.1's own numbers (8192 positions, factor 8; 3.2 uses 32), and a short original
        # context so that small heads have wavelengths in the smoothed middle band
        for factor, low, high, original in ((8.0, 1.0, 4.0, 8192), (32.0, 1.0, 4.0, 8192), (4.0, 1.0, 4.0, 64),
                                            (2.0, 2.0, 8.0, 256)):
            out = llama3(inv, factor, low, high, original)
            cases.append({"head_dim": dim, "base": base, "rope_type": "llama3", "factor": factor,
                          "low_freq_factor": low, "high_freq_factor": high,
                          "original_max_position_embeddings": original, "inv_freq_bits": bits(out)})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "rope_scaling", "inv_freq.json"), "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
    f.write("\n")
print(len(cases), "cases")
