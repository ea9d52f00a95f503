#pragma once
// A stage's tensor as PyTorch holds one: storage + offset + shape + strides.
//
// Several tensors can share one storage. The view, transpose and merge stages are
// views of the stage before them, as q.view(B,S,H,dk), .transpose(1,2) and
// context.transpose(1,2) are in PyTorch: new strides over the same memory, no element
// copied. The copy happens where PyTorch copies: concat, merge.contiguous().view(...)
// (a view too when merge is contiguous already: one head, or one query).
//
// Read the elements through `values`, a strided view of the storage: t.values(b,h,i,j),
// t.values.shape(), iteration (in row-major order of the indices), xt::xarray<float>(t.values).
// Do not index t.values.data() as a flat row-major array: a view's elements do not lie
// in that order (transpose's q [B,H,S,dk] has strides [S*D, dk, D, 1]).
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

/// The memory behind one or more tensors, read-only once a stage holds it. Its own
/// shape is that of the tensor that made it; a view reads it through its own strides.
using tensor_storage = std::shared_ptr<const xt::xarray<float>>;

/// A read-only view of storage with any strides (xtensor's adaptor with dynamic layout).
using strided_values = xt::xarray_adaptor<xt::xbuffer_adaptor<const float*, xt::no_ownership, std::allocator<float>>,
                                          xt::layout_type::dynamic>;

/// Storage holding `values`, moved in: for a result that a stage holds and the next step reads.
inline tensor_storage make_storage(xt::xarray<float> values) {
    return std::make_shared<const xt::xarray<float>>(std::move(values));
}

using tensor_shape = std::vector<std::size_t>;
using tensor_strides = std::vector<std::ptrdiff_t>;  // in elements, as PyTorch's t.stride()

// PyTorch's layout rules (aten's is_contiguous and computeStride), zero-length axes
// included: what --explain says about views and copies, and what a tensor here has.

/// A tensor's place in memory, as t.shape and t.stride() report it.
struct tensor_layout {
    tensor_shape shape;
    tensor_strides strides;
};

/// The strides of a contiguous tensor of `shape`, as PyTorch gives them: each axis steps
/// over the product of the sizes after it, a zero-length one counting as 1 ([2,3,4] ->
/// [12,4,1], [1,4,8] -> [32,8,1], [2,0,3] -> [3,3,1]).
tensor_strides contiguous_strides(const tensor_shape& shape);

/// A fresh tensor of `shape`: contiguous_strides.
tensor_layout contiguous_layout(tensor_shape shape);

/// t.is_contiguous(): walking the tensor in index order walks its memory in order. Axes
/// of length 1 do not count (a step along them never happens); no elements is contiguous.
bool is_contiguous(const tensor_layout& t);

/// t.transpose(a, b): the same memory with two axes' sizes and strides swapped.
tensor_layout transposed(tensor_layout t, std::size_t a, std::size_t b);

/// t.view(shape) over t's memory, or nullopt where view raises ("view size is not
/// compatible with input tensor's size and stride") and reshape copies (aten's
/// computeStride). With no elements any shape of no elements is a view: t's own strides
/// for t's shape, contiguous_strides for another.
std::optional<tensor_layout> viewed(const tensor_layout& t, tensor_shape shape);

/// One named tensor with a name for each dimension ("batch", "head", "query", ...).
/// Boolean tensors hold 0 and 1. Copies share the storage (as PyTorch's tensors do).
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

    /// Its shape and strides.
    tensor_layout layout() const;
    /// t.is_contiguous() (is_contiguous): the elements lie in storage in row-major order from offset.
    bool contiguous() const { return is_contiguous(layout()); }
    /// Whether this tensor reads another stage tensor's storage.
    bool is_view() const { return !view_of.empty(); }
};

/// A tensor whose elements come later (a stage handed on in rows, stage_sink.hpp): its
/// name, dimension names, shape, contiguous strides and type; no storage, and `values`
/// must not be read (its shape may).
tensor shape_only(std::string name, std::vector<std::string> dims, tensor_shape shape,
                  element_type type = element_type::float32);

/// t's elements in row-major order, as t.contiguous() makes them: the last axis copied
/// a run at a time when its stride is 1 (a transposed view's rows), which xtensor's
/// strided assignment does an element at a time, several times slower.
xt::xarray<float> row_major_copy(const tensor& t);

/// A view of `base`'s storage (PyTorch's as_strided, which view and transpose are): `shape`
/// and `strides` read the same memory from base's offset; nothing is copied. `base_name`
/// ("projections.q") names base in the trace; a view of a view names the owner of the storage.
tensor as_strided(const tensor& base, const std::string& base_name, std::string name, std::vector<std::string> dims,
                  tensor_shape shape, tensor_strides strides);

}  // namespace attn
