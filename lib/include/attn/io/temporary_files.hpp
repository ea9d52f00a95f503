#pragma once
// The temporary files attn has made and not yet renamed or removed, listed so that a
// signal handler (app/signals.cpp) can remove them: an interrupted run leaves no
// `.attn-XXXXXX` beside its --out file. The list is a fixed array of paths with an
// atomic state each, so that removing them only reads memory and calls unlink(2).
#include <string>

namespace attn {

/// Lists `path`; returns its slot, or -1 when the list is full or the path too long
/// (its owner still removes it on every ordinary exit).
int register_temporary_file(const std::string& path) noexcept;

/// Takes the slot's path off the list (after the file was renamed or removed). -1 is ignored.
void unregister_temporary_file(int slot) noexcept;

/// Unlinks every listed file and empties the list. Async-signal-safe.
void remove_registered_temporary_files() noexcept;

/// While one lives, a step that cannot stop half way runs (copying into a hard-linked
/// --out file in place): the signal handler only notes a signal (signal_deferred), and
/// the hold's end raises it again, so that the run ends by it with the target whole.
class signals_deferred {
public:
    signals_deferred() noexcept;
    ~signals_deferred();  // raises a signal noted meanwhile
    signals_deferred(const signals_deferred&) = delete;
    signals_deferred& operator=(const signals_deferred&) = delete;
};

/// For the signal handler: true (and `sig` noted) while a signals_deferred lives.
/// Async-signal-safe.
bool signal_deferred(int sig) noexcept;

}  // namespace attn
