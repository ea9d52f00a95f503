#!/usr/bin/env bash
# hardening.sh ATTN: issue 11's hostile inputs, each as the issue gives it: a crash, an
# overflow, memory spent before --max-memory was checked, a limit that switches off, a
# message with raw escapes. Each must be one `attn: error:` line with the right exit
# code (2 for a bad flag, 1 for a bad file), quickly and without the memory it asks for.
# The hostile files are made here, in a temporary directory (Python + NumPy for the npz).
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"
py=/usr/bin/python3
cd "$work"

# --- 1. sizes that wrap before --batch is validated -------------------------------------
echo '[[1,1,1]]' > m.json
printf '[[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]' > m4.json
# As written (the default limit, 80% of RAM): the memory estimate refuses them, exit 1.
for args in "6148914691236517206 m.json" "4611686018427387904 m4.json"; do
  set -- $args
  limited trace --batch "$1" --mask-file "$2"
  msg=$(head -n 1 "$work/err")
  if [ "$rc" -eq 1 ] && [[ "$msg" == "attn: error: these sizes need more than 16 EiB but the limit is "*" (--max-memory); "* ]]; then
    ok "--batch $1 --mask-file $2: refused by the estimate, no crash"
  else fail "--batch $1 --mask-file $2: refused by the estimate, no crash" "exit $rc: $msg"; fi
done
expect_refusal "--batch 4611686018427387904 with a 4x4 mask under --max-memory 1GiB" 1 \
  "attn: error: these sizes need more than 16 EiB but the limit is 1.0 GiB (--max-memory); the largest stages are input, projections, scores, scaled, mask, masked, softmax, context, concat, output at more than 16 EiB each, for [B,H,Sq,Sk] = [4611686018427387904,2,4,4]" \
  trace --batch 4611686018427387904 --mask-file m4.json --max-memory 1GiB
expect_refusal "--batch -1 with a mask file: a usage error, not out of memory" 2 \
  "attn: error: --batch -1 must be at least 1" trace --batch -1 --mask-file m.json
# With the limit off, what no machine can address is a usage error, before the mask is expanded.
expect_refusal "--batch 6148914691236517206 with --max-memory none: a usage error" 2 \
  "attn: error: these sizes make a tensor [B,H,Sq,Sk] = [6148914691236517206,2,1,3] of more than 128 TiB, more than a 64-bit machine can address; give smaller sizes" \
  trace --batch 6148914691236517206 --mask-file m.json --max-memory none
expect_refusal "--batch 4611686018427387904 with --max-memory 0: a usage error" 2 \
  "attn: error: these sizes make a tensor [B,H,Sq,Sk] = [4611686018427387904,2,4,4] of more than 128 TiB, more than a 64-bit machine can address; give smaller sizes" \
  trace --batch 4611686018427387904 --mask-file m4.json --max-memory 0

# --- 2-3. npy headers: 30,000 brackets deep; a zero size beside overflowing ones ----------
$py - <<'EOF'
import struct
def npy(name, shape_text, data=b""):
    d = ("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text + ", }").encode() + b"\n"
    open(name, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d + data if len(d) < 65536
                           else b"\x93NUMPY\x02\x00" + struct.pack("<I", len(d)) + d + data)
npy("deep.npy", "(" * 30000 + ")" * 30000)
npy("zero.npy", "(0, 9000000162574, 9000001625749210)")
EOF
deep="attn: error: --input deep.npy: malformed .npy header: more than 64 nested brackets (header: {'descr': '<f4', 'fortran_order': False, 'shape': ((((((((((((((((((((((((((((((... (60053 bytes))"
expect_refusal "--input: an npy header 30,000 brackets deep" 1 "$deep" trace --input deep.npy
$py -c "
import zipfile; z = zipfile.ZipFile('deep.npz', 'w'); z.write('deep.npy', 'w_q.npy'); z.close()
z = zipfile.ZipFile('deepx.npz', 'w'); z.write('deep.npy', 'input.x.npy'); z.close()"
limited trace --params deep.npz
check "--params: an npz member 30,000 brackets deep" grep -q "^attn: error: --params deep.npz: w_q: malformed .npy header: more than 64 nested brackets" err
check "... exit 1" test "$rc" -eq 1
limited trace --input deepx.npz
check "--input: an npz member 30,000 brackets deep" grep -q "^attn: error: --input deepx.npz: input.x: malformed .npy header: more than 64 nested brackets" err
expect_refusal "npy shape (0, 9000000162574, 9000001625749210): no signed overflow" 1 \
  "attn: error: --input zero.npy: malformed .npy header: shape [0,9000000162574,9000001625749210] of float32 needs more bytes than any file holds" \
  trace --input zero.npy

