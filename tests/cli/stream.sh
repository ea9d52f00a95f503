#!/usr/bin/env bash
# Command-line tests: only what is asked, streamed. A --stage run equals the same
# stages cut from a full run; the [B,H,Sq,Sk] stages in blocks of rows (--block-rows,
# sizes that do not divide Sq, with dropout) equal whole planes to the bit; --threads 1
# equals the default; the npz streams NumPy reads; peak RSS stays bounded.
# Usage: stream.sh path/to/attn. Needs jq; python3 with NumPy and /usr/bin/time when present.
set -u
attn=${1:?usage: stream.sh path/to/attn}
. "$(dirname "$0")/common.sh"
export PATH="/usr/bin:$PATH"

run_cfg="--batch 2 --seq 7 --heads 2 --d-model 8 --mask causal --dropout 0.3 --train --seed 3"

# --- a --stage run holds the full run's stages ------------------------------------------
"$attn" trace $run_cfg --format json >"$work/full.json" 2>/dev/null
for s in params projections scores masked softmax dropout context output; do
  "$attn" trace $run_cfg --stage "$s" --format json >"$work/one.json" 2>/dev/null
  if [ "$(jq -c ".stages.\"$s\".tensors" "$work/one.json")" = "$(jq -c ".stages.\"$s\".tensors" "$work/full.json")" ] &&
     [ "$(jq -c '.stages | keys' "$work/one.json")" = "[\"$s\"]" ]; then ok "--stage $s equals the full run's"
  else fail "--stage $s equals the full run's"; fi
done

# --- blocks of rows equal whole planes, to the bit --------------------------------------
for rows in 1 3 5 7 100; do
  "$attn" trace $run_cfg --format jsonl --block-rows "$rows" >"$work/blocked.jsonl" 2>/dev/null
  "$attn" trace $run_cfg --format jsonl >"$work/whole.jsonl" 2>/dev/null
  check "--block-rows $rows (jsonl, dropout) equals whole planes" cmp -s "$work/blocked.jsonl" "$work/whole.jsonl"
  "$attn" trace $run_cfg --format npz --out "$work/blocked.npz" --block-rows "$rows" 2>/dev/null
  "$attn" trace $run_cfg --format npz --out "$work/whole.npz" 2>/dev/null
  if python3 -c 'import numpy' 2>/dev/null; then
    check "--block-rows $rows (npz, written in rows) holds whole planes' arrays, bit for bit" python3 -c "
import numpy as np
a = np.load('$work/blocked.npz'); b = np.load('$work/whole.npz')
assert sorted(a.files) == sorted(b.files)
for k in a.files:
    x, y = a[k], b[k]
    assert x.shape == y.shape and x.dtype == y.dtype
    assert (x == y).all() if x.dtype != np.float32 else (x.view(np.uint32) == y.view(np.uint32)).all(), k"
  fi
done
"$attn" trace $run_cfg --stage softmax --head 1 --row 4 --format json --block-rows 3 >"$work/a.json" 2>/dev/null
"$attn" trace $run_cfg --stage softmax --head 1 --row 4 --format json >"$work/b.json" 2>/dev/null
check "--block-rows with --head --row equals whole planes" cmp -s "$work/a.json" "$work/b.json"
"$attn" trace $run_cfg --fill -2 --format json --block-rows 2 2>/dev/null | jq -S . >"$work/a.json"
"$attn" trace $run_cfg --fill -2 --format json 2>/dev/null | jq -S . >"$work/b.json"
check "--block-rows with a weak --fill: the same document (its warning after the tensors)" cmp -s "$work/a.json" "$work/b.json"

# --- a large npz: whole [B,H,Sq,Sk] stages or rows, to a file or a pipe, the same bytes -----
# Its [B,H,Sq,Sk] stages (64 MiB each here) written whole, to a file or a pipe, must be
# the bytes a run in rows of whole planes writes.
big_cfg="--seq 1024 --heads 16 --d-model 64 --mask causal --dropout 0.1 --train --seed 5"
"$attn" trace $big_cfg --format npz --out "$work/big_whole.npz" 2>/dev/null
"$attn" trace $big_cfg --format npz --block-rows 1024 --out "$work/rows.npz" 2>/dev/null
"$attn" trace $big_cfg --format npz 2>/dev/null | cat >"$work/piped.npz"
check "a large npz, its stages whole (a file), equals one written in rows" cmp -s "$work/big_whole.npz" "$work/rows.npz"
check "a large npz, its stages whole (a pipe), equals one written in rows" cmp -s "$work/piped.npz" "$work/rows.npz"
rm -f "$work/big_whole.npz" "$work/rows.npz" "$work/piped.npz"

