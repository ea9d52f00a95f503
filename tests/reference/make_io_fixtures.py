"""Small files that NumPy, PyTorch and Python's json write, for attn's file readers.

Run it with Debian's Python, which has numpy and torch (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_io_fixtures.py          # from the repository root

It rewrites tests/reference/io/, next to this script. The output is committed, so the C++
tests (tests/test_tensor_file.cpp, test_npy.cpp, test_npz.cpp) never need Python: rerun
this only when a case changes. The output is the same on every run (zip dates are pinned
to 1980-01-01).

The files, by what they test:
  .npy of every dtype attn reads    f4 f8 f2 b1 i1 i2 i4 i8 u1 u2 u4 u8 (values whose float32
                                    conversion is known: nan, inf, 2**63 - 1, 16777217, ...),
                                    scalar (0-d), many_axes (15 axes, a 192-byte header),
                                    v2 and v3 (header versions 2.0 and 3.0)
  .npy attn refuses                 fortran, big_endian, complex, object, unicode,
                                    truncated_header (no data), truncated_half (half the data)
  the same tensor in JSON and .npy  x.json / x.npy: torch.randn(2, 3, 4) after torch.manual_seed(0)
  JSON as json.dump writes it       nonfinite.json (bare NaN, Infinity, -Infinity), mask.json (booleans)
  .npz                              params.npz (np.savez), params_compressed.npz (np.savez_compressed)
                                    and params.json ({name: tensor.tolist()}): torch.manual_seed(0),
                                    then nn.Linear(8, 8) for q, k, v, o; params_truncated.npz (cut in
                                    half), not_zip.npz (text), npy_named.npz (an .npy), bad_member.npz
                                    (w_k is complex), numpy_written.npz (float32, bool and a 0-d
                                    string "config", as attn writes them), text.npy (np.save of a str)
"""

import json
import os
import time
import zipfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "io")


def path(name):
    return os.path.join(OUT, name)


def save(name, array, version=None):
    with open(path(name), "wb") as f:
        if version is None:
            np.save(f, array)
        else:
            np.lib.format.write_array(f, array, version=version)


def save_json(name, value):
    with open(path(name), "w") as f:
        json.dump(value, f)


def pinned_zip_dates():
    """np.savez dates members with time.localtime(time.time()): pin it to 1980-01-01."""
    real = time.time
    zipfile.time.time = lambda: 315532800.0 + time.timezone
    return real


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(path(name))
    nan, inf = float("nan"), float("inf")

    # --- .npy of every dtype attn reads, with values whose float32 conversion is known
    save("f4.npy", np.array([[0.0, 1.5, -2.25], [nan, inf, -inf]], dtype="<f4"))
    # 0.1 -> 0.1f; -1e39 -> -inf; 1e-50 -> 0; FLT_MAX stays; the halfway point to 2**128 -> inf
    f8 = np.array([0.1, -1e39, 1e-50, 3.4028234663852886e38, 3.4028235677973366e38, nan], dtype="<f8")
    with np.errstate(over="ignore"):
        assert list(np.isinf(f8.astype(np.float32))) == [False, True, False, False, True, False]
    save("f8.npy", f8)
    save("f2.npy", np.array([1.0, -0.5, 65504.0, inf, nan, 2.0**-24, -0.0], dtype="<f2"))
    save("b1.npy", np.array([[True, False, True], [False, False, True]]))
    save("i1.npy", np.array([-128, 127, 0], dtype="|i1"))
    save("i2.npy", np.array([-32768, 32767, 1], dtype="<i2"))
    save("i4.npy", np.array([-2147483648, 2147483647, 16777217], dtype="<i4"))
    save("i8.npy", np.array([-2**63, 2**63 - 1, 16777217], dtype="<i8"))
    save("u1.npy", np.array([0, 255, 7], dtype="|u1"))
    save("u2.npy", np.array([0, 65535, 7], dtype="<u2"))
    save("u4.npy", np.array([0, 4294967295, 7], dtype="<u4"))
    save("u8.npy", np.array([0, 2**64 - 1, 7], dtype="<u8"))
    save("scalar.npy", np.array(2.5, dtype="<f4"))
    # 15 axes: NumPy's 21 spare header bytes (for growing axis 0) push the data to offset 192
    save("many_axes.npy", np.full((1,) * 15, 7.0, dtype="<f4"))
    two_by_three = np.arange(6, dtype="<f4").reshape(2, 3)
    save("v2.npy", two_by_three, version=(2, 0))
    save("v3.npy", two_by_three, version=(3, 0))

    # --- .npy attn refuses
    save("fortran.npy", np.asfortranarray(two_by_three))
    save("big_endian.npy", two_by_three.astype(">f4"))
    save("complex.npy", np.array([1 + 2j], dtype="<c8"))
    save("object.npy", np.array([1, "a"], dtype=object))
    save("unicode.npy", np.array(["ab", "c"]))
    with open(path("f4.npy"), "rb") as f:
        whole = f.read()
    header = len(whole) - 6 * 4  # f4.npy holds 6 float32
    with open(path("truncated_header.npy"), "wb") as f:
        f.write(whole[:header])
    with open(path("truncated_half.npy"), "wb") as f:
        f.write(whole[: header + 12])

    # --- the same tensor as JSON and .npy; JSON as json.dump writes it
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4)
    save("x.npy", x.numpy())
    save_json("x.json", x.tolist())
    save_json("nonfinite.json", torch.tensor([[1.0, nan], [inf, -inf]]).tolist())
    save_json("mask.json", torch.tril(torch.ones(3, 3)).bool().tolist())

    # --- .npz: nn.Linear weights as a notebook makes them
    torch.manual_seed(0)
    params = {}
    for p in "qkvo":
        layer = nn.Linear(8, 8)
        params["w_" + p] = layer.weight.detach().numpy()
        params["b_" + p] = layer.bias.detach().numpy()
    real_time = pinned_zip_dates()
    try:
        np.savez(path("params.npz"), **params)
        np.savez_compressed(path("params_compressed.npz"), **params)
        np.savez(path("bad_member.npz"), w_q=params["w_q"], w_k=params["w_k"].astype(np.complex64))
        config = json.dumps({"format": "attn.trace/1", "heads": 2, "note": "café ≤ 𝑥"}, ensure_ascii=False)
        np.savez(path("numpy_written.npz"), **{
            "softmax.weights": np.array([[0.25, 0.75, 1.0], [0.5, nan, -inf]], dtype="<f4"),
            "mask": np.array([[True, False], [True, True]]),
            "config": np.array(config),
        })
    finally:
        zipfile.time.time = real_time
    save("text.npy", np.array(config))
    save_json("params.json", {k: v.tolist() for k, v in params.items()})
    with open(path("params.npz"), "rb") as f:
        whole = f.read()
    with open(path("params_truncated.npz"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    with open(path("not_zip.npz"), "w") as f:
        f.write("this is not a zip archive\n")
    with open(path("f4.npy"), "rb") as src, open(path("npy_named.npz"), "wb") as dst:
        dst.write(src.read())

    print("wrote", len(os.listdir(OUT)), "files to", OUT)


if __name__ == "__main__":
    main()
