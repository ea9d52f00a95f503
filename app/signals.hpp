#pragma once
// Signals that end a run: the temporary files it made go with it.
namespace attn_app {

/// SIGINT, SIGTERM, SIGHUP (and SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU) remove attn's
/// temporary files (attn/io/temporary_files.hpp), then end the program as the signal
/// would have (130, 143, 129); one that was ignored when attn started stays ignored.
/// SIGPIPE and SIGXFSZ are ignored: a closed pipe or a write past `ulimit -f` is a write
/// error instead (standard_output.hpp: a closed stdout pipe still ends quietly, 141).
void install_signal_handlers();

}  // namespace attn_app
