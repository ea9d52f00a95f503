"""PyTorch's rope cos and sin at long positions, beside make_position_fixtures.py (whose runs stop at S 24).

    /usr/bin/python3 tests/reference/make_rope_long_fixtures.py      # from the repository root

Hugging Face's Llama (half: emb = cat((freqs, freqs), -1)) and GPT-J (interleaved:
freqs.repeat_interleave(2, -1)) at positions 0..2047, base 10000, for dk 6, 8 and 16:

    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, dk, 2).float() / dk))
    freqs = torch.outer(torch.arange(S).float(), inv_freq)             # [S,dk/2]
    cos, sin = emb.cos(), emb.sin()                                    # [S,dk]

Past 125 radians SLEEF's Sleef_cosf8_u10 / Sleef_sinf8_u10 take their slow path for all 8 lanes
of a vector, so an element's last bit depends on the 7 beside it in emb: these catch a cos/sin
taken over another layout ([S,dk/2] instead of [S,dk]: rope.sin[124,0] at dk 8). One thread
(torch splits an elementwise op among its threads in chunks of numel/threads elements, and a
chunk that does not start at a multiple of 8 groups the lanes otherwise). Rope uses no BLAS: one
set serves every OpenBLAS kernel. Writes rope_long/rope_<style>_dk<dk>.npz (cos, sin).
"""

import os
import re
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "rope_long")
S = 2048


def main():
    m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    if not m or m.group(1) not in ("AVX2", "AVX512"):
        sys.exit("make_rope_long_fixtures.py: torch's cos and sin must be its AVX2 kernel's (SLEEF)")
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    for style in ("half", "interleaved"):
        for dk in (6, 8, 16):
            inv_freq = 1.0 / (10000.0 ** (torch.arange(0, dk, 2).float() / dk))
            freqs = torch.outer(torch.arange(S).float(), inv_freq)
            emb = torch.cat((freqs, freqs), -1) if style == "half" else freqs.repeat_interleave(2, -1)
            np.savez_compressed(os.path.join(OUT, "rope_%s_dk%d.npz" % (style, dk)),
                                cos=emb.cos().numpy(), sin=emb.sin().numpy())


if __name__ == "__main__":
    main()
