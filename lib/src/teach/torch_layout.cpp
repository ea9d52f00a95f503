#include "attn/teach/torch_layout.hpp"

#include <stdexcept>
#include <utility>

namespace attn::torch_layout {

layout contiguous(sizes shape) {
    sizes strides(shape.size());
    std::int64_t step = 1;
    for (std::size_t a = shape.size(); a-- > 0;) {
        strides[a] = step;
        step *= shape[a];
    }
    return {std::move(shape), std::move(strides)};
}

layout transposed(layout t, std::size_t a, std::size_t b) {
    std::swap(t.shape[a], t.shape[b]);
    std::swap(t.strides[a], t.strides[b]);
    return t;
}

bool is_contiguous(const layout& t) {
    std::int64_t expected = 1;
    for (std::size_t a = t.shape.size(); a-- > 0;) {
        if (t.shape[a] == 0) return true;
        if (t.shape[a] == 1) continue;  // a step along it never happens
        if (t.strides[a] != expected) return false;
        expected *= t.shape[a];
    }
    return true;
}

// aten/src/ATen/TensorUtils.cpp, computeStride: walk the old axes from the last,
// grouping them into chunks that are contiguous among themselves; each chunk
// must be covered exactly by a run of new axes.
std::optional<sizes> view_strides(const layout& t, const sizes& shape) {
    if (t.shape.empty()) return sizes(shape.size(), 1);
    std::int64_t numel = 1;
    for (std::int64_t n : t.shape) numel *= n;
    if (numel == 0) return t.shape == shape ? std::optional<sizes>(t.strides) : std::nullopt;
    sizes strides(shape.size());
    std::ptrdiff_t view_axis = static_cast<std::ptrdiff_t>(shape.size()) - 1;
    std::int64_t chunk_base_stride = t.strides.back(), tensor_numel = 1, view_numel = 1;
    for (std::ptrdiff_t a = static_cast<std::ptrdiff_t>(t.shape.size()) - 1; a >= 0; --a) {
        tensor_numel *= t.shape[a];
        const bool chunk_ends = a == 0 || (t.shape[a - 1] != 1 && t.strides[a - 1] != tensor_numel * chunk_base_stride);
        if (!chunk_ends) continue;
        while (view_axis >= 0 && (view_numel < tensor_numel || shape[view_axis] == 1)) {
            strides[view_axis] = view_numel * chunk_base_stride;
            view_numel *= shape[view_axis];
            --view_axis;
        }
        if (view_numel != tensor_numel) return std::nullopt;
        if (a > 0) {
            chunk_base_stride = t.strides[a - 1];
            tensor_numel = 1;
            view_numel = 1;
        }
    }
    if (view_axis != -1) return std::nullopt;
    return strides;
}

layout viewed(const layout& t, const sizes& shape) {
    std::optional<sizes> strides = view_strides(t, shape);
    if (!strides)
        throw std::logic_error("torch_layout::viewed: " + shape_text(shape) + " is no view of " + shape_text(t.shape));
    return {shape, *strides};
}

bool reshape_copies(const layout& t, const sizes& shape) { return !view_strides(t, shape); }

std::string stride_text(const layout& t) {
    std::string text = "(";
    for (std::size_t a = 0; a < t.strides.size(); ++a) text += (a ? ", " : "") + std::to_string(t.strides[a]);
    return text + (t.strides.size() == 1 ? ",)" : ")");
}

std::string shape_text(const sizes& shape) {
    std::string text = "[";
    for (std::size_t a = 0; a < shape.size(); ++a) text += (a ? "," : "") + std::to_string(shape[a]);
    return text + "]";
}

}  // namespace attn::torch_layout
