#include "signals.hpp"

#include <csignal>

#include "attn/io/temporary_files.hpp"

namespace attn_app {
namespace {

/// Signals whose default ends the process (SIGQUIT, SIGSYS and SIGTRAP with a core): sent by
/// another process (kill, timeout -s, a batch system's limits), never by a fault of attn's own.
/// SIGPIPE and SIGXFSZ are left out: they are ignored (install_signal_handlers).
constexpr int sent_signals[] = {SIGINT,  SIGTERM, SIGHUP,    SIGQUIT, SIGALRM, SIGUSR1,  SIGUSR2, SIGXCPU,
                                SIGVTALRM, SIGPROF, SIGIO, SIGPWR,  SIGSTKFLT, SIGSYS,  SIGTRAP};

/// Signals a fault raises (a bad address, std::abort): they also end the process, so the
/// temporaries go first here too.
constexpr int fault_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

bool is_fault(int sig) {
    for (const int fault : fault_signals)
        if (sig == fault) return true;
    return false;
}

/// Runs in the signal's context: only async-signal-safe calls (unlink, signal, raise).
extern "C" void remove_temporaries_and_die(int sig) {
    // Raised again when the step that cannot stop ends; a fault cannot wait (its
    // instruction would run again).
    if (!is_fault(sig) && attn::signal_deferred(sig)) return;
    attn::remove_registered_temporary_files();
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered when this handler returns: the process ends by `sig`
}

/// Every signal install_signal_handlers handles: the sent ones, the real-time ones (their
/// default ends the process too) and the faults.
template <class Visit>
void each_ending_signal(Visit visit) {
    for (const int sig : sent_signals) visit(sig);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) visit(sig);
    for (const int sig : fault_signals) visit(sig);
}

}  // namespace

void install_signal_handlers() {
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    each_ending_signal([&action](int sig) { sigaddset(&action.sa_mask, sig); });  // one cleanup at a time
    each_ending_signal([&action](int sig) {
        // Only a signal left at its default: one ignored when attn started stays ignored, and
        // one that a sanitizer or a profiler (SIGPROF) took before main keeps its handler.
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return;
        sigaction(sig, &action, nullptr);
    });
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGXFSZ, SIG_IGN);  // past `ulimit -f`: an EFBIG write error ("File too large"), as a full disk
}

}  // namespace attn_app
