#!/usr/bin/env bash
# The .deb in a clean Debian root: apt installs it with the Depends it declares, then
# attn runs from PATH, `man attn` shows its page and the bash, zsh and fish completions
# complete from where the package puts them.
#   .ci/clean-root-test.sh make ROOT        build a clean bookworm root (mmdebstrap; slow,
#                                           network: CI starts it in the background early)
#   .ci/clean-root-test.sh test ROOT DEB    install DEB in ROOT with apt and try it
#   .ci/clean-root-test.sh DEB              both, in a temporary ROOT
# Needs root (chroot), mmdebstrap, and a reachable Debian mirror.
set -euo pipefail

make_root() {
  local root=$1
  rm -rf "$root"
  # --variant=apt: essential packages and apt only. man-db, bash-completion, zsh and fish
  # come in now (a user who reads man pages or uses those shells has them); attn's own
  # Depends must come from the .deb.
  mmdebstrap --quiet --variant=apt --include=man-db,bash-completion,zsh,fish bookworm "$root" \
    "deb http://deb.debian.org/debian bookworm main"
}

test_root() {
  local root=$1 deb=$2
  cp "$deb" "$root/tmp/attn.deb"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
  mkdir -p "$root/dev/pts" && { mountpoint -q "$root/dev/pts" || mount -t devpts devpts "$root/dev/pts"; }
  trap 'umount "$1/dev/pts" "$1/proc" 2>/dev/null || true' RETURN
  local in_root=(chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
                 HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive)
  "${in_root[@]}" apt-get update -qq
  "${in_root[@]}" apt-get install -y -qq --no-install-recommends /tmp/attn.deb >/dev/null
  echo "== dpkg -s attn (Depends)"
  "${in_root[@]}" dpkg -s attn | grep -E '^(Package|Version|Depends):'
  echo "== attn trace --heads 4 --mask causal (from PATH: $("${in_root[@]}" sh -c 'command -v attn'))"
  "${in_root[@]}" attn trace --heads 4 --mask causal | tail -8
  echo "== attn exercise list (share files found through the prefix)"
  "${in_root[@]}" attn exercise list | head -3
  echo "== man attn | head"
  "${in_root[@]}" sh -c 'MANWIDTH=100 man attn | head -12'
  "${in_root[@]}" sh -c 'man attn 2>/dev/null | grep -q "ATTN TRACE"'
  echo "== bash completion"
  "${in_root[@]}" bash -c 'source /usr/share/bash-completion/bash_completion
    source /usr/share/bash-completion/completions/attn; complete -p attn
    COMP_LINE="attn tr"; COMP_POINT=7; COMP_WORDS=(attn tr); COMP_CWORD=1; _attn
    test "${COMPREPLY[*]}" = trace || exit 1; echo "attn tr<Tab>: trace"
    COMP_LINE="attn trace --mask-f"; COMP_POINT=19; COMP_WORDS=(attn trace --mask-f); COMP_CWORD=2; _attn
    test "${COMPREPLY[*]}" = --mask-file || exit 1; echo "attn trace --mask-f<Tab>: --mask-file"'
  echo "== zsh completion (from the default \$fpath; compadd and _files stubbed)"
  "${in_root[@]}" zsh -c 'print -rl -- $fpath' | grep -qx /usr/share/zsh/vendor-completions
  "${in_root[@]}" zsh -f -c 'compadd() { [[ $1 == -a ]] && print -rl -- "${(@P)2}"; }; _files() { print files; }
    words=(attn trace --mask-f) CURRENT=3 PREFIX=--mask-f; source /usr/share/zsh/vendor-completions/_attn' |
    grep -qx -- --mask-file || { echo "zsh: attn trace --mask-f<Tab> did not give --mask-file"; return 1; }
  echo "attn trace --mask-f<Tab>: --mask-file"
  echo "== fish completion (autoloaded from vendor_completions.d)"
  "${in_root[@]}" fish -c 'complete -C "attn tr"' | cut -f1 | grep -qx trace ||
    { echo "fish: attn tr<Tab> did not give trace"; return 1; }
  echo "attn tr<Tab>: trace"
  echo "== clean root: all good"
}

case "${1:-}" in
  make) make_root "${2:?ROOT}" ;;
  test) test_root "${2:?ROOT}" "${3:?DEB}" ;;
  *.deb)
    root=$(mktemp -d /tmp/attn-root.XXXXXX)
    make_root "$root"
    test_root "$root" "$1"
    rm -rf "$root"
    ;;
  *) echo "usage: $0 make ROOT | test ROOT DEB | DEB" >&2; exit 2 ;;
esac
