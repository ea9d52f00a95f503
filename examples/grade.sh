#!/usr/bin/env bash
# Grades a class: one folder per student, as `attn exercise show N --student ID --out
# DIR/ID` made it, with the student's answer saved beside the handed-out tensors as
# answer.npy (or answer.json). For a lab of several exercises, one folder per exercise
# inside the student's: DIR/ID/NAME/ (`--out DIR/ID/NAME`).
#
#   examples/grade.sh class                     a table: who passed; each failure's diagnosis
#   examples/grade.sh --json class              the same as one JSON document
#   examples/grade.sh --csv class > grades.csv  a gradebook: one row per student and exercise
#   examples/grade.sh --roster roster.txt class  who is expected (one ID per line)
#   examples/grade.sh --exercise 7 class        which exercise was handed out
#
# Identity comes from the folder's name, never from exercise.json, which the student can
# edit: DIR/bob/ is graded against bob's own numbers whatever its exercise.json says, and
# what exercise.json says otherwise is noted. --exercise N and --roster FILE take the
# rest of the truth from the teacher too. Every folder gets its own row: a missing
# answer, an unreadable one (the reason says why and how to save it) or a folder that is
# not a handout does not stop the others. Two students handing in the same file are
# noted. With ATTN_CLASS_SECRET set, grade with the secret the handouts were made with:
# each handout's exercise.json carries the secret's fingerprint, and grading with another
# secret, or none, stops at once with one line saying so (a single handout that disagrees,
# e.g. an edited exercise.json, is its own row: error wrong_secret).
#
# Whatever a student controls (their folder's name, what exercise.json says) is printed
# with control characters, bidirectional controls and line separators escaped (\u001b,
# \u202e), and a --csv cell that starts with =, +, - or @ gets a ' in front, so that a
# spreadsheet reads it as text, not a formula. A roster line may end in a # comment.
#
# Each answer is graded by `attn exercise check N --student ID --answer FILE --max-memory SIZE`:
# every file attn reads for it (the exercise, the answer) within SIZE, 1GiB unless
# --max-memory SIZE says otherwise (a student's answer.json of gigabytes is one unreadable
# row, not a machine out of memory).
# Exit status: 0 when every folder was graded (whatever the grades), 2 for bad usage.
# run.sh: not an example on its own (classroom.sh runs it)
set -euo pipefail

usage() {
  echo "usage: grade.sh [--json | --csv] [--roster FILE] [--exercise N] [--max-memory SIZE] DIR" >&2
  echo "  DIR: one folder per student, made by attn exercise show N --student ID --out DIR/ID" >&2
}

format=table roster= expected= max_memory=1GiB
while [ $# -gt 0 ]; do
  case $1 in
    --json) format=json ;;
    --csv) format=csv ;;
    --roster) roster=${2:-}; shift ;;
    --exercise) expected=${2:-}; shift ;;
    --max-memory) max_memory=${2:-}; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "grade.sh: unknown option $1" >&2; usage; exit 2 ;;
    *) break ;;
  esac
  shift