# --- threads do not change bits ----------------------------------------------------------
big="--batch 2 --seq 33 --heads 4 --d-model 32 --mask causal --dropout 0.1 --train"
"$attn" trace $big --format npz --out "$work/t1.npz" --threads 1 2>/dev/null
"$attn" trace $big --format npz --out "$work/tn.npz" 2>/dev/null
check "--threads 1 equals the default" cmp -s "$work/t1.npz" "$work/tn.npz"
ATTN_THREADS=1 "$attn" trace $big --format npz --out "$work/te.npz" 2>/dev/null
check "ATTN_THREADS=1 equals the default" cmp -s "$work/te.npz" "$work/tn.npz"
# a product OpenBLAS splits among its threads, where the split changes last bits (its edge
# kernels): [1024,1024]·[1024,4] per head. It runs on OpenBLAS's own threads, as in
# PyTorch, whatever --threads says and whether the planes are whole or in rows (with the
# old rule, 49925 of the 65536 context elements differed)
sizes="--seq 1024 --heads 16 --d-model 64 --mask causal"
"$attn" trace $sizes --stage context --format npz --out "$work/t1.npz" --threads 1 2>/dev/null
"$attn" trace $sizes --stage context --format npz --out "$work/tn.npz" 2>/dev/null
check "--threads 1 equals the default, for a product OpenBLAS splits" cmp -s "$work/t1.npz" "$work/tn.npz"
# The whole run as npz, its context member compared byte for byte (as JSON it was 677 MB
# for jq to parse: 20 s of CPU)
"$attn" trace $sizes --format npz --out "$work/whole.npz" 2>/dev/null
check "... and whole [B,H,Sq,Sk] tensors equal planes in rows" python3 -c "
import sys, zipfile
rows, whole = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])
names = [n for n in rows.namelist() if n.startswith('context.')]
assert names and all(rows.read(n) == whole.read(n) for n in names)" "$work/tn.npz" "$work/whole.npz"
rm -f "$work/whole.npz"
# idle OpenMP threads sleep (OMP_WAIT_POLICY=passive: libgomp spins 0 times), unless the
# user says otherwise; only a static libgomp sees it (CMakeLists.txt)
if ! ldd "$attn" 2>/dev/null | grep -q libgomp; then
  spin_count() { env "$@" OMP_DISPLAY_ENV=verbose "$attn" trace 2>&1 >/dev/null | sed -n "s/^ *GOMP_SPINCOUNT = '\(.*\)'/\1/p"; }
  check "OpenMP's idle threads sleep at once" test "$(spin_count)" = 0
  check "... unless OMP_WAIT_POLICY says otherwise" test "$(spin_count OMP_WAIT_POLICY=active)" != 0
  check "... or GOMP_SPINCOUNT" test "$(spin_count GOMP_SPINCOUNT=5000)" = 5000
fi
expect_error "--threads 0 is refused" 2 \
  "attn: error: --threads 0: expected a whole number from 1 to 4096" trace --threads 0

# --- NumPy reads the streamed npz ----------------------------------------------------------
if python3 -c 'import numpy' 2>/dev/null; then
  "$attn" trace --seq 40 --heads 4 --d-model 16 --mask causal --stage softmax --format npz --out "$work/w.npz" \
    --block-rows 7 2>/dev/null
  "$attn" trace --seq 40 --heads 4 --d-model 16 --mask causal --format npz --out "$work/all.npz" 2>/dev/null
  check "numpy reads a streamed npz, equal to the full run's array" python3 -c "
import numpy as np
a = np.load('$work/w.npz')['softmax.weights']; b = np.load('$work/all.npz')['softmax.weights']
assert a.shape == (1, 4, 40, 40) and a.dtype == np.float32 and (a.view(np.uint32) == b.view(np.uint32)).all()"
else
  echo "skip numpy (no python3 with NumPy)"
fi

# --- memory: a --stage softmax run holds a block, not the 256 MiB tensor --------------------
if [ -x /usr/bin/time ] && [ -z "${ATTN_SANITIZED:-}" ]; then  # ASan's shadow memory counts in RSS
  /usr/bin/time -f '%M' -o "$work/rss" "$attn" trace --seq 2048 --d-model 256 --heads 16 --mask causal \
    --stage softmax --format npz --out "$work/big.npz" --max-memory 128MiB 2>/dev/null
  kib=$(tail -n 1 "$work/rss")
  if [ "$kib" -lt 131072 ]; then ok "--stage softmax, 256 MiB array under --max-memory 128MiB: peak RSS ${kib} KiB"
  else fail "--stage softmax peak RSS" "$kib KiB, wanted under 128 MiB"; fi
  check "the 256 MiB array is whole" test "$(stat -c %s "$work/big.npz")" -gt 268435456
else
  echo "skip peak RSS (no /usr/bin/time, or under ASan)"
fi

finish
