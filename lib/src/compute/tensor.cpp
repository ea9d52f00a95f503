#include "attn/compute/tensor.hpp"

#include <algorithm>
#include <utility>

namespace attn {
namespace {

using buffer = strided_values::storage_type;

/// `shape` read through `strides` from `data`: xtensor's adaptor, which keeps no memory alive.
strided_values strided(const float* data, const tensor_shape& shape, const tensor_strides& strides) {
    std::size_t size = 1;
    for (std::size_t s : shape) size *= s;
    return strided_values(buffer(data, size), strided_values::shape_type(shape.begin(), shape.end()),
                          strided_values::strides_type(strides.begin(), strides.end()));
}

}  // namespace

tensor::tensor() : values(strided(nullptr, {0}, {1})), strides{1} {}

tensor::tensor(std::string name_, std::vector<std::string> dims_, xt::xarray<float> values_, element_type type_)
    : tensor(std::move(name_), std::move(dims_), make_storage(std::move(values_)), type_) {}

tensor::tensor(std::string name_, std::vector<std::string> dims_, tensor_storage storage_, element_type type_)
    : name(std::move(name_)),
      dims(std::move(dims_)),
      values(strided(nullptr, {0}, {1})),
      type(type_),
      storage(std::move(storage_)) {
    const tensor_shape shape(storage->shape().begin(), storage->shape().end());
    strides = contiguous_strides(shape);
    values = strided(storage->data(), shape, strides);
}

tensor_layout tensor::layout() const { return {tensor_shape(values.shape().begin(), values.shape().end()), strides}; }

// Unsigned arithmetic: the plan lays out sizes too large for memory before refusing them,
// and their strides wrap around instead of overflowing.
tensor_strides contiguous_strides(const tensor_shape& shape) {
    tensor_strides strides(shape.size());
    std::size_t step = 1;
    for (std::size_t a = shape.size(); a-- > 0;) {
        strides[a] = static_cast<std::ptrdiff_t>(step);
        step *= std::max<std::size_t>(shape[a], 1);
    }
    return strides;
}

tensor_layout contiguous_layout(tensor_shape shape) {
    tensor_strides strides = contiguous_strides(shape);
    return {std::move(shape), std::move(strides)};
}

// c10's TensorImpl::compute_contiguous
bool is_contiguous(const tensor_layout& t) {
    if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end()) return true;  // no elements
    std::size_t expected = 1;  // the stride a row-major layout gives the axis (wrapping as contiguous_strides)
    for (std::size_t a = t.shape.size(); a-- > 0;) {
        if (t.shape[a] == 1) continue;
        if (t.strides[a] != static_cast<std::ptrdiff_t>(expected)) return false;
        expected *= t.shape[a];
    }
    return true;
}

tensor_layout transposed(tensor_layout t, std::size_t a, std::size_t b) {
    std::swap(t.shape[a], t.shape[b]);
    std::swap(t.strides[a], t.strides[b]);
    return t;
}

