"""PyTorch's side of bench/run.py: the stages attn traces, computed with PyTorch eager.

  torch_stages.py print            the seed-000 notebook's stages, printed (a whole process)
  torch_stages.py npz B S D H OUT  every stage at these sizes, causal, saved with numpy.savez;
                                   prints {"seconds": compute + save, "bytes": of the arrays}
  torch_stages.py json B S D H     the softmax weights at these sizes as json.dumps(t.tolist());
                                   prints {"seconds": tolist + dumps, "bytes": of the text}

Run with Debian's /usr/bin/python3 and python3-torch, with the threads bench/run.py gives
(BENCH_THREADS, torch.set_num_threads).
"""
import json
import math
import os
import sys
import time

import numpy as np
import torch
from torch import nn

torch.set_num_threads(int(os.environ.get("BENCH_THREADS", os.cpu_count())))


def stages(B, S, D, H, seed, causal=True, out_proj=True):
    """Every stage as attn names them (stage.tensor), from torch.manual_seed(seed)."""
    dk = D // H
    torch.manual_seed(seed)
    w_q, w_k, w_v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)
    w_o = nn.Linear(D, D) if out_proj else None
    with torch.no_grad():
        x = torch.randn(B, S, D)
        t = {"input.x": x}
        for name, lin in (("q", w_q), ("k", w_k), ("v", w_v), ("o", w_o)):
            if lin is not None:
                t["params.w_" + name], t["params.b_" + name] = lin.weight, lin.bias
        q, k, v = w_q(x), w_k(x), w_v(x)                           # [B,S,D]
        t.update({"projections.q": q, "projections.k": k, "projections.v": v})
        qv, kv, vv = (a.view(B, S, H, dk) for a in (q, k, v))      # [B,S,H,dk]
        t.update({"view.q": qv, "view.k": kv, "view.v": vv})
        qt, kt, vt = (a.transpose(1, 2) for a in (qv, kv, vv))     # [B,H,S,dk]
        t.update({"transpose.q": qt, "transpose.k": kt, "transpose.v": vt})
        scores = qt @ kt.transpose(-2, -1)                         # [B,H,S,S]
        scaled = scores / math.sqrt(dk)
        t.update({"scores.scores": scores, "scaled.scaled": scaled})
        last = scaled
        if causal:
            mask = torch.ones(S, S, dtype=torch.bool).tril().view(1, 1, S, S)
            last = scaled.masked_fill(~mask, float("-inf"))
            t.update({"mask.mask": mask, "masked.masked": last})
        weights = torch.softmax(last, dim=-1)
        context = weights @ vt                                     # [B,H,S,dk]
        merge = context.transpose(1, 2)                            # [B,S,H,dk]
        concat = merge.reshape(B, S, D)
        t.update({"softmax.weights": weights, "context.context": context, "merge.context": merge,
                  "concat.concat": concat})
        if w_o is not None:
            t["output.out"] = w_o(concat)
    return t


def main():
    mode = sys.argv[1]
    if mode == "print":  # seed notebook 000: seed 24, B2 S5 D8 H4, causal, no output projection
        for name, tensor in stages(2, 5, 8, 4, seed=24, out_proj=False).items():
            print("#", name)
            print(tensor)
    elif mode == "npz":
        B, S, D, H = (int(a) for a in sys.argv[2:6])
        start = time.perf_counter()
        t = stages(B, S, D, H, seed=0)
        arrays = {name: a.detach().numpy() for name, a in t.items()}
        np.savez(sys.argv[6], **arrays)
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "bytes": sum(a.nbytes for a in arrays.values())}))
    elif mode == "json":
        B, S, D, H = (int(a) for a in sys.argv[2:6])
        weights = stages(B, S, D, H, seed=0)["softmax.weights"]
        start = time.perf_counter()
        text = json.dumps(weights.tolist())
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "bytes": len(text)}))
    else:
        sys.exit("usage: torch_stages.py print | npz B S D H OUT | json B S D H")


if __name__ == "__main__":
    main()
