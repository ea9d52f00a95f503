"""PyTorch's print of the parts --batch-index, --head and --row select: the reference for
`attn trace --format torch` with a view (tests/cli/views.sh).

Run it with Debian's Python, which has torch 1.13 (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_view_print.py       # from the repository root

It reads the PyTorch fixture of seed notebook 000 (fixtures/notebook_000_seed24.json, written
by make_fixtures.py: every stage as PyTorch computed it), once per OpenBLAS kernel set, and
prints with torch itself, for each case below, every tensor of the run cut as the case's
flags cut it, under "# stage.tensor[i:i+1, ...]": PyTorch's own indexing, written out.

The rule (CLI.md's names and shapes, not attn's code):
    --batch-index I   t[I:I+1] on the batch axis of every tensor that has one;
    --head H          the head axis, except the mask [B,1,Sq,Sk], broadcast over the heads;
    --row Q           the query axis: "query" of the [B,H,Sq,Sk] planes, and the query-side
                      sequence of x, q, context, concat and out (k and v, whose sequence is
                      the keys', stay whole).

Writes views/torch_text/<case>.txt with the main set's (Haswell) numbers, and
views/openblas/<Set>/<case>.txt only where a set's print differs (sets: openblas/kernels.txt).
The output is committed, so the tests never need torch.
"""

import json
import os
import shutil

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = "fixtures/notebook_000_seed24.json"
OUT = os.path.join(HERE, "views")

# The cases: a name and the view flags (the run is seed notebook 000's, tests/cli/views.sh).
CASES = [
    ("head_1", {"head": 1}),
    ("batch_1_head_2", {"batch": 1, "head": 2}),
    ("batch_0_head_3_row_4", {"batch": 0, "head": 3, "row": 4}),
    ("row_2", {"row": 2}),
]

# Axis names of every tensor (CLI.md's shapes): "row" marks the query-side sequence axis.
DIMS = {
    "input.x": ["batch", "row", "d_in"],
    "projections.q": ["batch", "row", "d_model"],
    "projections.k": ["batch", "kv_seq", "d_model"],
    "projections.v": ["batch", "kv_seq", "d_model"],
    "view.q": ["batch", "row", "head", "head_dim"],
    "view.k": ["batch", "kv_seq", "head", "head_dim"],
    "view.v": ["batch", "kv_seq", "head", "head_dim"],
    "transpose.q": ["batch", "head", "row", "head_dim"],
    "transpose.k": ["batch", "head", "kv_seq", "head_dim"],
    "transpose.v": ["batch", "head", "kv_seq", "head_dim"],
    "scores.scores": ["batch", "head", "row", "key"],
    "scaled.scaled": ["batch", "head", "row", "key"],
    "mask.mask": ["batch", "broadcast_head", "row", "key"],
    "masked.masked": ["batch", "head", "row", "key"],
    "softmax.weights": ["batch", "head", "row", "key"],
    "context.context": ["batch", "head", "row", "head_dim"],
    "merge.context": ["batch", "row", "head", "head_dim"],
    "concat.concat": ["batch", "row", "d_model"],
    "output.out": ["batch", "row", "d_model"],
}


def load(path):
    with open(path) as fh:
        fixture = json.load(fh)
    tensors = []  # (stage.tensor, torch tensor), in the fixture's stage order
    for stage, ts in fixture["stages"].items():
        for name, t in ts.items():
            data = t["data"]
            if data and isinstance(data[0], bool):
                x = torch.tensor(data, dtype=torch.bool)
            else:
                x = torch.tensor([float(v) for v in data], dtype=torch.float32)
            tensors.append((stage + "." + name, x.view(*t["shape"])))
    return tensors


def cut(name, t, view):
    """t[...] as the view selects it, and the indexing text; (t, "") when nothing is cut."""
    dims = DIMS.get(name, [])
    index, text = [], []
    for axis, dim in enumerate(dims):
        i = view.get(dim)
        index.append(slice(None) if i is None else slice(i, i + 1))
        text.append(":" if i is None else "%d:%d" % (i, i + 1))
    while text and text[-1] == ":":
        text.pop()
        index.pop()
    if not text:
        return t, ""
    return t[tuple(index)], "[" + ", ".join(text) + "]"


def printed(tensors, view):
    out = []
    for name, t in tensors:
        part, text = cut(name, t, view)
        out.append("# %s%s\n%s\n" % (name, text, part))
    return "".join(out)


def kernel_sets():
    """Each set named in openblas/kernels.txt, with the fixture it uses."""
    sets = []
    with open(os.path.join(HERE, "openblas", "kernels.txt")) as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            _, s = line.split()
            if s not in sets:
                sets.append(s)
    return [(s, os.path.join(HERE, "openblas", s, FIXTURE) if os.path.exists(
        os.path.join(HERE, "openblas", s, FIXTURE)) else os.path.join(HERE, FIXTURE)) for s in sets]


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    sets = kernel_sets()
    main_tensors = load(os.path.join(HERE, FIXTURE))
    for case, flags in CASES:
        view = {"batch": flags.get("batch"), "head": flags.get("head"), "row": flags.get("row")}
        main_text = printed(main_tensors, view)
        path = os.path.join(OUT, "torch_text", case + ".txt")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(main_text)
        for s, fixture in sets:
            text = printed(load(fixture), view)
            if text == main_text:
                continue
            path = os.path.join(OUT, "openblas", s, case + ".txt")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(text)
            print("%-24s set %s differs" % (case, s))
        print("%-24s printed" % case)


if __name__ == "__main__":
    main()
