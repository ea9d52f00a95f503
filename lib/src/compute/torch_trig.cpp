// torch_trig.hpp. torch 1.13 maps a float tensor 8 lanes at a time through SLEEF's AVX2
// functions (vec256_float.h: Sleef_cosf8_u10, Sleef_sinf8_u10), the last lanes padded; a
// scalar SLEEF function, or another vector width, can give another last bit (measured: 641
// of 362,144 arguments differ for Sleef_cosf1_u10purecfma), so these call the 8-lane ones.
#include "attn/compute/torch_trig.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

// sleef.h declares the __m256 functions only when the whole file is compiled for AVX
// (__AVX__); here only the functions that call them are.
extern "C" {
__m256 Sleef_cosf8_u10(__m256);
__m256 Sleef_sinf8_u10(__m256);
}

namespace attn {
namespace {

using vector_function = __m256 (*)(__m256);

[[gnu::target("avx2,fma")]] void map_8_lanes(vector_function f, const float* in, float* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, f(_mm256_loadu_ps(in + i)));
    if (i == n) return;
    float lanes[8] = {};  // the last n % 8, padded with 0 as torch's Vectorized::loadu(ptr, count)
    std::copy(in + i, in + n, lanes);
    _mm256_storeu_ps(lanes, f(_mm256_loadu_ps(lanes)));
    std::copy(lanes, lanes + (n - i), out + i);
}

}  // namespace

bool torch_trig_is_sleef() {
    static const bool here = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return here;
}

void torch_cos(const float* in, float* out, std::size_t n) {
    if (torch_trig_is_sleef()) return map_8_lanes(Sleef_cosf8_u10, in, out, n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(std::cos(static_cast<double>(in[i])));
}

void torch_sin(const float* in, float* out, std::size_t n) {
    if (torch_trig_is_sleef()) return map_8_lanes(Sleef_sinf8_u10, in, out, n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(std::sin(static_cast<double>(in[i])));
}

}  // namespace attn
