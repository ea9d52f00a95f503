#!/usr/bin/env bash
# Command-line tests: attn exercise list, show (table, json, --out DIR) and check, a
# variant per student. Every exercise is shown and checked: attn's own right answer,
# taken from `attn trace --format json` run with the variant's config (its values are
# tested against PyTorch elsewhere), must pass and a perturbed one must fail.
# Usage: exercise.sh path/to/attn. Needs jq and python3 with NumPy.
set -u
attn=${1:?usage: exercise.sh path/to/attn}
. "$(dirname "$0")/common.sh"
export PATH="/usr/bin:$PATH"  # Debian's python3, with NumPy
unset ATTN_SHARE_DIR

# trace_flags CONFIG.json: attn trace's flags for a config as the JSON documents write it.
trace_flags() {
  jq -r '[ "--batch", .batch, "--seq", .seq, "--kv-seq", .kv_seq, "--d-model", .d_model, "--heads", .heads,
           "--d-in", .d_in, "--d-kv-in", .d_kv_in, "--seed", .seed, "--mask", .mask,
           "--fill", (.fill_text // (.fill | tostring)) ]
         + (if .lengths then ["--lengths", (.lengths | map(tostring) | join(","))] else [] end)
         + (if .window then ["--window", .window] else [] end)
         + (if .causal_align then ["--causal-align", .causal_align] else [] end)
         + (if (.past // 0) > 0 then ["--past", .past] else [] end)
         + (if .kv_heads then ["--kv-heads", .kv_heads] else [] end)
         + (if (.pos // "none") != "none" then ["--pos", .pos] else [] end)
         + (if .pos == "rope" then ["--rope-base", .rope_base, "--rope-style", .rope_style] else [] end)
         + (if (.flash_block // 0) > 0 then ["--flash-block", .flash_block] else [] end)
         + (if .train then ["--dropout", .dropout, "--train", "--dropout-seed", .dropout_seed] else [] end)
         + (if .qkv_bias then [] else ["--no-qkv-bias"] end)
         + (if .out_proj then [] else ["--no-out-proj"] end) | map(tostring) | .[]' "$1"
}

# perturb IN OUT: the nested lists of IN with 0.5 added to the first number.
perturb() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
x = a
while isinstance(x[0], list): x = x[0]
x[0] = x[0] + 0.5
json.dump(a, open(sys.argv[2], "w"))
PY
}

# --- list ----------------------------------------------------------------------------
expect_ok "exercise list" exercise list
check "the list has a header and at least 12 exercises" test "$(grep -c '^ *[0-9]' "$work/out")" -ge 12
check "each line: number, id, the stage.tensor asked for, title" \
  grep -qE '^ 7  causal-weights +softmax\.weights +Causal attention weights, per head$' "$work/out"
expect_ok "exercise list --format json" exercise list --format json
cp "$work/out" "$work/list.json"
count=$(jq '.exercises | length' "$work/list.json")
check "the JSON list has every exercise" test "$count" -ge 12
check "... numbered 1 to $count" test "$(jq -c '[.exercises[].number]' "$work/list.json")" = "$(jq -nc "[range(1; $count + 1)]")"

# --- every exercise: shown, and graded against attn trace's own answer ------------------
for n in $(jq '.exercises[].number' "$work/list.json"); do
  expect_ok "exercise show $n" exercise show "$n"
  check "show $n: the title, the given tensors, the answer and the hints" \
    grep -qz "^Exercise $n · .*Given.*Your answer: .*Hints" "$work/out"
  expect_ok "exercise show $n --student s$n --format json" exercise show "$n" --student "s$n" --format json
  cp "$work/out" "$work/show.json"
  check "show $n json: number, student, every given tensor with data" \
    test "$(jq -c '[.number, .student, (.given | length > 0), ([.given[] | has("data") and has("shape")] | all)]' \
      "$work/show.json")" = "[$n,\"s$n\",true,true]"
  jq '.config' "$work/show.json" >"$work/config.json"
  stage=$(jq -r '.answer.stage' "$work/show.json") tensor=$(jq -r '.answer.tensor' "$work/show.json")
  mapfile -t flags < <(trace_flags "$work/config.json")
  "$attn" trace "${flags[@]}" --format json 2>/dev/null >"$work/trace.json"
  check "show $n json: the given tensors are attn trace's for the variant's config" test "$(jq --slurpfile t \
    "$work/trace.json" '[.given | to_entries[] | (.key | split(".")) as [$s, $n]
                          | .value.data == $t[0].stages[$s].tensors[$n].data] | all' "$work/show.json")" = true
  kind=$(jq -r '.answer.kind' "$work/show.json")
  case $kind in
    shapes)  # every stage's first tensor's shape, projections on, from the computed run
      jq '[.stages | to_entries[] | select(.value.step >= 3) | {(.key): (.value.tensors | to_entries[0].value.shape)}] | add' \
        "$work/trace.json" >"$work/right.json" ;;
    strides) jq ".stages.$stage.tensors.$tensor.strides" "$work/trace.json" >"$work/right.json" ;;
    *)       jq ".stages.$stage.tensors.$tensor.data" "$work/trace.json" >"$work/right.json" ;;
  esac
  [ "$kind" = shapes ] || check "trace's answer has the shape the exercise says" \
    test "$(jq -c ".stages.$stage.tensors.$tensor.shape" "$work/trace.json")" = "$(jq -c '.answer.shape' "$work/show.json")"
  expect_ok "check $n: attn trace's $kind answer ($stage.$tensor) for student s$n passes" \
    exercise check "$n" --student "s$n" --answer "$work/right.json"
  check "check $n: the verdict says match" grep -q '^verdict    match: ' "$work/out"
  if [ "$kind" = shapes ]; then jq '.transpose |= reverse' "$work/right.json" >"$work/wrong.json"
  elif [ "$kind" = strides ]; then jq '.[0] += 1' "$work/right.json" >"$work/wrong.json"
  else perturb "$work/right.json" "$work/wrong.json"; fi
  run exercise check "$n" --student "s$n" --answer "$work/wrong.json" --format json
  check "check $n: a perturbed answer fails with exit 1 and a diagnosis" \
    test "$rc:$(jq -c '[.match, (.diagnosis.id | length > 0)]' "$work/out")" = "1:[false,true]"
done

# --- a variant per student -------------------------------------------------------------
run exercise show 7 --student alice --format json; cp "$work/out" "$work/alice.json"
run exercise show 7 --student bob --format json; cp "$work/out" "$work/bob.json"
run exercise show 7 --student alice --format json
check "the same student gets the same numbers every time" cmp -s "$work/out" "$work/alice.json"
check "two students get different numbers" test "$(jq -c .given "$work/alice.json")" != "$(jq -c .given "$work/bob.json")"
check "... and different seeds, alice's as documented (FNV-1a)" \
  test "$(jq -c '[.seed]' "$work/alice.json")$(jq -c '[.seed]' "$work/bob.json")" = "[1024086593][1324092174]"
run exercise show 7 --format json
check "without --student: the exercise's own seed" test "$(jq -c '[.student, .seed]' "$work/out")" = "[null,7]"

# alice's right answer, computed with NumPy from the tensors she was given (not from attn)
weights_from() {  # $1: the show JSON of exercise 7, $2: the answer file (.npy)
  python3 - "$1" "$2" <<'PY'
import json, sys
import numpy as np
show = json.load(open(sys.argv[1]))
q = np.array(show["given"]["transpose.q"]["data"], dtype=np.float32)  # [1,2,4,4]
k = np.array(show["given"]["transpose.k"]["data"], dtype=np.float32)
scores = q @ k.transpose(0, 1, 3, 2) / np.float32(2.0)             # / sqrt(dk), dk = 4
scores = np.where(np.tril(np.ones((4, 4), dtype=bool)), scores, -np.inf)
e = np.exp(scores - scores.max(axis=-1, keepdims=True))
np.save(sys.argv[2], (e / e.sum(axis=-1, keepdims=True)).astype(np.float32))
PY
}
weights_from "$work/alice.json" "$work/alice.npy"
weights_from "$work/bob.json" "$work/bob.npy"
expect_ok "alice's answer, worked in NumPy from her tensors, passes for alice" \
  exercise check 7 --student alice --answer "$work/alice.npy"
run exercise check 7 --student bob --answer "$work/alice.npy"
check "alice's right answer fails for bob (exit 1)" test "$rc" = 1
check "... with a mismatch verdict" grep -q '^verdict    mismatch: softmax.weights of exercise 7 (student bob)$' "$work/out"
expect_ok "bob's own answer passes for bob" exercise check causal-weights --student bob --answer "$work/bob.npy"
expect_ok "check --format json on a match" exercise check 7 --student alice --answer "$work/alice.npy" --format json
check "... match true, no diagnosis, the student and the shapes" test "$(jq -c \
  '[.match, .diagnosis, .student, .expected_shape, .answer_shape]' "$work/out")" = \
  '[true,null,"alice",[1,2,4,4],[1,2,4,4]]'

# --- --out DIR: the folder a student gets ------------------------------------------------
expect_ok "show 7 --student alice --out DIR" exercise show 7 --student alice --out "$work/class/alice"
check "... says what it wrote" test "$(cat "$work/out")" = \
  "$work/class/alice: q.npy q.json k.npy k.json task.md exercise.json"
check "... q.npy, k.npy load in NumPy: float32, [1,2,4,4], the numbers of show --format json" python3 - \
  "$work/class/alice" "$work/alice.json" <<'PY'
import json, sys
import numpy as np
d, show = sys.argv[1], json.load(open(sys.argv[2]))
for name in ("q", "k"):
    a = np.load(f"{d}/{name}.npy")
    assert a.dtype == np.float32 and a.shape == (1, 2, 4, 4), (a.dtype, a.shape)
    assert (a == np.array(show["given"]["transpose." + name]["data"], dtype=np.float32)).all()
    assert (a == np.array(json.load(open(f"{d}/{name}.json")), dtype=np.float32)).all()
PY
check "... exercise.json is show --format json" cmp -s "$work/class/alice/exercise.json" "$work/alice.json"
check "... task.md has the task, the files, the answer's shape and the check command" grep -qz \
  "# Exercise 7: Causal attention weights, per head.*q.npy.*\[1,2,4,4\].*attn exercise check 7 --student alice --answer answer.npy" \
  "$work/class/alice/task.md"
check "... and the hints folded away" test "$(grep -c '^<details><summary>Hint' "$work/class/alice/task.md")" = 3
check "... whose Python loads the given tensors" grep -qxF 'q = torch.from_numpy(np.load("q.npy"))  # [1,2,4,4]' \
  "$work/class/alice/task.md"
expect_ok "--out again overwrites the folder" exercise show 7 --student alice --out "$work/class/alice"
expect_ok "a boolean-free exercise with six given tensors" exercise show 10 --out "$work/cross"
check "... each as .npy and .json" test "$(ls "$work/cross" | tr '\n' ' ')" = \
  "b_k.json b_k.npy b_q.json b_q.npy exercise.json task.md w_k.json w_k.npy w_q.json w_q.npy x.json x.npy x_kv.json x_kv.npy "
expect_error "--out with --format: one or the other" 2 \
  "attn: error: --out $work/x writes files (the tensors, task.md, exercise.json); --format json is for printing: give one of them" \
  exercise show 7 --out "$work/x" --format json
touch "$work/file"
expect_error "--out under a file: an error naming the flag" 1 \
  "attn: error: --out $work/file/x: $work/file is not a folder" exercise show 7 --out "$work/file/x"

# --- the classroom's sample answers (examples/classroom/answers, made in PyTorch) --------
answers="$(dirname "$0")/../../examples/classroom/answers"
for s in alice bob; do
  expect_ok "sample answer of $s (right) passes for $s" exercise check 7 --student "$s" --answer "$answers/$s/answer.npy"
done
# after the merge with attn check, each wrong answer is also diagnosed as the mistake it was made with
declare -A made=([carol]=softmax_axis [dave]=missing_scale [erin]=mask_inverted [frank]=wrong_scale [grace]=q_k_swapped)
for s in carol dave erin frank grace; do
  run exercise check 7 --student "$s" --answer "$answers/$s/answer.npy" --format json
  check "sample answer of $s (${made[$s]}) fails for $s" test "$rc:$(jq .match "$work/out")" = "1:false"
  if ! "$attn" check 2>&1 | grep -q 'no command is called check'; then  # attn check is there: the real check_answer
    check "... diagnosed ${made[$s]}" test "$(jq -r .diagnosis.id "$work/out")" = "${made[$s]}"
  fi
done

# --- errors ----------------------------------------------------------------------------
expect_error "an unknown exercise number" 2 \
  "attn: error: exercise 99: no such exercise; there are 1 to $count (attn exercise list)" exercise show 99
expect_error "an unknown exercise id" 2 \
  "attn: error: exercise nope: no such exercise; there are 1 to $count (attn exercise list)" \
  exercise check nope --answer "$work/alice.npy"
expect_error "check without --answer" 2 "attn: error: --answer is required" exercise check 7
expect_error "show without N" 2 "attn: error: N is required" exercise show
expect_error "exercise without a command" 2 \
  "attn: error: attn exercise needs a command: list, show or check (attn exercise --help)" exercise
expect_error "an unknown exercise command" 2 \
  "attn: error: attn exercise frob: no such command; try list, show or check (attn exercise --help)" exercise frob
expect_error "an unknown flag of show" 2 \
  'attn: error: --frob: attn exercise show has no such flag; see `attn exercise show --help`' exercise show 7 --frob
expect_error "a student ID that is not a name" 2 \
  "attn: error: --student ../x: expected 1-64 letters (any script, precomposed), digits, '.', '_', '-', '@' or '+' (not '.', '-', '@' or '+' first), e.g. --student alice or --student alice@uni.example" \
  exercise show 7 --student ../x
expect_error "show: an empty student ID" 2 \
  "attn: error: --student '': expected 1-64 letters (any script, precomposed), digits, '.', '_', '-', '@' or '+' (not '.', '-', '@' or '+' first), e.g. --student alice or --student alice@uni.example" \
  exercise show 7 --student ''
expect_error "check: an empty student ID" 2 \
  "attn: error: --student '': expected 1-64 letters (any script, precomposed), digits, '.', '_', '-', '@' or '+' (not '.', '-', '@' or '+' first), e.g. --student alice or --student alice@uni.example" \
  exercise check 7 --student '' --answer "$work/none.npy"
# hints: folded in the table (the last one is nearly the solution), one at a time with --hint N
run exercise show 5
check "show: the hints are folded: their count and the command that opens the first" \
  bash -c "grep -q '^Hints: 3, each more explicit than the last, folded away; open one at a time:' '$work/out' &&
           grep -qx '   attn exercise show 5 --hint 1' '$work/out'"
check "... and no hint's text is printed" bash -c "! grep -q 'masked_fill(~(pad' '$work/out'"
expect_ok "show --hint 3" exercise show 5 --hint 3
check "... prints hint 3 alone, the solution" \
  bash -c "head -n 1 '$work/out' | grep -qx 'Hint 3 of 3 · exercise 5 · padding-and-causal' &&
           grep -q 'masked_fill(~(pad' '$work/out' && [ \$(wc -l <'$work/out') -le 4 ]"
expect_ok "show --hint 1" exercise show padding-and-causal --hint 1
check "... points at the next one" grep -qx '   (more explicit: attn exercise show 5 --hint 2)' "$work/out"
expect_error "--hint beyond the exercise's hints" 2 "attn: error: --hint 4: exercise 5 has 3 hints (1-3)" \
  exercise show 5 --hint 4
expect_error "--hint with --out" 2 \
  "attn: error: --hint 1 prints one hint; --out $work/h shows the whole exercise: give one of them" \
  exercise show 5 --hint 1 --out "$work/h"
check "... and writes nothing" test ! -e "$work/h"
# --no-hints: a hand-out (or a print) without the hints, for a test
expect_ok "show --no-hints --out: a hand-out without hints" exercise show 5 --student ann --no-hints --out "$work/no-hints"
check "... task.md has no Hints section and no hint's text" \
  bash -c "! grep -q 'Hint\|masked_fill(~(pad' '$work/no-hints/task.md'"
check "... exercise.json says \"hints\": []" test "$(jq -c .hints "$work/no-hints/exercise.json")" = '[]'
check "... the rest as with hints: the same task and numbers" \
  test "$("$attn" exercise show 5 --student ann --format json | jq -c 'del(.hints)')" = "$(jq -c 'del(.hints)' "$work/no-hints/exercise.json")"
expect_ok "show --no-hints (the table)" exercise show 5 --no-hints
check "... no hints line" bash -c "! grep -q '^Hints' '$work/out'"
expect_error "--no-hints with --hint" 2 \
  "attn: error: --no-hints leaves the hints out; --hint 1 prints one: give one of them" exercise show 5 --no-hints --hint 1
# --color on exercise show, as on trace: never colour by default into a pipe or file
run exercise show 5
check "show into a pipe: no colour by default" bash -c "! grep -q \$'\x1b' '$work/out'"
expect_ok "show --color always" exercise show 5 --color always
check "... the headings in bold" grep -q $'^\x1b\\[1mExercise 5' "$work/out"
expect_error "show --color takes auto, always or never" 2 \
  "attn: error: --color sometimes: expected one of auto, always or never" exercise show 5 --color sometimes

# issue 25, item 3: a hand-out folder the student may write into: what they plant there is
# replaced, never followed, opened or written into; a folder that is a link is refused
mkdir -p "$work/planted/alice"
echo outside >"$work/outside.txt"; echo linked >"$work/linked.txt"
ln -s ../../outside.txt "$work/planted/alice/task.md"
ln "$work/linked.txt" "$work/planted/alice/exercise.json"
mkfifo "$work/planted/alice/q.json"
timeout 20 "$attn" exercise show 7 --student alice --out "$work/planted/alice" >"$work/out" 2>"$work/err"; rc=$?
check "show --out over a planted link, hard link and FIFO: done, no hang" test "$rc" -eq 0
check "... the file the link pointed to is untouched" test "$(cat "$work/outside.txt")" = outside
check "... the hard-linked file is untouched" test "$(cat "$work/linked.txt")" = linked
check "... and the folder holds plain files now" \
  bash -c "for f in task.md exercise.json q.json; do [ -f '$work/planted/alice/'\$f ] && [ ! -L '$work/planted/alice/'\$f ] || exit 1; done"
check "... task.md is the hand-out's" grep -q '^# Exercise 7' "$work/planted/alice/task.md"
ln -s alice "$work/planted/bob"
links="is a symbolic link; a hand-out is written only through real folders, so that a link planted in a student's folder cannot send it elsewhere: give the path without links"
for dir in "$work/planted/bob" "$work/planted/bob/"; do
  expect_error "show --out a folder that is a symbolic link: refused" 1 \
    "attn: error: --out $dir: $work/planted/bob $links" \
    exercise show 7 --student bob --out "$dir"
done
# a link planted in an intermediate component: cls/carol/lab -> elsewhere, and --out cls/carol/lab/part1
mkdir -p "$work/cls/carol" "$work/elsewhere"
ln -s ../../elsewhere "$work/cls/carol/lab"
expect_error "show --out through a link in an intermediate component: refused, the link named" 1 \
  "attn: error: --out $work/cls/carol/lab/part1: $work/cls/carol/lab $links" \
  exercise show 7 --student carol --out "$work/cls/carol/lab/part1"
check "... nothing made where the link points" test -z "$(ls -A "$work/elsewhere")"
attn_path=$(realpath "$attn")
(cd "$work/cls" && "$attn_path" exercise show 7 --student carol --out carol/lab/part1 >"$work/out" 2>"$work/err"); rc=$?
check "... a relative path: exit 1" test "$rc" -eq 1
check "... the link named as given" grep -qxF "attn: error: --out carol/lab/part1: carol/lab $links" "$work/err"
expect_ok "show --out makes the missing folders of a real path" exercise show 7 --student carol --out "$work/cls/carol/lab2/part1/"
check "... and writes the hand-out there" test -f "$work/cls/carol/lab2/part1/exercise.json"
check "... with no temporary left" test -z "$(find "$work/cls" -name '.attn-*')"
# one rule for read-only files: a hand-out refuses to replace one, as every --out does
chmod a-w "$work/cls/carol/lab2/part1/task.md"
cp -r "$work/cls/carol/lab2/part1" "$work/part1-before"
expect_error "show --out over a read-only file: refused, as trace --out refuses one" 1 \
  "attn: error: --out $work/cls/carol/lab2/part1: task.md: Permission denied (the file is read-only)" \
  exercise show 7 --student dave --out "$work/cls/carol/lab2/part1"
check "... which is unchanged" cmp "$work/part1-before/task.md" "$work/cls/carol/lab2/part1/task.md"
# before: the tensors were replaced with dave's before task.md was refused, a folder half carol's
check "... and so is every other file of the folder: none is written before the refusal" \
  diff -r "$work/part1-before" "$work/cls/carol/lab2/part1"
check "... with no temporary left" test -z "$(find "$work/cls" -name '.attn-*')"
run trace --seq 3 --out "$work/cls/carol/lab2/part1/task.md"
check "... the same rule and words as trace --out" \
  grep -qx "attn: error: --out $work/cls/carol/lab2/part1/task.md: Permission denied (the file is read-only)" "$work/err"

# issue 25, items 1 and 4: an exercise file is data: its sizes are checked as the flags are,
# and a control character in its texts is refused, never printed to a terminal or task.md
mkdir -p "$work/hostile/exercises"
hostile() {  # hostile JQ-FILTER: exercise 7 changed by the filter, as the only exercise
  jq "$1" "$here/../../share/attn/exercises/07-causal-weights.json" >"$work/hostile/exercises/07-x.json"
  ATTN_SHARE_DIR=$work/hostile "$attn" exercise show 7 >"$work/out" 2>"$work/err"; rc=$?
}
hostile '.config.seq = 4611686018427387904'
check "an exercise whose sizes wrap: one line naming the file, exit 1, no crash" \
  bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$work/err') -eq 1 ] &&
           grep -q '^attn: error: .*07-x.json: config is not a run attn can make: these sizes make a tensor \[B,H,Sq,Sk\]' '$work/err'"
hostile '.config.mask = "padding"'
check "an exercise config as the flags would refuse it: named" \
  grep -qx "attn: error: $work/hostile/exercises/07-x.json: config is not a run attn can make: --mask padding needs --lengths n1,n2,... (one valid key length per batch item)" "$work/err"
hostile '.title = "T\u001b]0;pwned\u0007x"'
check "an OSC sequence in a title: refused, nothing printed" \
  bash -c "[ $rc -eq 1 ] && [ ! -s '$work/out' ] &&
           grep -qx 'attn: error: .*07-x.json: \"title\" holds a control character (U+001B at byte 1); exercise texts are plain text' '$work/err'"
hostile '.hints[1] = "a\u009bb"'
check "a C1 control (CSI) in a hint: refused" grep -q '"hints" holds a control character (U+009B at byte 1)' "$work/err"
hostile '.title = "T\u202ex"'
check "a bidirectional control (U+202E) in a title: refused, named" \
  bash -c "[ $rc -eq 1 ] && [ ! -s '$work/out' ] &&
           grep -qx 'attn: error: .*07-x.json: \"title\" holds a bidirectional control (U+202E at byte 1); exercise texts are plain text' '$work/err'"
hostile '.task[0] = "a\u2028b"'
check "a line separator (U+2028) in a task: refused" grep -q '"task" holds a line or paragraph separator (U+2028 at byte 1)' "$work/err"
hostile '.hints[0] = "a\ufffeb"'
check "a noncharacter (U+FFFE) in a hint: refused" grep -q '"hints" holds a noncharacter (U+FFFE at byte 1)' "$work/err"
check "... and no raw ESC reached stderr" bash -c "! grep -q \$'\x1b' '$work/err'"

# e-mail addresses and names in any script: accepted, an e-mail address lowercased
run exercise show 7 --student Alice.Martin@Uni.Example --format json
check "an e-mail address is an ID, lowercased" test "$(jq -r .student "$work/out")" = alice.martin@uni.example
seed_mail=$(jq .seed "$work/out")
run exercise show 7 --student alice.martin@uni.example --format json
check "... so the same student whatever the case of the address" test "$(jq .seed "$work/out")" = "$seed_mail"
run exercise show 7 --student Alice --format json
check "an ID without @ keeps its case: Alice is not alice (hand-outs made before keep their numbers)" \
  test "$(jq -r .student "$work/out") $(jq .seed "$work/out")" != "alice $(jq .seed "$work/alice.json")"
for id in zoë Jürgen 王芳 Ελένη o+test@x.org; do
  expect_ok "a student ID $id" exercise show 7 --student "$id" --format json
  check "... kept as typed" test "$(jq -r .student "$work/out")" = "$id"
done
expect_error "a combining accent: refused, the precomposed letter is other bytes" 2 \
  "attn: error: --student zoe$(printf '\xcc\x88'): a combining accent (U+0308): type the letter precomposed (NFC), é as one character, so the ID is always the same bytes" \
  exercise show 7 --student "zoe$(printf '\xcc\x88')"
for bad in 'a b' 'a/b' '@alice' '+x' "a$(printf '\xe2\x80\x8b')b" "$(printf '\xff')x" "$(printf '%065d' 0)"; do
  run exercise show 7 --student "$bad"
  check "a student ID $(printf '%q' "$bad" | cut -c1-20): exit 2, one line naming --student" \
    bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$work/err') -eq 1 ] && grep -q '^attn: error: --student ' '$work/err'"
done
expect_error "an answer file that is not there" 1 \
  "attn: error: --answer $work/none.npy: cannot open: No such file or directory" \
  exercise check 7 --answer "$work/none.npy"
python3 -c "import numpy as np; np.save('$work/short.npy', np.zeros((2, 4, 4), dtype=np.float32))"
run exercise check 7 --answer "$work/short.npy"
check "a wrong-shape answer: exit 1, a mismatch that names both shapes" test "$rc" = 1
check "... the verdict" grep -q '^verdict    mismatch: softmax.weights of exercise 7$' "$work/out"
check "... the shapes" grep -q '^max error  none: the shape is \[2,4,4\], expected \[1,2,4,4\]' "$work/out"
run exercise check 7 --answer "$work/short.npy" --format json
check "... in JSON: match false, both shapes, no max error, a diagnosis" test "$(jq -c \
  '[.match, .answer_shape, .expected_shape, .max_error, (.diagnosis.id | length > 0)]' "$work/out")" = \
  '[false,[2,4,4],[1,2,4,4],null,true]'

# --- where the exercises are found ----------------------------------------------------------
mkdir -p "$work/share/exercises"
cp "$(dirname "$0")/../../share/attn/exercises/07-causal-weights.json" "$work/share/exercises/"
ATTN_SHARE_DIR="$work/share" "$attn" exercise list >"$work/out" 2>"$work/err"
check "\$ATTN_SHARE_DIR comes first" test "$(grep -c '^ *[0-9]' "$work/out")" = 1
ATTN_SHARE_DIR="$work/nowhere" "$attn" exercise list >"$work/out" 2>"$work/err"
check "an \$ATTN_SHARE_DIR without exercises/ is passed over" test "$(grep -c '^ *[0-9]' "$work/out")" -ge 12

# --- a teacher's own mistake, like one of attn's diagnoses --------------------------------------
mkdir -p "$work/own/exercises"
jq '.mistakes += [{"id": "forgot_padding", "like": "causal_only",
                   "message": "Padded keys still get weight: AND the padding mask into the causal one."}]' \
  "$(dirname "$0")/../../share/attn/exercises/05-padding-and-causal.json" >"$work/own/exercises/05-padding-and-causal.json"
