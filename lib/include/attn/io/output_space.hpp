#pragma once
// Whether an output fits where it goes: the fewest bytes a run's output takes, known
// from the sizes before anything is computed (render/output_format.hpp), against the space
// free on the file system of --out, so that a run that cannot be written is refused at once instead of
// failing with ENOSPC after minutes of work (and a full disk for everyone else).
#include <cstdint>
#include <optional>
#include <string>


namespace attn {

/// The bytes an unprivileged writer may still fill on the file system that `out_path`
/// would be written to (statvfs of its folder, through a symlink to its target's: f_bavail
/// · f_frsize); nullopt when it is not a regular file's (a device, a FIFO, /dev/stdout,
/// /dev/fd/N) or statvfs cannot tell.
std::optional<std::uint64_t> free_bytes_for(const std::string& out_path);

/// Throws attn::error when `need` is more than `free`: "<what>: this output needs at least
/// 74.5 GiB, but its file system has 1.0 MiB free (--no-space-check: write anyway)".
void check_free_space(std::uint64_t need, std::uint64_t free, const std::string& what);

}  // namespace attn