done
if [ $# -ne 1 ]; then usage; exit 2; fi
dir=${1%/}
[ -d "$dir" ] || { echo "grade.sh: $dir is not a folder" >&2; exit 2; }
if ! command -v attn >/dev/null; then
  echo "grade.sh: attn is not on PATH (build it, then PATH=\"\$PWD/build:\$PATH\")" >&2; exit 2
fi
if [ -n "$roster" ] && [ ! -f "$roster" ]; then
  echo "grade.sh: --roster $roster: no such file" >&2; exit 2
fi
if [ -n "$expected" ] && ! [[ $expected =~ ^[0-9]+$ ]]; then
  echo "grade.sh: --exercise $expected: expected an exercise number (attn exercise list)" >&2; exit 2
fi

# The class secret in use, as its fingerprint ("" for none), against the handouts' own.
first=${expected:-$(attn exercise list --format json | jq '.exercises[0].number')}
if ! secret_shown=$(attn exercise show "$first" --format json --max-memory "$max_memory"); then exit 2; fi  # attn said why
secret_now=$(jq -r '.secret_fingerprint // ""' <<<"$secret_shown")
shopt -s nullglob
said_secrets=$(for handout in "$dir"/*/exercise.json "$dir"/*/*/exercise.json; do
  jq -r 'select(has("secret_fingerprint")) | .secret_fingerprint // "none"
         | select(test("^([0-9a-f]{8}|none)$"))' "$handout" 2>/dev/null || true
done | sort | uniq -c | sort -rn)
if [ -n "$said_secrets" ] && ! awk -v now="${secret_now:-none}" '$2 == now { found = 1 } END { exit !found }' <<<"$said_secrets"; then
  said=$(awk 'NR == 1 { print $2 }' <<<"$said_secrets")
  if [ "$said" = none ]; then
    echo "grade.sh: the handouts in $dir were made without a class secret, but one is set (fingerprint $secret_now): unset ATTN_CLASS_SECRET to grade them" >&2
  elif [ -z "$secret_now" ]; then
    echo "grade.sh: the handouts in $dir were made with a class secret (fingerprint $said), and none is set: set ATTN_CLASS_SECRET to it" >&2
  else
    echo "grade.sh: the handouts in $dir were made with a class secret of fingerprint $said, and ATTN_CLASS_SECRET has fingerprint $secret_now: set the one they were made with" >&2
  fi
  exit 2
fi

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

# row STUDENT EXERCISE GRADE ID MESSAGE ANSWER NOTES_JSON: one line of JSON in $rows
row() {
  jq -nc --arg s "$1" --arg n "$2" --arg g "$3" --arg id "$4" --arg m "$5" --arg a "$6" \
    --argjson notes "$7" \
    '{student: $s, exercise: (if $n == "" then null else ($n | tonumber) end), grade: $g,
      diagnosis: (if $id == "" then null else {id: $id, message: $m} end),
      notes: $notes, answer: $a}' >>"$rows"
}

# grade_handout ID FOLDER: one row for the handout in FOLDER, graded as student ID
grade_handout() {
  local id=$1 folder=$2 notes='[]' number= said_number= said_student=
  if ! said_number=$(jq -er '.number | numbers' "$folder/exercise.json" 2>/dev/null); then
    said_number=
  fi
  said_student=$(jq -r '.student // empty' "$folder/exercise.json" 2>/dev/null || true)
  number=${expected:-$said_number}
  if [ -n "$expected" ] && [ -n "$said_number" ] && [ "$said_number" != "$expected" ]; then
    notes=$(jq -c --arg n "$said_number" '. + ["exercise.json says exercise \($n)"]' <<<"$notes")
  fi
  local as_attn_has_it=$id  # attn lowercases an e-mail address (README: "Student IDs")
  [[ $id == *@* ]] && as_attn_has_it=${id,,}
  if [ -n "$said_student" ] && [ "$said_student" != "$as_attn_has_it" ]; then
    notes=$(jq -c --arg s "$said_student" '. + ["exercise.json names student \($s)"]' <<<"$notes")
  fi
  if [ -z "$number" ]; then
    row "$id" "" error unreadable_handout "$folder/exercise.json is not a handout's exercise.json; give --exercise N" "" "$notes"
    return
  fi
  local answer=
  for candidate in "$folder/answer.npy" "$folder/answer.json"; do
    if [ -f "$candidate" ]; then answer=$candidate; break; fi
  done
  if [ -z "$answer" ]; then
    row "$id" "$number" missing no_answer "no answer.npy or answer.json" "" "$notes"
    return
  fi
  # exit 0: a match, 1: a mismatch (its report on stdout) or an unreadable answer (stderr,
  # and a report with "match": null and "error")
  local status=0 report errors
  errors=$(mktemp)
  report=$(attn exercise check "$number" --student "$id" --answer "$answer" --format json \
    --max-memory "$max_memory" 2>"$errors") || status=$?
  local reason
  reason=$(sed -n '1s/^attn: error: //p' "$errors")
  rm -f "$errors"
  if [ "$(jq -r '.error.id? // empty' <<<"$report" 2>/dev/null)" = wrong_secret ]; then
    row "$id" "$number" error wrong_secret "${reason:-made with another class secret}" "$answer" "$notes"
  elif [ -n "$report" ] && [ "$status" -le 1 ] && ! jq -e '.error' <<<"$report" >/dev/null 2>&1; then
    jq -c --arg s "$id" --argjson n "$number" --argjson notes "$notes" --arg a "$answer" \
      '{student: $s, exercise: $n, grade: (if .match then "pass" else "fail" end), diagnosis,
        notes: $notes, answer: $a}' <<<"$report" >>"$rows"
  elif [ "$status" -eq 1 ]; then
    row "$id" "$number" unreadable unreadable_answer "${reason:-attn could not read it}" "$answer" "$notes"
  else
    row "$id" "$number" error cannot_grade "${reason:-attn exercise check exited $status}" "$answer" "$notes"
  fi
}