ATTN_SHARE_DIR="$work/own" "$attn" exercise show 5 --student zoe --format json >"$work/own-ex.json"
check "an own mistake is listed with the others" test "$(jq -r '.mistakes[-1]' "$work/own-ex.json")" = forgot_padding
jq '{format: "attn.trace/1", config: .config, stages: {}, warnings: []}' "$work/own-ex.json" >"$work/own-variant.json"
"$attn" trace --from "$work/own-variant.json" --mistake causal_only --stage masked --format json \
  | jq .stages.masked.tensors.masked.data >"$work/own-answer.json"
ATTN_SHARE_DIR="$work/own" run exercise check 5 --student zoe --answer "$work/own-answer.json" --format json
check "the answer it is like: exit 1, the teacher's id, message, and attn's id as like" \
  test "$rc:$(jq -c '.diagnosis | [.id, .message, .like]' "$work/out")" = \
  '1:["forgot_padding","Padded keys still get weight: AND the padding mask into the causal one.","causal_only"]'
ATTN_SHARE_DIR="$work/own" run exercise check 5 --student zoe --answer "$work/own-answer.json"
check "... the table says both" grep -qx \
  'diagnosis  forgot_padding: Padded keys still get weight: AND the padding mask into the causal one. (attn: causal_only)' "$work/out"
