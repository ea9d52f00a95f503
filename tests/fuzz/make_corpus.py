#!/usr/bin/python3
"""Writes the fuzz harnesses' seed corpora, tests/fuzz/corpus/<harness>/ (run it with
Debian's /usr/bin/python3 and python3-numpy; the files are committed).

Each corpus holds small valid inputs of every kind the reader knows, a few broken ones,
and some larger than 16 KB, so that runs with -max_len above libFuzzer's default
start from inputs that long. The params corpus starts each file with the harness's
choice byte (fuzz_params.cpp); the flags corpus holds one argument per line."""
import io
import json
import os
import shutil
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)


def corpus(name):
    path = os.path.join(HERE, "corpus", name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def npy_bytes(a, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, a)
    else:
        np.lib.format.write_array(buf, a, version=version)
    return buf.getvalue()


def npz_bytes(arrays, compressed=False):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def params(d_in=8, d=8, d_kv=8, bias=True, out=True, prefix=""):
    p = {"w_q": randn(d, d_in), "w_k": randn(d, d_kv), "w_v": randn(d, d_kv)}
    if bias:
        p.update(b_q=randn(d), b_k=randn(d), b_v=randn(d))
    if out:
        p.update(w_o=randn(d, d), b_o=randn(d))
    return {prefix + k: v for k, v in p.items()}


def json_text(arrays):
    return json.dumps({k: v.tolist() for k, v in arrays.items()})


# --- json: nested arrays, as json.dump(t.tolist()) writes them ------------------------------
c = corpus("json")
write(c, "matrix.json", json.dumps(randn(2, 3).tolist()))
write(c, "x_1x4x8.json", json.dumps(randn(1, 4, 8).tolist()))
write(c, "mask_bool.json", json.dumps(np.tril(np.ones((4, 4), bool)).tolist()))
write(c, "mask_ints.json", "[[1,0,0],[1,1,0],[1,1,1]]")
write(c, "scalar.json", "3.5")
write(c, "nonfinite.json", "[[NaN, Infinity, -Infinity], [\"nan\", \"-inf\", 1e39]]")
write(c, "spaces_escapes.json", '[ [1 , 2.5e-3 ],\n\t[ -0.0 , "\\u0069nf" ] ]')
write(c, "object.json", json_text({"w_q": randn(2, 2), "b_q": randn(2)}))
write(c, "ragged.json", "[[1,2,3],[4,5]]")
write(c, "empty.json", "[[], []]")
write(c, "deep.json", "[" * 200 + "1" + "]" * 200)
write(c, "syntax_error.json", "[[1, 2], [3, 4]")
write(c, "big_40x40.json", json.dumps(randn(40, 40).tolist()))              # ~ 33 KB
write(c, "big_object.json", json_text(params(d_in=20, d=20, d_kv=20)))      # ~ 35 KB

# --- npy: every dtype the reader converts, each header version, broken headers --------------
c = corpus("npy")
write(c, "f4_2x3.npy", npy_bytes(randn(2, 3)))
write(c, "f8_4.npy", npy_bytes(rng.standard_normal(4)))
write(c, "f2_2x2.npy", npy_bytes(randn(2, 2).astype(np.float16)))
write(c, "b1_4x4.npy", npy_bytes(np.tril(np.ones((4, 4), bool))))
for t in ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]:
    write(c, t + ".npy", npy_bytes(np.arange(6, dtype=t).reshape(2, 3)))
write(c, "scalar.npy", npy_bytes(np.float32(2.5)))
write(c, "zero_dim.npy", npy_bytes(np.zeros((0, 3), np.float32)))
write(c, "v2.npy", npy_bytes(randn(3, 2), version=(2, 0)))
write(c, "v3.npy", npy_bytes(randn(3, 2), version=(3, 0)))
write(c, "fortran.npy", npy_bytes(np.asfortranarray(randn(3, 2))))
write(c, "text.npy", npy_bytes(np.array("{\"seed\": 0}")))
write(c, "big_endian.npy", npy_bytes(randn(2, 2).astype(">f4")))
write(c, "truncated.npy", npy_bytes(randn(4, 4))[:100])
write(c, "big_100x100.npy", npy_bytes(randn(100, 100)))                    # ~ 40 KB
write(c, "big_4d.npy", npy_bytes(randn(2, 4, 16, 16)))                      # ~ 8 KB
write(c, "big_u1_24k.npy", npy_bytes(np.arange(24000, dtype=np.uint8)))     # ~ 24 KB

