"""The PyTorch lines of `attn trace --explain`, run in PyTorch: they must give attn's tensors.

Run with Debian's Python, which has torch 1.13, after building attn:

    /usr/bin/python3 tests/reference/make_explain_torch_lines.py build/attn    # from the repository root

For each run below it asks attn for `--explain --format json`, executes each stage's
`explain.torch` line in stage order (input, whose line is the setup: imports, the sizes B, Sq,
Sk, D, H, dk, the seed, the nn.Linear layers and x; then params, projections, ... dropout,
context, merge, concat, output), with nothing defined beforehand but the mask files, loaded as
`mask_file` / `key_padding_mask`, and compares the
tensor each line makes with the stage's tensor in attn's JSON (within 1e-5; -inf and NaN in
the same places). Only when every run matches does it write
tests/reference/explain_torch_lines.json: the lines so verified. tests/cli/explain.sh
checks that attn still prints exactly these lines, so a changed line has to be run in
PyTorch again. The output is committed; the tests never need torch.
"""

import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.path.join("tests", "reference", "cli")

RUNS = [
    ["--batch", "2", "--seq", "5", "--d-model", "8", "--heads", "4", "--mask", "causal"],
    ["--seed", "3", "--batch", "2", "--seq", "5", "--kv-seq", "6", "--d-kv-in", "12", "--heads", "2",
     "--mask", "causal+padding", "--lengths", "5,3"],
    ["--no-qkv-bias", "--heads", "1", "--mask", "window", "--window", "1", "--fill", "-1e9"],
    ["--heads", "8", "--batch", "3", "--seq", "3", "--mask", "random", "--mask-seed", "2", "--mask-keep", "0.7"],
    ["--no-out-proj", "--heads", "2", "--cross"],
    ["--seq", "5", "--mask-file", os.path.join(CLI, "causal_triu.npy"), "--mask-convention", "mha"],
    ["--seed", "7", "--batch", "2", "--seq", "4", "--key-padding-mask", os.path.join(CLI, "key_padding.npy")],
    ["--seed", "5", "--batch", "2", "--heads", "2", "--mask", "causal", "--dropout", "0.3", "--train",
     "--dropout-seed", "9"],
    ["--seq", "2", "--kv-seq", "5", "--d-in", "6", "--d-kv-in", "10", "--mask", "causal", "--causal-align",
     "lower-right", "--no-out-proj"],
]

ORDER = ["input", "params", "projections", "view", "transpose", "scores", "scaled", "mask", "masked", "softmax",
         "dropout", "context", "merge", "concat", "output"]
# the variable each line sets, and the stage tensor it must equal
MADE = {"input": ("x", "x"), "projections": ("q", "q"), "view": ("k", "k"), "transpose": ("v", "v"),
        "scores": ("scores", "scores"), "scaled": ("scaled", "scaled"), "mask": ("mask", "mask"),
        "masked": ("masked", "masked"), "softmax": ("weights", "weights"),
        "dropout": ("weights", "weights"), "context": ("context", "context"),
        "merge": ("merged", "context"), "concat": ("concat", "concat"), "output": ("out", "out")}


def flag(args, name):
    return args[args.index(name) + 1] if name in args else None


def verify(attn, args):
    doc = json.loads(subprocess.run([attn, "trace", *args, "--explain", "--format", "json"],
                                    capture_output=True, text=True, check=True).stdout)
    c = doc["config"]
    B, Sq, Sk = c["batch"], c["seq"], c["kv_seq"]
    env = {}  # the first line imports torch and sets the sizes
    for name, key in (("--mask-file", "mask_file"), ("--key-padding-mask", "key_padding_mask")):
        if flag(args, name):
            env[key] = torch.from_numpy(np.load(flag(args, name)))
    lines = {}
    with torch.no_grad():
        for stage in ORDER:
            if stage not in doc["stages"]:
                continue
            line = doc["stages"][stage]["explain"]["torch"]
            lines[stage] = line
            exec(line, env)
            if stage not in MADE:
                continue
            variable, tensor = MADE[stage]
            ours = np.array(doc["stages"][stage]["tensors"][tensor]["data"], dtype=np.float64)
            theirs = env[variable]
            if stage == "mask":  # a [Sq,Sk] or [B,1,1,Sk] mask broadcasts to attn's [B,1,Sq,Sk]
                theirs = theirs.expand(B, 1, Sq, Sk)
            theirs = theirs.double().numpy()
            assert ours.shape == theirs.shape, (args, stage, ours.shape, theirs.shape)
            finite = np.isfinite(ours)
            assert (np.isfinite(theirs) == finite).all(), (args, stage)
            assert (np.isnan(theirs) == np.isnan(ours)).all(), (args, stage)
            if finite.any():
                assert np.abs(ours[finite] - theirs[finite]).max() < 1e-5, (args, stage)
    return lines


def main():
    attn = sys.argv[1] if len(sys.argv) > 1 else os.path.join("build", "attn")
    runs = [{"args": args, "torch": verify(attn, args)} for args in RUNS]
    with open(os.path.join(HERE, "explain_torch_lines.json"), "w") as f:
        json.dump({"made_with": {"torch": torch.__version__}, "runs": runs}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(runs)} runs: every line gives attn's tensors")


if __name__ == "__main__":
    main()
