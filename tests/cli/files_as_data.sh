#!/usr/bin/env bash
# files_as_data.sh ATTN: issue 25, items 4 (rest), 5, 8 and 10. Text from files and the
# environment is data: control characters in file names, dump configs and variables are
# shown escaped, never raw on a terminal; a dump replays only when its config agrees with
# its tensors; every signal that ends attn removes its temporaries; and the smaller items.
set -u
attn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/common.sh"
cd "$work"
esc=$'\e'

# no_raw_control FILE: FILE holds no ESC, BEL, CR, C1 CSI (U+009B) or NUL.
no_raw_control() { ! LC_ALL=C grep -qP '[\x00\x07\x0d\x1b]|\xc2\x9b' "$1"; }

# --- item 4: control characters from any file are shown escaped --------------------------
# a file name with ESC, an OSC sequence and a newline, echoed by an error
name=$'x\e]0;pwned\a\nnext.json'
printf '[[[1,2],[3]]]' >"$name"
run trace --input "$name"
check "a file name with ESC, BEL and a newline: one line on stderr" test "$(wc -l <err)" -eq 1
check "... no raw control character" no_raw_control err
check "... escaped as \\x1b, \\x07, \\x0a" grep -qF 'x\x1b]0;pwned\x07\x0anext.json' err
check "... exit 1" test "$rc" -eq 1
# a C1 control (U+009B, CSI) in a file name
c1name=$'c1\xc2\x9b31m.json'
run trace --input "$c1name"
check "a file name with the C1 CSI (U+009B): escaped as \\u009b" grep -qF 'c1\u009b31m.json' err
check "... no raw C1 control" no_raw_control err
# --out naming a folder that does not exist, with ESC
run trace --out $'nodir\e[31m/x.json'
check "--out with ESC in a missing folder: escaped" bash -c "[ $rc -ne 0 ] && grep -qF 'nodir\\x1b[31m' err"
check "... no raw ESC" no_raw_control err
# a flag value typed with ESC (CLI11's own parse errors)
run trace --heads $'4\e[2J'
check "--heads with ESC: refused, escaped" bash -c "[ $rc -eq 2 ] && grep -qF '4\\x1b[2J' err"
check "... no raw ESC" no_raw_control err
# a warning that quotes a file name, in the table, the terminal heatmap and HTML
mname=$'m\e]0;pwned\a.json'
printf '[[1,0,0,0],[0,0,0,0],[1,1,1,0],[1,1,1,1]]' >"$mname"
for f in table heatmap html; do
  run trace --mask-file "$mname" --format "$f" --stage mask --color never
  check "--format $f: a warning quoting a file name with an OSC shows it escaped" grep -qF 'm\x1b]0;pwned\x07.json' out
  check "... no raw control character on stdout" no_raw_control out
done
# exercise show --out: the folder name echoed on stdout
dir=$'hand\e[31mout'
run exercise show 7 --out "$dir"
check "exercise show --out with ESC in the folder name: written" test "$rc" -eq 0
check "... its name echoed escaped on stdout" grep -qF 'hand\x1b[31mout:' out
check "... no raw ESC on stdout" no_raw_control out

# dump config strings: escaped in messages, bounded in length
"$attn" trace --mask causal --format json >dump.json
jq --arg m "causal$esc]0;pwned" '.config.mask = $m' dump.json >mask-esc.json
run trace --from mask-esc.json
check "a dump's config \"mask\" with an OSC: refused naming the key" bash -c "[ $rc -eq 1 ] && grep -qF 'config \"mask\"' err"
check "... no raw ESC" no_raw_control err
jq --arg m "$(head -c 5000 /dev/zero | tr '\0' c)" '.config.mistake = $m' dump.json >long.json
expect_error "a dump's config string of 5000 bytes: refused naming the key" 1 \
  "attn: error: --from long.json: config \"mistake\" is a string of 5000 bytes; expected at most 64" trace --from long.json
jq '.config.mask_keep = 1e300' dump.json >keep.json
expect_error "a dump's mask_keep outside the flag's range" 1 \
  "attn: error: --from keep.json: config \"mask_keep\" is 1e+300; expected a number from 0 to 1" trace --from keep.json
jq '.config.dropout = -5' dump.json >dropout.json
expect_error "a dump's dropout outside the flag's range" 1 \
  "attn: error: --from dropout.json: config \"dropout\" is -5; expected a number from 0 to 1" trace --from dropout.json

