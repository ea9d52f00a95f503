#!/usr/bin/env bash
# budget.sh ATTN: issue 25, items 1 and 7. One memory budget for every command (trace,
# check, mask, exercise show|check take --max-memory with trace's default), the same
# exit codes for the same impossible sizes, an answer checked by its header's shape
# before its data is read, and the space free on the file system of --out checked
# before a large output. Memory is bounded with `ulimit -v`, as in hardening.sh.
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"
py=/usr/bin/python3
cd "$work"

# --- every command that computes takes --max-memory, and says so when it refuses ---------
echo '[[1]]' >one.json
expect_refusal "check --max-memory: the right run's need against it, exit 1" 1 \
  "attn: error: these sizes need 775.1 MiB but the limit is 100.0 MiB (--max-memory); the largest stages are scores, scaled, softmax at 256.0 MiB each, for [B,H,Sq,Sk] = [2,8,2048,2048]" \
  check --batch 2 --seq 2048 --heads 8 --d-model 64 --no-out-proj --stage softmax --answer one.json --max-memory 100MiB
# attn mask writes a row at a time (mask_command.sh checks its peak): a row that cannot fit is
# refused up front with the sizes, by the mask's own need, not by a trace run's
limit_kb=400000 expect_refusal "mask --kv-seq 50000000 under --max-memory 1GiB: refused up front with the sizes" 1 \
  "attn: error: these sizes need 4.7 GiB but the limit is 1.0 GiB (--max-memory); attn mask writes the mask [B,1,Sq,Sk] = [1,1,2,50000000] a row at a time: a row of 50000000 keys in four conventions takes 4.7 GiB" \
  mask --mask causal --seq 2 --kv-seq 50000000 --max-memory 1GiB
limit_kb=400000 limited mask --mask causal+random --seq 2 --kv-seq 50000000 --max-memory 1GiB --format json
check "mask --format json over the budget: one line, exit 1, no abort" \
  test "$rc $(wc -l <"$work/err")" = "1 1"
expect_ok "mask --max-memory takes trace's sizes" mask --mask causal --max-memory 1MiB
run exercise show 13 --max-memory 8KiB
check "exercise show --max-memory: the run's need against it, naming the exercise file, exit 1" \
  bash -c "[ $rc -eq 1 ] && grep -q '^attn: error: .*13-multi-head-attention.json: these sizes need .* but the limit is 8.0 KiB (--max-memory)' '$work/err'"
run exercise check 13 --answer one.json --max-memory 8KiB
check "exercise check --max-memory: the same, before the answer is graded" \
  bash -c "[ $rc -eq 1 ] && grep -q '^attn: error: .*13-multi-head-attention.json: these sizes need .* (--max-memory)' '$work/err'"
run exercise show 7 --max-memory 1KiB
check "exercise show --max-memory 1KiB: the exercise files themselves are read within it, exit 1" \
  bash -c "[ $rc -eq 1 ] && grep -q '^attn: error: .*exercises/.*json: its text .*needs .* more than the 1.0 KiB --max-memory allows' '$work/err'"
expect_ok "exercise show under the default budget" exercise show 7
for cmd in "check --stage softmax --answer one.json" "mask --mask causal" "exercise show 7" "exercise check 7 --answer one.json"; do
  "$attn" $cmd --help >"$work/out" 2>&1
  check "$cmd --help documents --max-memory" grep -q -- "--max-memory SIZE" "$work/out"
done

# --- --from dumps: read within the budget ---------------------------------------------------
"$attn" trace --seq 300 --d-model 64 --format json --out big-dump.json --quiet
expect_refusal "a 9 MB .json dump under --max-memory 1MiB: refused by its size before parsing" 1 \
  "attn: error: --from big-dump.json: its text needs 9.1 MiB, more than the 1.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --from big-dump.json --max-memory 1MiB
$py - <<'EOF2'
import io, json, zipfile
import numpy as np
config = json.load(open("big-dump.json"))["config"]
config.update(batch=256, seq=1024, d_in=1024, d_model=1024, d_kv_in=1024, kv_seq=1024, head_dim=512)
def member(z, name, a):
    b = io.BytesIO(); np.save(b, a); z.writestr(name + ".npy", b.getvalue())
def zeros(z, name, shape):  # member(z, name, np.zeros(shape, np.float32)), its bytes streamed a MiB at a time
    header = io.BytesIO(); np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with z.open(name + ".npy", "w") as f:
        f.write(header.getvalue())
        for _ in range(4 * int(np.prod(shape)) >> 20): f.write(bytes(1 << 20))
