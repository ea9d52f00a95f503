// activations.hpp. The vector parts are aten's vec256_float.h (exp, tanh) and Loops.h
// (vectorized_loop: two vectors of 8 at a time, then the scalar op on what is left), and
// oneDNN 2.6's jit_uni_eltwise_injector (gelu_erf and its exp), written with intrinsics.
#include "attn/compute/activations.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attn/compute/threads.hpp"

// sleef.h declares the __m256 functions only when the whole file is compiled for AVX.
extern "C" {
__m256 Sleef_expf8_u10(__m256);
__m256 Sleef_tanhf8_u10(__m256);
}

namespace attn {
namespace {

using vector_op = __m256 (*)(__m256);
using scalar_op = float (*)(float);

constexpr float sqrt_two_over_pi = static_cast<float>(0.79788456080286535588);  // math.sqrt(2.0 / math.pi) as float

// --- gelu_erf (oneDNN's) and silu (aten's vector op and its scalar one)

/// oneDNN's exp (jit_uni_eltwise_injector's exp_compute_vector_fwd): n = floor(x·log2(e) + 0.5),
/// r = x - n·ln2, 2^(n-1) · (1 + r·(p1 + r·(p2 + r·(p3 + r·(p4 + r·p5))))) · 2, 0 below ln(FLT_MIN).
[[gnu::target("avx2,fma")]] __m256 onednn_exp(__m256 x) {
    const __m256 ln_min = _mm256_castsi256_ps(_mm256_set1_epi32(0xc2aeac50)),
                 ln_max = _mm256_castsi256_ps(_mm256_set1_epi32(0x42b17218));
    const __m256 underflow = _mm256_cmp_ps(x, ln_min, _CMP_LT_OS);
    x = _mm256_max_ps(_mm256_min_ps(x, ln_max), ln_min);
    const __m256 fx = _mm256_floor_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x3fb8aa3b))),
                                                    _mm256_set1_ps(0.5f)));
    const __m256 r = _mm256_fnmadd_ps(fx, _mm256_castsi256_ps(_mm256_set1_epi32(0x3f317218)), x);
    __m256i n = _mm256_cvtps_epi32(_mm256_sub_ps(fx, _mm256_set1_ps(1.0f)));
    __m256 two_n = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
    two_n = _mm256_blendv_ps(two_n, _mm256_setzero_ps(), underflow);
    __m256 p = _mm256_castsi256_ps(_mm256_set1_epi32(0x3c07cfce));
    p = _mm256_fmadd_ps(p, r, _mm256_castsi256_ps(_mm256_set1_epi32(0x3d2b9d0d)));
    p = _mm256_fmadd_ps(p, r, _mm256_castsi256_ps(_mm256_set1_epi32(0x3e2aad40)));
    p = _mm256_fmadd_ps(p, r, _mm256_castsi256_ps(_mm256_set1_epi32(0x3efffee3)));
    p = _mm256_fmadd_ps(p, r, _mm256_castsi256_ps(_mm256_set1_epi32(0x3f7ffffb)));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    return _mm256_mul_ps(_mm256_mul_ps(p, two_n), _mm256_set1_ps(2.0f));
}

/// oneDNN's gelu_erf (torch's F.gelu on float32 goes to it through mkldnn): x = s/√2,
/// erf(x) by Abramowitz and Stegun 7.1.26, S = s/2, GELU = S + S·erf.
[[gnu::target("avx2,fma")]] __m256 vector_gelu_erf(__m256 s) {
    const __m256 neg_zero = _mm256_set1_ps(-0.f), one = _mm256_set1_ps(1.0f);
    const __m256 over_sqrt2 = _mm256_castsi256_ps(_mm256_set1_epi32(0x3f3504f3));
    const __m256 x = _mm256_mul_ps(s, over_sqrt2);
    const __m256 e = _mm256_xor_ps(onednn_exp(_mm256_xor_ps(_mm256_mul_ps(x, x), neg_zero)), neg_zero);  // -exp(-x²)
    const __m256 sign = _mm256_and_ps(x, neg_zero), abs_x = _mm256_andnot_ps(neg_zero, x);
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_castsi256_ps(_mm256_set1_epi32(0x3ea7ba05)), abs_x, one));
    const __m256 et = _mm256_mul_ps(e, t);
    __m256 r = _mm256_castsi256_ps(_mm256_set1_epi32(0x3f87dc22));
    r = _mm256_fmadd_ps(r, t, _mm256_castsi256_ps(_mm256_set1_epi32(0xbfba00e3)));
    r = _mm256_fmadd_ps(r, t, _mm256_castsi256_ps(_mm256_set1_epi32(0x3fb5f0e3)));
    r = _mm256_fmadd_ps(r, t, _mm256_castsi256_ps(_mm256_set1_epi32(0xbe91a98e)));
    r = _mm256_fmadd_ps(r, t, _mm256_castsi256_ps(_mm256_set1_epi32(0x3e827906)));
    const __m256 erf = _mm256_xor_ps(_mm256_fmadd_ps(et, r, one), sign);
    const __m256 half_s = _mm256_mul_ps(s, _mm256_set1_ps(0.5f));
    return _mm256_fmadd_ps(erf, half_s, half_s);
}

