#include "attn/io/temporary_files.hpp"

#include <atomic>
#include <csignal>
#include <cstring>

#include <limits.h>
#include <unistd.h>

namespace attn {
namespace {

constexpr int slot_count = 32;  // attn writes one file at a time; exercise folders a few in turn

enum slot_state : int { slot_free = 0, slot_filling = 1, slot_listed = 2 };

struct slot {
    std::atomic<int> state{slot_free};
    char path[PATH_MAX]{};  // every member initialised: constant initialisation, all zero in .bss
};

// Not constructed at start-up: a constructor writing each slot's state would touch one
// page a slot (32 page faults, a tenth of a small run's).
slot slots[slot_count];
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler reads the slots' states");

std::atomic<int> deferring{0};      // signals_deferred alive
std::atomic<int> deferred_signal{0};  // the signal noted meanwhile, or 0

}  // namespace

int register_temporary_file(const std::string& path) noexcept {
    if (path.empty() || path.size() >= PATH_MAX) return -1;
    for (int i = 0; i < slot_count; ++i) {
        int expected = slot_free;
        if (!slots[i].state.compare_exchange_strong(expected, slot_filling)) continue;
        std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
        slots[i].state.store(slot_listed);
        return i;
    }
    return -1;
}

void unregister_temporary_file(int i) noexcept {
    if (i < 0 || i >= slot_count) return;
    slots[i].state.store(slot_free);
}

void remove_registered_temporary_files() noexcept {
    for (slot& s : slots) {
        int expected = slot_listed;
        if (s.state.compare_exchange_strong(expected, slot_filling)) {
            unlink(s.path);
            s.state.store(slot_free);
        }
    }
}

signals_deferred::signals_deferred() noexcept { deferring.store(1); }

signals_deferred::~signals_deferred() {
    deferring.store(0);
    if (const int sig = deferred_signal.exchange(0)) std::raise(sig);  // its handler runs now
}

bool signal_deferred(int sig) noexcept {
    if (deferring.load() == 0) return false;
    deferred_signal.store(sig);
    return true;
}

}  // namespace attn
