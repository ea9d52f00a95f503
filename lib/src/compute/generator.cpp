// torch_generator: PyTorch 1.13's default CPU generator, bit for bit, by the rules of
// share/attn/doc/torch-rng.md (the comments cite its sections). This file is compiled with
// -ffp-contract=off, so `a * b + c` rounds twice: where torch's AVX2 kernel fuses (5.3 lists
// where), std::fmaf / std::fma say so. Constants are set from their float32 bits, as 5.3 lists them.
#include "attn/compute/generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace attn {
namespace {

constexpr int mt_n = 624;  // MT19937 state words (1)
constexpr int mt_m = 397;  // MT19937 twist offset (1)

/// The float32 whose IEEE-754 bit pattern is `bits`.
float bits_to_float(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

std::uint32_t float_to_bits(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

// Constants of the AVX2 kernel (5.3): the float-rounded Cephes coefficients of
// avx_mathfun.h, kept as the hex bits the spec lists. They stay integers until
// use (bits_to_float folds to a constant), so no static-initialisation order can
// hand a generator in another file a zero coefficient.
constexpr std::uint32_t two_pi_bits = 0x40C90FDB;  // 6.2831855f
constexpr std::uint32_t sqrthf_bits = 0x3F3504F3;  // sqrt(0.5)
constexpr std::uint32_t log_p_bits[9] = {
    0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF,
    0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA,
};
constexpr std::uint32_t log_q1_bits = 0xB95E8083;  // -2.12194440e-4
constexpr std::uint32_t log_q2_bits = 0x3F318000;  // 0.693359375
constexpr std::uint32_t fopi_bits = 0x3FA2F983;    // 4/pi
constexpr std::uint32_t dp_bits[3] = {0xBF490000, 0xB97DA000, 0xB3222169};  // -pi/4 in 3 parts
constexpr std::uint32_t sin_p_bits[3] = {0xB94CA1F9, 0x3C08839E, 0xBE2AAAA3};
constexpr std::uint32_t cos_p_bits[3] = {0x37CCF5CE, 0xBAB6061A, 0x3D2AAAA5};
constexpr std::uint32_t min_normal_bits = 0x00800000;  // 2^-126

// 5.1: the double 2*pi of the scalar path, 2 * M_PI, exactly 6.283185307179586.
constexpr double two_pi_double = 2.0 * 3.14159265358979323846;
static_assert(two_pi_double == 6.283185307179586, "2pi must be exactly 2 * M_PI");

/// One lane of Cephes' log_ps as torch's AVX2 kernel computes it, for x > 0 (5.3, "LOG").
[[gnu::always_inline]] inline float avx2_log(float x) {
    // 1. Split x = m * 2^e with m in [0.5, 1). The smallest normal keeps
    //    denormals out of the exponent arithmetic.
    x = std::max(x, bits_to_float(min_normal_bits));
    const std::uint32_t bits = float_to_bits(x);
    const int k = static_cast<int>(bits >> 23) - 127;
    float e = static_cast<float>(k + 1);
    float m = bits_to_float((bits & ~0x7F800000u) | 0x3F000000u);  // exponent of 0.5

    // 2. Move m to [sqrt(0.5), sqrt(2)) - 1 so the polynomial sees a small argument.
    //    The vector code adds the masked m (or +0) after subtracting 1: two roundings.
    if (m < bits_to_float(sqrthf_bits)) {
        e = e - 1.0f;
        m = (m - 1.0f) + m;
    } else {
        m = m - 1.0f;
    }

    // 3. Horner: 8 fused steps.
    const float z = m * m;
    float y = bits_to_float(log_p_bits[0]);
    for (int i = 1; i < 9; ++i) y = std::fmaf(y, m, bits_to_float(log_p_bits[i]));

    // 4. Put the pieces together; only these three steps are fused.
    y = y * m;
    y = std::fmaf(y, z, e * bits_to_float(log_q1_bits));
    y = std::fmaf(z, -0.5f, y);
    m = m + y;
    return std::fmaf(e, bits_to_float(log_q2_bits), m);
}

/// One lane of Cephes' sincos_ps as torch's AVX2 kernel computes it, for t >= 0
/// (5.3, "SINCOS").
[[gnu::always_inline]] inline void avx2_sincos(float t, float& sin_out, float& cos_out) {
    // 1. Octant: j = nearest even integer at or above trunc(t * 4/pi).
    int j = static_cast<int>(t * bits_to_float(fopi_bits));  // truncates toward zero, like cvttps
    j = (j + 1) & ~1;
    const float y = static_cast<float>(j);

    // 2. Extended-precision reduction x = t - j*pi/4, three fused steps.
    float x = std::fmaf(y, bits_to_float(dp_bits[0]), t);
    x = std::fmaf(y, bits_to_float(dp_bits[1]), x);
    x = std::fmaf(y, bits_to_float(dp_bits[2]), x);

    // 3. Both polynomials on [-pi/4, pi/4].
    const float z = x * x;
    float p = std::fmaf(bits_to_float(cos_p_bits[0]), z, bits_to_float(cos_p_bits[1]));
    p = std::fmaf(p, z, bits_to_float(cos_p_bits[2]));
    p = p * z;
    p = std::fmaf(p, z, -(0.5f * z));
    p = p + 1.0f;

    float q = std::fmaf(bits_to_float(sin_p_bits[0]), z, bits_to_float(sin_p_bits[1]));
    q = std::fmaf(q, z, bits_to_float(sin_p_bits[2]));
    q = q * z;
    q = std::fmaf(q, x, x);

    // 4. Pick by octant. The vector code selects with masks and adds the two
    //    masked halves, so the chosen value gets "+ 0.0f": -0 turns into +0.
    const bool swap = (j & 2) != 0;
    float s = (swap ? p : q) + 0.0f;
    float c = (swap ? q : p) + 0.0f;
    if ((j & 4) != 0) s = -s;
    if ((~(j - 2) & 4) != 0) c = -c;
    sin_out = s;
    cos_out = c;
}

/// Box-Muller on one block of 16 uniforms, in place: lane j pairs with j + 8 (5.3).
[[gnu::always_inline]] inline void normal_block(float* d) {
    const float std_dev = 1.0f;  // randn: normal_(mean 0, std 1)
    const float mean = 0.0f;
    for (int j = 0; j < 8; ++j) {
        const float u1 = 1.0f - d[j];  // in (0, 1], so the log is finite
        const float u2 = d[j + 8];
        const float radius = std::sqrt(-2.0f * avx2_log(u1));
        const float theta = bits_to_float(two_pi_bits) * u2;
        float s, c;
        avx2_sincos(theta, s, c);
        // The kernel fuses "* std + mean"; with std 1, mean 0 it only turns -0 into +0.
        d[j] = std::fmaf(radius * c, std_dev, mean);
        d[j + 8] = std::fmaf(radius * s, std_dev, mean);
    }
}

/// normal_block on `blocks` blocks of 16, and `x * span + from` fused on n floats: the
/// loops of randn and uniform that std::fmaf makes slow where it is glibc's software
/// version (a call per use). Built twice: with the FMA instructions for CPUs that have
/// them (one instruction per std::fmaf), and plain; both give the same bits.
[[gnu::always_inline]] inline void normal_blocks(float* d, std::size_t blocks) {
    for (std::size_t k = 0; k < blocks; ++k) normal_block(d + 16 * k);
}
[[gnu::always_inline]] inline void scale_shift(float* x, std::size_t n, float span, float from) {
    for (std::size_t i = 0; i < n; ++i) x[i] = std::fmaf(x[i], span, from);
}
[[gnu::target("fma")]] void normal_blocks_fma(float* d, std::size_t blocks) { normal_blocks(d, blocks); }
void normal_blocks_plain(float* d, std::size_t blocks) { normal_blocks(d, blocks); }
[[gnu::target("fma")]] void scale_shift_fma(float* x, std::size_t n, float span, float from) {
    scale_shift(x, n, span, from);
}
void scale_shift_plain(float* x, std::size_t n, float span, float from) { scale_shift(x, n, span, from); }

/// The FMA kernels where the CPU has FMA.
void normal_blocks_here(float* d, std::size_t blocks) {
    static const auto kernel = __builtin_cpu_supports("fma") ? normal_blocks_fma : normal_blocks_plain;
    kernel(d, blocks);
}

/// normal_blocks_here, the blocks shared among the cores when there are many (each block
/// is transformed on its own: the same bits): most of drawing a large run's x [B,S,D].
void normal_blocks_on_every_core(float* d, std::size_t blocks) {
    constexpr std::size_t least_blocks_per_thread = std::size_t{1} << 14;  // 256K values: a thread pays
    const std::size_t threads = std::min<std::size_t>(
        std::max(1u, std::thread::hardware_concurrency()), std::max<std::size_t>(blocks / least_blocks_per_thread, 1));
    if (threads == 1) {
        normal_blocks_here(d, blocks);
        return;
    }
    std::vector<std::thread> others;
    const std::size_t per_thread = blocks / threads;
    for (std::size_t t = 1; t < threads; ++t) {
        const std::size_t first = t * per_thread, count = t + 1 == threads ? blocks - first : per_thread;
        others.emplace_back([d, first, count] { normal_blocks_here(d + 16 * first, count); });
    }
    normal_blocks_here(d, per_thread);
    for (std::thread& t : others) t.join();
}
void scale_shift_here(float* x, std::size_t n, float span, float from) {
    static const auto kernel = __builtin_cpu_supports("fma") ? scale_shift_fma : scale_shift_plain;
    kernel(x, n, span, from);
}

/// One MT19937 word from the upper bit of `upper`, the lower 31 of `lower`, and `far`.
inline std::uint32_t mt_word(std::uint32_t upper, std::uint32_t lower, std::uint32_t far) {
    const std::uint32_t y = (upper & 0x80000000u) | (lower & 0x7FFFFFFFu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);  // the matrix when y is odd
}

}  // namespace

torch_generator::torch_generator(std::uint64_t seed) {
    // 1: only the low 32 bits seed MT (standard init_genrand).
    state_[0] = static_cast<std::uint32_t>(seed & 0xFFFFFFFFu);
    for (int i = 1; i < mt_n; ++i) {
        const std::uint32_t prev = state_[i - 1];
        state_[i] = 1812433253u * (prev ^ (prev >> 30)) + static_cast<std::uint32_t>(i);
    }
}

void torch_generator::twist() {
    // 1: the standard MT19937 regeneration, in place (later words see earlier new ones):
    // i + 1 and i + m wrap around at n, so the loop is split where they do (no modulo:
    // the compiler vectorises the first two parts).
    std::uint32_t* s = state_;
    int i = 0;
    for (; i < mt_n - mt_m; ++i) s[i] = mt_word(s[i], s[i + 1], s[i + mt_m]);
    for (; i < mt_n - 1; ++i) s[i] = mt_word(s[i], s[i + 1], s[i + mt_m - mt_n]);
    s[mt_n - 1] = mt_word(s[mt_n - 1], s[0], s[mt_m - 1]);
    left_ = mt_n;
    next_ = 0;
}

std::uint32_t torch_generator::next_u32() {
    // 1: twist when the countdown runs out, then temper the next word.
    if (--left_ == 0) twist();
    std::uint32_t y = state_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    y ^= y >> 18;
    return y;
}

std::uint64_t torch_generator::next_u64() {
    // 1: the first draw is the high word.
    const std::uint64_t hi = next_u32();
    const std::uint64_t lo = next_u32();
    return (hi << 32) | lo;
}

float torch_generator::uniform_float() {
    // 2: the 24 low bits, scaled exactly.
    return static_cast<float>(next_u32() & 0xFFFFFFu) * 0x1p-24f;
}

double torch_generator::uniform_double() {
    // 2: the 53 low bits of a 64-bit draw, scaled exactly.
    return static_cast<double>(next_u64() & ((std::uint64_t{1} << 53) - 1)) * 0x1p-53;
}

void torch_generator::rand(float* out, std::size_t n) {
    // 3: one draw per element, identical on every kernel.
    for (std::size_t i = 0; i < n; ++i) out[i] = uniform_float();
}

void torch_generator::uniform(float* out, std::size_t n, double a, double b) {
    // 2: the bounds become float32 first, and so does their difference.
    const float from = static_cast<float>(a);
    const float to = static_cast<float>(b);
    const float span = to - from;
    // AVX2/AVX512 kernels fuse x * span + from (the no-AVX kernel does not): the draws
    // first (one generator, in order), then the fused step over all of them.
    for (std::size_t i = 0; i < n; ++i) out[i] = uniform_float();
    scale_shift_here(out, n, span, from);
}

void torch_generator::randn(float* out, std::size_t n) {
    if (n < 16) {
        // 5.1: scalar double Box-Muller; each pair yields two values, the second
        // waits in the cache, which outlives this call.
        const double std_dev = 1.0;
        const double mean = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
            double value;
            if (cached_normal_) {
                value = *cached_normal_;
                cached_normal_.reset();
            } else {
                const double u1 = uniform_double();  // the ANGLE comes from the first uniform
                const double u2 = uniform_double();  // the RADIUS from the second
                const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
                const double theta = two_pi_double * u1;
                cached_normal_ = r * std::sin(theta);
                value = r * std::cos(theta);
            }
            // The kernel fuses value * std + mean in double (5.1 step 3), then rounds to float.
            out[i] = static_cast<float>(std::fma(value, std_dev, mean));
        }
        return;
    }

    // 5.2: vectorised path. The cache is neither read nor written.
    for (std::size_t i = 0; i < n; ++i) out[i] = uniform_float();
    normal_blocks_on_every_core(out, n / 16);
    if (n % 16 != 0) {
        // The tail: 16 FRESH uniforms over the last 16 elements (partly
        // overwriting values already transformed), transformed as one block.
        float* tail = out + (n - 16);
        for (std::size_t i = 0; i < 16; ++i) tail[i] = uniform_float();
        normal_block(tail);
    }
}

void torch_generator::linear_init(float* weight, float* bias, std::size_t out_features,
                                  std::size_t in_features) {
    // 6: weight first, row-major, with kaiming_uniform_(a = sqrt(5)). The bound is
    // evaluated with Python's exact double sequence; it is not simply 1/sqrt(in).
    if (out_features * in_features > 0) {  // a zero-size weight draws nothing
        const double a = std::sqrt(5.0);
        const double gain = std::sqrt(2.0 / (1.0 + a * a));  // a * a == 5.000000000000001
        const double std_dev = gain / std::sqrt(static_cast<double>(in_features));
        const double bound = std::sqrt(3.0) * std_dev;
        uniform(weight, out_features * in_features, -bound, bound);
    }
    // Then the bias, bound 1/sqrt(fan_in) (0 for fan_in 0).
    if (bias != nullptr) {
        const double bound =
            in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
        uniform(bias, out_features, -bound, bound);
    }
}

}  // namespace attn
