#pragma once
// Signals that end a run: the temporary files it made go with it.
namespace attn_app {

/// Every signal whose default action ends the process removes attn's temporary files
/// (attn/io/temporary_files.hpp), then ends the program as the signal would have (130 for
/// SIGINT, 143 SIGTERM, 129 SIGHUP; SIGQUIT, SIGALRM, SIGUSR1/2, SIGXCPU, SIGVTALRM, SIGPROF,
/// SIGIO, SIGPWR, SIGSTKFLT, SIGSYS, SIGTRAP, the real-time signals; and the faults SIGSEGV,
/// SIGBUS, SIGILL, SIGFPE, SIGABRT). One that was ignored when attn started stays ignored,
/// and one a sanitizer or a profiler handles already keeps its handler.
/// SIGPIPE and SIGXFSZ are ignored: a closed pipe or a write past `ulimit -f` is a write
/// error instead (standard_output.hpp: a closed stdout pipe still ends quietly, 141).
void install_signal_handlers();

}  // namespace attn_app
