#!/usr/bin/env bash
# Output that never damages (issue 11, findings 4, 5 and 6): what --out does to
# devices, FIFOs, symlinks, hard links, read-only files, directories and long names;
# write errors on every format, to --out and to stdout; closed pipes; signals.
# Usage: output_safety.sh path/to/attn. Prints one line per check and "N passed, N failed".
# Needs root for the device copies (mknod) and the 1 MiB tmpfs (mount); skips those otherwise.
# /dev/null and /dev/stdout themselves are written to only after a FIFO behind a symlink
# and a copy of /dev/null have survived this attn's --out.
set -u
attn=${1:?usage: output_safety.sh path/to/attn}
. "$(dirname "$0")/common.sh"
root=false; [ "$(id -u)" = 0 ] && root=true
formats=(table json jsonl npz torch py heatmap svg png html dot)
small=(--seq 5 --heads 2 --mask causal)
d=$work/d; mkdir "$d"

# temporaries DIR: how many .attn-XXXXXX files DIR holds.
temporaries() { find "$1" -maxdepth 1 -name '.attn-*' | wc -l; }

# --- finding 4: --out replaces only what it should ------------------------------------
if $root; then
  mknod "$d/full" c 1 7 && mknod "$d/null" c 1 3
  for f in "${formats[@]}"; do
    expect_error "--format $f --out a copy of /dev/full: one line, exit 1" 1 \
      "attn: error: --out $d/full: No space left on device" trace "${small[@]}" --format "$f" --out "$d/full"
  done
  check "... which is still a character device" test -c "$d/full"
  expect_ok "--out a copy of /dev/null" trace "${small[@]}" --format npz --out "$d/null"
  check "... which is still a character device" test -c "$d/null"
fi
# The system's own /dev/null and /dev/stdout only once a copy of /dev/null has survived:
# an attn that renames over its --out would replace them (it is run as root).
safe_with_devices=false
mkfifo "$work/guard_fifo" && ln -s "$work/guard_fifo" "$work/guard_link"
timeout 60 cat "$work/guard_fifo" >/dev/null &
"$attn" trace "${small[@]}" --out "$work/guard_link" >/dev/null 2>&1
wait
if [ -p "$work/guard_fifo" ] && [ -L "$work/guard_link" ] && { ! $root || [ -c "$d/null" ]; }; then
  safe_with_devices=true
else
  fail "this attn replaces what --out names: the checks on /dev/null and /dev/stdout are not run"
fi
if $safe_with_devices && $root; then
  expect_ok "--out /dev/null itself" trace "${small[@]}" --format json --out /dev/null
  check "... which is still a character device" test -c /dev/null
  check "... and still /dev/null (1, 3)" test "$(stat -c '%t,%T' /dev/null)" = "1,3"
fi

mkfifo "$d/fifo"
# The readers give up after a while: if the FIFO were replaced, they would wait forever.
timeout 60 cat "$d/fifo" >"$work/from_fifo" &
reader=$!
expect_ok "--out a FIFO with a reader" trace "${small[@]}" --format json --out "$d/fifo"
wait "$reader"
"$attn" trace "${small[@]}" --format json >"$work/direct"
check "... the reader got the whole output" cmp -s "$work/from_fifo" "$work/direct"
check "... and the FIFO is still a FIFO" test -p "$d/fifo"
timeout 60 head -c 10 "$d/fifo" >/dev/null &
reader=$!
expect_error "--out a FIFO whose reader goes away: one line, exit 1" 1 \
  "attn: error: --out $d/fifo: Broken pipe" trace --seq 300 --format json --out "$d/fifo"
wait "$reader"
check "... and it is still a FIFO" test -p "$d/fifo"

mkdir "$d/real"
echo old >"$d/real/t.json"
ln -s real/t.json "$d/link.json"
expect_ok "--out a symlink" trace "${small[@]}" --format json --out "$d/link.json"
check "... stays a symlink" test -L "$d/link.json"
check "... to the same target" test "$(readlink "$d/link.json")" = real/t.json
check "... whose target holds the output" jq -e '.stages.softmax' "$d/real/t.json"
check "... and no temporary is left in either folder" test "$(temporaries "$d")$(temporaries "$d/real")" = 00

