#include "signals.hpp"

#include <csignal>

#include "attn/io/temporary_files.hpp"

namespace attn_app {
namespace {

/// Signals whose default ends the process (without a core, or with one for SIGQUIT):
/// each removes the temporaries first.
constexpr int ending_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU};

/// Runs in the signal's context: only async-signal-safe calls (unlink, signal, raise).
extern "C" void remove_temporaries_and_die(int sig) {
    if (attn::signal_deferred(sig)) return;  // raised again when the step that cannot stop ends
    attn::remove_registered_temporary_files();
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered when this handler returns: the process ends by `sig`
}

}  // namespace

void install_signal_handlers() {
    for (const int sig : ending_signals) {
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        struct sigaction action {};
        action.sa_handler = remove_temporaries_and_die;
        sigemptyset(&action.sa_mask);
        for (const int other : ending_signals) sigaddset(&action.sa_mask, other);  // one cleanup at a time
        sigaction(sig, &action, nullptr);
    }
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGXFSZ, SIG_IGN);  // past `ulimit -f`: an EFBIG write error ("File too large"), as a full disk
}

}  // namespace attn_app
