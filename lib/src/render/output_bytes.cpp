#include "attn/render/output_bytes.hpp"

#include <algorithm>
#include <limits>

#include "attn/compute/run_plan.hpp"

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

}  // namespace

std::uint64_t least_output_bytes(const config& c, const render_options& view, std::uint64_t float_bytes,
                                 std::uint64_t bool_bytes) {
    std::uint64_t total = 0;
    for (const planned_stage& s : make_plan(c).stages) {
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

}  // namespace attn
