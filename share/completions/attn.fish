# fish completion for attn: commands and flags read from the program's own --help, so
# they are always the installed attn's. Installed as share/fish/vendor_completions.d/attn.fish.
function __attn_help
    set -l words (commandline -opc)
    set -l path
    for w in $words[2..-1]
        string match -q -- '-*' $w; and break
        set -a path $w
    end
    $words[1] $path --help 2>/dev/null
end
function __attn_commands
    __attn_help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}'
end
function __attn_flags
    __attn_help | string match -r -- '^ +(?:-[a-zA-Z],)?--[a-zA-Z0-9-]+' | string replace -r -- '^.*(--[a-zA-Z0-9-]+)$' '$1'
end
complete -c attn -f -a '(__attn_commands)'
complete -c attn -f -n 'string match -q -- "-*" (commandline -ct)' -a '(__attn_flags)'
