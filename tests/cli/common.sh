# Shared by the command-line test scripts: sourced after `attn` is set.
# Needs jq. Each script ends with `finish`, which prints "N passed, N failed".
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # tests/cli
# Seed notebook 000's run: B=2, Sq=Sk=5, D=8, H=4, causal, no output projection.
notebook=(--seed 24 --batch 2 --seq 5 --d-model 8 --heads 4 --mask causal --no-out-proj)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok()   { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && printf '     %s\n' "$2"; }

# run ARGS...: runs attn, keeping stdout in $work/out, stderr in $work/err, the status in $rc.
run() { "$attn" "$@" >"$work/out" 2>"$work/err"; rc=$?; }

# expect_error NAME RC 'exact stderr first line' ARGS...: a usage or runtime error
# with one clear line, the given exit code and nothing on stdout.
expect_error() { expect_error_from run "$@"; }

# expect_error_from RUNNER NAME RC 'line' ARGS...: the same, the run made by RUNNER (run,
# or a script's own, which must set $rc and fill $work/out and $work/err as run does).
expect_error_from() {
  local runner=$1 name=$2 want_rc=$3 want_msg=$4; shift 4
  "$runner" "$@"
  local got_msg; got_msg=$(head -n 1 "$work/err")
  if [ "$rc" -ne "$want_rc" ]; then fail "$name" "exit $rc, wanted $want_rc; stderr: $got_msg"
  elif [ "$got_msg" != "$want_msg" ]; then fail "$name" "stderr: '$got_msg' wanted '$want_msg'"
  elif [ -s "$work/out" ]; then fail "$name" "stdout is not empty"
  else ok "$name"; fi
}

# expect_ok NAME ARGS...: exit 0.
expect_ok() {
  local name=$1; shift
  run "$@"
  if [ "$rc" -eq 0 ]; then ok "$name"; else fail "$name" "exit $rc: $(head -n 2 "$work/err")"; fi
}

# check NAME CONDITION-COMMAND...: the command succeeds.
check() {
  local name=$1; shift
  if "$@" >/dev/null 2>&1; then ok "$name"; else fail "$name" "failed: $*"; fi
}

# limited RUN...: runs attn under an address-space limit ($limit_kb KiB, 2 GB unless a case
# sets less), so memory spent before a refusal fails the test instead of passing slowly.
# Under ASan (ATTN_SANITIZED=1, .ci/run) the shadow memory needs terabytes of address space:
# no ulimit -v there; the sanitizers watch the same runs instead.
limited() {
  if [ -n "${ATTN_SANITIZED:-}" ]; then "$attn" "$@" >"$work/out" 2>"$work/err"; rc=$?; return; fi
  (ulimit -v "${limit_kb:-2000000}"; "$attn" "$@") >"$work/out" 2>"$work/err"; rc=$?
}

# expect_refusal NAME RC 'stderr first line' ARGS...: expect_error, under the limit.
expect_refusal() { expect_error_from limited "$@"; }

# The real models' checkpoints (tests/reference/models, made by make_model_fixtures.py).
models=$(cd "$here/../reference/models" && pwd)
gpt2=$models/gpt2 bert=$models/bert llama=$models/llama mha=$models/mha

# write_big_gpt2 DIR: GPT-2's checkpoint with a 4 MiB token table, wte.weight 65536 x 16
# holding 0, 1, 2, ... (row r starts at 16·r): DIR/model.safetensors, DIR/model.npz and
# DIR/config.json. Needs python3 with NumPy.
write_big_gpt2() {
  mkdir -p "$1" && cp "$gpt2/config.json" "$1/"
  /usr/bin/python3 - "$1/model.safetensors" "$1/model.npz" "$gpt2/model.npz" <<'PY'
import json, struct, sys
import numpy as np
out, out_npz, weights = sys.argv[1:]
tensors = dict(np.load(weights))
tensors["wte.weight"] = np.arange(65536 * 16, dtype=np.float32).reshape(65536, 16)
header, data = {}, b""
for name in sorted(tensors):
    raw = tensors[name].astype(np.float32).tobytes()
    header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(out, "wb").write(struct.pack("<Q", len(text)) + text + data)
np.savez(out_npz, **tensors)
PY
}

# readme_output HEADING-REGEX: the README's first code block after "Output:" below the heading.
readme_output() {
  awk -v heading="$1" '$0 ~ heading {s = 1} s && /^Output:/ {o = 1; next} o && /^```$/ {if (b) exit; b = 1; next} b' \
    "$here/../../README.md"
}

finish() {
  echo
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