# --- 7. memory spent before --max-memory is checked ----------------------------------------
printf '[[1,1],[1,1]]' > m2.json
limit_kb=300000 expect_refusal "--batch 100000000 with a 2-D mask file: refused before the mask is expanded" 1 \
  "attn: error: these sizes need 61.5 GiB but the limit is 1.0 GiB (--max-memory); the largest stage is projections at 17.9 GiB, for [B,H,Sq,Sk] = [100000000,2,2,2]" \
  trace --batch 100000000 --mask-file m2.json --max-memory 1GiB
$py - <<'EOF'
import io, zipfile
import numpy as np
def member(z, name, a):
    b = io.BytesIO(); np.save(b, a); z.writestr(name + ".npy", b.getvalue())
def zeros(z, name, shape):  # member(z, name, np.zeros(shape, np.float32)), its bytes streamed a MiB at a time
    header = io.BytesIO(); np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with z.open(name + ".npy", "w") as f:
        f.write(header.getvalue())
        for _ in range(4 * int(np.prod(shape)) >> 20): f.write(bytes(1 << 20))
with zipfile.ZipFile("bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:   # 1 MB holding 1 GiB
    zeros(z, "input.x", (256, 1024, 1024))
with zipfile.ZipFile("unused.npz", "w", zipfile.ZIP_DEFLATED) as z:  # 256 MiB nobody asks for
    member(z, "input.x", np.ones((1, 4, 8), np.float32))
    zeros(z, "other", (64, 1024, 1024))
with zipfile.ZipFile("liar.npz", "w") as z:  # the header says 4 floats, the member holds 6
    b = io.BytesIO(); np.save(b, np.ones((1, 2, 2), np.float32)); z.writestr("input.x.npy", b.getvalue() + b"\0" * 8)
with zipfile.ZipFile("esc.npz", "w") as z:
    member(z, "w\x1b[31mq", np.zeros((2, 2), np.float32))
    member(z, "nul\x00name", np.zeros((2,), np.float32))
EOF
test "$(stat -c %s bomb.npz)" -lt 2000000 || fail "the zip bomb is under 2 MB"
expect_refusal "a 1 MB zip bomb (a 1 GiB member) under --max-memory 100MiB: refused before inflating" 1 \
  "attn: error: --input bomb.npz: input.x: shape [256,1024,1024] as float32 needs 1.0 GiB, more than the 100.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --input bomb.npz --max-memory 100MiB
limit_kb=250000 limited trace --input unused.npz --max-memory 10MiB
check "an unused 256 MiB npz member is not inflated (runs in 250 MB of address space, --max-memory 10MiB)" test "$rc" -eq 0
expect_refusal "a member whose data disagrees with its npy header" 1 \
  "attn: error: --input liar.npz: input.x: corrupt member: the zip directory says its data is 24 bytes, its .npy header's shape [1,2,2] needs 16" \
  trace --input liar.npz
ln -s /dev/zero devzero.json
expect_refusal "a .json symlink to /dev/zero: capped, not read forever" 1 \
  "attn: error: --input devzero.json: not a regular file, and it gives more than 256.0 MiB (the most attn reads from a pipe or device)" \
  trace --input devzero.json
ln -s /dev/zero devzero.npy
limited trace --input devzero.npy
check "a .npy symlink to /dev/zero: capped" grep -q "^attn: error: --input devzero.npy: not a regular file" err
mkfifo fifo.json
(timeout 20 sh -c "printf '[[[1,2],[3,4]]]' > fifo.json") &
limited trace --input fifo.json --format json
check "a FIFO of a small tensor is still read" test "$rc" -eq 0
wait
# A FIFO's writer may be gone before the reader looks at it again: an .npy FIFO is read from
# the descriptor that found it is no regular file, never opened twice (which waited forever
# for a writer in about two runs of three).
$py -c "import numpy as np; np.save('x.npy', np.ones((1, 2, 2), np.float32))"
mkfifo fifo.npy
hung=0
for i in 1 2 3 4 5; do
  (timeout 20 sh -c "cat x.npy > fifo.npy") &
  timeout 20 "$attn" trace --input fifo.npy --format json >"$work/out" 2>"$work/err" || hung=$((hung + 1))
  wait
done
check "an .npy FIFO is read once, whole, in each of 5 runs" test "$hung" -eq 0
$py -c "open('bad.json','w').write('[' + 'NaN,' * (5 * 1024 * 1024) + ']')"  # 20 MB, malformed at the end
limit_kb=400000 expect_refusal "a malformed 20 MB JSON: parsed in 400 MB of address space (447 MB RSS before), its error at the end" 1 \
  "attn: error: --input bad.json: line 1, column 20971522: unexpected ']'; expected '[', '{', or a literal" \
  trace --input bad.json
expect_refusal "a 20 MB JSON under --max-memory 1MiB: refused by its size before parsing" 1 \
  "attn: error: --input bad.json: its text needs 20.0 MiB, more than the 1.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --input bad.json --max-memory 1MiB

# --- 8. --max-memory takes sizes; 0 and none switch it off -------------------------------
for bad in -1 -5GiB 18446744073709551616 99999999999999999999 abc ''; do
  run trace --max-memory "$bad"
  msg=$(head -n 1 "$work/err")
  if [ "$rc" -eq 2 ] && [[ "$msg" == "attn: error: --max-memory "* ]] && [[ "$msg" != *18446744073709551611* ]]; then
    ok "--max-memory '$bad' is a usage error"
  else fail "--max-memory '$bad' is a usage error" "exit $rc: $msg"; fi
done
expect_ok "--max-memory 0: no limit" trace --max-memory 0
expect_ok "--max-memory none: no limit" trace --max-memory none
expect_ok "--max-memory NONE: no limit" trace --max-memory NONE
expect_error "--max-memory below the estimate refuses" 1 \
  "attn: error: these sizes need 1.0 GiB but the limit is 1000.0 MiB (--max-memory); the largest stages are scores, scaled, masked, softmax at 256.0 MiB each, for [B,H,Sq,Sk] = [2,8,2048,2048]" \
  trace --batch 2 --seq 2048 --heads 8 --d-model 64 --mask causal --max-memory 1000MiB --row 0

# --- 9. parsing and messages --------------------------------------------------------------
run trace --params esc.npz
check "a --params npz member name: ESC escaped" grep -qF "unexpected array 'w\\x1b[31mq'" err
check "... no raw ESC on stderr" sh -c "! grep -q $'\\x1b' '$work/err'"
$py -c "import json; open('esc.json','w').write(json.dumps({'w\x1b[31mq\x00z': [[1.0]]}))"
run trace --params esc.json
check "a --params JSON key: ESC and NUL escaped, the message whole" \
  grep -qF "unexpected array 'w\\x1b[31mq\\x00z' (expected w_q b_q w_k b_k w_v b_v w_o b_o)" err
expect_error "--d-model 2^63 is refused, not clamped" 2 \
  "attn: error: --d-model 9223372036854775808: expected a whole number from -9223372036854775808 to 9223372036854775807" \
  trace --d-model 9223372036854775808
expect_error "--window 2^63 is refused, not clamped" 2 \
  "attn: error: --window 9223372036854775808: expected a whole number from -9223372036854775808 to 9223372036854775807" \
  trace --mask window --window 9223372036854775808
expect_error "--lengths 2^63 is refused, not clamped" 2 \
  "attn: error: --lengths 9223372036854775808: expected a whole number from -9223372036854775808 to 9223372036854775807" \
  trace --mask padding --lengths 9223372036854775808
expect_error "--mask-seed 2^64 is refused, as --seed" 2 \
  "attn: error: --mask-seed 18446744073709551616: expected a whole number from -9223372036854775808 to 18446744073709551615" \
  trace --mask random --mask-seed 18446744073709551616
expect_error "--dropout-seed 2^64 is refused, as --seed" 2 \
  "attn: error: --dropout-seed 18446744073709551616: expected a whole number from -9223372036854775808 to 18446744073709551615" \
  trace --dropout-seed 18446744073709551616
expect_error "--batch '' is a usage error" 2 "attn: error: --batch given without a value; expected a whole number" trace --batch ''
expect_error "--mask-keep '' is a usage error" 2 "attn: error: --mask-keep given without a value; expected a number" \
  trace --mask random --mask-keep ''
expect_error "--lengths '' is a usage error" 2 \
  "attn: error: --lengths given without a value; expected whole numbers joined by commas, such as 5,3" \
  trace --mask padding --lengths ''
expect_error "--lengths , does not quote the next flag" 2 \
  "attn: error: --lengths given without a value; expected whole numbers joined by commas, such as 5,3" \
  trace --lengths , --mask padding --batch 2
expect_error "--precision abc expects a whole number" 2 \
  "attn: error: --precision abc: expected a whole number from 0 to 12" trace --precision abc

# issue 25, item 6: an empty path ("$UNSET") is an error naming the flag, never the flag left out
for flag in --out --input --kv-input --from --params --q --mask-file --key-padding-mask; do
  expect_error "trace $flag '': refused, not read as absent" 2 \
    "attn: error: $flag given without a value; expected a file name" trace "$flag" ''
done
expect_error "check --answer ''" 2 "attn: error: --answer given without a value; expected a file name" \
  check --stage softmax --answer ''
expect_error "exercise show --out ''" 2 "attn: error: --out given without a value; expected a folder name" \
  exercise show 7 --out ''
expect_error "exercise show --secret '': refused, not the class secret of the environment instead" 2 \
  "attn: error: --secret given without a value; expected a file name" exercise show 7 --secret ''
expect_error "exercise check --answer ''" 2 "attn: error: --answer given without a value; expected a file name" \
  exercise check 7 --answer ''

# issue 25, item 2: 100,000 nested brackets (a 200 KB file) are refused when read, not
# dumped into a message or copied level by level until the stack overflows
deep=$($py -c "print('[' * 100000 + ']' * 100000)")
printf '{"format":"attn.trace/1","config":%s}' "$deep" >deep-dump.json
expect_error "a --from dump nested 100,000 deep" 1 \
  "attn: error: --from deep-dump.json: nested more than 64 levels deep; no dump of attn trace is" \
  trace --from deep-dump.json
$py - <<'PY'
import numpy as np  # the config as attn's npz holds it: a unicode scalar
np.savez("deep-dump.npz", config=np.array("[" * 100000 + "]" * 100000))
PY
expect_error "an npz dump whose config is nested 100,000 deep" 1 \
  "attn: error: --from deep-dump.npz: config: nested more than 64 levels deep; no document attn reads is" \
  trace --from deep-dump.npz
mkdir -p deep-share/exercises
printf '{"number": 1, "id": "deep", "config": %s}' "$deep" >deep-share/exercises/01-deep.json
ATTN_SHARE_DIR=$work/deep-share "$attn" exercise list >"$work/out" 2>"$work/err"; rc=$?
check "an exercise file nested 100,000 deep: one line, exit 1" \
  test "$rc $(cat "$work/err")" = "1 attn: error: $work/deep-share/exercises/01-deep.json: nested more than 64 levels deep; no document attn reads is"
"$attn" trace --format json | jq -c '.config.seq = [[[1]], [[1]], [[1]]]' >odd-config.json
run trace --from odd-config.json
check "a config value is described by its kind, not dumped" \
  bash -c "[ $rc -eq 1 ] && grep -q 'config \"seq\" is a list of 3 items; expected' '$work/err'"

# issue 25, item 4: a dump's fill_text must say its fill: "0" over -1e9 made masked cells
# read 0, and an OSC sequence there retitled the terminal
"$attn" trace --mask causal --fill -1e9 --format json >fill.json
jq '.config.fill_text = "0"' fill.json >fill0.json
expect_error "a dump whose fill_text contradicts its fill" 1 \
  "attn: error: --from fill0.json: config \"fill_text\" is \"0\"; expected the fill as typed, a number that reads as \"fill\" (-1e+09)" \
  trace --from fill0.json
jq '.config.fill_text = "-1e9\u001b]0;pwned\u0007"' fill.json >fill-osc.json
run trace --from fill-osc.json
check "a dump whose fill_text holds an OSC sequence: refused, no raw ESC on stderr" \
  bash -c "[ $rc -eq 1 ] && [ ! -s '$work/out' ] && ! grep -q \$'\x1b' '$work/err'"
expect_ok "a dump's own fill_text replays" trace --from fill.json --stage masked
check "... and is the formula's" grep -qx '   masked = scaled.masked_fill(mask == false, -1e9)' "$work/out"

# --- text safety: a bidirectional control or a line separator in a file name is escaped ------
rlo=$(printf '\u202e') lsep=$(printf '\u2028')
expect_error "a file name holding U+202E and U+2028: escaped in the message" 1 \
  "attn: error: --input $work/x\\u202egnp\\u2028.json: cannot open: No such file or directory" \
  trace --input "$work/x${rlo}gnp${lsep}.json"

# --- quoted fields are cut: a 5 MB dtype or name from a file is not a 5 MB error line (nor a
# 60 kB .npy dtype a 60 kB one) -------------------------------------------------------------
$py - <<'EOF'
import json, struct
def st(name, header):
    text = json.dumps(header, ensure_ascii=False).encode()
    open(name, "wb").write(struct.pack("<Q", len(text)) + text + b"\0" * 4)
st("dtype.safetensors", {"w_q": {"dtype": "\u00e9" * 2_500_000, "shape": [1], "data_offsets": [0, 4]}})
st("name.safetensors", {"w" * 5_000_000: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})
d = ("{'descr': '" + "x" * 60_000 + "', 'fortran_order': False, 'shape': (1,), }").encode()  # .npy's header limit
d += b" " * (-(len(d) + 13) % 64) + b"\n"
open("descr.npy", "wb").write(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(d)) + d + b"\0" * 4)
EOF
for f in dtype.safetensors name.safetensors descr.npy; do
  flag=--params; [ $f = descr.npy ] && flag=--input
  run trace $flag $f
  check "$f: a huge field from the file: one error line under 1000 bytes, exit 1" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$work/err') -eq 1 ] && [ \$(wc -c <'$work/err') -lt 1000 ] && grep -q '^attn: error: ' '$work/err'"
  check "... which says how long the field was" grep -qE '\.\.\. \((5000000|60000) bytes\)' "$work/err"
  check "... cut on a character boundary (é is 2 bytes: never half of one)" iconv -f UTF-8 -t UTF-8 "$work/err"