with zipfile.ZipFile("bomb-dump.npz", "w", zipfile.ZIP_DEFLATED) as z:  # 1 MB holding 1 GiB
    member(z, "config", np.array(json.dumps(config)))
    zeros(z, "input.x", (256, 1024, 1024))
EOF2
limit_kb=300000 expect_refusal "an .npz dump holding a 1 GiB member (a 1 MB zip bomb): refused before inflating" 1 \
  "attn: error: --from bomb-dump.npz: input.x: shape [256,1024,1024] as float32 needs 1.0 GiB, more than the 100.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --from bomb-dump.npz --max-memory 100MiB
limit_kb=300000 expect_refusal "check --from the same dump: the same refusal" 1 \
  "attn: error: --from bomb-dump.npz: input.x: shape [256,1024,1024] as float32 needs 1.0 GiB, more than the 100.0 MiB --max-memory allows (--max-memory none: no limit)" \
  check --from bomb-dump.npz --stage softmax --answer one.json --max-memory 100MiB

# --- the same impossible sizes, the same exit code in trace, check and mask --------------
printf '[[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]' >m4.json
for cmd in "trace" "check --stage softmax --answer one.json" "mask"; do
  limited $cmd --batch 4611686018427387904 --mask-file m4.json
  check "$cmd: sizes past any memory are refused by the budget, exit 1" \
    bash -c "[ $rc -eq 1 ] && grep -q '^attn: error: these sizes need more than 16 EiB but the limit is .* (--max-memory)' '$work/err'"
  limited $cmd --batch 4611686018427387904 --mask-file m4.json --max-memory none
  check "$cmd --max-memory none: what no machine addresses is a usage error, exit 2" \
    bash -c "[ $rc -eq 2 ] && grep -q '^attn: error: these sizes make a tensor .* more than a 64-bit machine can address' '$work/err'"
done

# --- "the largest stage" is never said to be larger than the total -----------------------
# streamed a row at a time, the run needs less than its largest stage whole: said so
expect_refusal "a run in rows: its largest stages named as whole, not as part of the total" 1 \
  "attn: error: these sizes need 9.1 MiB but the limit is 4.0 MiB (--max-memory); the largest stages are scores, scaled, softmax (128.0 MiB each whole, computed here a row at a time), for [B,H,Sq,Sk] = [1,2,4096,4096]" \
  trace --seq 4096 --d-model 64 --format jsonl --max-memory 4MiB

# --- attn check: an answer of a shape no run makes, known before anything is computed ----
$py -c "import numpy as np; np.save('small.npy', np.zeros((1, 2, 4, 4), np.float32))"
start=$(date +%s%N)
limit_kb=400000 limited check --seq 6000 --stage softmax --answer small.npy --format json
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "check --seq 6000 with a [1,2,4,4] answer: a wrong-shape diagnosis in 400 MB, exit 1" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -r '.diagnosis.id, (.answer_shape|tostring), (.expected_shape|tostring)' '$work/out' | tr '\n' ' ')\" = 'unknown [1,2,4,4] [1,2,6000,6000] ' ]"
check "... in well under a second (${ms} ms)" test "$ms" -lt 1000
# an answer whose header declares 2 GiB, sparse on disk: its data is never read
$py - <<'EOF'
import struct
d = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 16384, 16384), }"
d += b" " * (63 - (10 + len(d)) % 64) + b"\n"
with open("huge.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d)
    f.truncate(10 + len(d) + 4 * 2 * 16384 * 16384)
EOF
limit_kb=400000 limited check --stage softmax --answer huge.npy --format json
check "an answer declaring 2 GiB (a sparse file): wrong shape, in 400 MB, exit 1" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -r '.diagnosis.id, (.answer_shape|tostring)' '$work/out' | tr '\n' ' ')\" = 'unknown [1,2,16384,16384] ' ]"
"$attn" check --stage softmax --answer small.npy --format json >"$work/whole.json"
check "the same answer's report from its header as from its data" \
  bash -c "[ \"\$(jq -c 'del(.tolerance)' '$work/whole.json')\" = \"\$('$attn' check --stage softmax --answer small.npy --format json | jq -c 'del(.tolerance)')\" ]"
echo '[[[[1,2,3,4]]]]' >small.json
run check --stage softmax --answer small.json --format json
check "a .json answer of a count no run makes: the same diagnosis" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -r .diagnosis.id '$work/out')\" = unknown ]"
run check --stage softmax --answer small.json
check "... whose note says what the shape is" grep -q "4 elements instead of 32 \[B,H,Sq,Sk\] = \[1,2,4,4\]" "$work/out"
run check --stage transpose --tensor nope --answer small.npy
check "a tensor the stage lacks is still a usage error from the header's path" \
  bash -c "[ $rc -eq 2 ] && grep -q '^attn: error: --tensor nope: the transpose stage has no tensor nope (it has q, k, v)' '$work/err'"

