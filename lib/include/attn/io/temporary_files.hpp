#pragma once
// The temporary files attn has made and not yet renamed or removed, listed so that
// a signal handler can remove them (app/signals.cpp): an interrupted run leaves no
// `.attn-XXXXXX` beside its --out file.
//
// The list is a fixed array of preformatted paths with an atomic state each, so that
// remove_registered_temporary_files() only reads memory and calls unlink(2): both are
// async-signal-safe.
#include <string>

namespace attn {

/// Adds `path` to the list; returns the slot to give unregister_temporary_file. When
/// the list is full or the path too long, returns -1 (the file is then still removed
/// by its owner on every ordinary exit, only not by a signal handler).
int register_temporary_file(const std::string& path) noexcept;

/// Takes the slot's path off the list (after the file was renamed or removed). -1 is ignored.
void unregister_temporary_file(int slot) noexcept;

/// Unlinks every listed file and empties the list. Async-signal-safe.
void remove_registered_temporary_files() noexcept;

/// While one lives, a step that cannot stop half way runs (copying a finished output into
/// a hard-linked --out file, which is written in place): the signal handler only notes a
/// signal (signal_deferred), and the hold's end raises it again, so that the run ends by it
/// then, with the target whole.
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
