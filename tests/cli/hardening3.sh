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
# (the count depends on what the process holds at start, its libraries: read from the message)
threads_said='^attn: error: --threads 4096: ulimit -v 585\.9 MiB holds at most ([0-9]+) threads? \(each a stack of 8\.0 MiB, ulimit -s, and a 64 MiB malloc arena, in half of what attn leaves free\); give --threads ([0-9]+) or fewer$'
limit_kb=600000 limited trace --threads 4096 --seq 256 --batch 4 --heads 8 --d-model 64 --format npz --out threads/x.npz
check "--threads 4096 under ulimit -v: refused before anything is written (exit 2, one line)" \
  bash -c "[ $rc = 2 ] && [ \$(wc -l <'$work/err') = 1 ] && grep -qE '$threads_said' '$work/err'"
fit=$(sed -nE "s/$threads_said/\1/p" "$work/err")
check "... and nothing is left in the folder" bash -c '[ -z "$(ls -A threads)" ]'
limit_kb=600000 ATTN_THREADS=4096 limited trace --seq 4
check "ATTN_THREADS=4096 under ulimit -v: refused, naming the variable" \
  bash -c "[ $rc = 2 ] && grep -qE '^attn: error: ATTN_THREADS=4096: .* give ATTN_THREADS=$fit or fewer$' '$work/err'"
limit_kb=600000 limited trace --threads "$fit" --seq 256 --batch 4 --heads 8 --d-model 64 --format npz --out threads/x.npz
check "--threads $fit, the most it allows under the same limit, runs" bash -c "[ $rc = 0 ]"
check "... and leaves only its output" bash -c '[ "$(ls -A threads)" = x.npz ]'
for n in 20 34; do  # counts the older rule allowed (36): some died there; each is now refused or runs
  rm -f threads/x.npz
  limit_kb=600000 limited trace --threads "$n" --seq 256 --batch 4 --heads 8 --d-model 64 --format npz --out threads/x.npz
  check "--threads $n under ulimit -v 600000: refused (exit 2) or run whole, never cut off" \
    bash -c "{ [ $rc = 2 ] && [ -z \"\$(ls -A threads)\" ]; } || { [ $rc = 0 ] && [ \"\$(ls -A threads)\" = x.npz ]; }"
done
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
cp "$gpt2/vocab.json" "$gpt2/merges.txt" "$work/bad"$'\xff'/
run tokens --params "$work/bad"$'\xff'/model.safetensors --text "The robot" --format json
check "attn tokens --format json beside such a name: one warning line too" \
  bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$work/err')\" = 'attn: warning: the file name $work/bad\\xff/vocab.json is not UTF-8: the JSON'\\''s \"vocab\" writes each such byte escaped as \\xNN' ]"

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

# --- 3. a --from JSON dump: the values parsed from it within --max-memory -----------------------
# Before: its text (3 MB) was checked, then parsed whole (97 MB peak) before its config was refused.
"$attn" trace --seed 3 --format json >small-dump.json
$py -c "
import json
d = json.load(open('small-dump.json')); d['config']['notes'] = [0] * 1500000
open('padded-dump.json', 'w').write(json.dumps(d, separators=(',', ':')))"
for cmd in "trace" "check --stage softmax --answer one.npz"; do
  limit_kb=400000 expect_refusal "$cmd --from a 3 MB JSON dump of 1.5 M values under --max-memory 8MiB: refused while parsing" 1 \
    "attn: error: --from padded-dump.json: its text (2.9 MiB) and the values parsed from it pass the 8.0 MiB --max-memory allows (a JSON value takes up to 48 bytes as it is parsed; --max-memory none: no limit)" \
    $cmd --from padded-dump.json --max-memory 8MiB
done
run trace --from small-dump.json --max-memory 1MiB --format json
check "a dump within the budget replays as before" bash -c "[ $rc -eq 0 ] && [ \"\$(jq -c .stages.output '$work/out')\" = \"\$(jq -c .stages.output small-dump.json)\" ]"

# --- 4. the hand-out's secret check within the run's read budget -----------------------------------
# Before: an exercise.json past a fixed 16 MiB was not looked into: graded without its secret,
# the right answer failed as "unknown" (exit 1, no word of the secret).
ATTN_CLASS_SECRET=s3cret "$attn" exercise show 2 --student ann --out big-handout >/dev/null
ATTN_CLASS_SECRET=s3cret "$attn" exercise show 2 --student ann --format json >big-handout.json
jq '.given["scores.scores"].data | map(map(map(map(. / 2))))' big-handout.json >big-handout/answer.json
head -c 17000000 /dev/zero | tr '\0' ' ' >>big-handout/exercise.json  # the given tensors of a large run, say
fingerprint=$(jq -r .secret_fingerprint big-handout.json)
expect_error "a 17 MB hand-out graded without its secret: the secret check reads it (was: past 16 MiB, not looked into)" 1 \
  "attn: error: $work/big-handout/exercise.json says the hand-out was made with a class secret of fingerprint $fingerprint, and none is set: grade with that secret (ATTN_CLASS_SECRET or --secret FILE)" \
  exercise check 2 --student ann --answer "$work/big-handout/answer.json"
ATTN_CLASS_SECRET=s3cret expect_ok "... and with it, the answer passes" \
  exercise check 2 --student ann --answer "$work/big-handout/answer.json"
