#pragma once
// expf as PyTorch's softmax computes it (Sleef_expf8_u10), to the bit: std::exp differs in
// the last bit for about one argument in three. Built three ways (AVX2, FMA, plain), all
// giving the same bits (tests/compute/test_torch_exp.cpp), the best one this CPU runs used.
#include <cstddef>

namespace attn {

/// row[j] = expf(row[j] - max) for j < n, in place, with PyTorch's bits.
void exp_shifted(float* row, std::size_t n, float max);

/// The ways exp_shifted is built, whether this CPU runs one, and exp_shifted with one (tests).
enum class exp_kernel { plain, fma, avx2 };
bool exp_kernel_runs_here(exp_kernel k);
void exp_shifted_with(exp_kernel k, float* row, std::size_t n, float max);

}  // namespace attn