ATTN_SHARE_DIR="$work/own" run exercise check 5 --student alice --answer "$work/own-answer.json" --format json
check "another student's numbers are not like it" test "$(jq -r .diagnosis.id "$work/out")" != forgot_padding
for bad in '{"id": "softmax_axis", "like": "causal_only", "message": "m"}@"softmax_axis" is attn'"'"'s own diagnosis id' \
           '{"id": "x", "like": "forgot", "message": "m"}@"like": "forgot" is not a diagnosis id' \
           '{"id": "x", "like": "wrong_scale", "way": 3, "message": "m"}@"way": wrong_scale has ways 0 to 2' \
           '{"id": "x", "like": "causal_only", "message": "m", "hint": 1}@unknown key "hint"' \
           '{"id": "Bad-Id", "like": "causal_only", "message": "m"}@expected snake_case'; do
  jq --argjson m "${bad%@*}" '.mistakes += [$m]' "$(dirname "$0")/../../share/attn/exercises/05-padding-and-causal.json" \
    >"$work/own/exercises/05-padding-and-causal.json"
  ATTN_SHARE_DIR="$work/own" run exercise list
  if [ "$rc" -ne 0 ] && grep -qF "05-padding-and-causal.json: mistakes: " "$work/err" && grep -qF "${bad#*@}" "$work/err"; then
    ok "a wrong own mistake stops the list, naming the file and what is wrong: ${bad#*@}"
  else fail "a wrong own mistake: ${bad#*@}" "exit $rc: $(cat "$work/err")"; fi
