#pragma once
// expf as PyTorch's softmax computes it (aten's AVX2 kernel calls Sleef_expf8_u10),
// to the bit, on the best instructions this CPU has.
//
// It differs from std::exp in the last bit for about one argument in three, so softmax
// needs exactly this one. Built three ways: 8 floats at a time with AVX2 and FMA, one
// at a time with the FMA instructions, and plain (std::fma then is glibc's exact
// software version). All three give the same bits; tests/compute/test_torch_exp.cpp
// holds them to it.
#include <cstddef>

namespace attn {

/// row[j] = expf(row[j] - max) for j < n, in place, with PyTorch's bits.
void exp_shifted(float* row, std::size_t n, float max);

/// The ways exp_shifted is built.
enum class exp_kernel { plain, fma, avx2 };
/// Whether this CPU runs `k`.
bool exp_kernel_runs_here(exp_kernel k);
/// exp_shifted with kernel `k` (for tests: exp_kernel_runs_here(k) first).
void exp_shifted_with(exp_kernel k, float* row, std::size_t n, float max);

}  // namespace attn