# --- free space before a large output ------------------------------------------------------
ATTN_TEST_FREE_BYTES=1000 "$attn" trace --seq 64 --format npz --out small.npz >"$work/out" 2>"$work/err"; rc=$?
check "npz larger than the space free: refused at once, exit 1, with both sizes and the flag" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(cat '$work/err')\" = 'attn: error: --out small.npz: this output needs at least 125.1 KiB, but its file system has 1000 bytes free (--no-space-check: write anyway)' ]"
check "... and nothing written" test ! -e small.npz
ATTN_TEST_FREE_BYTES=1000 "$attn" trace --seq 64 --format npz --out small.npz --no-space-check >/dev/null 2>&1
check "--no-space-check writes it" test -s small.npz
ATTN_TEST_FREE_BYTES=1000 "$attn" trace --seq 64 --format json >/dev/null 2>&1
check "stdout is not checked (a pipe has no file system)" test $? -eq 0
ATTN_TEST_FREE_BYTES=1000 "$attn" trace --seq 64 --out table.txt >/dev/null 2>&1
check "a table, which prints a few rows, is not checked" test $? -eq 0
# a real file system of 1 MiB (tmpfs), where root may mount one: statvfs itself
mkdir -p small-fs
if [ -z "${ATTN_SANITIZED:-}" ] && mount -t tmpfs -o size=1m tmpfs small-fs 2>/dev/null; then
  run trace --seq 512 --format json --out small-fs/x.json
  check "json into a 1 MiB tmpfs: refused before computing, exit 1" \
    bash -c "[ $rc -eq 1 ] && grep -q '^attn: error: --out small-fs/x.json: this output needs at least .* MiB, but its file system has 1.0 MiB free (--no-space-check: write anyway)' '$work/err'"
  check "... the tmpfs left empty" test -z "$(ls -A small-fs)"
  : >small-fs/x.json
  ln -s small-fs/x.json link.json
  run trace --seq 512 --format jsonl --out link.json
  check "through a symlink: the target's file system is checked" \
    bash -c "[ $rc -eq 1 ] && grep -q 'its file system has 1.0 MiB free' '$work/err'"
  expect_ok "a small output fits there" trace --format json --out small-fs/x.json
  umount small-fs
else
  echo "skip tmpfs (mount not permitted here): the ATTN_TEST_FREE_BYTES cases above stand in"
fi

# --- the default budget reads ulimit -v, and OpenBLAS is not starved of its buffers ---------
# (no ulimit -v under ASan: its shadow memory needs terabytes of address space)
if [ -z "${ATTN_SANITIZED:-}" ]; then
  (ulimit -v 700000; timeout 60 "$attn" trace --seq 12000 --heads 2 --stage softmax --format npz --out /dev/null) \
    >"$work/out" 2>"$work/err"; rc=$?
  check "under ulimit -v 700000 the default budget is 80% of it: 1.1 GiB planes come in row blocks, exit 0 (was: out of memory)" \
    test "$rc:$(cat "$work/err")" = "0:"
  (ulimit -v 300000; timeout 60 "$attn" trace --seq 4000 --heads 2 --stage softmax) >"$work/out" 2>"$work/err"; rc=$?
  check "under ulimit -v 300000 OpenBLAS stays on one thread: the run ends, exit 0 (was: a hang in its buffer allocation)" \
    test "$rc" -eq 0
  (ulimit -v 300000; "$attn" trace --seq 200000 --d-model 64 --heads 2) >"$work/out" 2>"$work/err"; rc=$?
  check "under ulimit -v 300000 a run too large for 80% of it: one line naming --max-memory, exit 1" \
    bash -c "[ $rc -eq 1 ] && grep -q '^attn: error: these sizes need .* but the limit is .* (--max-memory)' '$work/err'"
fi