done

# --- installed: the exercises go to PREFIX/share/attn, where the installed attn finds them ------
build=$(dirname "$attn")
if [ -f "$build/cmake_install.cmake" ]; then
  cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1
  check "cmake --install puts the exercises in PREFIX/share/attn/exercises" \
    test -f "$work/prefix/share/attn/exercises/07-causal-weights.json"
  sed -i 's/"Causal attention weights, per head"/"The installed copy"/' "$work/prefix/share/attn/exercises/07-causal-weights.json"
  "$work/prefix/bin/attn" exercise list >"$work/out" 2>"$work/err"
  check "the installed attn reads the exercises next to its bin/, before the source tree's" \
    grep -qE '^ 7  causal-weights +softmax\.weights +The installed copy$' "$work/out"
else
  fail "cmake --install" "no cmake_install.cmake next to $attn"
fi

# --- the layout exercises: shapes after every stage, strides after the transpose ----------
expect_ok "exercise show shapes" exercise show shapes
check "shapes: the answer asked for is a JSON object of shapes, checked as answer.json" \
  grep -qz 'Your answer: shapes.*as a JSON object.*attn exercise check 16 --answer answer.json' "$work/out"
expect_ok "exercise show strides-after-transpose --format json" exercise show strides-after-transpose --format json
check "strides: the answer names transpose.k and its kind" \
  test "$(jq -c .answer "$work/out")" = '{"kind":"strides","stage":"transpose","tensor":"k","shape":[2,4,6,3],"dims":["batch","head","kv_seq","head_dim"]}'
