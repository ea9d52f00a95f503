#!/usr/bin/env bash
# Writes attn.1, the man page, to stdout from the program's own --help texts, so the
# two cannot drift apart: CMake runs it at build time (the target `manpage`).
#   share/man/help2roff.sh build/attn > attn.1
# Sections: NAME, SYNOPSIS, DESCRIPTION (attn --help), one section per command
# (attn COMMAND --help, and each subcommand of exercise), FILES, ENVIRONMENT, EXIT STATUS.
# The help text goes in as it is printed (no-fill, roff's special characters escaped).
set -euo pipefail
attn="${1:?usage: help2roff.sh PATH/TO/attn}"
version="$("$attn" --version | awk '{print $2}')"

# roff-safe text: backslashes doubled as \e, a line starting with . or ' kept literal.
escape() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }
# A --help text as a no-fill block, in a constant-width font as on the terminal.
block() { printf '.nf\n'; "$attn" "$@" --help | escape; printf '.fi\n'; }

cat <<ROFF
.TH ATTN 1 "" "attn $version" "User Commands"
.nh
.SH NAME
attn \\- see, step by step, what multi-head attention computes
.SH SYNOPSIS
.B attn trace
[\\fIOPTIONS\\fR]
.br
.B attn mask
[\\fIOPTIONS\\fR]
.br
.B attn check
[\\fIOPTIONS\\fR]
\\fB\\-\\-answer\\fR \\fIFILE\\fR
.br
.B attn exercise
\\fBlist\\fR | \\fBshow\\fR \\fIN\\fR | \\fBcheck\\fR \\fIN\\fR [\\fIOPTIONS\\fR]
.SH DESCRIPTION
ROFF
block
for command in trace mask check exercise; do
  printf '.SH "ATTN %s"\n' "$(echo "$command" | tr a-z A-Z)"
  block "$command"
done
for sub in list show check; do
  printf '.SS "attn exercise %s"\n' "$sub"
  block exercise "$sub"
done
cat <<'ROFF'
.SH FILES
.TP
.I PREFIX/share/attn/
the exercises (exercises/*.json), the JSON schema of --format json (trace.schema.json)
and the documentation (doc/), found next to the program: bin/attn reads ../share/attn.
.SH ENVIRONMENT
.TP
.B ATTN_SHARE_DIR
a folder to read the share files from instead (it holds exercises/).
.SH EXIT STATUS
0 on success, 2 for a usage error (a flag or value attn cannot take), 1 for any
other error; one line "attn: error: ..." on standard error says which.
.SH SEE ALSO
The README of attn, and attn COMMAND \-\-help, which this page repeats.
ROFF