ln -s nowhere.json "$d/dangling.json"
expect_error "--out a dangling symlink" 1 \
  "attn: error: --out $d/dangling.json: a dangling symbolic link (to nowhere.json, which does not exist); attn writes through links, not over them" \
  trace "${small[@]}" --out "$d/dangling.json"
check "... stays a dangling symlink" test -L "$d/dangling.json" -a ! -e "$d/dangling.json"

echo old >"$d/a.json"
ln "$d/a.json" "$d/b.json"
expect_ok "--out a file with two hard links" trace "${small[@]}" --format json --out "$d/a.json"
check "... both names show the output" cmp -s "$d/a.json" "$d/b.json"
check "... which is the output" jq -e '.stages.softmax' "$d/b.json"
check "... still one file with two links" test "$(stat -c '%i %h' "$d/a.json")" = "$(stat -c '%i' "$d/b.json") 2"

echo keep >"$d/ro.json"
chmod 444 "$d/ro.json"
expect_error "--out a read-only file is refused, as cp does" 1 \
  "attn: error: --out $d/ro.json: Permission denied (the file is read-only)" trace "${small[@]}" --out "$d/ro.json"
check "... and left as it was" test "$(cat "$d/ro.json")" = keep
check "... still 0444" test "$(stat -c %a "$d/ro.json")" = 444

echo old >"$d/mode.json"
chmod 640 "$d/mode.json"
expect_ok "--out a 0640 file" trace "${small[@]}" --out "$d/mode.json"
check "... keeps 0640" test "$(stat -c %a "$d/mode.json")" = 640
(umask 027; "$attn" trace "${small[@]}" --out "$d/new.json")
check "a new --out file gets the umask's mode" test "$(stat -c %a "$d/new.json")" = 640

mkdir "$d/adir"
expect_error "--out a directory: refused before computing" 1 \
  "attn: error: --out $d/adir: is a directory; give a file name" trace "${small[@]}" --out "$d/adir"
expect_error "--out a name ending in /" 1 \
  "attn: error: --out $d/new/: is a directory name (it ends in /); give a file name" trace "${small[@]}" --out "$d/new/"
check "... which creates nothing" test ! -e "$d/new"

if $safe_with_devices; then
  "$attn" trace "${small[@]}" --format json --out /dev/stdout 2>"$work/err" | cat >"$work/piped"; rc=${PIPESTATUS[0]}
  check "--out /dev/stdout into a pipe: exit 0" test "$rc" -eq 0
  check "... and the pipe got the output" cmp -s "$work/piped" "$work/direct"
  echo "first line" >"$work/appended"
  "$attn" trace "${small[@]}" --format json --out /dev/stdout >>"$work/appended"
  check "--out /dev/stdout onto >> appends" test "$(head -1 "$work/appended")" = "first line" -a \
    "$(tail -n +2 "$work/appended" | cmp - "$work/direct" && echo same)" = same
  check "... and /dev/stdout is still a symbolic link" test -L /dev/stdout
  "$attn" trace --seq 512 --d-model 256 --heads 8 --format json --out /dev/stdout 2>"$work/err" | head -c 10 >/dev/null
  rc=${PIPESTATUS[0]}
  check "--out /dev/stdout into a closed pipe: 141 and nothing on stderr, as stdout" test "$rc:$(cat "$work/err")" = "141:"
  expect_error "--out /dev/fd/N not open: one line" 1 \
    "attn: error: --out /dev/fd/9: Bad file descriptor (not open for writing)" trace --out /dev/fd/9
fi

long=$(printf 'n%.0s' $(seq 254))
expect_ok "--out a valid 254-character name" trace "${small[@]}" --format json --out "$d/$long"
check "... holds the output" jq -e '.stages.softmax' "$d/$long"
check "no temporary file is left anywhere in the folder" test "$(temporaries "$d")" = 0

