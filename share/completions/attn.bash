# bash completion for attn. The commands and flags come from the program's own --help
# when you press Tab, so they are always the installed attn's. Installed as
# share/bash-completion/completions/attn; or: source share/completions/attn.bash
_attn() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
    fi
    # The command path typed so far: attn [trace|mask|check|tokens|exercise [list|show|check]]
    local path=() w
    for w in "${words[@]:1:cword-1}"; do
        case "$w" in -*) break ;; *) path+=("$w") ;; esac
    done
    local help
    help="$("${words[0]}" "${path[@]}" --help 2>/dev/null)" || return
    # A flag that takes a file: complete file names.
    if [[ "$prev" == --* ]] && grep -Eq -- "^ +(-[a-z],)?$prev +(FILE|DUMP|DIR)" <<<"$help"; then
        _filedir 2>/dev/null || COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    # Flags: those the help lists at the start of its option lines ("  -h,--help", "  --seq N").
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(grep -Eo -- '^ +(-[a-zA-Z],)?--[a-zA-Z0-9-]+' <<<"$help" | tr ', ' '\n\n' | sort -u)" -- "$cur"))
    elif grep -q '^Commands:' <<<"$help"; then
        COMPREPLY=($(compgen -W "$(sed -n '/^Commands:/,/^$/p' <<<"$help" | awk 'NR > 1 && NF {print $1}')" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _attn attn
