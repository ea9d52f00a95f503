#!/usr/bin/env bash
# Every stage into one .npz, checked against a few lines of NumPy.
#
# --format npz writes one array per tensor, named stage.tensor
# ("softmax.weights"), plus "config" (the run's settings as JSON text), so
# numpy.load gives a grader or a notebook every intermediate at once.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

attn trace --seed 3 --batch 2 --seq 5 --heads 4 --mask causal --format npz --out "$work/trace.npz"

python3 - "$work/trace.npz" <<'PY'
import json, sys
import numpy as np

t = np.load(sys.argv[1])
config = json.loads(str(t["config"]))
print("config:", {k: config[k] for k in ("batch", "seq", "d_model", "heads", "mask")})
for name in t.files[:4]:
    print("%-18s %s" % (name, t[name].shape))
print("... %d arrays in all" % len(t.files))

# scaled = Q·Kᵀ/√dk, masked, softmax and weights·V, recomputed in NumPy
q, k, v = t["transpose.q"], t["transpose.k"], t["transpose.v"]        # [B,H,S,dk]
scaled = q @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1])              # [B,H,Sq,Sk]
masked = np.where(t["mask.mask"], scaled, -np.inf)                  # mask [B,1,Sq,Sk] broadcasts
e = np.exp(masked - masked.max(axis=-1, keepdims=True))
weights = e / e.sum(axis=-1, keepdims=True)
context = weights @ v                                               # [B,H,Sq,dk]
for name, mine in (("scaled.scaled", scaled), ("softmax.weights", weights), ("context.context", context)):
    ok = np.allclose(t[name], mine, atol=1e-6)
    print("%-16s equals NumPy's: %s" % (name, ok))
    assert ok
PY
