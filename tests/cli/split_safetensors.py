#!/usr/bin/python3
"""split_safetensors.py MODEL.safetensors OUT_DIR N: Hugging Face's sharded layout made from
one file, with the standard library only: the tensors in N shards of about equal size
(model-0000i-of-0000N.safetensors, each a valid .safetensors) and model.safetensors.index.json
naming each tensor's shard, as save_pretrained(max_shard_size=...) writes them."""
import json
import os
import struct
import sys

source, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(source, "rb") as f:
    size = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(size))
    data = f.read()
header.pop("__metadata__", None)
names = sorted(header, key=lambda k: header[k]["data_offsets"][0])
os.makedirs(out, exist_ok=True)
weight_map = {}
for i in range(n):
    part = names[i * len(names) // n:(i + 1) * len(names) // n]
    file = "model-%05d-of-%05d.safetensors" % (i + 1, n)
    shard_header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in part:
        begin, end = header[name]["data_offsets"]
        shard_header[name] = {"dtype": header[name]["dtype"], "shape": header[name]["shape"],
                              "data_offsets": [offset, offset + end - begin]}
        blobs.append(data[begin:end])
        offset += end - begin
        weight_map[name] = file
    text = json.dumps(shard_header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, file), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": len(data)}, "weight_map": weight_map}, f, indent=2)
