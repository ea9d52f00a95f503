#pragma once
// Signals that end a run: the temporary files it made go with it.
namespace attn_app {

/// SIGINT, SIGTERM, SIGHUP (and SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU) remove attn's
/// temporary files (attn/io/temporary_files.hpp: the `.attn-XXXXXX` beside an --out file),
/// then end the program as the signal would have: the shell sees 130, 143 and 129. A
/// signal that arrives while a finished output is copied into a hard-linked --out file
/// ends the run once the copy is done. A signal that was ignored when attn started
/// (nohup, a background job of a script) stays ignored.
/// SIGPIPE is ignored: a closed pipe is an EPIPE write error instead, which
/// standard_output.hpp turns into a quiet end (141) for stdout, and which is an
/// `attn: error:` for an --out FIFO. SIGXFSZ is ignored: a write past `ulimit -f` is an
/// EFBIG write error, one line and exit 1, as a full disk is.
void install_signal_handlers();

}  // namespace attn_app