# --- npz: np.savez and np.savez_compressed archives, one with a text member -----------------
c = corpus("npz")
write(c, "two.npz", npz_bytes({"w_q": randn(2, 2), "b_q": randn(2)}))
write(c, "compressed.npz", npz_bytes({"x": randn(1, 4, 8), "mask": np.tril(np.ones((4, 4), bool))}, True))
write(c, "with_text.npz", npz_bytes({"config": np.array(json.dumps({"batch": 1, "seq": 4})), "input.x": randn(1, 4, 8)}))
write(c, "one.npz", npz_bytes({"arr_0": randn(3)}))
write(c, "empty.npz", npz_bytes({}))
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    z.writestr("notes.txt", "not an array")
    z.writestr("x.npy", npy_bytes(randn(2, 2)))
write(c, "other_member.npz", buf.getvalue())
write(c, "truncated.npz", npz_bytes({"x": randn(8, 8)})[:300])
write(c, "big_params.npz", npz_bytes(params(d_in=32, d=32, d_kv=32)))       # ~ 30 KB
write(c, "big_compressed.npz", npz_bytes({"x": randn(2, 64, 64)}, True))    # ~ 30 KB

# --- params: the choice byte, then a .json object or an .npz --------------------------------
# choice: bit 0 npz, bit 1 --no-qkv-bias, bit 2 --no-out-proj, bits 3-4 heads 1, 2, 4, 8,
# bit 5 .safetensors (its seeds are written with the safetensors corpus, below)
c = corpus("params")
write(c, "json_d8.bin", b"\x08" + json_text(params()).encode())
write(c, "json_no_bias.bin", b"\x0a" + json_text(params(bias=False)).encode())
write(c, "json_no_out.bin", b"\x0c" + json_text(params(out=False)).encode())
write(c, "json_prefixed.bin", b"\x08" + json_text(params(prefix="params.")).encode())
write(c, "json_cross.bin", b"\x10" + json_text(params(d_in=6, d=8, d_kv=4)).encode())
write(c, "json_extra_key.bin", b"\x08" + json_text({**params(), "w_x": randn(2)}).encode())
write(c, "npz_d8.bin", b"\x09" + npz_bytes(params()))
write(c, "npz_compressed.bin", b"\x09" + npz_bytes(params(), True))
write(c, "npz_dump.bin", b"\x09" + npz_bytes({**params(prefix="params."), "input.x": randn(1, 4, 8),
                                              "config": np.array("{}")}))
write(c, "npz_wrong_shape.bin", b"\x09" + npz_bytes({**params(), "w_o": randn(8, 4)}))
write(c, "big_json_d20.bin", b"\x18" + json_text(params(d_in=20, d=20, d_kv=20)).encode())  # ~ 35 KB
write(c, "big_npz_d48.bin", b"\x19" + npz_bytes(params(d_in=48, d=48, d_kv=48)))            # ~ 40 KB

# --- flags: one argument per line ------------------------------------------------------------
c = corpus("flags")
lines = {
    "default": [],
    "shapes": ["--batch", "2", "--seq", "5", "--heads", "4", "--d-model", "16"],
    "cross": ["--seq", "3", "--kv-seq", "6", "--d-in", "4", "--d-kv-in", "5", "--cross"],
    "causal": ["--mask", "causal", "--causal-align", "lower-right", "--kv-seq", "6"],
    "padding": ["--mask", "padding+causal", "--lengths", "3,5", "--batch", "2", "--seq", "5"],
    "window": ["--mask", "window", "--window", "1", "--safe-softmax"],
    "random": ["--mask", "random", "--mask-seed", "-1", "--mask-keep", "0.3"],
    "dropout": ["--dropout", "0.1", "--train", "--dropout-seed", "18446744073709551615"],
    "seed": ["--seed", "-9223372036854775808", "--no-qkv-bias", "--no-out-proj"],
    "mistake": ["--mistake", "weight_not_transposed", "--d-in", "8"],
    "mask_file": ["--mask-file", "@mask2d", "--mask-convention", "mha"],
    "mask_file_3d": ["--mask-file=@mask3d", "--batch", "2"],
    "mask_file_4d": ["--mask-file", "@mask4d", "--mask-convention", "additive"],
    "key_padding": ["--key-padding-mask", "@kpm", "--batch", "2"],
    "max_memory": ["--batch", "64", "--seq", "512", "--max-memory", "100MiB"],
    "huge_sizes": ["--seq", "9223372036854775807", "--d-model", "9223372036854775807"],
    "negative": ["--batch", "-1", "--heads", "0"],
    "empty_values": ["--batch=", "--lengths", ","],
}
for name, args in lines.items():
    write(c, name + ".txt", "\n".join(args) + ("\n" if args else ""))