# worked by hand from the sizes, not from attn: B=2, S=6, D=12, H=4, dk=3
echo '{"projections":[2,6,12],"view":[2,6,4,3],"transpose":[2,4,6,3],"scores":[2,4,6,6],"scaled":[2,4,6,6],"softmax":[2,4,6,6],"context":[2,4,6,3],"merge":[2,6,4,3],"concat":[2,6,12],"output":[2,6,12]}' >"$work/shapes.json"
expect_ok "shapes: the hand-worked chain passes" exercise check shapes --student alice --answer "$work/shapes.json"
jq '.transpose = [2,6,4,3] | .scores = [2,6,4,4]' "$work/shapes.json" >"$work/no-transpose.json"
run exercise check shapes --answer "$work/no-transpose.json"
check "shapes: the transpose left out fails (exit 1), each wrong stage named" \
  test "$rc:$(grep -c 'shape_without_transpose: ' "$work/out")" = "1:2"
check "... and said as the shape without the transpose" grep -qF \
  'diagnosis  shape_without_transpose: transpose: [2,6,4,3] is what this stage would be without .transpose(1, 2) after the view' "$work/out"
run exercise check shapes --answer "$work/no-transpose.json" --format json
check "shapes json: match, kind, the first problem as the diagnosis, every problem listed" \
  test "$(jq -c '[.match, .kind, .diagnosis.id, [.problems[].stage]]' "$work/out")" = \
  '[false,"shapes","shape_without_transpose",["transpose","scores"]]'
echo '[72, 3, 12, 1]' >"$work/strides.json"
for s in alice bob; do
  expect_ok "strides: (72, 3, 12, 1), worked by hand, passes for $s" \
    exercise check strides-after-transpose --student "$s" --answer "$work/strides.json"
done
echo '[72, 18, 3, 1]' >"$work/copy.json"
run exercise check strides-after-transpose --answer "$work/copy.json"
check "strides: a contiguous copy's strides fail, named" \
  test "$rc:$(sed -n 2p "$work/out")" = "1:diagnosis  strides_of_a_copy: (72, 18, 3, 1) are the strides of a contiguous tensor of that shape, as after .contiguous(): transpose moves no data, it swaps two axes' strides"
python3 -c 'import numpy as np; np.save("'"$work"'/strides.npy", np.array([72, 3, 12, 1]))'
expect_error "strides: a .npy answer is refused, with what to write" 1 \
  "attn: error: --answer $work/strides.npy: a NumPy .npy file; this exercise takes a .json answer (json.dump(answer, f))" \
  exercise check strides-after-transpose --answer "$work/strides.npy"
expect_ok "strides: handed out" exercise show strides-after-transpose --student carol --out "$work/carol"
check "strides: task.md says to write answer.json" grep -q 'json.dump(answer, open("answer.json", "w"))' "$work/carol/task.md"