# --- item 5: a dump replays only when its config agrees with its tensors --------------------
"$attn" trace --format json >self.json
jq '.config.seq = 6 | .config.kv_seq = 6' self.json >seq6.json
expect_error "config seq 6 with input.x [1,4,8]: refused naming both" 1 \
  "attn: error: --from seq6.json: input.x has shape [1,4,8], but its config says \"seq\" 6, which makes it [B,Sq,Din] = [1,6,8]; the dump contradicts itself" \
  trace --from seq6.json
jq '.config.d_model = 4 | .config.head_dim = 2 | .config.d_in = 8 | .config.d_kv_in = 8' self.json >dmodel.json
run trace --from dmodel.json
check "config d_model 4 with params.b_k [8]: refused naming both" \
  bash -c "[ $rc -eq 1 ] && grep -qF 'params.b_k has shape [8], but its config says \"d_model\" 4' err"
jq '.stages.input.tensors.x.data[0][0][0] = 0.5' self.json >edited-x.json
expect_error "input_file false with an edited x: refused, not called torch.randn" 1 \
  "attn: error: --from edited-x.json: input.x is not what --seed 0 draws, but config \"input_file\" is false (every output would call it torch.randn or nn.Linear's draw); set \"input_file\": true to replay it as read from a file" \
  trace --from edited-x.json
jq '.config.input_file = true' edited-x.json >edited-x-file.json
expect_ok "... with \"input_file\": true it replays as read from a file" trace --from edited-x-file.json --stage input --format json
check "... and x is the edited one" test "$(jq '.stages.input.tensors.x.data[0][0][0]' out)" = 0.5
jq '.stages.params.tensors.w_o.data[1][2] = 7' self.json >edited-w.json
run trace --from edited-w.json
check "params_file false with an edited w_o: refused naming params_file" \
  bash -c "[ $rc -eq 1 ] && grep -qF 'params.w_o is not what --seed 0 draws, but config \"params_file\" is false' err"
expect_ok "an unedited dump still replays" trace --from self.json
"$attn" trace --stage params --format json | jq '.config.batch = 100000000000 | .config.seq = 100000 | .config.kv_seq = 100000' >params-only.json
# (no ulimit -v under ASan, ATTN_SANITIZED=1: its shadow memory needs terabytes of address space)
(if [ -z "${ATTN_SANITIZED:-}" ]; then ulimit -v 2000000; fi
 "$attn" trace --from params-only.json --batch 1 --seq 4 --stage input >out 2>err); rc=$?
check "a params-only dump whose config is huge, shrunk by flags: its check draws no x (2 GB of address space)" test "$rc" -eq 0
"$attn" trace --cross --kv-seq 3 --seed 5 --format npz --out cross.npz
expect_ok "an unedited cross-attention npz dump still replays" trace --from cross.npz

# --- item 10: a zero-size dimension beside huge ones in a --from JSON tensor ---------------
/usr/bin/python3 -c "
import json; d = json.load(open('self.json'))  # jq would round 2^62 to a double
d['stages']['input']['tensors']['x'].update(shape=[0, 2**62, 2**62], data=[])
json.dump(d, open('zero.json', 'w'))"
expect_error "a --from tensor of shape [0,2^62,2^62]: refused, no overflow" 1 \
  "attn: error: --from zero.json input.x: \"shape\" [0,4611686018427387904,4611686018427387904] has more elements than any tensor holds" \
  trace --from zero.json

# --- item 10: exercise files -----------------------------------------------------------------
mkdir -p share/exercises
ex=$here/../../share/attn/exercises/01-qk-by-hand.json
jq '.number = 4294967297' "$ex" >share/exercises/01.json
ATTN_SHARE_DIR=$work/share run exercise list
check "an exercise number above 2^31: refused, not wrapped to 1" \
  bash -c "[ $rc -eq 1 ] && grep -qF '\"number\" is 4294967297; expected a whole number from 1 to 2147483647' err"
jq '.number = 1' "$ex" | sed 's/"number": 1,/"number": 1e400,/' >share/exercises/01.json
ATTN_SHARE_DIR=$work/share run exercise list
check "a number overflow (1e400) in an exercise file names the file" \
  bash -c "[ $rc -eq 1 ] && grep -qF '$work/share/exercises/01.json: not valid JSON: number overflow' err"
jq '.number = 1' "$ex" >share/exercises/01.json
mkfifo share/exercises/02-fifo.json
ATTN_SHARE_DIR=$work/share timeout 20 "$attn" exercise list >out 2>err; rc=$?
check "a FIFO among the exercise files: exercise list does not hang" test "$rc" -eq 0
check "... the FIFO is skipped with a note" \
  grep -qxF "attn: note: $work/share/exercises/02-fifo.json: not a regular file; skipped" err