long_lengths = ["--mask", "padding", "--batch", "4000", "--lengths", ",".join(["3"] * 4000)]
write(c, "big_lengths.txt", "\n".join(long_lengths) + "\n")                 # ~ 8 KB
write(c, "big_repeated.txt", "\n".join(["--heads", "2"] * 1500) + "\n")    # ~ 17 KB

# --- replay_json, replay_npz: real dumps of attn trace (--format json / npz) -----------------
# Made by the attn named in $ATTN (default build/attn), small runs of every kind a dump
# records: each mask kind, fill text, cross-attention, dropout, a mistake, and the runs
# that start from files (x, params, a mask file, a key padding mask, Q K V), whose
# tensors the dump carries. Then a few broken ones: truncated, config contradicting its
# tensors, a key unknown, nesting deeper than any dump.
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(HERE))
ATTN = os.environ.get("ATTN", os.path.join(ROOT, "build", "attn"))
small = ["--seq", "3", "--d-model", "4", "--heads", "2"]
dump_runs = {
    "plain": [],
    "causal_fill": ["--mask", "causal", "--fill", "-1e9"],
    "padding": ["--mask", "padding+causal", "--batch", "2", "--lengths", "2,3"],
    "window_safe": ["--mask", "window", "--window", "1", "--safe-softmax"],
    "random": ["--mask", "random", "--mask-seed", "5", "--mask-keep", "0.5"],
    "cross": ["--cross", "--kv-seq", "2", "--d-in", "3", "--d-kv-in", "5", "--causal-align", "lower-right",
              "--mask", "causal"],
    "dropout": ["--dropout", "0.25", "--train", "--dropout-seed", "7", "--no-qkv-bias"],
    "mistake": ["--mistake", "mask_inverted", "--mask", "causal", "--seed", "3", "--no-out-proj"],
    "input_file": ["--input", "@x"],
    "params_file": ["--params", "@params"],
    "mask_file": ["--mask-file", "@mask", "--mask-convention", "additive"],
    "key_padding": ["--key-padding-mask", "@kpm", "--batch", "2"],
    "qkv_files": ["--q", "@q", "--k", "@q", "--v", "@q"],
}


def dump_files(folder):
    """The tensors the runs above read, as .npy files in `folder`, by their @names."""
    files = {"x": randn(1, 3, 4), "params": params(d_in=4, d=4, d_kv=4), "q": randn(1, 3, 4),
             "mask": np.where(np.tril(np.ones((3, 3), bool)), 0.0, -np.inf).astype(np.float32),
             "kpm": np.array([[False, False, True], [False, False, False]])}
    paths = {}
    for name, value in files.items():
        paths["@" + name] = os.path.join(folder, name + (".npz" if isinstance(value, dict) else ".npy"))
        if isinstance(value, dict):
            np.savez(paths["@" + name], **value)
        else:
            np.save(paths["@" + name], value)
    return paths


def attn_dump(args, fmt, folder, files, shape=small):
    out = os.path.join(folder, "dump." + fmt)
    run = subprocess.run([ATTN, "trace", *shape, *[files.get(a, a) for a in args], "--format", fmt, "--out", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(run.args)}: {run.stderr}")
    with open(out, "rb") as f:
        return f.read()


with tempfile.TemporaryDirectory() as tmp:
    files = dump_files(tmp)
    dumps = {fmt: {name: attn_dump(args, fmt, tmp, files) for name, args in dump_runs.items()}
             for fmt in ["json", "npz"]}
    big_run = ["--batch", "2", "--seq", "8", "--d-model", "8"]  # ~ 40 KB
    dumps["json"]["big"] = attn_dump(["--mask", "causal"], "json", tmp, files, big_run)
    dumps["npz"]["big"] = attn_dump(["--mask", "causal"], "npz", tmp, files, big_run)

c = corpus("replay_json")
for name, data in dumps["json"].items():
    write(c, name + ".json", data)
plain = json.loads(dumps["json"]["plain"])
write(c, "truncated.json", dumps["json"]["plain"][:2000])
write(c, "config_only.json", json.dumps({"format": "attn.trace/1", "config": plain["config"], "stages": {}}))
seq_contradicts = json.loads(dumps["json"]["input_file"])
seq_contradicts["config"]["seq"] = 6                       # input.x is [1,3,4]
write(c, "seq_contradicts_x.json", json.dumps(seq_contradicts))
unknown_key = dict(plain, config=dict(plain["config"], newer_setting=1))
write(c, "unknown_config_key.json", json.dumps(unknown_key))
write(c, "deep_config.json", '{"format":"attn.trace/1","config":' + "[" * 300 + "]" * 300 + "}")

c = corpus("replay_npz")
for name, data in dumps["npz"].items():
    write(c, name + ".npz", data)
write(c, "truncated.npz", dumps["npz"]["input_file"][:1500])
buf = io.BytesIO()
with zipfile.ZipFile(io.BytesIO(dumps["npz"]["input_file"])) as z, zipfile.ZipFile(buf, "w") as out:
    for member in z.namelist():                            # the config says seq 6, input.x is [1,3,4]
        data = z.read(member)
        if member == "config.npy":
            text = json.loads(np.load(io.BytesIO(data)).item())
            data = npy_bytes(np.array(json.dumps(dict(text, seq=6))))
        out.writestr(zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0)), data)  # the same bytes every time