# --- the README's list is what the program prints ---------------------------------------------
readme="$(dirname "$0")/../../README.md"
awk '/`attn exercise list` prints:/ {seen = 1; next} seen && /^```/ {if (inside) exit; inside = 1; next} inside' \
  "$readme" >"$work/readme-list"
"$attn" exercise list >"$work/actual-list"
check "README's exercise list is there" test "$(wc -l <"$work/readme-list")" -ge 13
check "README's exercise list is real" diff "$work/readme-list" "$work/actual-list"

# --- help ------------------------------------------------------------------------------------
run --help
check "attn --help lists the exercise command" grep -qE '^  exercise +Classroom exercises with a variant per student' "$work/out"
expect_ok "attn exercise --help" exercise --help
check "... teaches: the commands, the student seed, an example" grep -qz \
  "list.*show.*check.*FNV-1a.*attn exercise show causal-weights --student alice --out class/alice" "$work/out"
for page in "exercise" "exercise list" "exercise show" "exercise check"; do
  run $page --help
  check "attn $page --help fits in 100 columns" test "$(awk '{ print length($0) }' "$work/out" | sort -n | tail -1)" -le 100
done

# --- every mistake an exercise lists is diagnosed, in every exercise --------------------------
# The wrong answer is the exercise's variant (here student zoe's) computed with the mistake made:
# attn trace --mistake on a dump of the variant's config (the mistakes themselves are checked
# against PyTorch-made answers in check.sh). exercise check must name the mistake.
for n in $(seq 1 "$("$attn" exercise list --format json | jq ".exercises | length")"); do
  ex="$work/ex.json"
  "$attn" exercise show "$n" --student zoe --format json >"$ex"
  jq '{format: "attn.trace/1", config: .config, stages: {}, warnings: []}' "$work/ex.json" >"$work/variant.json"
  stage=$(jq -r .answer.stage "$work/ex.json"); tensor=$(jq -r .answer.tensor "$work/ex.json")
  for id in $(jq -r '.mistakes[]' "$work/ex.json"); do
    if [ "$id" = q_k_swapped ] && [ "$(jq '.config.kv_seq // .config.seq' "$ex")" != "$(jq .config.seq "$ex")" ]; then
      # attn trace --mistake q_k_swapped needs Sq == Sk; with Sq != Sk, K·Qᵀ is (Q·Kᵀ)ᵀ per head
      "$attn" trace --from "$work/variant.json" --stage "$stage" --format json >"$work/right.json"
      jq ".stages.$stage.tensors.$tensor.data | map(map(transpose))" "$work/right.json" >"$work/wrong-answer.json"
    elif "$attn" trace --from "$work/variant.json" --mistake "$id" --stage "$stage" --format json >"$work/wrong.json" 2>/dev/null; then
      jq ".stages.$stage.tensors.$tensor.data" "$work/wrong.json" >"$work/wrong-answer.json"
    else
      fail "exercise $n, $id: attn trace --mistake $id failed on the exercise's run"; continue
    fi
    run exercise check "$n" --student zoe --answer "$work/wrong-answer.json" --format json
    if [ "$rc" -eq 1 ] && [ "$(jq -r .diagnosis.id "$work/out")" = "$id" ]; then ok "exercise $n: $id is diagnosed"
    else fail "exercise $n: $id is diagnosed" "exit $rc, diagnosis $(jq -r .diagnosis.id "$work/out" 2>/dev/null)"; fi
  done
done

