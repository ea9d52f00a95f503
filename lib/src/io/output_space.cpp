#include "attn/io/output_space.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include <sys/stat.h>
#include <sys/statvfs.h>

#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"

namespace attn {
namespace {

constexpr std::uint64_t saturated_bytes = std::numeric_limits<std::uint64_t>::max();

/// The folder a file `path` is written in: of the link's target when `path` is a symlink.
std::string folder_of(const std::string& path) {
    std::string target = path;
    if (char* resolved = realpath(path.c_str(), nullptr)) {  // an existing file or link: where it really is
        target = resolved;
        std::free(resolved);
    }
    const std::size_t slash = target.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : target.substr(0, slash);
}

}  // namespace

std::optional<std::uint64_t> free_bytes_for(const std::string& out_path) {
    struct stat st {};
    if (stat(out_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return std::nullopt;  // a device, a FIFO
    struct statvfs fs {};
    if (statvfs(folder_of(out_path).c_str(), &fs) != 0) return std::nullopt;  // output_file says why, if it matters
    std::uint64_t free = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(fs.f_bavail), static_cast<std::uint64_t>(fs.f_frsize), &free))
        return saturated_bytes;
    return free;
}

void check_free_space(std::uint64_t need, std::uint64_t free, const std::string& what) {
    if (need <= free) return;
    throw error(what + ": this output needs at least " + format_bytes(need) + ", but its file system has " +
                format_bytes(free) + " free (--no-space-check: write anyway)");
}

}  // namespace attn