write(c, "seq_contradicts_x.npz", buf.getvalue())
write(c, "config_not_json.npz", npz_bytes({"config": np.array("{\"seq\": "), "input.x": randn(1, 3, 4)}))

# --- exercise: the shipped exercises, and a few broken ones ----------------------------------
c = corpus("exercise")
exercises = os.path.join(ROOT, "share", "attn", "exercises")
for name in sorted(os.listdir(exercises)):
    if name.endswith(".json"):
        shutil.copy(os.path.join(exercises, name), os.path.join(c, name))
with open(os.path.join(exercises, "03-causal-mask.json")) as f:
    causal = json.load(f)
write(c, "huge_seq.json", json.dumps(dict(causal, config=dict(causal["config"], seq=4611686018427387904))))
write(c, "wrong_answer_shape.json", json.dumps(dict(causal, answer=dict(causal["answer"], shape=[1, 2, 4, 5]))))
write(c, "control_in_title.json", json.dumps(dict(causal, title="A \x1b]0;owned\x07 mask")))
write(c, "own_mistake.json", json.dumps(dict(causal, mistakes=[
    "mask_inverted", {"id": "forgot_mask", "like": "mask_not_applied", "message": "Apply the mask."}])))
write(c, "deep_config.json", json.dumps(dict(causal, config="@")).replace('"@"', "[" * 300 + "]" * 300))

# --- safetensors: files as the safetensors package writes them, and a few broken ones -------
# The header is JSON, padded with spaces to a multiple of 8; the data covers every byte.
import struct

st_rng = np.random.default_rng(24)  # its own stream: the corpora above keep their bytes


