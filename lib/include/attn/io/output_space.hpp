#pragma once
// Whether an output fits where it goes: the fewest bytes a run's output takes, known
// from the sizes before anything is computed, against the space free on the file
// system of --out, so that a run that cannot be written is refused at once instead of
// failing with ENOSPC after minutes of work (and a full disk for everyone else).
#include <cstdint>
#include <optional>
#include <string>

#include "attn/compute/config.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// The fewest bytes an output that writes every element of the shown stages' tensors
/// takes: their elements (as view.batch_index, view.head and view.row select them; an
/// axis they may not select counts whole, so this stays a lower bound) at `float_bytes`
/// each, a boolean tensor's at `bool_bytes`. Sizes only: O(stages). Saturates.
std::uint64_t least_output_bytes(const config& c, const render_options& view, std::uint64_t float_bytes,
                                 std::uint64_t bool_bytes);

/// The bytes an unprivileged writer may still fill on the file system that `out_path`
/// would be written to (statvfs of its folder, through a symlink to its target's: f_bavail
/// · f_frsize); nullopt when it is not a regular file's (a device, a FIFO, /dev/stdout,
/// /dev/fd/N) or statvfs cannot tell.
std::optional<std::uint64_t> free_bytes_for(const std::string& out_path);

/// Throws attn::error when `need` is more than `free`: "<what>: this output needs at least
/// 74.5 GiB, but its file system has 1.0 MiB free (--no-space-check: write anyway)".
void check_free_space(std::uint64_t need, std::uint64_t free, const std::string& what);

}  // namespace attn
