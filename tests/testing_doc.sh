#!/usr/bin/env bash
# docs/testing.md names every test suite and every fixture generator: each ctest test of
# tests/CMakeLists.txt, each command-line script tests/cli/*.sh, each fuzz harness and each
# tests/reference/make_*.py appears in it between backticks. Usage: testing_doc.sh SOURCE_DIR
set -u
source_dir=${1:?usage: testing_doc.sh SOURCE_DIR}
doc="$source_dir/docs/testing.md"
missing=0
expect() {  # expect KIND NAME: NAME between backticks in the doc
    if ! grep -qF "\`$2\`" "$doc"; then
        echo "docs/testing.md does not name the $1 \`$2\`"
        missing=$((missing + 1))
    fi
}
for name in $(sed -n 's/.*add_test(NAME \([A-Za-z0-9_]*\).*/\1/p' "$source_dir/tests/CMakeLists.txt"); do
    expect "test" "$name"
done
for script in "$source_dir"/tests/cli/*.sh; do
    [ "$(basename "$script")" = common.sh ] || expect "command-line script" "$(basename "$script")"
done
for harness in $(sed -n 's/^set(fuzz_harnesses \(.*\))$/\1/p' "$source_dir/tests/fuzz/CMakeLists.txt"); do
    expect "fuzz replay" "fuzz_replay_$harness"
done
for generator in "$source_dir"/tests/reference/make_*.py "$source_dir"/tests/fuzz/make_*.py; do
    expect "fixture generator" "$(basename "$generator")"
done
[ "$missing" -eq 0 ] || exit 1
echo "docs/testing.md names every suite and generator"
