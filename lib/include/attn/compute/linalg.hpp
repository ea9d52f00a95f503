#pragma once
// The few numeric kernels attention is made of. Matrix products go through
// xtensor-blas (one GEMM per call, reading the row-major blocks in place).
#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attn {

/// c[m,n] = a[m,k] · b[k,n], or a[m,k] · b[n,k]ᵀ when b_transposed: one BLAS GEMM.
/// All three are contiguous row-major blocks; c is overwritten, or with `accumulate` added
/// to (GEMM's beta 1, as torch.addmm runs it: each k-block of the sum added to c in turn).
void matmul(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
            bool b_transposed, bool accumulate = false);

/// Rows [first, first + m) of one batch item of torch.bmm (what torch.matmul runs for
/// [B,H,M,K] · [B,H,K,N]) of `plane_rows` rows: c[m,n] = a[m,k] · b[k,n] (or · b[n,k]ᵀ),
/// summed as aten sums it, so the results are PyTorch's to the bit. Products with
/// k·plane_rows·n < 400 use aten's plain loop (baddbmm_cpu_kernel: from 0, in k order, a
/// multiply then an add, no FMA); larger ones go to BLAS, as aten's per-item mm does. `a`
/// points at the first of the m rows, `c` at where they go. (BLAS may block a partial
/// product differently: only the plain loop is bit-equal for any m.)
void bmm_rows(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
              bool b_transposed, std::size_t plane_rows);

/// Whether OpenBLAS computes a [m,k]·[k,n] product on one thread whatever its thread
/// count: m·n·k up to 65536·4 (its interface's rule, SMP_THRESHOLD_MIN times
/// GEMM_MULTITHREAD_THRESHOLD). A larger one it splits among its threads, and how it
/// splits changes the last bits of some elements (the edge kernels: [1024,1024]·[1024,4]
/// on one thread and on two differ in 3674 of 4096), so such a product is run as PyTorch
/// runs it: alone, with OpenBLAS's own thread count (threads.hpp).
bool blas_runs_on_one_thread(std::size_t m, std::size_t n, std::size_t k);

/// nn.Linear: y[..., out] = x[..., in] · w[out,in]ᵀ + bias[out] (bias may be null), as
/// torch 1.13's F.linear computes it for a contiguous input: addmm(bias, x, wᵀ) with a
/// bias, matmul without.
xt::xarray<float> linear(const xt::xarray<float>& x, const xt::xarray<float>& w, const xt::xarray<float>* bias);

/// The same on `x_shape` elements in row-major order at `x` (a contiguous tensor's memory).
xt::xarray<float> linear(const float* x, const std::vector<std::size_t>& x_shape, const xt::xarray<float>& w,
                         const xt::xarray<float>* bias);

/// Softmax over the last axis, in place, computed as PyTorch's AVX2 kernel does,
/// to the bit: subtract the row maximum, exponentiate (Sleef's expf), sum (in
/// vector lanes), multiply by the inverse of the sum. A row that is all -inf
/// becomes NaN (the maximum is -inf and -inf - -inf is NaN), as in PyTorch.
void softmax_last_axis(xt::xarray<float>& x);

/// torch._safe_softmax, which F.scaled_dot_product_attention runs in recent PyTorch
/// (2.5 and later): a row that is all -inf becomes all 0 instead of NaN; every
/// other row is softmax_last_axis's, to the bit.
void safe_softmax_last_axis(xt::xarray<float>& x);

/// softmax_last_axis and safe_softmax_last_axis on `rows` rows of `width` at `x`,
/// each row as those compute it.
void softmax_rows(float* x, std::size_t rows, std::size_t width);
void safe_softmax_rows(float* x, std::size_t rows, std::size_t width);

}  // namespace attn
