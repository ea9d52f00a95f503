#pragma once
// The few numeric kernels attention is made of. Matrix products go through
// xtensor-blas (one GEMM per call, reading the row-major blocks in place).
#include <cstddef>

#include <xtensor/xarray.hpp>

namespace attn {

/// c[m,n] = a[m,k] · b[k,n], or a[m,k] · b[n,k]ᵀ when b_transposed.
/// All three are contiguous row-major blocks; c is overwritten.
void matmul(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
            bool b_transposed);

/// nn.Linear: y[..., out] = x[..., in] · w[out,in]ᵀ + bias[out] (bias may be null).
xt::xarray<float> linear(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias);

/// Softmax over the last axis, in place, computed as PyTorch does: subtract the
/// row maximum, exponentiate, divide by the sum. A row that is all -inf becomes
/// NaN (the maximum is -inf and -inf - -inf is NaN), exactly as in PyTorch.
void softmax_last_axis(xt::xarray<float>& x);

}  // namespace attn
