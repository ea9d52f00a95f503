"""The sample answers of examples/classroom.sh: a class's answers to exercise 7
(causal-weights: the causal attention weights of two heads from their q and k), some
right and some with the common mistakes, each computed in PyTorch from the tensors
that student was handed.

Run with Debian's Python, which has torch 1.13, from the repository root:

    for s in alice bob carol dave erin frank grace ivan; do
      build/attn exercise show 7 --student $s --out /tmp/class/$s
    done
    /usr/bin/python3 tests/reference/make_class_answers.py /tmp/class examples/classroom/answers

It reads CLASS/<student>/q.npy and k.npy ([B,H,S,dk] = [1,2,4,4]) and writes
OUT/<student>/answer.npy ([1,2,4,4] float32). The output is committed, so the example
and CI need no torch. henry hands in nothing (the grader reports that too).

  alice, bob  right: softmax((q @ kᵀ) / √dk masked by tril with -inf, dim=-1)
  carol       softmax over the query axis (dim=-2), seed notebook 001's slip     softmax_axis
  dave        no / √dk                                                          missing_scale
  erin        the mask's polarity flipped: masked_fill(mask == 1, -inf)          mask_inverted
  frank       / √D (the model width 8) instead of / √dk                         wrong_scale
  grace       K·Qᵀ instead of Q·Kᵀ                                              q_k_swapped
  ivan        right, but saved with torch.save instead of np.save           (unreadable)
"""

import math
import os
import sys

import numpy as np
import torch

D_MODEL = 8  # exercise 7: d_model 8, heads 2, so dk = 4

MISTAKES = {
    "alice": None,
    "bob": None,
    "carol": "softmax_axis",
    "dave": "missing_scale",
    "erin": "mask_inverted",
    "frank": "wrong_scale",
    "grace": "q_k_swapped",
    "ivan": "torch_save",
}


def weights(q, k, mistake):
    """Seed notebook 000's steps, with `mistake` made."""
    dk = q.shape[-1]
    scores = k @ q.transpose(-2, -1) if mistake == "q_k_swapped" else q @ k.transpose(-2, -1)  # [B,H,S,S]
    if mistake == "wrong_scale":
        scores = scores / math.sqrt(D_MODEL)
    elif mistake != "missing_scale":
        scores = scores / math.sqrt(dk)
    mask = torch.tril(torch.ones(q.shape[-2], k.shape[-2]))  # 1 = may attend
    scores = scores.masked_fill(mask == 1 if mistake == "mask_inverted" else mask == 0, float("-inf"))
    return torch.softmax(scores, dim=-2 if mistake == "softmax_axis" else -1)


def main():
    class_dir, out_dir = sys.argv[1], sys.argv[2]
    for student, mistake in MISTAKES.items():
        q = torch.from_numpy(np.load(os.path.join(class_dir, student, "q.npy")))
        k = torch.from_numpy(np.load(os.path.join(class_dir, student, "k.npy")))
        os.makedirs(os.path.join(out_dir, student), exist_ok=True)
        path = os.path.join(out_dir, student, "answer.npy")
        if mistake == "torch_save":
            torch.save(weights(q, k, None), path)  # a zip of pickles, not a .npy
        else:
            np.save(path, weights(q, k, mistake).numpy())
        print(student, mistake or "right")


if __name__ == "__main__":
    main()