# --- finding 5: every write error is one line and exit 1; a closed pipe ends quietly -----
if [ -w /dev/full ]; then
  for f in "${formats[@]}"; do
    "$attn" trace "${small[@]}" --format "$f" >/dev/full 2>"$work/err"; rc=$?
    check "--format $f to a full stdout: exit 1" test "$rc" -eq 1
    check "... with one line" test "$(cat "$work/err")" = "attn: error: standard output: No space left on device"
  done
  "$attn" mask --mask causal >/dev/full 2>"$work/err"; rc=$?
  check "attn mask to a full stdout: exit 1 and one line" \
    test "$rc:$(cat "$work/err")" = "1:attn: error: standard output: No space left on device"
  "$attn" trace --help >/dev/full 2>"$work/err"; rc=$?
  check "--help to a full stdout: exit 1" test "$rc" -eq 1
fi

if $root && mkdir "$work/tiny" && mount -t tmpfs -o size=1m tmpfs "$work/tiny" 2>/dev/null; then
  "$attn" trace --seq 300 --format npz >"$work/tiny/t.npz" 2>"$work/err"; rc=$?
  check "--format npz to a stdout that fills up (1 MiB tmpfs): exit 1" test "$rc" -eq 1
  check "... and says so" grep -qx "attn: error: standard output: No space left on device" "$work/err"
  rm -f "$work/tiny/t.npz"
  echo old >"$work/tiny/keep.npz"
  expect_error "--format npz --out on a full file system" 1 \
    "attn: error: --out $work/tiny/keep.npz: No space left on device" trace --seq 300 --format npz --out "$work/tiny/keep.npz" --no-space-check
  check "... leaves the file as it was" test "$(cat "$work/tiny/keep.npz")" = old
  check "... and no temporary" test "$(temporaries "$work/tiny")" = 0
  umount "$work/tiny"
fi

for disposition in default ignored; do
  trap_cmd=; [ $disposition = ignored ] && trap_cmd="trap '' PIPE;"
  for f in json npz; do
    bash -c "$trap_cmd \"\$0\" trace --seq 300 --format $f 2>\"\$1\" | head -c 10 >/dev/null; exit \${PIPESTATUS[0]}" \
      "$attn" "$work/err"; rc=$?
    check "--format $f into a closed pipe, SIGPIPE $disposition: status 141" test "$rc" -eq 141
    check "... and nothing on stderr" test ! -s "$work/err"
  done
done
# the [B,H,Sq,Sk] stages written in rows as they are computed, whole and selected
for args in "--format json --stage softmax" "--format jsonl --stage softmax" "--format json --stage softmax --head 1"; do
  bash -c "\"\$0\" trace --seq 512 --d-model 256 --heads 8 $args 2>\"\$1\" | head -c 10 >/dev/null; exit \${PIPESTATUS[0]}" \
    "$attn" "$work/err"; rc=$?
  check "$args (in rows) into a closed pipe: status 141" test "$rc" -eq 141
  check "... and nothing on stderr" test ! -s "$work/err"
done
# a large output widens its pipe to 1 MiB (the reader sees the size once it has read all)
if command -v python3 >/dev/null; then
  pipe_size='import fcntl, sys; sys.stdin.buffer.read(); print(fcntl.fcntl(0, 1032))'  # F_GETPIPE_SZ
  check "a large output widens its pipe to 1 MiB" test "$("$attn" trace --seq 512 --d-model 256 --heads 8 \
    --stage softmax --format json | python3 -c "$pipe_size")" = 1048576
  check "... a small one leaves it as it was" test "$("$attn" trace | python3 -c "$pipe_size")" != 1048576
fi
"$attn" trace --seq 300 2>"$work/err" | head -1 >/dev/null
check "attn trace | head -1 prints nothing on stderr" test ! -s "$work/err"