check "... the others are listed" grep -q 'qk-by-hand' out
mkdir -p noexercises
ATTN_SHARE_DIR=$work/noexercises run exercise list
check "ATTN_SHARE_DIR without exercises/: attn's own, and a note saying so" \
  bash -c "[ $rc -eq 0 ] && grep -q '^attn: note: ATTN_SHARE_DIR=$work/noexercises holds no exercises/ folder; using ' err"

# --- item 10: --fill as Python reads it and as float32 holds it -------------------------------
run trace --mask causal --fill 0x1p3 --format torch --stage masked
check "--fill 0x1p3: accepted" test "$rc" -eq 0
run trace --mask causal --fill 0x1p3 --stage masked
check "... the PyTorch line says 8, which Python reads" grep -qF 'masked = scaled.masked_fill(mask == false, 8)' out
check "... 0x1p3 nowhere in the table" bash -c "! grep -q 0x1p3 out"
expect_error "--fill 1e-50: refused, float32 makes it 0" 2 \
  "attn: error: --fill 1e-50: float32 makes it 0 (its smallest normal number is 1.1754944e-38); give 0, or a number from 1.2e-38 in size" \
  trace --mask causal --fill 1e-50
expect_ok "--fill 1e-30 is held by float32" trace --mask causal --fill 1e-30
jq '.config.fill = 0 | .config.fill_text = "1e-50"' dump.json >fill-tiny.json
run trace --from fill-tiny.json
check "a dump whose fill_text 1e-50 stands over fill 0: refused" bash -c "[ $rc -eq 1 ] && grep -qF 'config \"fill_text\"' err"
jq '.config.fill = 8 | .config.fill_text = "0x1p3"' dump.json >fill-hex.json
run trace --from fill-hex.json
check "a dump whose fill_text is hex: refused" bash -c "[ $rc -eq 1 ] && grep -qF 'config \"fill_text\"' err"

# --- item 10: attn check: a wrong answer and an unreadable file, told apart -------------------
"$attn" trace --stage softmax --format json | jq '.stages.softmax.tensors.weights.data | .[0][0][0][0] = 0.9' >wrong.json
run check --stage softmax --answer wrong.json --format json
check "check, a wrong answer: exit 1, \"match\": false, nothing on stderr" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -c .match out)\" = false ] && [ ! -s err ]"
run check --stage softmax --answer missing.json --format json
check "check, an unreadable answer: exit 1 as before (scripts keep working)" test "$rc" -eq 1
check "... its JSON says there is no verdict: match null, error unreadable_answer" \
  test "$(jq -c '[.match, .error.id, .error.message]' out)" = \
  '[null,"unreadable_answer","--answer missing.json: cannot open: No such file or directory"]'
check "... and one line on stderr naming --answer" \
  test "$(cat err)" = "attn: error: --answer missing.json: cannot open: No such file or directory"
run check --stage softmax --answer missing.json
check "... as a table: no report on stdout" bash -c "[ $rc -eq 1 ] && [ ! -s out ]"
run exercise check 7 --answer missing.npy --format json
check "exercise check, an unreadable answer: match null, error unreadable_answer" \
  bash -c "[ $rc -eq 1 ] && [ \"\$(jq -c '[.match, .error.id]' out)\" = '[null,\"unreadable_answer\"]' ]"

# --- item 10: ATTN_THREADS --------------------------------------------------------------------
for bad in abc 0 -2 4097 '1 2' 99999999999999999999; do
  ATTN_THREADS=$bad run trace
  check "ATTN_THREADS='$bad': refused naming it, exit 2" \
    bash -c "[ $rc -eq 2 ] && [ ! -s out ] && grep -qxF \"attn: error: ATTN_THREADS=$bad: expected a whole number from 1 to 4096 (or leave it unset for every core)\" err"
done
ATTN_THREADS=$'2\e[31m' run trace
check "ATTN_THREADS with ESC: escaped" bash -c "[ $rc -eq 2 ] && grep -qF 'ATTN_THREADS=2\\x1b[31m' err"
ATTN_THREADS=2 expect_ok "ATTN_THREADS=2 runs" trace
ATTN_THREADS= expect_ok "ATTN_THREADS empty: every core, as unset" trace
ATTN_THREADS=abc run trace --help
check "ATTN_THREADS=abc: --help still helps" test "$rc" -eq 0

