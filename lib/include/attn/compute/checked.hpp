#pragma once
// Sizes added and multiplied without wrapping: a sum or product that does not fit its type is
// nullopt, never a wrapped number (and never signed overflow, which is undefined behaviour).
// Every size that comes from a flag or a file and is added or multiplied goes through these.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace attn {

/// a + b, or nullopt when the sum does not fit T.
template <class T>
[[nodiscard]] std::optional<T> checked_add(T a, T b) {
    T sum;
    if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
    return sum;
}

/// a · b, or nullopt when the product does not fit T.
template <class T>
[[nodiscard]] std::optional<T> checked_mul(T a, T b) {
    T product;
    if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
    return product;
}

/// The most bytes one tensor may span: 128 TiB, what a 64-bit x86 machine's user space addresses.
constexpr std::uint64_t max_tensor_bytes = std::uint64_t(1) << 47;

/// Whether a tensor of `shape`, `item_bytes` per element, could exist: the product of its sizes
/// other than 0, in bytes, is at most max_tensor_bytes. A zero size makes the data empty but
/// not the strides (xtensor multiplies the sizes after it into a signed stride: [0, 2^63] has
/// stride 2^63), so the zeros are left out of the product rather than ending it.
[[nodiscard]] inline bool shape_fits(const std::vector<std::size_t>& shape, std::uint64_t item_bytes) {
    std::optional<std::uint64_t> bytes = item_bytes;
    for (const std::size_t size : shape)
        if (size != 0 && bytes) bytes = checked_mul<std::uint64_t>(*bytes, size);
    return bytes && *bytes <= max_tensor_bytes;
}

}  // namespace attn
