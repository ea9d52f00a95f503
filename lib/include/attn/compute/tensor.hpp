#pragma once
// A stage's tensor as PyTorch holds one: storage + offset + shape + strides. The view,
// transpose and merge stages are views of the stage before them, as in PyTorch; concat copies
// where PyTorch's merge.contiguous() does. Read the elements through `values` (t.values(b,h,i,j),
// iteration), never t.values.data() as a flat row-major array: a view's elements are not in order.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuffer_adaptor.hpp>

namespace attn {

enum class element_type { float32, boolean };

/// The memory behind one or more tensors, read-only once a stage holds it, in the shape of
/// the tensor that made it.
using tensor_storage = std::shared_ptr<const xt::xarray<float>>;

/// A read-only view of storage with any strides (xtensor's adaptor with dynamic layout).
using strided_values = xt::xarray_adaptor<xt::xbuffer_adaptor<const float*, xt::no_ownership, std::allocator<float>>,
                                          xt::layout_type::dynamic>;

/// Storage holding `values`, moved in.
inline tensor_storage make_storage(xt::xarray<float> values) {
    return std::make_shared<const xt::xarray<float>>(std::move(values));
}

using tensor_shape = std::vector<std::size_t>;
using tensor_strides = std::vector<std::ptrdiff_t>;  // in elements, as PyTorch's t.stride()

/// A tensor's place in memory, as t.shape and t.stride() report it. The functions below are
/// PyTorch's layout rules, zero-length axes included (--explain says them too).
struct tensor_layout {
    tensor_shape shape;
    tensor_strides strides;
};

/// The strides of a contiguous tensor of `shape`: the product of the sizes after each axis,
/// a zero-length one counting as 1 ([2,3,4] -> [12,4,1], [2,0,3] -> [3,3,1]).
tensor_strides contiguous_strides(const tensor_shape& shape);

/// A fresh tensor of `shape`: contiguous_strides.
tensor_layout contiguous_layout(tensor_shape shape);

/// t.is_contiguous(): index order is memory order; axes of length 1 do not count, and no
/// elements is contiguous.
bool is_contiguous(const tensor_layout& t);

/// t.transpose(a, b): the same memory with two axes' sizes and strides swapped.
tensor_layout transposed(tensor_layout t, std::size_t a, std::size_t b);

/// t.view(shape) over t's memory, or nullopt where view raises and reshape copies (aten's
/// computeStride). With no elements, any shape of no elements is a view.
std::optional<tensor_layout> viewed(const tensor_layout& t, tensor_shape shape);

/// A named tensor with a name for each dimension ("batch", "head", ...); boolean ones hold 0
/// and 1. Copies share the storage (as PyTorch's tensors do).
struct tensor {
    std::string name;
    std::vector<std::string> dims;
    strided_values values;  // the elements, read through the strides
    element_type type = element_type::float32;
    tensor_storage storage;  // shared with every view of it
    std::size_t offset = 0;  // t.storage_offset(): where values(0, ..., 0) lies in storage
    tensor_strides strides;  // t.stride(): how far one step along each axis goes in storage
    std::string view_of;     // "projections.q": the stage tensor whose storage this one views; empty when its own

    /// An empty tensor: shape [0], no storage.
    tensor();
    /// A tensor that owns its storage: `values`, moved in, contiguous (row-major).
    tensor(std::string name, std::vector<std::string> dims, xt::xarray<float> values,
           element_type type = element_type::float32);
    /// A tensor that owns `storage` (made by make_storage), contiguous in the storage's shape.
    tensor(std::string name, std::vector<std::string> dims, tensor_storage storage,
           element_type type = element_type::float32);

    tensor_layout layout() const;
    bool contiguous() const { return is_contiguous(layout()); }
    /// Whether this tensor reads another stage tensor's storage.
    bool is_view() const { return !view_of.empty(); }
};

/// A tensor whose elements come later (a stage handed on in rows, stage_sink.hpp): no
/// storage, and only `values`' shape may be read.
tensor shape_only(std::string name, std::vector<std::string> dims, tensor_shape shape,
                  element_type type = element_type::float32);

/// t's elements in row-major order, as t.contiguous() makes them (a row at a time when the
/// last stride is 1: several times faster than xtensor's strided assignment).
xt::xarray<float> row_major_copy(const tensor& t);

/// Rows [first, first + count) of plane (b, h) of a [B,H,R,C] tensor (any strides) as a
/// row-major [count, C] array: in place when those rows lie in storage one after another,
/// else copied into `scratch` (as torch.matmul copies an operand bmm cannot read in place,
/// but only the rows needed).
const float* row_major_rows(const tensor& t, std::size_t b, std::size_t h, std::size_t first, std::size_t count,
                            std::vector<float>& scratch);

/// A view of `base`'s storage (PyTorch's as_strided) from base's offset; nothing is copied.
/// `base_name` ("projections.q") names base in the trace; a view of a view names the owner.
tensor as_strided(const tensor& base, const std::string& base_name, std::string name, std::vector<std::string> dims,
                  tensor_shape shape, tensor_strides strides);

}  // namespace attn
