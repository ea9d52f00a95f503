#!/usr/bin/env bash
# A classroom: one exercise, a variant per student, and a grader.
#
# Exercise 7 (causal-weights) asks for the causal attention weights of two heads,
#   weights = softmax(mask(Q·Kᵀ / √dk), dim=-1)      [B,H,Sq,Sk] = [1,2,4,4]
# from the q and k it hands out. Each student gets their own numbers: the seed is
# FNV-1a-64("causal-weights:<ID>") XOR the exercise's seed, mod 2^31, so a neighbour's
# answer fails, and each is graded against their own numbers, the student's identity
# taken from the folder's name. The handout names its seed, though: without a class
# secret, a student can regenerate their own answer with attn (README, "Exercises").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
students="alice bob carol dave erin frank grace henry ivan judy"

# 1. Hand out: class/<ID>/ gets q.npy k.npy (and .json), task.md, exercise.json.
for s in $students; do
  attn exercise show 7 --student "$s" --out "class/$s"
done
head -n 3 class/alice/task.md

# 2. The students work. Here their answers come from examples/classroom/answers/,
#    made in PyTorch by tests/reference/make_class_answers.py from the tensors each was
#    handed: alice and bob right, the others with a common mistake; henry hands in nothing,
#    ivan saves his with torch.save, and judy copies alice's and edits her exercise.json.
for s in $students; do
  if [ -f "$here/classroom/answers/$s/answer.npy" ]; then cp "$here/classroom/answers/$s/answer.npy" "class/$s/"; fi
done
cp class/alice/answer.npy class/judy/
jq '.student = "alice"' class/judy/exercise.json >class/judy/edited.json
mv class/judy/edited.json class/judy/exercise.json

# 3. Grade: who passed, and for each failure the diagnosis.
echo
"$here/grade.sh" class
echo
"$here/grade.sh" --json class | jq -c '.students[], {passed, total}'
echo
"$here/grade.sh" --csv class | head -n 3
rm -rf class
