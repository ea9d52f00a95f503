#include "attn/compute/torch_exp.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <immintrin.h>

namespace attn {
namespace {

// Sleef_expf8_u10's constants: ln 2 in two parts, and the degree-6 polynomial.
constexpr float log2_e = 1.442695040888963407359924681001892137426645954152985934135449406931f;
constexpr float ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187045e-06f;
constexpr float p5 = 0.000198527617612853646278381f, p4 = 0.00139304355252534151077271f,
                p3 = 0.00833336077630519866943359f, p2 = 0.0416664853692054748535156f,
                p1 = 0.166666671633720397949219f, p0 = 0.5f;
constexpr float lowest = -104.0f, highest = 100.0f;  // below: 0; above: infinity

/// 2^k for k in [-126, 127], built from its exponent bits (Sleef's vpow2i).
inline float pow2i(int k) {
    const std::uint32_t bits = static_cast<std::uint32_t>(k + 127) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

/// One expf: the argument reduced by ln 2 (d = q·ln 2 + s), a polynomial in s, all
/// fused multiply-adds, then scaled by 2^q in two steps so that neither factor overflows.
[[gnu::always_inline]] inline float torch_expf(float d) {
    if (std::isnan(d)) return d;
    if (d < lowest) return 0.0f;
    if (d > highest) return std::numeric_limits<float>::infinity();
    const int q = static_cast<int>(std::nearbyint(d * log2_e));
    float s = std::fma(static_cast<float>(q), -ln2_hi, d);
    s = std::fma(static_cast<float>(q), -ln2_lo, s);
    float u = p5;
    u = std::fma(u, s, p4);
    u = std::fma(u, s, p3);
    u = std::fma(u, s, p2);
    u = std::fma(u, s, p1);
    u = std::fma(u, s, p0);
    u = 1.0f + std::fma(s * s, u, s);
    const int half = q >> 1;
    return u * pow2i(half) * pow2i(q - half);
}

[[gnu::always_inline]] inline void exp_shifted_scalar(float* row, std::size_t n, float max) {
    for (std::size_t j = 0; j < n; ++j) row[j] = torch_expf(row[j] - max);
}

void exp_shifted_plain(float* row, std::size_t n, float max) { exp_shifted_scalar(row, n, max); }
[[gnu::target("fma,sse4.1")]] void exp_shifted_fma(float* row, std::size_t n, float max) {
    exp_shifted_scalar(row, n, max);
}

/// 2^k, 8 at a time.
[[gnu::target("avx2,fma")]] inline __m256 pow2i_8(__m256i k) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}

/// torch_expf on 8 floats: the same operations in the same order, then the ends (0,
/// infinity, NaN) blended in. An argument past the ends is replaced by 0 for the
/// arithmetic: clamped to -104 instead it would make subnormals, each a microcode assist
/// of a hundred cycles or more, and masked softmax rows are half -inf.
[[gnu::target("avx2,fma")]] inline __m256 torch_expf_8(__m256 d) {
    const __m256 inside = _mm256_and_ps(_mm256_cmp_ps(d, _mm256_set1_ps(lowest), _CMP_GE_OQ),
                                        _mm256_cmp_ps(d, _mm256_set1_ps(highest), _CMP_LE_OQ));
    const __m256 c = _mm256_and_ps(d, inside);  // d, or +0
    const __m256i q = _mm256_cvtps_epi32(  // nearest, ties to even, as std::nearbyint
        _mm256_round_ps(_mm256_mul_ps(c, _mm256_set1_ps(log2_e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256 qf = _mm256_cvtepi32_ps(q);
    __m256 s = _mm256_fmadd_ps(qf, _mm256_set1_ps(-ln2_hi), c);
    s = _mm256_fmadd_ps(qf, _mm256_set1_ps(-ln2_lo), s);
    __m256 u = _mm256_set1_ps(p5);
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(p4));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(p3));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(p2));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(p1));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(p0));
    u = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(s, s), u, s));
    const __m256i half = _mm256_srai_epi32(q, 1);
    __m256 e = _mm256_mul_ps(_mm256_mul_ps(u, pow2i_8(half)), pow2i_8(_mm256_sub_epi32(q, half)));
    e = _mm256_blendv_ps(e, _mm256_setzero_ps(), _mm256_cmp_ps(d, _mm256_set1_ps(lowest), _CMP_LT_OQ));
    e = _mm256_blendv_ps(e, _mm256_set1_ps(std::numeric_limits<float>::infinity()),
                         _mm256_cmp_ps(d, _mm256_set1_ps(highest), _CMP_GT_OQ));
    return _mm256_blendv_ps(e, d, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));  // NaN stays NaN
}

[[gnu::target("avx2,fma")]] void exp_shifted_avx2(float* row, std::size_t n, float max) {
    const __m256 m = _mm256_set1_ps(max);
    std::size_t j = 0;
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(row + j, torch_expf_8(_mm256_sub_ps(_mm256_loadu_ps(row + j), m)));
    exp_shifted_scalar(row + j, n - j, max);  // the last few: the same bits one at a time
}

using exp_function = void (*)(float*, std::size_t, float);

exp_function function_of(exp_kernel k) {
    switch (k) {
        case exp_kernel::avx2: return exp_shifted_avx2;
        case exp_kernel::fma: return exp_shifted_fma;
        case exp_kernel::plain: break;
    }
    return exp_shifted_plain;
}

/// The fastest kernel the CPU runs.
exp_function exp_shifted_here() {
    static const exp_function here = function_of(exp_kernel_runs_here(exp_kernel::avx2) ? exp_kernel::avx2
                                                 : exp_kernel_runs_here(exp_kernel::fma) ? exp_kernel::fma
                                                                                         : exp_kernel::plain);
    return here;
}

}  // namespace

bool exp_kernel_runs_here(exp_kernel k) {
    switch (k) {
        case exp_kernel::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case exp_kernel::fma: return __builtin_cpu_supports("fma") && __builtin_cpu_supports("sse4.1");
        case exp_kernel::plain: break;
    }
    return true;
}

void exp_shifted(float* row, std::size_t n, float max) { exp_shifted_here()(row, n, max); }

void exp_shifted_with(exp_kernel k, float* row, std::size_t n, float max) { function_of(k)(row, n, max); }

}  // namespace attn
