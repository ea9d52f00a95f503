#include "attn/io/crc32.hpp"

#include <immintrin.h>
#include <libdeflate.h>

namespace attn {
namespace {

// Folding constants, from x^n mod P (P = 0x104C11DB7), bit-reflected and shifted left by
// one: a lane {lo, hi} of 128 bits moves forward by D bits as lo·x^(D+32) + hi·x^(D-32).
// (The ones for D = 512, 128 and 64 and Barrett's are Linux's crc32-pclmul_asm.S; the
// D = 2048 pair was computed the same way, and checked by the tests against libdeflate.)
constexpr long long fold_2048_lo = 0x11542778a, fold_2048_hi = 0x1322d1430;  // four lanes of 512 bits
constexpr long long fold_512_lo = 0x154442bd4, fold_512_hi = 0x1c6e41596;
constexpr long long fold_128_lo = 0x1751997d0, fold_128_hi = 0xccaa009e;
constexpr long long fold_64 = 0x163cd6124;
constexpr long long barrett_poly = 0x1db710641, barrett_mu = 0x1f7011641;

#define ATTN_AVX512_CRC gnu::target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1")

[[ATTN_AVX512_CRC]] inline __m512i fold(__m512i x, __m512i k) {
    return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11));
}
[[ATTN_AVX512_CRC]] inline __m128i fold(__m128i x, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}
[[ATTN_AVX512_CRC]] inline __m512i lanes_of(long long lo, long long hi) {
    return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

/// Whether the AVX-512 code runs here.
bool avx512_crc() {
    static const bool here = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                             __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul");
    return here;
}

}  // namespace

namespace detail {

[[ATTN_AVX512_CRC]] std::uint32_t crc32_avx512(std::uint32_t crc, const char* bytes, std::size_t size) {
    if (size < 256) return libdeflate_crc32(crc, bytes, size);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes);
    const __m512i k2048 = lanes_of(fold_2048_lo, fold_2048_hi), k512 = lanes_of(fold_512_lo, fold_512_hi);
    // the register starts as ~crc, added to the first bytes
    __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_castsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc))));
    __m512i x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
    p += 256;
    size -= 256;
    for (; size >= 256; p += 256, size -= 256) {  // four independent chains hide the products' latency
        x0 = _mm512_xor_si512(fold(x0, k2048), _mm512_loadu_si512(p));
        x1 = _mm512_xor_si512(fold(x1, k2048), _mm512_loadu_si512(p + 64));
        x2 = _mm512_xor_si512(fold(x2, k2048), _mm512_loadu_si512(p + 128));
        x3 = _mm512_xor_si512(fold(x3, k2048), _mm512_loadu_si512(p + 192));
    }
    x1 = _mm512_xor_si512(x1, fold(x0, k512));
    x2 = _mm512_xor_si512(x2, fold(x1, k512));
    __m512i x = _mm512_xor_si512(x3, fold(x2, k512));
    for (; size >= 64; p += 64, size -= 64) x = _mm512_xor_si512(fold(x, k512), _mm512_loadu_si512(p));
    // 4 x 128 -> 128 bits, then any 16-byte blocks left
    const __m128i k128 = _mm_set_epi64x(fold_128_hi, fold_128_lo);
    alignas(64) __m128i lanes[4];  // (GCC 12 warns about _mm512_extracti32x4_epi32's undefined start)
    _mm512_store_si512(lanes, x);
    __m128i a = lanes[0];
    for (int i = 1; i < 4; ++i) a = _mm_xor_si128(fold(a, k128), lanes[i]);
    for (; size >= 16; p += 16, size -= 16)
        a = _mm_xor_si128(fold(a, k128), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    // 128 -> 64 bits (32 zero bits appended), 64 -> 32, then Barrett's reduction
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    a = _mm_xor_si128(_mm_clmulepi64_si128(a, _mm_set_epi64x(fold_128_hi, 0), 0x10), _mm_srli_si128(a, 8));
    a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), _mm_set_epi64x(0, fold_64), 0x00),
                      _mm_srli_si128(a, 4));
    const __m128i barrett = _mm_set_epi64x(barrett_mu, barrett_poly);
    __m128i t = _mm_clmulepi64_si128(_mm_and_si128(a, low32), barrett, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
    const auto reg = static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(t, a), 1));
    return libdeflate_crc32(~reg, reinterpret_cast<const char*>(p), size);  // the last bytes
}

}  // namespace detail

std::uint32_t crc32(std::uint32_t crc, const char* bytes, std::size_t size) {
    return avx512_crc() ? detail::crc32_avx512(crc, bytes, size) : libdeflate_crc32(crc, bytes, size);
}

const char* crc32_kernel() { return avx512_crc() ? "avx512-vpclmulqdq" : "libdeflate"; }

}  // namespace attn
