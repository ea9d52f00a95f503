#!/usr/bin/env bash
# safetensors.sh ATTN: --params from a .safetensors file (issue 24): a run equals the same
# weights from an .npz (make_safetensors_fixtures.py wrote both), F16 with our dumps'
# params. prefix, a FIFO, a checkpoint's other tensors left unread (a sparse 4 GiB one under a
# 400 MB address space); and hostile files,
# each one `attn: error:` line naming the file, exit 1, without the memory they claim.
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"
st="$here/../reference/safetensors"
py=/usr/bin/python3
cd "$work"

# --- the same weights as an .npz give the same run, to the bit --------------------------
run_args=(--heads 2 --seq 3 --mask causal --format json)
"$attn" trace --params "$st/params.npz" "${run_args[@]}" >npz.json
expect_ok "--params params.safetensors (F32)" trace --params "$st/params.safetensors" "${run_args[@]}"
check "... equals --params params.npz" cmp "$work/out" npz.json
"$attn" trace --params "$st/params_f16.npz" "${run_args[@]}" >f16_npz.json
expect_ok "--params params_f16.safetensors (F16, keys params.w_q ...)" trace --params "$st/params_f16.safetensors" "${run_args[@]}"
check "... equals its values as float32 in an .npz" cmp "$work/out" f16_npz.json
check "... which differ from the F32 run" bash -c "! cmp -s '$work/out' npz.json"
expect_ok "the params stage shows w_q's first value" trace --params "$st/params.safetensors" --heads 2 --seq 3 --stage params --format json
check "... as PyTorch wrote it" bash -c "[ \"\$(jq '.stages[0].tensors.w_q.data[0][0]' '$work/out')\" = \"\$(jq '.stages[0].tensors.w_q.data[0][0]' npz.json)\" ]"

mkfifo fifo.safetensors
(cat "$st/params.safetensors" >fifo.safetensors &)
expect_ok "--params from a FIFO (read whole, up to 256 MiB)" trace --params fifo.safetensors "${run_args[@]}"
check "... equals the file" cmp "$work/out" npz.json

# --- files made here: a checkpoint with more than attn's weights, and hostile ones -------
$py - "$st/params.safetensors" <<'EOF'
import json, struct, sys

def read(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    return {k: (v, data[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]]) for k, v in header.items()}

def write(path, entries, header_edit=None, data_tail=b""):
    """entries: [(name, dtype, shape, bytes)] in data order."""
    header, data = {}, b""
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if header_edit:
        header_edit(header)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data + data_tail)

params = read(sys.argv[1])
own = [(k, v["dtype"], v["shape"], raw) for k, (v, raw) in params.items()]
# a checkpoint: attn's weights and a BOOL buffer and an I64 table of other names, unread
write("checkpoint.safetensors", own + [("attn.masked_bias", "BOOL", [2, 2], b"\1\0\1\1"),
                                       ("embeddings.position_ids", "I64", [1], struct.pack("<q", 3))])
write("w_q_int.safetensors", [(k, "I64", [8, 4], r) if k == "w_q" else (k, d, s, r) for k, d, s, r in own])
def overlap(h):
    h["b_q"]["data_offsets"] = [h["w_q"]["data_offsets"][0] + 4, h["w_q"]["data_offsets"][0] + 36]
write("overlap.safetensors", own, overlap)
write("trailing.safetensors", own, data_tail=b"<html>polyglot</html>")
def huge(h):
    h["w_q"]["shape"] = [4294967296, 4294967296, 2]
write("overflow.safetensors", own, huge)
def past(h):
    h["w_o"]["shape"] = [100000, 100000]
    h["w_o"]["data_offsets"] = [h["w_o"]["data_offsets"][0], h["w_o"]["data_offsets"][0] + 40000000000]
