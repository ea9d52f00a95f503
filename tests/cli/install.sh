#!/usr/bin/env bash
# cmake --install into a temporary prefix: bin/attn, the man page made from --help, the
# bash/zsh/fish completions and share/attn are in place, and the installed attn finds
# its share files through its own prefix (bin/attn -> ../share/attn).
#   install.sh CMAKE BUILD_DIR
set -uo pipefail
cmake=$1 build=$2
attn=unused
source "$(dirname "$0")/common.sh"
prefix="$work/prefix"

if "$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then ok "cmake --install"
else fail "cmake --install" "$(tail -3 "$work/install.log")"; fi

for f in bin/attn share/man/man1/attn.1 share/bash-completion/completions/attn share/zsh/vendor-completions/_attn \
         share/fish/vendor_completions.d/attn.fish share/attn/trace.schema.json share/attn/exercises/01-qk-by-hand.json \
         share/attn/doc/torch-rng.md; do
  check "installed: $f" test -s "$prefix/$f"
done
attn="$prefix/bin/attn"

# The man page renders, and holds each command's --help: the same text, so no drift.
if command -v man >/dev/null; then
  MANWIDTH=200 man -l "$prefix/share/man/man1/attn.1" >"$work/man.txt" 2>"$work/man.err"
  check "man -l attn.1 renders without warnings" test ! -s "$work/man.err"
  check "man page: NAME line" grep -q 'attn - see, step by step, what multi-head attention computes' "$work/man.txt"
  for command in trace mask check exercise; do
    # every flag of the command's help is in the page
    missing=$("$attn" $command --help | grep -Eo -- '^ +(-[a-z],)?--[a-z0-9-]+' | tr -d ' ' | sort -u |
              while read -r flag; do grep -qF -- "$flag" "$work/man.txt" || echo "$flag"; done)
    check "man page: every flag of attn $command --help${missing:+ (missing: $missing)}" test -z "$missing"
  done
else
  ok "man -l (skipped: no man here)"
fi

# bash completion: loads, and completes commands and flags from the installed attn.
out=$(PATH="$prefix/bin:$PATH" bash -c 'source "$1"; complete -p attn
      COMP_LINE="attn tr" COMP_POINT=7 COMP_WORDS=(attn tr) COMP_CWORD=1; _attn; echo "${COMPREPLY[*]}"
      COMP_LINE="attn trace --max-mem" COMP_POINT=20 COMP_WORDS=(attn trace --max-mem) COMP_CWORD=2; _attn
      echo "${COMPREPLY[*]}"
      COMP_LINE="attn exercise s" COMP_POINT=15 COMP_WORDS=(attn exercise s) COMP_CWORD=2; _attn; echo "${COMPREPLY[*]}"' _ \
      "$prefix/share/bash-completion/completions/attn" 2>&1)
check "bash completion loads: complete -F _attn attn" grep -qx 'complete -F _attn attn' <<<"$out"
check "bash completion: attn tr<Tab> -> trace" grep -qx 'trace' <<<"$out"
check "bash completion: attn trace --max-mem<Tab> -> --max-memory" grep -qx -- '--max-memory' <<<"$out"
check "bash completion: attn exercise s<Tab> -> show" grep -qx 'show' <<<"$out"
# zsh and fish completions, asked as a Tab would: zsh's _attn run with the completion
# system's compadd and _files stubbed to print what they are given (words, CURRENT and
# PREFIX set as zsh sets them); fish's own `complete -C`.
zsh_file="$prefix/share/zsh/vendor-completions/_attn"
fish_file="$prefix/share/fish/vendor_completions.d/attn.fish"
#   complete_with SHELL 'attn trace --max-mem': the candidates for the line's last word
complete_with() {
  local shell=$1 words; read -ra words <<<"$2"
  [[ $2 == *" " ]] && words+=("")
  if [ "$shell" = zsh ]; then
    PATH="$prefix/bin:$PATH" zsh -f -c '
      compadd() { [[ $1 == -a ]] && print -rl -- "${(@P)2}"; }
      _files() { print -r -- "(files)"; }
      file=$1; shift; words=("$@") CURRENT=$# PREFIX=${@[-1]}
      source "$file"' _ "$zsh_file" "${words[@]}" 2>&1
  else
    PATH="$prefix/bin:$PATH" fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$fish_file" "$2" 2>&1 |
      cut -f1
  fi
}
for shell in zsh fish; do
  if ! command -v "$shell" >/dev/null; then ok "$shell completion (skipped: no $shell here)"; continue; fi
  file=$zsh_file; [ "$shell" = fish ] && file=$fish_file
  check "$shell completion parses" "$shell" -n "$file"
  check "$shell completion: attn tr<Tab> -> trace" grep -qx 'trace' <<<"$(complete_with "$shell" 'attn tr')"
  check "$shell completion: attn trace --max-mem<Tab> -> --max-memory" \
    grep -qx -- '--max-memory' <<<"$(complete_with "$shell" 'attn trace --max-mem')"
  check "$shell completion: attn exercise s<Tab> -> show" grep -qx 'show' <<<"$(complete_with "$shell" 'attn exercise s')"
  [ "$shell" = zsh ] && check "zsh completion: attn trace --input <Tab> -> files" \
    grep -qx '(files)' <<<"$(complete_with zsh 'attn trace --input ')"
done

# The installed attn reads the installed share/attn, not the source tree's: with one
# exercise removed from the prefix, it lists one fewer.
unset ATTN_SHARE_DIR
expect_ok "installed attn exercise list" exercise list
before=$(wc -l <"$work/out")
rm "$prefix/share/attn/exercises/13-multi-head-attention.json"
expect_ok "installed attn exercise list, one exercise removed" exercise list
after=$(wc -l <"$work/out")
check "the installed attn reads \$prefix/share/attn ($before lines, then $after)" test "$after" -eq $((before - 1))
# ... wherever the prefix is moved to (found through the program's own path).
mv "$prefix" "$work/moved"
attn="$work/moved/bin/attn"
expect_ok "a moved prefix: attn exercise list" exercise list
check "a moved prefix reads its own share/attn" test "$(wc -l <"$work/out")" -eq "$after"
expect_ok "the installed attn runs: trace --heads 4 --mask causal" trace --heads 4 --mask causal

finish