done

# --- 10. sizes added: --past N with Sk = N + Sq past 64 bits, from a flag, a dump, an exercise --
for args in "trace --past 9223372036854775807" "mask --past 9223372036854775807"; do
  expect_error "$args: names --past, not a --kv-seq never given" 2 \
    "attn: error: --past 9223372036854775807: Sk = N + Sq = 9223372036854775807 + 4 does not fit a 64-bit size; give a smaller --past" \
    $args
done
expect_error "--past 2^63 - 8 with --seq 100" 2 \
  "attn: error: --past 9223372036854775800: Sk = N + Sq = 9223372036854775800 + 100 does not fit a 64-bit size; give a smaller --past" \
  trace --past 9223372036854775800 --seq 100
"$attn" trace --past 2 --seq 1 --format json >past-2.json
$py -c "import json; d = json.load(open('past-2.json')); d['config']['past'] = 2**63 - 1; json.dump(d, open('past-dump.json', 'w'))"
expect_error "a dump whose past overflows past + seq: names its key" 1 \
  "attn: error: --from past-dump.json: config \"past\" is 9223372036854775807; expected a cache length N with N + seq (1) within a 64-bit size" \
  trace --from past-dump.json
mkdir -p past-share/exercises
printf '{"number": 1, "id": "past", "title": "t", "task": ["t"], "config": {"seq": 2, "past": 9223372036854775807}, "given": [], "answer": {"stage": "scores", "tensor": "scores", "shape": [1,2,2,9223372036854775807]}}' \
  >past-share/exercises/01-past.json