def safetensors_bytes(tensors, metadata=None, edit=None, tail=b""):
    """tensors: {name: (dtype, numpy array)}; BF16 from float32 (upper 16 bits)."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, a) in tensors.items():
        raw = (a.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes() if dtype == "BF16" else a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if edit:
        edit(header)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data + tail


def st_randn(*shape, dtype="<f4"):
    return st_rng.standard_normal(shape).astype(dtype)


c = corpus("safetensors")
write(c, "empty.safetensors", safetensors_bytes({}))
write(c, "params_f32.safetensors", safetensors_bytes({k: ("F32", st_randn(*v.shape)) for k, v in params().items()}))
write(c, "params_f16.safetensors", safetensors_bytes(
    {"params." + k: ("F16", st_randn(*v.shape, dtype="<f2")) for k, v in params().items()}, {"format": "pt"}))
write(c, "dtypes.safetensors", safetensors_bytes({
    "bf16": ("BF16", np.array([1.0, -2.5, np.inf, np.nan, 1e-40], np.float32)),
    "f16": ("F16", np.array([[1.0, 65504.0], [2.0**-24, -np.inf]], "<f2")),
    "f64": ("F64", np.array([0.1, -1e39], "<f8")),
    "scalar": ("F32", np.array(2.5, "<f4")),
    "empty": ("F32", np.zeros((0, 3), "<f4")),
    "mask": ("BOOL", np.array([True, False, True])),
    "ids": ("I64", np.array([464, 2068], "<i8")),
    "odd": ("F8_E4M3", np.array([1, 2, 3], "u1")),
}, {"format": "pt", "note": "caf\u00e9"}))
write(c, "gpt2_like.safetensors", safetensors_bytes({
    "h.0.attn.c_attn.weight": ("F32", st_randn(8, 24)), "h.0.attn.c_attn.bias": ("F32", st_randn(24)),
    "h.0.attn.c_proj.weight": ("F32", st_randn(8, 8)), "h.0.attn.c_proj.bias": ("F32", st_randn(8)),
    "h.0.attn.bias": ("BOOL", np.tril(np.ones((1, 1, 4, 4), bool))),
}))


def st_overlap(h):
    h["b_q"]["data_offsets"] = [h["b_q"]["data_offsets"][0] - 4, h["b_q"]["data_offsets"][1] - 4]


def st_hole(h):
    h["w_q"]["data_offsets"] = [h["w_q"]["data_offsets"][0] + 4, h["w_q"]["data_offsets"][1] + 4]


def st_huge_shape(h):
    h["w_q"]["shape"] = [4294967296, 4294967296, 2]


small_params = {k: ("F32", st_randn(*v.shape)) for k, v in params(d_in=2, d=2, d_kv=2).items()}
write(c, "overlap.safetensors", safetensors_bytes(small_params, edit=st_overlap))
write(c, "hole.safetensors", safetensors_bytes(small_params, edit=st_hole))
write(c, "huge_shape.safetensors", safetensors_bytes(small_params, edit=st_huge_shape))
write(c, "polyglot.safetensors", safetensors_bytes(small_params, tail=b"<html></html>"))
write(c, "truncated.safetensors", safetensors_bytes(small_params)[:-9])
write(c, "header_too_long.safetensors", struct.pack("<Q", 100_000_001) + b"{}")
one = b'{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
write(c, "duplicate.safetensors", struct.pack("<Q", 2 * len(one) + 12) + b'{"w":' + one + b',"w":' + one + b"}" + bytes(4))
write(c, "big_params.safetensors",                                                   # ~ 40 KB
      safetensors_bytes({k: ("BF16", st_randn(*v.shape)) for k, v in params(d_in=48, d=48, d_kv=48).items()}))
write(c, "big_header.safetensors", safetensors_bytes(                                # ~ 20 KB of header
      {f"model.layers.{i}.self_attn.{p}_proj.weight": ("F16", st_randn(2, 2, dtype="<f2"))
       for i in range(64) for p in "qkvo"}))

# the params harness's .safetensors seeds (choice bit 5), into the params corpus made above
c = os.path.join(HERE, "corpus", "params")
write(c, "safetensors_d8.bin", b"\x28" + safetensors_bytes({k: ("F32", st_randn(*v.shape)) for k, v in params().items()}))
write(c, "safetensors_f16_prefixed.bin", b"\x2a" + safetensors_bytes(
    {"params." + k: ("F16", st_randn(*v.shape, dtype="<f2")) for k, v in params(bias=False).items()}))
write(c, "safetensors_bf16_checkpoint.bin", b"\x28" + safetensors_bytes(
    {**{k: ("BF16", st_randn(*v.shape)) for k, v in params().items()}, "attn.bias": ("BOOL", np.ones((2, 2), bool))}))

# --- hostile text in the JSON readers and text members (NUL bytes, keys given twice, a text ---
# member claiming more characters than it holds); added to the corpora above, no random draws
def hostile_text_seeds():
    def into(name):
        return os.path.join(HERE, "corpus", name)
    write(into("tokens"), "vocab_nul.json", b'{"a": 0, "b": 1}\x00{"c": 2}')
    write(into("tokens"), "vocab_key_twice.json", '{"a": 0, "b": 1, "a": 2}')
    with open(os.path.join(ROOT, "share", "attn", "exercises", "03-causal-mask.json")) as f:
        text = f.read()
    write(into("exercise"), "key_twice.json", text.replace('{', '{"number": 99, ', 1))
    write(into("exercise"), "nul.json", text.encode() + b"\x00{}")
    with open(os.path.join(into("replay_json"), "config_only.json")) as f:
        dump = f.read()
    write(into("replay_json"), "nul.json", dump.encode() + b"\x00{}")
    write(into("replay_json"), "config_key_twice.json", dump.replace('"config": {', '"config": {"seq": 9, ', 1))
    config = json.loads(dump)["config"]
    keyed = json.dumps(config)[:-1] + ', "seq": 9}'
    write(into("replay_npz"), "config_key_twice.npz", npz_bytes({"config": np.array(keyed)}))
    header = "{'descr': '<U%d', 'fortran_order': False, 'shape': (), }" % (100 << 20)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    claim = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + json.dumps(config).encode("utf-32-le")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:  # a config text member whose header claims 100M characters
        out.writestr(zipfile.ZipInfo("config.npy", date_time=(1980, 1, 1, 0, 0, 0)), claim)
    write(into("replay_npz"), "config_claims_100m.npz", buf.getvalue())


hostile_text_seeds()