write("past_end.safetensors", own, past)
with open("header_past_file.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 99999999) + b'{"w_q": ')
for name, shape in (("zero_size", [0, 2**63]), ("zero_size_3", [0, 2**62, 4])):  # no data, but strides of 2^63
    text = json.dumps({"w_q": {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]}}).encode()
    with open(name + ".safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
with open("header_too_big.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 2**63) + b"{}")
write("big.safetensors", [("w_q", "F32", [256, 256], bytes(256 * 256 * 4))])
# a 4 GiB checkpoint (sparse: a few KB on disk) whose 4 GiB tensor is not one of attn's
def embed(h):
    end = max(v["data_offsets"][1] for v in h.values())
    h["model.embed.weight"] = {"dtype": "F32", "shape": [1024, 1024, 1024], "data_offsets": [end, end + (4 << 30)]}
write("sparse_4gib.safetensors", own, embed)
with open("sparse_4gib.safetensors", "r+b") as f:
    f.seek(0, 2)
    f.truncate(f.tell() + (4 << 30))
EOF

expect_ok "a checkpoint's BOOL and I64 tensors of other names are not read" trace --params checkpoint.safetensors "${run_args[@]}"
check "... and the run is the same" cmp "$work/out" npz.json
limit_kb=400000 limited trace --params sparse_4gib.safetensors "${run_args[@]}"
if [ "$rc" -eq 0 ] && cmp -s "$work/out" npz.json; then ok "a 4 GiB checkpoint under a 400 MB address space: only attn's tensors are read"
else fail "a 4 GiB checkpoint under a 400 MB address space: only attn's tensors are read" "exit $rc: $(head -n 1 "$work/err")"; fi
expect_error "a weight of dtype I64" 1 \
  "attn: error: --params w_q_int.safetensors: w_q: dtype I64; attn reads F32, F16, BF16 and F64" \
  trace --params w_q_int.safetensors
expect_refusal "overlapping ranges" 1 \
  "attn: error: --params overlap.safetensors: w_q and b_q overlap: data_offsets [0,256] and [4,36]" \
  trace --params overlap.safetensors
expect_refusal "bytes after the last tensor (a polyglot file)" 1 \
  "attn: error: --params trailing.safetensors: bytes 1152 to 1173 of the data belong to no tensor (the format allows no holes)" \
  trace --params trailing.safetensors
expect_refusal "a shape whose size overflows" 1 \
  "attn: error: --params overflow.safetensors: w_q: shape [4294967296,4294967296,2] of F32 needs more bytes than any file holds" \
  trace --params overflow.safetensors
expect_refusal "a zero size beside 2^63: refused before any tensor is made (its stride would overflow)" 1 \
  "attn: error: --params zero_size.safetensors: w_q: shape [0,9223372036854775808] of F32 has more elements than any tensor holds" \
  trace --params zero_size.safetensors
expect_refusal "a zero size beside 2^62 x 4" 1 \
  "attn: error: --params zero_size_3.safetensors: w_q: shape [0,4611686018427387904,4] of F32 has more elements than any tensor holds" \
  trace --params zero_size_3.safetensors
limit_kb=400000 expect_refusal "40 GB claimed past the end of the data, under a 400 MB address space" 1 \
  "attn: error: --params past_end.safetensors: w_o: data_offsets [864,40000000864] end past the 1152 bytes of data after the header (a truncated file?)" \
  trace --params past_end.safetensors
limit_kb=400000 expect_refusal "a 100 MB header size in a 16-byte file" 1 \
  "attn: error: --params header_past_file.safetensors: truncated: the header size is 99999999 bytes, but 8 follow it" \
  trace --params header_past_file.safetensors
expect_refusal "a header size past the format's 100 MB" 1 \
  "attn: error: --params header_too_big.safetensors: the header size 9223372036854775808 is more than the 100000000 bytes the format allows (not a .safetensors file?)" \
  trace --params header_too_big.safetensors
expect_refusal "a weight larger than --max-memory" 1 \
  "attn: error: --params big.safetensors: w_q: shape [256,256] as float32 needs 256.0 KiB, more than the 100.0 KiB --max-memory allows (--max-memory none: no limit)" \
  trace --params big.safetensors --max-memory 100KiB
expect_error "a file that is not there" 1 \
  "attn: error: --params missing.safetensors: cannot open: No such file or directory" \
  trace --params missing.safetensors
printf 'not a safetensors file at all' >text.safetensors
expect_error "text named .safetensors" 1 \
  "attn: error: --params text.safetensors: the header size 7021991845529153390 is more than the 100000000 bytes the format allows (not a .safetensors file?)" \
  trace --params text.safetensors

finish