// aten/src/ATen/TensorUtils.cpp, computeStride: walk the old axes from the last, grouping
// them into chunks that are contiguous among themselves; each chunk must be covered
// exactly by a run of new axes.
std::optional<tensor_layout> viewed(const tensor_layout& t, tensor_shape shape) {
    if (t.shape.empty()) {  // a scalar: any shape of one element, every stride 1
        tensor_strides ones(shape.size(), 1);
        return tensor_layout{std::move(shape), std::move(ones)};
    }
    if (std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end())
        return shape == t.shape ? t : contiguous_layout(std::move(shape));
    tensor_strides strides(shape.size());
    std::ptrdiff_t view_axis = static_cast<std::ptrdiff_t>(shape.size()) - 1;
    std::ptrdiff_t chunk_base_stride = t.strides.back(), tensor_numel = 1, view_numel = 1;
    for (std::ptrdiff_t a = static_cast<std::ptrdiff_t>(t.shape.size()) - 1; a >= 0; --a) {
        tensor_numel *= static_cast<std::ptrdiff_t>(t.shape[a]);
        const bool chunk_ends = a == 0 || (t.shape[a - 1] != 1 && t.strides[a - 1] != tensor_numel * chunk_base_stride);
        if (!chunk_ends) continue;
        while (view_axis >= 0 && (view_numel < tensor_numel || shape[view_axis] == 1)) {
            strides[view_axis] = view_numel * chunk_base_stride;
            view_numel *= static_cast<std::ptrdiff_t>(shape[view_axis]);
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
    return tensor_layout{std::move(shape), std::move(strides)};
}

tensor shape_only(std::string name, std::vector<std::string> dims, tensor_shape shape, element_type type) {
    tensor head;
    head.name = std::move(name);
    head.dims = std::move(dims);
    head.type = type;
    head.strides = contiguous_strides(shape);
    head.values = strided(nullptr, shape, head.strides);
    return head;
}

tensor as_strided(const tensor& base, const std::string& base_name, std::string name, std::vector<std::string> dims,
                  tensor_shape shape, tensor_strides strides) {
    tensor view;
    view.name = std::move(name);
    view.dims = std::move(dims);
    view.type = base.type;
    view.storage = base.storage;
    view.offset = base.offset;
    view.strides = std::move(strides);
    view.view_of = base.is_view() ? base.view_of : base_name;
    view.values = strided(base.storage->data() + base.offset, shape, view.strides);
    return view;
}

xt::xarray<float> row_major_copy(const tensor& t) {
    const auto& shape = t.values.shape();
    auto out = xt::xarray<float>::from_shape(shape);
    if (out.size() == 0) return out;
    const std::size_t axes = shape.size();
    if (axes == 0) {
        out() = t.values();
        return out;
    }
    const std::size_t run = shape[axes - 1];
    const std::ptrdiff_t step = t.strides[axes - 1];
    std::vector<std::size_t> index(axes - 1, 0);  // of the leading axes, an odometer
    const float* base = t.values.data();
    for (float* to = out.data(); to != out.data() + out.size(); to += run) {
        std::ptrdiff_t at = 0;
        for (std::size_t a = 0; a + 1 < axes; ++a) at += static_cast<std::ptrdiff_t>(index[a]) * t.strides[a];
        const float* from = base + at;
        if (step == 1) {
            std::copy(from, from + run, to);
        } else {
            for (std::size_t j = 0; j < run; ++j) to[j] = from[static_cast<std::ptrdiff_t>(j) * step];
        }
        for (std::size_t a = axes - 1; a-- > 0;) {  // the next row: the last leading axis first
            if (++index[a] < shape[a]) break;
            index[a] = 0;
        }
    }
    return out;
}

const float* row_major_rows(const tensor& t, std::size_t b, std::size_t h, std::size_t first, std::size_t count,
                            std::vector<float>& scratch) {
    const std::size_t cols = t.values.shape()[3];
    const std::ptrdiff_t row_step = t.strides[2], col_step = t.strides[3];
    const float* start = t.values.data() + static_cast<std::ptrdiff_t>(b) * t.strides[0] +
                         static_cast<std::ptrdiff_t>(h) * t.strides[1] + static_cast<std::ptrdiff_t>(first) * row_step;
    const bool in_place =
        (cols <= 1 || col_step == 1) && (count <= 1 || row_step == static_cast<std::ptrdiff_t>(cols));
    if (in_place) return start;
    scratch.resize(count * cols);
    for (std::size_t i = 0; i < count; ++i) {
        const float* row = start + static_cast<std::ptrdiff_t>(i) * row_step;
        for (std::size_t j = 0; j < cols; ++j) scratch[i * cols + j] = row[static_cast<std::ptrdiff_t>(j) * col_step];
    }
    return scratch.data();
}

}  // namespace attn
