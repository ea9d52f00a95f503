#include "signals.hpp"

#include <csignal>

#include "attn/io/temporary_files.hpp"

namespace attn_app {
namespace {

/// Runs in the signal's context: only async-signal-safe calls (unlink, signal, raise).
extern "C" void remove_temporaries_and_die(int sig) {
    attn::remove_registered_temporary_files();
    std::signal(sig, SIG_DFL);
    std::raise(sig);  // delivered when this handler returns: the process ends by `sig`
}

}  // namespace

void install_signal_handlers() {
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction old {};
        if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        struct sigaction action {};
        action.sa_handler = remove_temporaries_and_die;
        sigemptyset(&action.sa_mask);
        for (const int other : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, other);  // one cleanup at a time
        sigaction(sig, &action, nullptr);
    }
    std::signal(SIGPIPE, SIG_IGN);
}

}  // namespace attn_app
