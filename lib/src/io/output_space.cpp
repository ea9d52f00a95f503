#include "attn/io/output_space.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include <sys/stat.h>
#include <sys/statvfs.h>

#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/stage_layouts.hpp"

namespace attn {
namespace {

constexpr std::uint64_t saturated_bytes = std::numeric_limits<std::uint64_t>::max();

/// The elements of `t` that an output with `view`'s selection writes.
std::uint64_t selected_elements(const planned_tensor& t, const render_options& view) {
    std::uint64_t n = 1;
    for (std::size_t axis = 0; axis < t.dims.size(); ++axis) {
        const std::string& dim = t.dims[axis];
        const bool selected = (dim == "batch" && view.batch_index) || (dim == "head" && view.head) ||
                              ((dim == "query" || dim == "seq") && view.row);
        const auto size = static_cast<std::uint64_t>(t.layout.shape[axis]);
        if (__builtin_mul_overflow(n, selected ? std::min<std::uint64_t>(size, 1) : size, &n)) return saturated_bytes;
    }
    return n;
}

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

std::uint64_t least_output_bytes(const config& c, const render_options& view, std::uint64_t float_bytes,
                                 std::uint64_t bool_bytes) {
    std::uint64_t total = 0;
    for (const planned_stage& s : plan_stage_layouts(c)) {
        if (!view.shows(s.id)) continue;
        for (const planned_tensor& t : s.tensors) {
            std::uint64_t bytes = 0;
            const std::uint64_t each = t.type == element_type::boolean ? bool_bytes : float_bytes;
            if (__builtin_mul_overflow(selected_elements(t, view), each, &bytes) ||
                __builtin_add_overflow(total, bytes, &total))
                return saturated_bytes;
        }
    }
    return total;
}

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