for folder in "$dir"/*/; do
  folder=${folder%/}
  id=${folder##*/}
  if [ -f "$folder/exercise.json" ]; then
    grade_handout "$id" "$folder"
  else
    handouts=("$folder"/*/exercise.json)
    if [ ${#handouts[@]} -eq 0 ]; then
      row "$id" "$expected" missing no_handout "no exercise.json in $folder" "" '[]'
    fi
    for handout in "${handouts[@]}"; do grade_handout "$id" "${handout%/exercise.json}"; done
  fi
done

# The roster: who has no folder, and which folders are nobody's on it.
if [ -n "$roster" ]; then
  # one ID a line; a # starts a comment (no ID holds one); blank lines and spaces around go
  listed=$(sed -e 's/\r$//' -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' "$roster" | grep -v '^$' || true)
  for id in $listed; do
    [ -d "$dir/$id" ] || row "$id" "$expected" missing no_folder "no folder $dir/$id" "" '[]'
  done
  listed_json=$(jq -Rn '[inputs]' <<<"$listed")
  jq -c --argjson listed "$listed_json" \
    '.student as $s | if ($listed | index($s)) then . else .notes += ["not on the roster"] end' "$rows" >"$rows.new"
  mv "$rows.new" "$rows"
fi

# Two students, one file: note each with the others who handed in the same bytes.
results=$(jq -s '.' "$rows")
jq -r '.[] | select(.answer != "") | .answer' <<<"$results" | while IFS= read -r answer; do
  printf '%s\t%s\n' "$answer" "$(cksum <"$answer" | cut -d' ' -f1,2)"
done | jq -Rn '[inputs | split("\t") | {answer: .[0], sum: .[1]}]' >"$rows.sums"
results=$(jq --slurpfile sums "$rows.sums" '
  ($sums[0] | map({(.answer): .sum}) | add // {}) as $sum
  | . as $all
  | map(. as $r
        | ($all | map(select(.answer != "" and .student != $r.student and .exercise == $r.exercise
                             and $sum[.answer] == $sum[$r.answer])) | map(.student)) as $same
        | if $r.answer != "" and ($same | length) > 0
          then .notes += ["handed in the same file as \($same | join(", "))"] else . end)
  | sort_by(.student, .exercise) | map(del(.answer))' <<<"$results")
rm -f "$rows.sums"

# Every text a student may have chosen, escaped: C0 and C1 controls, U+2028-U+202E (line
# separators, bidirectional embeddings and overrides), U+2066-U+2069 (isolates) as \uXXXX.
results=$(jq 'def hex4: [(. / 4096 | floor) % 16, (. / 256 | floor) % 16, (. / 16 | floor) % 16, . % 16]
                        | map("0123456789abcdef"[.:. + 1]) | add;
              def unsafe: . < 32 or (. >= 127 and . < 160) or (. >= 8232 and . <= 8238) or (. >= 8294 and . <= 8297);
              def safe: [explode[] | if unsafe then ("\\u" + hex4 | explode)[] else . end] | implode;
              walk(if type == "string" then safe else . end)' <<<"$results")

case $format in
  json)
    jq '{students: ., passed: map(select(.grade == "pass")) | length, total: length}' <<<"$results" ;;
  csv)
    # a cell starting with = + - @ is a formula to a spreadsheet: a leading ' makes it text
    jq -r '["student", "exercise", "grade", "diagnosis", "message", "notes"],
           (.[] | [.student, .exercise, .grade, .diagnosis.id, .diagnosis.message, (.notes | join("; "))]
                | map(if type == "string" and test("^[=+@-]") then "\u0027" + . else . end))
           | @csv' <<<"$results" ;;
  table)
    # one line per answer, the columns padded to the longest entry; notes below their row
    jq -r 'def pad($n): . + ([range($n - length)] | map(" ") | add // "");
           (map(.student | length) + [7] | max) as $w
           | ("student" | pad($w)) + "  exercise  grade       diagnosis",
             (.[] | (.student | pad($w)) + "  " + (.exercise // "-" | tostring | pad(8)) + "  "
                    + (.grade | pad(10)) + "  "
                    + (if .diagnosis then .diagnosis.id + ": " + .diagnosis.message else "-" end),
                    (.notes[] | ("" | pad($w)) + "  note: " + .))' <<<"$results"
    jq -r '"\(map(select(.grade == "pass")) | length) of \(length) passed"' <<<"$results" ;;
esac