# --- share/attn/exercise.schema.json describes every exercise file ---------------------------
schema="$here/../../share/attn/exercise.schema.json"
for file in "$here"/../../share/attn/exercises/*.json; do
  problems=$(jq -r --slurpfile s "$schema" '
    ($s[0].required - keys | map("no \(.)")) + (keys - ($s[0].properties | keys) | map("key \(.) not in the schema"))
    + (.config | keys - ($s[0].properties.config.properties | keys) | map("config key \(.) not in the schema"))
    + ([.mistakes[] | select(type == "object") | keys - ($s[0].properties.mistakes.items.oneOf[1].properties | keys)]
       | add // [] | map("mistakes key \(.) not in the schema"))
    | join(", ")' "$file")
  if [ -z "$problems" ]; then ok "the schema describes $(basename "$file")"; else fail "the schema describes $(basename "$file")" "$problems"; fi
done

# --- a class secret: numbers only the secret's holder can make again ---------------------
# Exercise 2 asks for scaled = scores / √dk with dk = 4: the answer is the given scores / 2
# (exact in float32), so the right answer can be made from the hand-out alone.
ATTN_CLASS_SECRET=s3cret "$attn" exercise show 2 --student ann --format json >"$work/secret.json"
check "with a secret, the hand-out shows no seed" \
  test "$(jq -c '[.seed, .config.seed]' "$work/secret.json")" = "[null,null]"
"$attn" exercise show 2 --student ann --format json >"$work/plain.json"
check "with a secret, the student's numbers differ from those without" \
  test "$(jq -c '.given["scores.scores"].data' "$work/secret.json")" != "$(jq -c '.given["scores.scores"].data' "$work/plain.json")"
ATTN_CLASS_SECRET=other "$attn" exercise show 2 --student ann --format json >"$work/other.json"
check "another secret gives other numbers" \
  test "$(jq -c '.given["scores.scores"].data' "$work/secret.json")" != "$(jq -c '.given["scores.scores"].data' "$work/other.json")"
jq '.given["scores.scores"].data | map(map(map(map(. / 2))))' "$work/secret.json" >"$work/secret-answer.json"
ATTN_CLASS_SECRET=s3cret run exercise check 2 --student ann --answer "$work/secret-answer.json"
check "the answer made from the hand-out passes with the secret" test "$rc" -eq 0
run exercise check 2 --student ann --answer "$work/secret-answer.json"
check "... and fails without it" test "$rc" -eq 1
printf 's3cret\n' >"$work/secret.txt"
run exercise check 2 --student ann --answer "$work/secret-answer.json" --secret "$work/secret.txt"
check "--secret FILE is the same secret as ATTN_CLASS_SECRET (a trailing newline ignored)" test "$rc" -eq 0
ATTN_CLASS_SECRET=s3cret run exercise show 2 --student ann
check "with a secret, the table says where the numbers come from, and no seed" \
  test "$(grep -c 'numbers from the class secret\|seed from the class secret' "$work/out")" -eq 2 -a "$(grep -c 'seed [0-9]' "$work/out")" -eq 0
ATTN_CLASS_SECRET=s3cret "$attn" exercise show 2 --student ann --out "$work/secret-handout" >/dev/null
check "with a secret, no seed in task.md or exercise.json" \
  test "$(cat "$work/secret-handout/task.md" "$work/secret-handout/exercise.json" | grep -c 'seed [0-9]\|"seed":[0-9]')" -eq 0
expect_error "--secret names a file that is not there" 1 \
  "attn: error: --secret $work/none: cannot open: No such file or directory" exercise show 2 --secret "$work/none"
: >"$work/empty-secret.txt"
expect_error "--secret with an empty file" 1 \
  "attn: error: --secret $work/empty-secret.txt: the file is empty; expected the class secret" \
  exercise show 2 --secret "$work/empty-secret.txt"
empty_secret="attn: error: ATTN_CLASS_SECRET is set but empty, which would turn the class secret off (the hand-out would state its seed): set it to the secret, or unset it for work that is not graded"
ATTN_CLASS_SECRET= expect_error "an empty ATTN_CLASS_SECRET (a failed \$(cat missing)) is refused on show" 2 \
  "$empty_secret" exercise show 2 --student ann --out "$work/empty-secret-handout"
check "... and writes no hand-out" test ! -e "$work/empty-secret-handout"
ATTN_CLASS_SECRET= expect_error "... and on check" 2 "$empty_secret" \
  exercise check 2 --student ann --answer "$work/secret-answer.json"

# the secret's fingerprint: in exercise.json, and checked against the secret in use when an
# answer is graded beside its hand-out: another secret, or none, is one clear error, no verdict
fingerprint=$(jq -r .secret_fingerprint "$work/secret-handout/exercise.json")
check "a hand-out made with a secret carries its fingerprint: 8 hex digits" \
  bash -c "[[ '$fingerprint' =~ ^[0-9a-f]{8}\$ ]]"
check "... the same for every exercise and student (it is the secret's)" test "$fingerprint" = \
  "$(ATTN_CLASS_SECRET=s3cret "$attn" exercise show 7 --student zed --format json | jq -r .secret_fingerprint)"
check "... another secret has another" test "$fingerprint" != "$(jq -r .secret_fingerprint "$work/other.json")"
check "... and a hand-out made without one says null" test "$(jq .secret_fingerprint "$work/plain.json")" = null
cp "$work/secret-answer.json" "$work/secret-handout/answer.json"
ATTN_CLASS_SECRET=s3cret expect_ok "graded beside its hand-out with its secret: passes" \
  exercise check 2 --student ann --answer "$work/secret-handout/answer.json"
other_fp=$(jq -r .secret_fingerprint "$work/other.json")
ATTN_CLASS_SECRET=other expect_error "graded with another secret: one clear error, no verdict" 1 \
  "attn: error: $work/secret-handout/exercise.json says the hand-out was made with a class secret of fingerprint $fingerprint, and the secret set has fingerprint $other_fp: grade with the secret the hand-out was made with" \
  exercise check 2 --student ann --answer "$work/secret-handout/answer.json"
expect_error "graded without the secret: the same" 1 \
  "attn: error: $work/secret-handout/exercise.json says the hand-out was made with a class secret of fingerprint $fingerprint, and none is set: grade with that secret (ATTN_CLASS_SECRET or --secret FILE)" \
  exercise check 2 --student ann --answer "$work/secret-handout/answer.json"
run exercise check 2 --student ann --answer "$work/secret-handout/answer.json" --format json
check "... --format json: match null, error id wrong_secret" \
  test "$(jq -c '[.match, .error.id]' "$work/out")" = '[null,"wrong_secret"]'
"$attn" exercise show 2 --student ann --out "$work/plain-handout" >/dev/null
cp "$work/secret-answer.json" "$work/plain-handout/answer.json"
ATTN_CLASS_SECRET=s3cret run exercise check 2 --student ann --answer "$work/plain-handout/answer.json"
check "a hand-out made without a secret, graded with one: one clear error" \
  grep -qx "attn: error: $work/plain-handout/exercise.json says the hand-out was made without a class secret, but one is set (fingerprint $fingerprint): its numbers come from the seed it states; grade it without ATTN_CLASS_SECRET and --secret" "$work/err"

# --- examples/grade.sh: a whole class, whatever each folder holds -------------------------
# Identity from the folder's name, every folder its own row, what exercise.json or the roster
# says otherwise noted; a lab folder (one subfolder per exercise) graded exercise by exercise.
bin="$work/bin"; mkdir -p "$bin"; ln -s "$(cd "$(dirname "$attn")" && pwd)/$(basename "$attn")" "$bin/attn"
grade() { PATH="$bin:$PATH" bash "$here/../../examples/grade.sh" "$@" >"$work/out" 2>"$work/err"; rc=$?; }
class="$work/graded-class"
for s in ann ben; do "$attn" exercise show 2 --student "$s" --out "$class/$s" >/dev/null; done
"$attn" exercise show 2 --student ann --format json \
  | jq '{format: "attn.trace/1", config: .config, stages: {}, warnings: []}' >"$work/ann.json"
"$attn" trace --from "$work/ann.json" --stage scaled --format json \
  | jq .stages.scaled.tensors.scaled.data >"$class/ann/answer.json"
cp "$class/ann/answer.json" "$class/ben/answer.json"                      # ben copies ann's
jq '.student = "ann" | .number = 1' "$class/ben/exercise.json" >"$work/edited.json"
mv "$work/edited.json" "$class/ben/exercise.json"                         # and edits his handout
"$attn" exercise show 2 --student cat --out "$class/cat" >/dev/null
printf 'PK\003\004 not an npy' >"$class/cat/answer.npy"                   # torch.save'd, say
mkdir -p "$class/dan"                                                     # no handout at all
"$attn" exercise show 2 --student eve --out "$class/eve/lab-a" >/dev/null  # a lab of two
"$attn" exercise show 7 --student eve --out "$class/eve/lab-b" >/dev/null
printf 'ann\nben\ncat\ndan\n# eve joined late\nfay\n' >"$work/roster.txt"
grade --json --roster "$work/roster.txt" --exercise 2 "$class"
row() { jq -c --arg s "$1" --argjson n "${2:-null}" '.students[] | select(.student == $s and .exercise == $n)
        | [.grade, (.diagnosis.id // "-")] + .notes' "$work/out"; }
check_row() { local got; got=$(row "$1" "$2"); if [ "$got" = "$3" ]; then ok "grade.sh: $4"; else fail "grade.sh: $4" "$got"; fi; }
if [ "$rc" -eq 0 ]; then ok "grade.sh grades the whole class (exit 0)"; else fail "grade.sh grades the whole class" "exit $rc: $(cat "$work/err")"; fi
check_row ann 2 '["pass","-","handed in the same file as ben"]' "a right answer passes; the copy is noted"
check_row ben 2 '["fail","unknown","exercise.json says exercise 1","exercise.json names student ann","handed in the same file as ann"]' \
  "a copied answer is graded against the copier's numbers, and the edited handout noted"
check_row cat 2 '["unreadable","unreadable_answer"]' "an unreadable answer is its own row"
check_row dan 2 '["missing","no_handout"]' "a folder without a handout is its own row"
if [ "$(jq '[.students[] | select(.student == "eve") | .notes | index("exercise.json says exercise 7") != null]' -c "$work/out")" = "[false,true]" ]
then ok "grade.sh: with --exercise, a handout of another exercise is noted"
else fail "grade.sh: with --exercise, a handout of another exercise is noted" "$(jq -c '.students[] | select(.student == "eve")' "$work/out")"; fi
check_row fay 2 '["missing","no_folder"]' "a student on the roster without a folder is missing"
if [ "$(jq '[.total, .passed]' -c "$work/out")" = "[7,1]" ]; then ok "grade.sh counts every row"; else fail "grade.sh counts every row" "$(jq -c '[.total, .passed]' "$work/out")"; fi
grade --json "$class"
check_row eve 2 '["missing","no_answer"]' "a lab's exercises are graded one by one (1)"
check_row eve 7 '["missing","no_answer"]' "a lab's exercises are graded one by one (2)"
big="$work/big-class"
"$attn" exercise show 2 --student ann --out "$big/ann" >/dev/null
/usr/bin/python3 -c "import sys; open(sys.argv[1], 'w').write('[' + '0,' * 3000000 + '0]')" "$big/ann/answer.json"
grade --json --max-memory 4MiB "$big"
if [ "$rc" -eq 0 ] && [ "$(row ann 2)" = '["unreadable","unreadable_answer"]' ] &&
   jq -e '.students[0].diagnosis.message | test("--max-memory")' "$work/out" >/dev/null; then
  ok "grade.sh --max-memory: a 6 MB answer.json past it is an unreadable row naming --max-memory"
else fail "grade.sh --max-memory: a 6 MB answer.json past it is an unreadable row" "exit $rc: $(head -c 400 "$work/out") $(head -c 300 "$work/err")"; fi
grade --csv "$class"
if [ "$(head -n 1 "$work/out")" = '"student","exercise","grade","diagnosis","message","notes"' ] && [ "$(wc -l <"$work/out")" -eq 7 ]; then
  ok "grade.sh --csv writes a gradebook, one row per answer"; else fail "grade.sh --csv writes a gradebook" "$(cat "$work/out")"; fi
expect_error_from grade "grade.sh without a folder is a usage error" 2 \
  'usage: grade.sh [--json | --csv] [--roster FILE] [--exercise N] [--max-memory SIZE] DIR'
expect_error_from grade "grade.sh --exercise takes a number" 2 \
  'grade.sh: --exercise x: expected an exercise number (attn exercise list)' --exercise x "$class"
expect_error_from grade "grade.sh --roster names a file" 2 \
  "grade.sh: --roster $work/none: no such file" --roster "$work/none" "$class"

# grade.sh prints nothing a student chose raw: a folder named with ESC, a BEL or a bidi
# override, a name in exercise.json that would clear the teacher's screen; a folder named
# like a formula is text in --csv; a roster's trailing comments are not part of the ID
hostile="$work/hostile-class"
"$attn" exercise show 2 --student ann --out "$hostile/ann" >/dev/null
jq '.student = "\u001b[2J\u001b]0;pwned\u0007\u202eevil"' "$hostile/ann/exercise.json" >"$work/edited.json"
mv "$work/edited.json" "$hostile/ann/exercise.json"
mkdir -p "$hostile/$(printf 'e\033[31mx\342\200\256y')" "$hostile/=HYPERLINK(\"http:--x\")" "$hostile/@cmd" "$hostile/-2+3"
grade "$hostile"
check "grade.sh: no ESC, BEL or U+202E reaches the table" \
  bash -c "[ $rc -eq 0 ] && ! grep -qP '\x1b|\x07|\x{202e}' '$work/out'"
check "... the edited name is shown escaped" grep -qF 'note: exercise.json names student \u001b[2J\u001b]0;pwned\u0007\u202eevil' "$work/out"
check "... and the folder's name" grep -qF 'e\u001b[31mx\u202ey' "$work/out"
grade --json "$hostile"
check "grade.sh --json: the same escapes" \
  bash -c "[ $rc -eq 0 ] && ! grep -qP '\x{202e}' '$work/out' && jq -e '.students[] | select(.student == \"e\\\\u001b[31mx\\\\u202ey\")' '$work/out'"
grade --csv "$hostile"
check "grade.sh --csv: a cell starting with = is text: '=HYPERLINK" grep -q "^\"'=HYPERLINK(\"\"http:--x\"\")\"," "$work/out"
check "... and with @ or -" bash -c "grep -q \"^\\\"'@cmd\\\",\" '$work/out' && grep -q \"^\\\"'-2+3\\\",\" '$work/out'"
check "... an ordinary cell is as it was" grep -q '^"ann",2,' "$work/out"
printf 'ann   # came in week 2\n\tben# moved\r\n  # a comment line\n\ncat \r\n' >"$work/commented-roster.txt"
grade --json --roster "$work/commented-roster.txt" --exercise 2 "$class"
check "grade.sh --roster: trailing # comments and spaces are not part of an ID" \
  test "$(jq -c '[.students[] | select(.grade == "missing" and .diagnosis.id == "no_folder") | .student]' "$work/out")" = '[]'
check "... ann, ben and cat are on it; dan is not" \
  test "$(jq -c '[.students[] | select(.notes | index("not on the roster")) | .student] | unique' "$work/out")" = '["dan","eve"]'

# grade.sh and the class secret: grading with another secret, or none, is one clear line
secret_class="$work/secret-class"
for s in ann ben; do ATTN_CLASS_SECRET=s3cret "$attn" exercise show 2 --student "$s" --out "$secret_class/$s" >/dev/null; done
cp "$work/secret-answer.json" "$secret_class/ann/answer.json"
ATTN_CLASS_SECRET=s3cret grade --json "$secret_class"
check "grade.sh with the hand-outs' secret: graded (ann passes)" \
  test "$rc $(jq -c '[.students[] | .grade]' "$work/out")" = '0 ["pass","missing"]'
expect_error_from grade "grade.sh without the secret: one line, exit 2" 2 \
  "grade.sh: the handouts in $secret_class were made with a class secret (fingerprint $fingerprint), and none is set: set ATTN_CLASS_SECRET to it" \
  "$secret_class"
ATTN_CLASS_SECRET=other expect_error_from grade "grade.sh with another secret: one line, exit 2" 2 \
  "grade.sh: the handouts in $secret_class were made with a class secret of fingerprint $fingerprint, and ATTN_CLASS_SECRET has fingerprint $other_fp: set the one they were made with" \
  "$secret_class"
ATTN_CLASS_SECRET=s3cret expect_error_from grade "grade.sh with a secret, for hand-outs made without: one line, exit 2" 2 \
  "grade.sh: the handouts in $class were made without a class secret, but one is set (fingerprint $fingerprint): unset ATTN_CLASS_SECRET to grade them" \
  "$class"
ATTN_CLASS_SECRET= expect_error_from grade "grade.sh with an empty ATTN_CLASS_SECRET: attn's line, exit 2" 2 \
  "$empty_secret" "$secret_class"
jq '.secret_fingerprint = "00000000"' "$secret_class/ann/exercise.json" >"$work/edited.json"
mv "$work/edited.json" "$secret_class/ann/exercise.json"
ATTN_CLASS_SECRET=s3cret grade --json "$secret_class"
check "grade.sh: one hand-out whose fingerprint was edited is its own row, error wrong_secret" \
  test "$rc $(jq -c '[.students[] | [.student, .grade, .diagnosis.id]]' "$work/out")" = '0 [["ann","error","wrong_secret"],["ben","missing","no_answer"]]'

finish