ATTN_SHARE_DIR=$work/past-share "$attn" exercise show 1 >"$work/out" 2>"$work/err"; rc=$?
check "an exercise whose past overflows past + seq: names its keys, exit 1" \
  test "$rc $(cat "$work/err")" = "1 attn: error: $work/past-share/exercises/01-past.json: config \"past\" is 9223372036854775807 and \"seq\" 2: Sk = past + seq does not fit a 64-bit size"
expect_ok "--window 2^63 - 1 with the off-by-one mistake: W + 1 does not wrap" \
  trace --mask window --window 9223372036854775807 --mistake window_off_by_one --stage mask --format json
check "... every key stays in the window" \
  bash -c "jq -e '[.stages[] | select(.name == \"mask\") | .tensors.mask.data | flatten[]] | all' '$work/out'"

# --- 11. rope's base: angles float32 holds, the value as given ----------------------------------
expect_error "--rope-base 1e-320: angles inf or nan, refused" 2 \
  "attn: error: --rope-base 1e-320: rope's angles pos / base^(2/4) are not finite: base^(2/4) is 0 in float32, so inv_freq[1] is inf (and the angles inf or nan); give a larger base" \
  trace --pos rope --rope-base 1e-320
expect_error "--rope-base 1e-400: below a double, not refused as 0" 2 \
  "attn: error: --rope-base 1e-400: expected a number a double holds; this one is too small and would read as 0" \
  trace --pos rope --rope-base 1e-400
