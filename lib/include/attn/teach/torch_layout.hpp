#pragma once
// How PyTorch lays a tensor out in memory: its shape and strides, whether it is
// contiguous, and whether a view or reshape can reuse its memory. These are the
// rules of aten's is_contiguous() and computeStride(), so that --explain can say
// where PyTorch copies and where it does not, with this run's strides.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::torch_layout {

using sizes = std::vector<std::int64_t>;

/// A tensor's place in memory, as t.shape and t.stride() report it.
struct layout {
    sizes shape;
    sizes strides;  // elements skipped in memory for one step along each axis
};

/// A fresh tensor of `shape`: row-major, the last axis 1 element apart.
/// contiguous({2,5,8}).strides == {40,8,1}.
layout contiguous(sizes shape);

/// t.transpose(a, b): the same memory with two axes' sizes and strides swapped.
layout transposed(layout t, std::size_t a, std::size_t b);

/// t.is_contiguous(): walking the tensor in index order walks its memory in
/// order. Axes of length 1 do not count, as in aten.
bool is_contiguous(const layout& t);

/// The strides t.view(shape) would have, or nullopt when no view can give that
/// shape over t's memory (then view raises and reshape copies). aten's computeStride.
std::optional<sizes> view_strides(const layout& t, const sizes& shape);

/// t.view(shape); `shape` must be viewable (view_strides has a value).
layout viewed(const layout& t, const sizes& shape);

/// t.reshape(shape) copies: no view gives that shape.
bool reshape_copies(const layout& t, const sizes& shape);

/// "(40, 8, 2, 1)", as PyTorch prints t.stride().
std::string stride_text(const layout& t);

/// "[2,5,4,2]", as attn writes shapes.
std::string shape_text(const sizes& shape);

}  // namespace attn::torch_layout
