#pragma once
// OpenBLAS's Prescott SGEMM, to the bit, in AVX-512 lanes.
//
// On a CPU that OpenBLAS 0.3 does not know (this project's virtual machine among them),
// it runs its generic Prescott kernel, and so does PyTorch, whose bits attn must give.
// That kernel is SSE3: four lanes, a multiply then an add (no FMA). Each element of C
// comes out as
//
//     C = ((C_0 + S_1) + S_2) + ... + S_b,   S_j = ((0 + a_0·b_0) + a_1·b_1) + ...
//
// where C_0 is 0 (beta 0) or C as given (beta 1, torch.addmm's bias), S_j sums the
// products of k-block j in k order, the blocks being GEMM_Q = 128
// values of k (the last ones shorter by OpenBLAS's halving rule). Nothing else about an
// element's bits depends on where it lies, except at the edge kernels for 1 or 2
// leftover columns, nor on OpenBLAS's threads, which split rows and columns, never sums.
// (Found by comparing the formula with cblas_sgemm, and checked at first use: `usable`.)
//
// One thing an element's bits depend on that the formula does not fix: which NaN comes out
// when two NaNs meet (x86 keeps an operand's, by operand order, which a compiler may swap).
// NaNs that the arithmetic makes (inf - inf, 0 · inf) are all the same default NaN, so only
// NaNs among the operands can tell the two apart: matmul runs OpenBLAS itself for those.
//
// The same arithmetic in 16 lanes runs about two to three times as fast. It is used only where
// the formula is known to hold: OpenBLAS running its Prescott kernel with GEMM_Q = 128
// (probed), a CPU with AVX-512F, k a multiple of 128 or at most 128 (every block whole:
// OpenBLAS's one- and many-thread drivers halve the last blocks differently), and n a
// multiple of 16 per OpenBLAS thread (no edge kernels, however the threads split it).
#include <cstddef>

namespace attn {

/// Whether prescott_gemm gives OpenBLAS's bits for this c[m,n] = a[m,k] · b product, run
/// as PyTorch runs it: on `blas_threads` OpenBLAS threads (1 for a small product).
bool prescott_gemm_applies(std::size_t m, std::size_t n, std::size_t k, int blas_threads);

/// c[m,n] = a[m,k] · b[k,n], or a[m,k] · b[n,k]ᵀ when b_transposed (row-major, contiguous),
/// as OpenBLAS's Prescott kernel computes it with beta 0 (c zeroed first), or with
/// `accumulate` beta 1 (each block added to c as it is). Only where prescott_gemm_applies.
/// The rows are split among attn's OpenMP threads unless called inside a parallel region.
void prescott_gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t n, std::size_t k,
                   bool b_transposed, bool accumulate = false);

/// Whether any of the n values is a NaN.
bool has_nan(const float* values, std::size_t n);

namespace detail {
/// The formula above, one element at a time, from c as it is (the tests' reference and
/// the probe's: beta 1; zero c first for beta 0).
void prescott_gemm_reference(const float* a, const float* b, float* c, std::size_t m, std::size_t n,
                             std::size_t k, bool b_transposed, std::size_t q);
/// Whether the machine can run prescott_gemm at all (AVX-512F, OpenBLAS's Prescott kernel
/// with GEMM_Q = 128, as probed once).
bool prescott_gemm_usable();
}  // namespace detail

}  // namespace attn
