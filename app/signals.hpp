#pragma once
// Signals that end a run: the temporary files it made go with it.
namespace attn_app {

/// SIGINT, SIGTERM and SIGHUP remove attn's temporary files (attn/io/temporary_files.hpp:
/// the `.attn-XXXXXX` beside an --out file), then end the program as the signal would
/// have: the shell sees 130, 143 and 129. A signal that was ignored when attn started
/// (nohup, a background job of a script) stays ignored.
/// SIGPIPE is ignored: a closed pipe is an EPIPE write error instead, which
/// standard_output.hpp turns into a quiet end (141) for stdout, and which is an
/// `attn: error:` for an --out FIFO.
void install_signal_handlers();

}  // namespace attn_app
