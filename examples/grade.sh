#!/usr/bin/env bash
# Grades a folder of handed-out exercises (see classroom.sh): one folder per student,
# as `attn exercise show N --student ID --out DIR/ID` made it, with the student's
# answer saved next to the given tensors as DIR/ID/answer.npy (or answer.json).
#
#   examples/grade.sh class          a table: who passed; for each failure the diagnosis
#   examples/grade.sh --json class   the same as one JSON document, for a gradebook
#
# Each answer is graded by `attn exercise check N --student ID --answer FILE`
# against that student's own numbers (N and ID come from DIR/ID/exercise.json).
# Exit status: 0 when every folder was graded (pass or fail), 2 for bad usage.
# run.sh: not an example on its own (classroom.sh runs it)
set -euo pipefail

json=0
if [ "${1:-}" = --json ]; then json=1; shift; fi
dir=${1:?usage: grade.sh [--json] DIR (a folder of student folders made by attn exercise show --out)}

results='[]'
for folder in "$dir"/*/; do
  folder=${folder%/}
  [ -f "$folder/exercise.json" ] || continue
  number=$(jq -r .number "$folder/exercise.json")
  student=$(jq -r .student "$folder/exercise.json")
  answer=
  for candidate in "$folder/answer.npy" "$folder/answer.json"; do
    if [ -f "$candidate" ]; then answer=$candidate; break; fi
  done
  if [ -z "$answer" ]; then
    result=$(jq -nc --arg s "$student" --argjson n "$number" \
      '{student: $s, exercise: $n, grade: "missing", diagnosis: {id: "no_answer", message: "no answer.npy or answer.json"}}')
  else
    # exit 0: a match, 1: a mismatch (its report on stdout), 2: usage
    status=0
    report=$(attn exercise check "$number" --student "$student" --answer "$answer" --format json) || status=$?
    if [ "$status" -gt 1 ] || [ -z "$report" ]; then
      echo "grade.sh: cannot grade $folder (attn exit $status)" >&2
      exit 2
    fi
    result=$(jq -c --arg s "$student" --argjson n "$number" \
      '{student: $s, exercise: $n, grade: (if .match then "pass" else "fail" end), diagnosis}' <<<"$report")
  fi
  results=$(jq -c --argjson r "$result" '. + [$r]' <<<"$results")
done

if [ "$json" = 1 ]; then
  jq '{students: ., passed: map(select(.grade == "pass")) | length, total: length}' <<<"$results"
else
  # one line per student, the columns padded to the longest entry
  jq -r 'def pad($n): . + ([range($n - length)] | map(" ") | add // "");
         (map(.student | length) + [7] | max) as $w
         | ("student" | pad($w)) + "  grade    diagnosis",
           (.[] | (.student | pad($w)) + "  " + (.grade | pad(7)) + "  "
                  + (if .diagnosis then .diagnosis.id + ": " + .diagnosis.message else "-" end))' <<<"$results"
  jq -r '"\(map(select(.grade == "pass")) | length) of \(length) passed"' <<<"$results"
fi