# --- finding 6: a signal removes the temporary files and ends with 128 + its number ------
tmp=$work/tmpdir; mkdir "$tmp"
big=(--batch 2 --seq 2000 --heads 4 --format npz)
echo old >"$work/old"
for pair in INT:130 TERM:143 HUP:129; do
  sig=${pair%:*} want=${pair#*:}
  echo old >"$d/big.npz"
  # env --default-signal: a script's background job starts with SIGINT ignored.
  TMPDIR=$tmp env --default-signal=INT "$attn" trace "${big[@]}" --out "$d/big.npz" 2>/dev/null &
  pid=$!
  for _ in $(seq 500); do [ "$(temporaries "$d")" = 0 ] || break; sleep 0.02; done
  saw=$(temporaries "$d")
  kill -s "$sig" "$pid"; { wait "$pid"; } 2>/dev/null; rc=$?
  check "SIG$sig during --out: the run had its temporary" test "$saw" = 1
  check "SIG$sig during --out: status $want" test "$rc" -eq "$want"
  check "... no .attn-* left" test "$(temporaries "$d")" = 0
  check "... the old file untouched" cmp -s "$d/big.npz" "$work/old"
done
for pair in USR1:138 ALRM:142 XCPU:152; do
  sig=${pair%:*} want=${pair#*:}
  "$attn" trace "${big[@]}" --out "$d/big.npz" 2>/dev/null &
  pid=$!
  for _ in $(seq 500); do [ "$(temporaries "$d")" = 0 ] || break; sleep 0.02; done
  kill -s "$sig" "$pid"; { wait "$pid"; } 2>/dev/null; rc=$?
  check "SIG$sig during --out: status $want, no .attn-* left" test "$rc:$(temporaries "$d")" = "$want:0"
done
# a hard-linked FILE is written in place once the run is done: a signal then waits for the
# copy, so FILE is as it was or whole, never part-copied (signals sent every few ms)
linked=(--batch 2 --seq 1500 --stage 9-10 --format npz)
"$attn" trace "${linked[@]}" --out "$work/linked-whole.npz"
for delay in 0.01 0.02 0.03 0.04 0.05 0.06; do
  echo old >"$d/linked.npz"; ln -f "$d/linked.npz" "$d/linked-2.npz"
  "$attn" trace "${linked[@]}" --out "$d/linked.npz" 2>/dev/null &
  pid=$!
  sleep "$delay"
  while kill -s TERM "$pid" 2>/dev/null; do sleep 0.003; done
  { wait "$pid"; } 2>/dev/null
  cmp -s "$d/linked.npz" "$work/old" || cmp -s "$d/linked.npz" "$work/linked-whole.npz"; rc=$?
  check "SIGTERM after ${delay}s, hard-linked --out: as it was or whole" test "$rc" = 0
done
rm -f "$d/linked.npz" "$d/linked-2.npz"

# past `ulimit -f`: one line and exit 1, as a full disk (SIGXFSZ ignored), no temporary
echo old >"$d/limited.json"
bash -c 'ulimit -f 1000; exec "$0" trace --seq 512 --d-model 256 --heads 8 --format json --out "$1"' \
  "$attn" "$d/limited.json" 2>"$work/err"; rc=$?
check "past ulimit -f with --out: exit 1" test "$rc" -eq 1
check "... one line naming --out" test "$(cat "$work/err")" = "attn: error: --out $d/limited.json: File too large"
check "... the file as it was, no .attn-* left" test "$(cat "$d/limited.json"):$(temporaries "$d")" = "old:0"
bash -c 'ulimit -f 1000; exec "$0" trace --seq 512 --d-model 256 --heads 8 --format npz' "$attn" \
  >"$work/limited.npz" 2>"$work/err"; rc=$?
check "past ulimit -f on stdout: exit 1 and one line" \
  test "$rc:$(cat "$work/err")" = "1:attn: error: standard output: File too large"

TMPDIR=$tmp "$attn" trace "${big[@]}" >"$work/stdout.npz" 2>/dev/null &
pid=$!
for _ in $(seq 500); do [ -s "$work/stdout.npz" ] && break; sleep 0.02; done
kill -s TERM "$pid"; wait "$pid"; rc=$?
check "SIGTERM during npz to stdout: status 143" test "$rc" -eq 143
check "... and nothing in \$TMPDIR" test -z "$(ls -A "$tmp")"
TMPDIR=$tmp "$attn" trace "${small[@]}" --format npz >"$work/whole.npz"
check "npz to stdout needs no temporary file in \$TMPDIR" test -z "$(ls -A "$tmp")"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  check "... and NumPy reads it" /usr/bin/python3 -c \
    'import numpy as np, sys; z = np.load(sys.argv[1]); assert z["softmax.weights"].shape == (1, 2, 5, 5)' "$work/whole.npz"
fi

finish