# --- item 10: --block-rows 0 names the flag ---------------------------------------------------
expect_error "--block-rows 0 names the flag" 2 \
  "attn: error: --block-rows 0: expected a whole number from 1 to 9223372036854775807" trace --block-rows 0 --format json

# --- item 8/10: every signal whose default ends attn removes its temporaries -------------------
ulimit -c 0  # SIGSYS, SIGTRAP and the faults dump core by default
temporaries() { find "$1" -maxdepth 1 -name '.attn-*' | wc -l; }
mkdir sig
signals="VTALRM PROF IO PWR STKFLT SYS TRAP RTMIN RTMAX"
# Under ASan (ATTN_SANITIZED=1) the sanitizer holds the fault signals: it reports them itself.
[ -z "${ATTN_SANITIZED:-}" ] && signals="$signals SEGV BUS ABRT FPE ILL"
for sig in $signals; do
  want=$((128 + $(kill -l "$sig")))
  "$attn" trace --batch 2 --seq 2000 --heads 4 --format npz --out sig/big.npz 2>/dev/null &
  pid=$!
  for _ in $(seq 500); do [ "$(temporaries sig)" = 0 ] || break; sleep 0.02; done
  saw=$(temporaries sig)
  kill -s "$sig" "$pid"; { wait "$pid"; } 2>/dev/null; rc=$?
  check "SIG$sig during --out: the run had its temporary, ended with $want, none left" \
    test "$saw:$rc:$(temporaries sig)" = "1:$want:0"
done


# --- JSON readers: a NUL byte and a key given twice are refused, not read past or kept silently --
printf '[[1,2]]\0[[3,4]]' >"$work/nul.json"
expect_error "--input with a NUL byte after its array: refused (was: read up to it, the rest ignored)" 1 \
  "attn: error: --input $work/nul.json: a NUL byte at offset 7; JSON text holds none (is the file cut or not JSON?)" \
  trace --input "$work/nul.json" --d-model 2 --seq 1
mkdir -p "$work/dup"
cp "$gpt2/model.npz" "$work/dup/"
/usr/bin/python3 -c "
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
open(sys.argv[2], 'w').write(text[:-1] + ', \"n_head\": 1}')" "$gpt2/config.json" "$work/dup/config.json"
expect_error "config.json with a key given twice: refused, naming it (was: the last one kept)" 1 \
  "attn: error: $work/dup/config.json: the key \"n_head\" appears twice in one object (which one counts?)" \
  trace --params "$work/dup/model.npz"
/usr/bin/python3 -c "
import json, sys
open(sys.argv[2], 'w').write(json.dumps(json.load(open(sys.argv[1]))) + '\0junk')" "$gpt2/config.json" "$work/dup/config.json"
run trace --params "$work/dup/model.npz"
check "config.json with a NUL byte after the object: refused (was: read up to it)" \
  bash -c "[ $rc -eq 1 ] && grep -q 'config.json: a NUL byte at offset' '$work/err'"


"$attn" trace --format json | sed 's/"config":{/"config":{"seq":9,/' >"$work/dup-dump.json"
expect_error "a --from dump whose config gives a key twice: refused, naming it (was: the last one kept)" 1 \
  "attn: error: --from $work/dup-dump.json: the key \"seq\" appears twice in one object (which one counts?)" \
  trace --from "$work/dup-dump.json"

# --- names that are not UTF-8, and a replayed model's name cut between characters ----------
bad=$(printf "$work/bad\\xff")
mkdir -p "$bad" && cp "$gpt2/model.npz" "$gpt2/config.json" "$bad/"
expect_ok "--format json of a checkpoint under a folder named with byte 0xFF (was: failed after the run)" \
  trace --params "$bad/model.npz" --format json
check "... its config.model writes the byte as \\xff" \
  bash -c "jq -r .config.model '$work/out' | grep -qF 'bad\\xff/model.npz'"
expect_ok "--format npz of the same: written" trace --params "$bad/model.npz" --format npz --out "$work/bad.npz"
"$attn" trace --params "$bert/model.npz" --format json | jq --arg m "a$(printf 'é%.0s' $(seq 200))" '.config.model = $m' >"$work/long-model.json"
expect_ok "a dump whose model is 'a' and 400 bytes of 'é' replays to json (was: cut inside a character, then unwritable)" \
  trace --from "$work/long-model.json" --format json --out "$work/replayed.json"
expect_ok "... and attn reads its own dump back" trace --from "$work/replayed.json" --stage softmax
check "... the model cut to at most 256 bytes, on a character boundary" \
  test "$(jq -r .config.model "$work/replayed.json" | head -c 300 | wc -c)" -eq 256

finish
