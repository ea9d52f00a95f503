#!/usr/bin/env bash
# Runs every example with the given attn first on PATH and compares its output
# with the .out file next to it. Usage: examples/run.sh path/to/attn
# To refresh an expected output after a deliberate change: UPDATE=1 examples/run.sh ...
set -u
# Debian's python3 (with NumPy) comes first when it is there
export PATH="/usr/bin:$PATH"
attn=${1:?usage: run.sh path/to/attn}
here=$(cd "$(dirname "$0")" && pwd)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$(cd "$(dirname "$attn")" && pwd)/$(basename "$attn")" "$bin/attn"
passed=0 failed=0
for script in "$here"/*.sh; do
  [ "$(basename "$script")" = run.sh ] && continue
  grep -q '^# run.sh: not an example on its own' "$script" && continue  # a helper another example runs
  name=$(basename "$script" .sh)
  actual=$(cd "$bin" && PATH="$bin:$PATH" bash "$script" 2>&1)
  status=$?
  if [ "${UPDATE:-}" = 1 ]; then printf '%s\n' "$actual" >"$here/$name.out"; fi
  if [ $status -eq 0 ] && diff -u "$here/$name.out" <(printf '%s\n' "$actual") >"$bin/diff"; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name (exit $status)"; cat "$bin/diff"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
