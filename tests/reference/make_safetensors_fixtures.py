"""Small .safetensors files for attn's reader, with the float32 values PyTorch makes of them.

Run it with Debian's Python, which has numpy and torch (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_safetensors_fixtures.py     # from the repository root

It rewrites tests/reference/safetensors/, next to this script. The output is committed, so
the C++ tests (tests/io/test_safetensors.cpp) and tests/cli/safetensors.sh never need Python.
The safetensors package is not installed here, so the files are written by hand as its
README specifies: an 8-byte little-endian header size N, N bytes of JSON (padded with
spaces to a multiple of 8, as the safetensors package pads), then the tensors' bytes,
which cover the data buffer exactly. The output is the same on every run.

The files:
  dtypes.safetensors      f32 [2,4] F32, f16 [2,4] F16, bf16 [2,4] BF16 and f64 [4] F64 with
                          the values whose float32 conversion is delicate (NaN, ±inf, -0, F16
                          and BF16 subnormals, 65504, F64 past FLT_MAX), scalar [] F32, empty
                          [0,3] F32, and two dtypes attn does not read: mask [3] BOOL, ids [2] I64;
                          __metadata__ {"format": "pt"}. The header lists them by name, the data
                          holds them in another order.
  dtypes_expected.npz     each readable tensor as PyTorch converts it, tensor.float()
  params.safetensors      attn's own weights w_q b_q ... w_o b_o (F32) of torch.manual_seed(0)
                          and nn.Linear(8, 8) for q, k, v, o
  params.npz              the same weights, np.savez
  params_f16.safetensors  the same weights as F16, named as attn's dumps name them: params.w_q ...
  params_f16.npz          those F16 weights as float32 (tensor.half().float()), np.savez
"""

import json
import os
import struct
import sys
import zipfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_io_fixtures import pinned_zip_dates  # noqa: E402

OUT = os.path.join(HERE, "safetensors")

DTYPE_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float64: "F64",
    torch.bool: "BOOL",
    torch.int64: "I64",
}


def path(name):
    return os.path.join(OUT, name)


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:  # NumPy has no bfloat16: its bits as int16
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def write_safetensors(name, tensors, data_order=None, metadata=None):
    """tensors: {name: torch tensor}; the header lists them as given, the data in data_order."""
    order = data_order or list(tensors)
    header, data = {}, b""
    for key in order:
        raw = tensor_bytes(tensors[key])
        header[key] = {"dtype": DTYPE_NAMES[tensors[key].dtype], "shape": list(tensors[key].shape),
                       "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    listed = {}
    if metadata is not None:
        listed["__metadata__"] = metadata
    for key in tensors:
        listed[key] = header[key]
    text = json.dumps(listed, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path(name), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(path(name))
    nan, inf = float("nan"), float("inf")

    dtypes = {
        "bf16": torch.tensor([[1.0, -2.5, 3.0e38, 1e-40], [inf, nan, -0.0, -inf]]).bfloat16(),
        "empty": torch.zeros(0, 3),
        "f16": torch.tensor([[1.0, -0.5, 65504.0, 2.0**-24], [inf, nan, -0.0, 1023 * 2.0**-24]]).half(),
        "f32": torch.tensor([[0.0, 1.5, -0.0, 1e-45], [nan, inf, -inf, 3.4028234663852886e38]]),
        "f64": torch.tensor([0.1, -1e39, 1e-50, 3.4028235677973366e38], dtype=torch.float64),
        "ids": torch.tensor([464, 2068], dtype=torch.int64),
        "mask": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
    }
    assert torch.isinf(dtypes["f64"].float()).tolist() == [False, True, False, True]
    write_safetensors("dtypes.safetensors", dtypes, metadata={"format": "pt"},
                      data_order=["mask", "f64", "scalar", "f32", "bf16", "ids", "empty", "f16"])

    torch.manual_seed(0)
    params = {}
    for p in "qkvo":
        layer = nn.Linear(8, 8)
        params["w_" + p] = layer.weight.detach()
        params["b_" + p] = layer.bias.detach()
    write_safetensors("params.safetensors", params)
    write_safetensors("params_f16.safetensors", {"params." + k: v.half() for k, v in params.items()})

    real_time = pinned_zip_dates()
    try:
        np.savez(path("dtypes_expected.npz"),
                 **{k: v.float().numpy() for k, v in dtypes.items() if k not in ("mask", "ids")})
        np.savez(path("params.npz"), **{k: v.numpy() for k, v in params.items()})
        np.savez(path("params_f16.npz"), **{k: v.half().float().numpy() for k, v in params.items()})
    finally:
        zipfile.time.time = real_time

    print("wrote", len(os.listdir(OUT)), "files to", OUT)


if __name__ == "__main__":
    main()
