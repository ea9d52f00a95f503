#pragma once
// The numeric kernels attention is made of, each PyTorch's to the bit. Products are one
// BLAS GEMM per call (xtensor-blas), reading the row-major blocks in place.
#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attn {

/// c[m,n] = a[m,k] · b[k,n] (· b[n,k]ᵀ when b_transposed), row-major; c overwritten, or with
/// `accumulate` added to (beta 1, as torch.addmm: each k-block of the sum added to c in turn).
void matmul(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
            bool b_transposed, bool accumulate = false);

/// m rows of one batch item of torch.bmm whose plane has `plane_rows` rows: c[m,n] = a[m,k] ·
/// b[k,n] (· b[n,k]ᵀ). As aten: k·plane_rows·n < 400 by baddbmm_cpu_kernel's plain loop (in k
/// order, no FMA), else by BLAS (which may block fewer rows than the plane otherwise).
void bmm_rows(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
              bool b_transposed, std::size_t plane_rows);

/// Whether OpenBLAS runs a [m,k]·[k,n] product on one thread whatever its count: m·n·k up to
/// 65536·4 (interface/gemm.c). A larger one it splits, which changes some last bits, so it is
/// run as PyTorch runs it: alone, on OpenBLAS's own thread count (threads.hpp).
bool blas_runs_on_one_thread(std::size_t m, std::size_t n, std::size_t k);

/// nn.Linear: y[..., out] = x[..., in] · w[out,in]ᵀ + bias[out] (bias may be null), as torch
/// 1.13's F.linear on a contiguous input: addmm(bias, x, wᵀ), or matmul without a bias.
xt::xarray<float> linear(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias);

/// The same on `x_shape` elements in row-major order at `x` (a contiguous tensor's memory).
xt::xarray<float> linear(const float* x, const std::vector<std::size_t>& x_shape, const xt::xarray<float>& w,
                         const xt::xarray<float>* bias);

/// Hugging Face's Conv1D (GPT-2): y[..., out] = addmm(bias, x[..., in], w[in,out]), the weight as
/// Conv1D stores it, not transposed (a transposed copy through linear gives other last bits on
/// some OpenBLAS kernels, SkylakeX's). `bias` may be null.
xt::xarray<float> conv1d(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias);

/// Softmax over the last axis, in place, as PyTorch's AVX2 kernel: subtract the row maximum,
/// exp (Sleef's expf), sum in vector lanes, multiply by the inverse. An all -inf row is NaN.
void softmax_last_axis(xt::xarray<float>& x);

/// softmax_last_axis on `rows` rows of `width` at `x`, and torch._safe_softmax (PyTorch 2.5's
/// F.scaled_dot_product_attention): an all -inf row becomes 0 instead of NaN, the others the same.
void softmax_rows(float* x, std::size_t rows, std::size_t width);
void safe_softmax_rows(float* x, std::size_t rows, std::size_t width);

}  // namespace attn