[[gnu::target("avx2,fma")]] __m256 vector_silu(__m256 x) {
    const vector_op sleef_exp = Sleef_expf8_u10;  // through a pointer: its declaration is not an AVX function's (clang)
    const __m256 minus_x = _mm256_xor_ps(_mm256_set1_ps(-0.f), x);
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), sleef_exp(minus_x)));
}
float scalar_silu(float x) { return x / (1.0f + std::exp(-x)); }

/// Loops.h's vectorized_loop on one chunk: 16 at a time while 16 are left, the scalar op after.
[[gnu::target("avx2,fma")]] void vectorized_loop(vector_op vop, scalar_op op, const float* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 a = vop(_mm256_loadu_ps(x + i)), b = vop(_mm256_loadu_ps(x + i + 8));
        _mm256_storeu_ps(y + i, a);
        _mm256_storeu_ps(y + i + 8, b);
    }
    for (; i < n; ++i) y[i] = op(x[i]);
}

/// at::parallel_for(0, n, grain) on `threads` threads: one chunk below the grain, else
/// min(threads, ⌈n/grain⌉) chunks of ⌈n/chunks⌉ (the last shorter), each looped alone.
void in_torch_chunks(vector_op vop, scalar_op op, const float* x, float* y, std::size_t n, std::size_t grain, int threads) {
    std::size_t chunks = 1;
    if (threads > 1 && n > grain && grain > 0) chunks = std::min<std::size_t>(static_cast<std::size_t>(threads), (n + grain - 1) / grain);
    const std::size_t size = (n + chunks - 1) / std::max<std::size_t>(chunks, 1);
    for (std::size_t begin = 0; begin < n; begin += size) vectorized_loop(vop, op, x + begin, y + begin, std::min(size, n - begin));
}

constexpr std::size_t aten_grain = 32768;  // at::internal::GRAIN_SIZE

// --- gelu_tanh: Hugging Face's expression, one aten op at a time

/// y = op(x) 8 lanes at a time, the last ones padded with 0: every element through the vector op.
[[gnu::target("avx2,fma")]] void padded_lanes(vector_op op, const float* x, float* y, std::size_t n) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, op(_mm256_loadu_ps(x + i)));
    if (i == n) return;
    float lanes[8] = {};
    std::copy(x + i, x + n, lanes);
    _mm256_storeu_ps(lanes, op(_mm256_loadu_ps(lanes)));
    std::copy(lanes, lanes + (n - i), y + i);
}

void gelu_tanh(const float* x, float* y, std::size_t n, bool sleef) {
    constexpr std::size_t block = 4096;  // the inner of tanh's argument, a block at a time
    float inner[block];
    for (std::size_t first = 0; first < n; first += block) {
        const std::size_t count = std::min(block, n - first);
        for (std::size_t i = 0; i < count; ++i) {
            const float v = x[first + i];
            const float cube = v * v * v;                                  // torch.pow(x, 3.0)
            inner[i] = sqrt_two_over_pi * (v + 0.044715f * cube);         // √(2/π)·(x + 0.044715·x³)
        }
        if (sleef) padded_lanes(Sleef_tanhf8_u10, inner, inner, count);  // torch.tanh: vml's map
        else for (std::size_t i = 0; i < count; ++i) inner[i] = static_cast<float>(std::tanh(static_cast<double>(inner[i])));
        for (std::size_t i = 0; i < count; ++i) y[first + i] = 0.5f * x[first + i] * (1.0f + inner[i]);
    }
}

}  // namespace

bool activations_are_torchs() {
    static const bool here = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return here;
}

void activate_as_on(activation a, const float* x, float* y, std::size_t n, int threads) {
    const bool sleef = activations_are_torchs();
    switch (a) {
        case activation::gelu_tanh:
            return gelu_tanh(x, y, n, sleef);
        case activation::gelu_erf:
            if (sleef) return padded_lanes(vector_gelu_erf, x, y, n);
            for (std::size_t i = 0; i < n; ++i)
                y[i] = static_cast<float>(0.5 * x[i] * (1.0 + std::erf(static_cast<double>(x[i]) * 0.70710678118654752440)));
            return;
        case activation::silu:
            if (sleef) return in_torch_chunks(vector_silu, scalar_silu, x, y, n, aten_grain, threads);
            for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(x[i]))));
            return;
    }
}

void activate(activation a, const float* x, float* y, std::size_t n) { activate_as_on(a, x, y, n, thread_count()); }

}  // namespace attn
