#!/usr/bin/env bash
# hardening3.sh ATTN: issue 40's last items, each a case that failed before: --threads under
# ulimit -v (libgomp ended the process mid-write), an .npz answer's members checked by their
# headers, a --from JSON dump's parsed values within --max-memory, the hand-out secret check
# within the run's read budget, a warning for a name escaped because it is not UTF-8, and
# --explain's comparison command carrying the run's flags.
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"
py=/usr/bin/python3
cd "$work"

# --- 7. --threads under an address-space limit -----------------------------------------------
# Before: libgomp "Thread creation failed", exit 1, a .attn-XXXX temp file left beside x.npz.
# (ulimit -s 8 MiB, the usual default, so that the counts below are the same on every machine;
# under ASan there is no ulimit -v: limited runs without it)
ulimit -s 8192 2>/dev/null
mkdir threads
if [ -z "${ATTN_SANITIZED:-}" ]; then
limit_kb=600000 expect_refusal "--threads 4096 under ulimit -v: refused before anything is written" 2 \
  "attn: error: --threads 4096: ulimit -v 585.9 MiB holds the stacks of at most 36 threads (8.0 MiB each, ulimit -s, in half of it); give --threads 36 or fewer" \
  trace --threads 4096 --seq 256 --batch 4 --heads 8 --d-model 64 --format npz --out threads/x.npz
check "... and nothing is left in the folder" bash -c '[ -z "$(ls -A threads)" ]'
limit_kb=600000 ATTN_THREADS=4096 expect_refusal "ATTN_THREADS=4096 under ulimit -v: refused" 2 \
  "attn: error: ATTN_THREADS=4096: ulimit -v 585.9 MiB holds the stacks of at most 36 threads (8.0 MiB each, ulimit -s, in half of it); give ATTN_THREADS=36 or fewer" \
  trace --seq 4
limit_kb=600000 expect_ok "--threads 36 under the same limit runs" \
  trace --threads 36 --seq 256 --batch 4 --heads 8 --d-model 64 --format npz --out threads/x.npz
check "... and leaves only its output" bash -c '[ "$(ls -A threads)" = x.npz ]'
fi

# --- 5. a name escaped because it is not UTF-8 says so -----------------------------------------
# Before: the JSON's "model" held \xff and nothing said why.
mkdir "$work/bad"$'\xff'
cp "$gpt2/model.safetensors" "$gpt2/config.json" "$work/bad"$'\xff'/
run trace --params "$work/bad"$'\xff'/model.safetensors --seq 3 --format json
want="attn: warning: the file name $work/bad\\xff/model.safetensors is not UTF-8: the model's name and where its weights came from are written with each such byte escaped as \\xNN (the config's \"model\" too)"
if [ "$rc" -eq 0 ] && [ "$(cat "$work/err")" = "$want" ]; then ok "a checkpoint under a folder named with byte 0xFF: one warning line"
else fail "a checkpoint under a folder named with byte 0xFF: one warning line" "exit $rc: $(cat "$work/err")"; fi
check "... the same warning in the JSON's warnings" \
  jq -e --arg w "${want#attn: warning: }" '.warnings == [$w] and (.config.model | endswith("bad\\xff/model.safetensors"))' "$work/out"
run trace --params "$gpt2/model.safetensors" --seq 3
check "... and none for a UTF-8 name" test ! -s "$work/err"

# --- 2. an .npz answer: each member's shape from its header, before its data is inflated ----------
# Before: "--answer a.npz: unknown file type '.npz'"; a reader would have inflated the member first.
$py - <<'PY'
import struct, zipfile
d = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 8192, 8192), }"
d += " " * (63 - (10 + len(d)) % 64) + "\n"
with zipfile.ZipFile("bomb.npz", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:  # 512 MiB of zeros in 500 KB
    with z.open("arr_0.npy", "w") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode())
        chunk = bytes(1 << 22)
        for _ in range(128): f.write(chunk)
PY
limit_kb=400000 limited check --stage softmax --answer bomb.npz --format json
check "check of an .npz answer declaring 512 MiB (zip-bombed): a wrong-shape diagnosis from its header, in 400 MB, exit 1" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -r '.diagnosis.id, (.answer_shape|tostring)' '$work/out' | tr '\n' ' ')\" = 'unknown [1,2,8192,8192] ' ]"
limit_kb=400000 limited exercise check 7 --answer bomb.npz --format json
check "exercise check of the same .npz: a wrong-shape diagnosis from its header, exit 1" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -r '.diagnosis.id, (.answer_shape|tostring)' '$work/out' | tr '\n' ' ')\" = 'unknown [1,2,8192,8192] ' ]"
"$attn" trace --seed 3 --mask causal --format npz --out dump.npz
$py -c "import numpy as np; z = np.load('dump.npz'); np.savez('one.npz', z['softmax.weights'])"
expect_ok "an .npz of one array (np.savez) is checked: a match" check --seed 3 --mask causal --stage softmax --answer one.npz
expect_ok "a --format npz dump: its member softmax.weights is the answer" check --seed 3 --mask causal --stage softmax --answer dump.npz
run check --seed 3 --mask causal --stage transpose --tensor k --answer dump.npz
check "... and transpose.k with --tensor k" bash -c "[ $rc -eq 0 ] && grep -q '^stage      transpose (5), tensor k' '$work/out'"
$py -c "import numpy as np; np.savez('two.npz', a=np.zeros(3, np.float32), b=np.zeros(3, np.float32))"
run check --stage softmax --answer two.npz
check "an .npz of two arrays, neither named softmax.*: one line asking which" \
  bash -c "[ $rc -ne 0 ] && [ \"\$(head -n 1 '$work/err')\" = 'attn: error: --answer two.npz: which array? it holds 2 (a, b); keep one (np.savez(\"a.npz\", t)) or name it softmax.TENSOR (with --tensor), as --format npz dumps do' ]"

finish