# --- every byte read within the budget: text members, pipes, headers, token tables -------
$py - "$gpt2" <<'EOF2'
import io, json, struct, sys, zipfile
import numpy as np
gpt2 = sys.argv[1]
def npy_header(descr, shape):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    d += " " * (63 - (10 + len(d)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()
def streamed(z, name, header, chunk, count):  # a member of len(header) + count*len(chunk) bytes, never held whole
    with z.open(name, "w") as f:
        f.write(header)
        for _ in range(count): f.write(chunk)
config = json.load(open("big-dump.json"))["config"]
with zipfile.ZipFile("text-bomb.npz", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:  # 300 KB: a 64M-character config
    streamed(z, "config.npy", npy_header("<U67108864", "()"), "a".encode("utf-32-le") * (1 << 18), 256)
tensors = dict(np.load(gpt2 + "/model.npz"))
with zipfile.ZipFile("wide-table.npz", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:  # wte.weight 256 MiB of zeros, D 1024
    for name, a in tensors.items():
        if name == "wte.weight": continue
        b = io.BytesIO(); np.save(b, a); z.writestr(name + ".npy", b.getvalue())
    streamed(z, "wte.weight.npy", npy_header("<f4", "(65536, 1024)"), bytes(1 << 22), 64)
# a safetensors header of 6 MB that breaks only at its end: a reader without the budget parses it first
entries = {"t%07d" % i: {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i in range(80000)}
text = json.dumps(entries)[:-1] + ', "broken": }'
open("big-header.safetensors", "wb").write(struct.pack("<Q", len(text)) + text.encode() + bytes(4 * 80000))
EOF2
for cmd in "trace --from text-bomb.npz" "trace --from text-bomb.npz --shapes" "check --from text-bomb.npz --stage softmax --answer one.json"; do
  limit_kb=300000 expect_refusal "$cmd: a 64M-character config text member refused by its header, before it is inflated" 1 \
    "attn: error: --from text-bomb.npz: config: a text of 67108864 characters needs 256.0 MiB, more than the 16.0 MiB --max-memory allows (--max-memory none: no limit)" \
    $cmd --max-memory 16MiB
done
mkfifo pipe.npy
(head -c 50000000 /dev/zero >pipe.npy 2>/dev/null &)
limit_kb=300000 expect_refusal "a FIFO --input read only up to the budget (was: 50 MB read, then 'not a NumPy .npy file')" 1 \
  "attn: error: --input pipe.npy: its text needs 8.1 MiB, more than the 8.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --input pipe.npy --max-memory 8MiB
expect_refusal "a safetensors header larger than the budget: refused before it is parsed, at 16 times its text (was: parsed once without it)" 1 \
  "attn: error: --params big-header.safetensors: its header of 5.9 MiB, parsed needs 94.4 MiB, more than the 4.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --params big-header.safetensors --max-memory 4MiB
limit_kb=300000 expect_refusal "--tokens with a zip-bombed token table of another width: refused from its header, not inflated" 1 \
  "attn: error: --params wide-table.npz: wte.weight has shape [65536,1024], but layer 0's input is D = 16 wide (h.0.attn.c_attn.weight has shape [16,48]): --tokens needs a table [rows, 16]" \
  trace --params wide-table.npz --tokens 1,2,3

# exercise files, vocabularies, secrets and answers: each within the budget
mkdir -p share/exercises
cp "$here/../../share/attn/exercises/07-causal-weights.json" share/exercises/
$py -c "
import json
json.dump({'number': 9, 'id': 'padded', 'pad': 'x' * 20000000}, open('share/exercises/09-padded.json', 'w'))"
run_share() { ATTN_SHARE_DIR=$work/share "$attn" "$@" >"$work/out" 2>"$work/err"; rc=$?; }
expect_error_from run_share "a 20 MB exercise file under --max-memory 8MiB: refused by its size, before it is read" 1 \
  "attn: error: $work/share/exercises/09-padded.json: its text needs 19.1 MiB, more than the 8.0 MiB --max-memory allows (--max-memory none: no limit)" \
  exercise show 7 --max-memory 8MiB
$py -c "
import json
json.dump({'number': 9, 'id': 'padded', 'pad': [0] * 1500000}, open('share/exercises/09-padded.json', 'w'))"
expect_error_from run_share "a 4.5 MB exercise file of 1.5 million numbers: refused as its values are parsed (a JSON tree is larger than its text)" 1 \
  "attn: error: $work/share/exercises/09-padded.json: its text with the values parsed from it needs 8.0 MiB, more than the 8.0 MiB --max-memory allows (--max-memory none: no limit)" \
  exercise show 7 --max-memory 8MiB
$py -c "
import json
json.dump({'tok%d' % i: i for i in range(500000)}, open('big-vocab.json', 'w'))"
expect_refusal "a 10 MB --vocab under --max-memory 4MiB: refused by its size (was: read and parsed, 60 MB)" 1 \
  "attn: error: --vocab big-vocab.json: its text needs 9.8 MiB, more than the 4.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --params "$gpt2/model.safetensors" --tokens 1,2 --vocab big-vocab.json --max-memory 4MiB
head -c 1000000 /dev/zero | tr '\0' s >big-secret.txt
expect_refusal "a 1 MB --secret file: refused (was: read whole, any size)" 1 \
  "attn: error: --secret big-secret.txt: larger than 64 KiB; a class secret is a line of text" \
  exercise show 7 --student ada --secret big-secret.txt
limit_kb=400000 limited exercise check 7 --answer huge.npy --format json
check "exercise check of an answer declaring 2 GiB (a sparse .npy): a wrong-shape diagnosis from its header, exit 1 (was: read whole, or refused by the budget)" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -r '.diagnosis.id, (.answer_shape|tostring)' '$work/out' | tr '\n' ' ')\" = 'unknown [1,2,16384,16384] ' ]"

$py -c "import sys; open('big-layout.json', 'w').write('[' + '0,' * 3000000 + '0]')"
expect_refusal "exercise check of a 6 MB .json answer to a shapes exercise under --max-memory 4MiB: refused by its size (was: read and parsed whole)" 1 \
  "attn: error: --answer big-layout.json: its text needs 5.7 MiB, more than the 4.0 MiB --max-memory allows (--max-memory none: no limit)" \
  exercise check 16 --answer big-layout.json --max-memory 4MiB

# a picture's canvas, whose size the labels make too
$py -c "
import json
vocab = {str(i): 't%d' % i for i in range(50)}; vocab['1'] = 'x' * 5000
json.dump(vocab, open('long-token.json', 'w'))"
limit_kb=600000 expect_refusal "a 5,000-character token label: the PNG's canvas refused by --max-memory (was: a 2.7 GiB canvas)" 1 \
  "attn: error: the picture would be 26890 by 26862 pixels, a canvas of 2.7 GiB, more than the 256.0 MiB --max-memory allows: draw fewer panels (--stage, --batch-index, --head), with shorter labels, or use --format svg" \
  trace --params "$gpt2/model.safetensors" --tokens 1,2,3 --vocab long-token.json --format png --stage softmax --head 0 --out long.png --max-memory 256MiB
check "... and no file written" test ! -e long.png
# ... refused before the run: the page is laid out from the plan's shapes and the labels, so no
# stage is computed (on a terminal, with ATTN_PROGRESS_DELAY_MS=0, a run shows its progress line
# at once: was "attn trace: input, 0% of the work done" before the error)
if command -v script >/dev/null; then
  script -qefc "env -u CI ATTN_PROGRESS_DELAY_MS=0 $(printf '%q ' "$attn" trace --params "$gpt2/model.safetensors" \
    --tokens 1,2,3 --vocab long-token.json --format png --stage softmax --head 0 --out long.png --max-memory 256MiB)" \
    /dev/null >tty.txt 2>&1
  check "... before the run: the error alone on the terminal, no progress line" \
    bash -c "grep -aq '^attn: error: the picture would be 26890 by 26862 pixels' tty.txt && ! grep -aq 'attn trace: ' tty.txt"
else
  echo "skip: no script(1) for a pseudo-terminal"
fi
# many panels: a canvas of 137.9 MiB, refused from the sizes (was: after the run, at 32 MB), and a
# page past a PNG's side refused before the run's 500 MB of stages are computed (was: at 178 MB)
expect_error "240 panels under --max-memory 120MiB: the canvas refused" 1 \
  "attn: error: the picture would be 1636 by 22100 pixels, a canvas of 137.9 MiB, more than the 120.0 MiB --max-memory allows: draw fewer panels (--stage, --batch-index, --head), with shorter labels, or use --format svg" \
  trace --batch 60 --heads 4 --seq 128 --mask causal --format png --out panels.png --max-memory 120MiB
if [ -x /usr/bin/time ] && [ -z "${ATTN_SANITIZED:-}" ]; then
  /usr/bin/time -f '%M' -o rss "$attn" trace --batch 90 --heads 4 --seq 300 --mask causal --format png --out panels.png \
    2>err; rc=$?
  kib=$(tail -n 1 rss)
  if [ "$rc" -eq 1 ] && grep -q "^attn: error: the picture would be 1636 by 34400 points, too large for a PNG" err && [ "$kib" -lt 65536 ]; then
    ok "a page past a PNG's side, refused before the run's 500 MB of stages: peak RSS ${kib} KiB"
  else fail "a page past a PNG's side before the run" "exit $rc, $kib KiB: $(head -n 1 err)"; fi
fi
check "... and no file written" test ! -e panels.png

finish
