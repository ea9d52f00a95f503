#!/usr/bin/env bash
# A classroom: one exercise, a variant per student, and a grader.
#
# Exercise 7 (causal-weights) asks for the causal attention weights of two heads,
#   weights = softmax(mask(Q·Kᵀ / √dk), dim=-1)      [B,H,Sq,Sk] = [1,2,4,4]
# from the q and k it hands out. Each student gets their own numbers: the seed is
# FNV-1a-64("causal-weights:<ID>") XOR the exercise's seed, mod 2^31, so nobody can
# copy a neighbour's answer, and each is graded against their own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
students="alice bob carol dave erin frank grace henry"

# 1. Hand out: class/<ID>/ gets q.npy k.npy (and .json), task.md, exercise.json.
for s in $students; do
  attn exercise show 7 --student "$s" --out "class/$s"
done
head -n 3 class/alice/task.md

# 2. The students work. Here their answers come from examples/classroom/answers/,
#    made in PyTorch by tests/reference/make_class_answers.py from the tensors each was
#    handed: alice and bob right, the others with a common mistake; henry hands in nothing.
for s in $students; do
  if [ -f "$here/classroom/answers/$s/answer.npy" ]; then cp "$here/classroom/answers/$s/answer.npy" "class/$s/"; fi
done

# 3. Grade: who passed, and for each failure the diagnosis.
echo
"$here/grade.sh" class
echo
"$here/grade.sh" --json class | jq -c '.students[], {passed, total}'
rm -rf class