expect_ok "--rope-base 1e-30 still runs" trace --pos rope --rope-base 1e-30 --stage rope --format json
check "... with finite cos and sin" jq -e '[.stages.rope.tensors.cos.data, .stages.rope.tensors.sin.data | flatten[] | numbers] | length == 32' "$work/out"
"$attn" trace --pos rope --seq 2 --format json >rope-dump.json
$py -c "import json; d = json.load(open('rope-dump.json')); d['config']['rope_base'] = 1e-300; json.dump(d, open('rope-tiny.json', 'w'))"
expect_error "a dump's rope_base 1e-300: names the key" 1 \
  "attn: error: --from rope-tiny.json: config \"rope_base\" is 1e-300; expected a base rope can use: rope's angles pos / base^(2/4) are not finite: base^(2/4) is 0 in float32, so inv_freq[1] is inf (and the angles inf or nan); give a larger base" \
  trace --from rope-tiny.json
llama_tiny=$work/llama-tiny && mkdir -p "$llama_tiny" && cp "$llama"/* "$llama_tiny"/
$py -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); d['rope_theta'] = 1e-300; json.dump(d, open(p, 'w'))" "$llama_tiny/config.json"
run trace --params "$llama_tiny/model.safetensors"
check "a config.json's rope_theta 1e-300: names the key, exit 1" \
  bash -c "[ $rc -eq 1 ] && grep -q 'config.json: rope_theta is 1e-300: rope.s angles pos / base^(2/' '$work/err'"
"$attn" trace --mask causal --fill -1e9 --format json >fill-dump.json
$py -c "import json; d = json.load(open('fill-dump.json')); d['config']['fill'] = -1e39; d['config'].pop('fill_text'); json.dump(d, open('fill-big.json', 'w'))"
expect_error "a dump's fill -1e39 is refused, not replayed as -inf" 1 \
  "attn: error: --from fill-big.json: config \"fill\" is -1e+39; expected \"-inf\" or a number float32 holds" \
  trace --from fill-big.json

finish
