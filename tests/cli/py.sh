#!/usr/bin/env bash
# Command-line tests: attn's PyTorch, run in PyTorch. The torch lines of --explain, put
# together top to bottom, are a script that makes attn's numbers; --format py writes a
# script that checks every stage against attn's numbers, and fails when a line is made
# wrong. Runs Debian's python3-torch (/usr/bin/python3); without it the test says
# "skipped", unless CI=true, where torch must be there. Usage: py.sh path/to/attn.
set -u
attn=${1:?usage: py.sh path/to/attn}
. "$(dirname "$0")/common.sh"
python=/usr/bin/python3

if ! "$python" -c 'import torch' 2>/dev/null; then
  if [ "${CI:-}" = true ]; then
    fail "python3-torch is installed (CI=true: apt-get install python3-torch)"
    finish
    exit 1
  fi
  echo "skipped: $python cannot import torch (apt-get install python3-torch)"
  exit 0
fi

# --- --explain's torch lines, top to bottom ------------------------------------------------
# explain_runs ARGS...: the torch lines of --explain --format json as one script, run in a
# fresh python; the last tensor it makes (out, or concat with --no-out-proj) must be attn's,
# bit for bit.
cat >"$work/explain_runs.py" <<'PY'
import json, subprocess, sys, torch
attn, args = sys.argv[1], sys.argv[2:]
doc = json.loads(subprocess.run([attn, "trace", *args, "--explain", "--format", "json"],
                                capture_output=True, text=True, check=True).stdout)
script = "\n".join(s["explain"]["torch"] for s in doc["stages"].values())
made = {}
exec(compile(script, "explain", "exec"), made)
stage, name = ("output", "out") if "output" in doc["stages"] else ("concat", "concat")
want = torch.tensor(doc["stages"][stage]["tensors"][name]["data"], dtype=torch.float32)
got = made[name].detach()
sys.exit(0 if got.shape == want.shape and torch.equal(got.view(torch.int32), want.view(torch.int32)) else 1)
PY
explain_runs() { "$python" "$work/explain_runs.py" "$attn" "$@"; }
check "--explain's lines run: notebook 000 (B=2, H=4, causal)" explain_runs --seed 24 --batch 2 --seq 5 --heads 4 --mask causal
check "--explain's lines run: no mask, one head" explain_runs --heads 1
check "--explain's lines run: causal+padding, cross-attention (--kv-seq, --d-kv-in)" \
  explain_runs --seed 3 --batch 2 --seq 5 --kv-seq 6 --d-kv-in 12 --mask causal+padding --lengths 5,3
check "--explain's lines run: window, --fill -1e9, --no-qkv-bias" explain_runs --seq 6 --mask window --window 1 --fill -1e9 --no-qkv-bias
check "--explain's lines run: --train --dropout 0.3, attn's keep mask" \
  explain_runs --seed 5 --batch 2 --mask causal --dropout 0.3 --train --dropout-seed 9
check "--explain's lines run: a random mask, --no-out-proj" explain_runs --heads 4 --mask random --mask-seed 2 --mask-keep 0.7 --no-out-proj
check "--explain's lines run: lower-right causal, Sq < Sk, D != Din" \
  explain_runs --seq 2 --kv-seq 5 --d-in 6 --d-kv-in 10 --d-model 12 --heads 3 --mask causal --causal-align lower-right

finish