ATTN_CLASS_SECRET=s3cret expect_error "... under --max-memory 4MiB: refused naming the hand-out and the limit" 1 \
  "attn: error: $work/big-handout/exercise.json: its text needs 16.2 MiB, more than the 4.0 MiB --max-memory allows (--max-memory none: no limit)" \
  exercise check 2 --student ann --answer "$work/big-handout/answer.json" --max-memory 4MiB

# --- 6. --explain's comparison command carries the run's flags -----------------------------------
# Before: "(attn trace --seq 5 --mask causal, same seed)": other sizes, heads and positions, so
# nothing compared. Now the command is the run's; its last Sq rows are the step's (within
# rounding: BLAS multiplies [Sk,dk] where the step multiplies [Sq,dk]).
cat >full_pass.py <<'PY'
import json, shlex, subprocess, sys
import numpy as np
attn, args = sys.argv[1], sys.argv[2:]
step = json.loads(subprocess.run([attn, "trace", *args, "--explain", "--format", "json"],
                                 capture_output=True, text=True, check=True).stdout)
why = step["stages"]["append"]["explain"]["why"]
command = why.split(" tokens (", 1)[1].split(")", 1)[0]
assert command.startswith("attn trace "), command
full = json.loads(subprocess.run([attn, *shlex.split(command)[1:], "--format", "json"],
                                 capture_output=True, text=True, check=True).stdout)
Sq = step["config"]["seq"]
for stage, name in (("softmax", "weights"), ("context", "context")):
    a = np.array(step["stages"][stage]["tensors"][name]["data"], dtype=np.float32)
    b = np.array(full["stages"][stage]["tensors"][name]["data"], dtype=np.float32)[..., -Sq:, :]
    assert a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6), (command, stage)
print(command)
PY
full_pass() {
  local name=$1; shift
  if out=$($py full_pass.py "$attn" "$@" 2>&1); then ok "$name"; else fail "$name" "$(tail -n 1 <<<"$out")"; fi
}
full_pass "--past 3 --seq 2 --seed 5, H 4, G 2, rope, causal+window, --fill -1e9: the suggested command's last rows are the step's" \
  --past 3 --seq 2 --seed 5 --heads 4 --d-model 16 --kv-heads 2 --pos rope --mask causal+window --window 2 --fill -1e9
full_pass "... B 2, alibi, causal+padding" \
  --past 3 --seq 2 --seed 5 --batch 2 --heads 4 --d-model 16 --pos alibi --mask causal+padding --lengths 5,4
full_pass "... Din 12, no biases, rope interleaved at base 500000" \
  --past 4 --seq 1 --seed 7 --d-in 12 --no-qkv-bias --pos rope --rope-base 500000 --rope-style interleaved --mask causal
printf '[[%s]]' "$(printf '[0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8],%.0s' 1 2 3 4 | sed 's/,$//'),[1,2,3,4,5,6,7,8]" >x5.json
run trace --past 3 --seq 2 --mask causal --input x5.json --explain --stage append --format json
check "a run from files: the command is said in words" \
  bash -c "jq -r .stages.append.explain.why '$work/out' | grep -q 'over all 5 tokens (the same command and files with --seq 5 and without --past 3)'"

# --- JSON parsed whole: a safetensors header is charged 16 bytes per byte of its text before it is
# parsed (parsed_json_bytes_per_byte), a dump's config member each value as it is parsed --------
# Before: a 5.6 MiB safetensors header under --max-memory 8MiB peaked at 79 MB before any
# refusal; a 2.9 MiB config member of an .npz dump under 16MiB at 97 MB.
$py - <<'PY'
import io, json, struct, zipfile
import numpy as np
h = {"t%06d" % i: {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(100000)}
text = json.dumps(h, separators=(",", ":")).encode()
open("big_header.safetensors", "wb").write(struct.pack("<Q", len(text)) + text)
buf = io.BytesIO()
np.save(buf, np.array('{"tokens": [' + ",".join(["1"] * 1500000) + ']}'))
with zipfile.ZipFile("big_config.npz", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("config.npy", buf.getvalue())
PY
limit_kb=60000 expect_refusal "a 5.6 MiB safetensors header under --max-memory 8MiB: refused before it is parsed (in 60 MB)" 1 \
  "attn: error: --params big_header.safetensors: its header of 5.6 MiB, parsed needs 90.0 MiB, more than the 8.0 MiB --max-memory allows (--max-memory none: no limit)" \
  trace --params big_header.safetensors --max-memory 8MiB
limit_kb=60000 expect_refusal "a 2.9 MiB config member of an .npz dump under --max-memory 16MiB: refused as it is parsed (in 60 MB)" 1 \
  "attn: error: --from big_config.npz: config: its text with the values parsed from it needs 4.6 MiB, more than the 4.6 MiB --max-memory 16.0 MiB leaves after the other files (--max-memory none: no limit)" \
  trace --from big_config.npz --max-memory 16MiB

# --- a message on stderr: a byte that starts no UTF-8 character is escaped, never raw ----------
bad=$'n\xff\x9b'  # 0x9b alone: CSI on an 8-bit terminal
mkdir -p "$work/$bad" && cp "$models/gpt2"/{model.safetensors,vocab.json,merges.txt,config.json} "$work/$bad/"
run tokens --params "$work/$bad/model.safetensors" --text "zzqx"
check "an error quoting a folder that is not UTF-8 escapes its bytes (\\xff\\x9b)" grep -qF 'n\xff\x9b/vocab.json' "$work/err"
check "... and no raw byte of it reaches the terminal" bash -c "! LC_ALL=C grep -q \$'\\xff' '$work/err'"

finish
