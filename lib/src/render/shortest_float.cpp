#include "attn/render/shortest_float.hpp"

#include "attn/compute/cpu_features.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include <immintrin.h>

namespace attn {
namespace {

/// 10^e rounded up to 64 significant bits, e = -31 ... 45 (tests/render/make_pow10_table.py).
constexpr std::uint64_t pow10_upper[] = {
    0x81ceb32c4b43fcf5, 0xa2425ff75e14fc32, 0xcad2f7f5359a3b3f, 0xfd87b5f28300ca0e,
    0x9e74d1b791e07e49, 0xc612062576589ddb, 0xf79687aed3eec552, 0x9abe14cd44753b53,
    0xc16d9a0095928a28, 0xf1c90080baf72cb2, 0x971da05074da7bef, 0xbce5086492111aeb,
    0xec1e4a7db69561a6, 0x9392ee8e921d5d08, 0xb877aa3236a4b44a, 0xe69594bec44de15c,
    0x901d7cf73ab0acda, 0xb424dc35095cd810, 0xe12e13424bb40e14, 0x8cbccc096f5088cc,
    0xafebff0bcb24aaff, 0xdbe6fecebdedd5bf, 0x89705f4136b4a598, 0xabcc77118461cefd,
    0xd6bf94d5e57a42bd, 0x8637bd05af6c69b6, 0xa7c5ac471b478424, 0xd1b71758e219652c,
    0x83126e978d4fdf3c, 0xa3d70a3d70a3d70b, 0xcccccccccccccccd, 0x8000000000000001,
    0xa000000000000001, 0xc800000000000001, 0xfa00000000000001, 0x9c40000000000001,
    0xc350000000000001, 0xf424000000000001, 0x9896800000000001, 0xbebc200000000001,
    0xee6b280000000001, 0x9502f90000000001, 0xba43b74000000001, 0xe8d4a51000000001,
    0x9184e72a00000001, 0xb5e620f480000001, 0xe35fa931a0000001, 0x8e1bc9bf04000001,
    0xb1a2bc2ec5000001, 0xde0b6b3a76400001, 0x8ac7230489e80001, 0xad78ebc5ac620001,
    0xd8d726b7177a8001, 0x878678326eac9001, 0xa968163f0a57b401, 0xd3c21bcecceda101,
    0x84595161401484a1, 0xa56fa5b99019a5c9, 0xcecb8f27f4200f3b, 0x813f3978f8940985,
    0xa18f07d736b90be6, 0xc9f2c9cd04674edf, 0xfc6f7c4045812297, 0x9dc5ada82b70b59e,
    0xc5371912364ce306, 0xf684df56c3e01bc7, 0x9a130b963a6c115d, 0xc097ce7bc90715b4,
    0xf0bdc21abb48db21, 0x96769950b50d88f5, 0xbc143fa4e250eb32, 0xeb194f8e1ae525fe,
    0x92efd1b8d0cf37bf, 0xb7abc627050305ae, 0xe596b7b0c643c71a, 0x8f7e32ce7bea5c70,
    0xb35dbf821ae4f38c,
};
constexpr int pow10_first = -31;

// floor(log10(2^q)), floor(log10(3/4 * 2^q)) and floor(log2(10^e)) for the float's q and e
// (checked over those ranges by make_pow10_table.py)
constexpr int floor_log10_pow2(int q) { return static_cast<int>((q * 661971961083LL) >> 41); }
constexpr int floor_log10_three_quarters_pow2(int q) {
    return static_cast<int>((q * 661971961083LL - 274743187321LL) >> 41);
}
constexpr int floor_log2_pow10(int e) { return static_cast<int>((e * 913124641741LL) >> 38); }

/// g * cp / 2^64 rounded to odd: the integer part, its last bit set when a fraction is
/// left. g is 10^e rounded up, so a remainder of at most cp / 2^32 counts as none.
inline std::uint32_t round_to_odd(std::uint64_t g, std::uint32_t cp) {
    const unsigned __int128 p = static_cast<unsigned __int128>(g) * cp;  // < 2^96
    const auto whole = static_cast<std::uint32_t>(p >> 64);
    const auto fraction = static_cast<std::uint32_t>(static_cast<std::uint64_t>(p) >> 32);
    return whole | (fraction > 1 ? 1u : 0u);
}

/// Positive finite v = c * 2^q as digits * 10^exponent, with the fewest digits that
/// read back as v (the closest to v of those).
struct decimal {
    std::uint32_t digits;
    int exponent;
};

/// The positive finite float of `bits` as c * 2^q; the float below it is closer than the
/// one above at a power of two (a normal float with no fraction bits, but the smallest).
struct binary {
    std::uint32_t c;
    int q;
    bool closer_below;
};

binary decode(std::uint32_t bits) {
    const std::uint32_t fraction = bits & ((1u << 23) - 1);
    const int biased = static_cast<int>(bits >> 23);
    return {biased == 0 ? fraction : fraction | (1u << 23), biased == 0 ? -149 : biased - 150,
            fraction == 0 && biased > 1};
}

decimal shortest_decimal(const binary& v) {
    const std::uint32_t c = v.c;
    const int q = v.q;
    const bool closer_below = v.closer_below;

    // v's rounding interval, times 4 / 2^q: [cbl, cbr] around cb = 4c, closed when c is
    // even (round half to even)
    const std::uint32_t open = c & 1;
    const std::uint32_t cb = c << 2, cbr = cb + 2;
    const std::uint32_t cbl = closer_below ? cb - 1 : cb - 2;
    const int k = closer_below ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);

    // vb = 4 v / 10^k (1 <= v / 10^k < 10 c), vbl and vbr the interval's ends the same way
    const int h = q + floor_log2_pow10(-k) + 1;  // 1 ... 4: cb << h < 2^32
    const std::uint64_t g = pow10_upper[-k - pow10_first];
    const std::uint32_t vb = round_to_odd(g, cb << h);
    const std::uint32_t vbl = round_to_odd(g, cbl << h) + open;
    const std::uint32_t vbr = round_to_odd(g, cbr << h) - open;

    // The candidates, chosen with arithmetic rather than branches: which one wins follows
    // the data, and a branch would be guessed wrong about as often as right.
    const std::uint32_t s = vb >> 2;  // floor(v / 10^k)
    const std::uint32_t t = s + 1;
    // one digit fewer: the multiple of 10 in the interval, if just one is
    const std::uint32_t down = s / 10 * 10, up = down + 10;
    const std::uint32_t down_in = vbl <= down << 2, up_in = (up << 2) <= vbr;
    // else s or t, if just one is in the interval; else the closer to v, s on a tie when even
    const std::uint32_t s_in = vbl <= s << 2, t_in = (t << 2) <= vbr;
    const std::uint32_t middle = 2 * (s + t);  // 4 (s + 1/2): vb above it, t is closer
    const std::uint32_t closer_t = (vb > middle) | ((vb == middle) & s);
    const std::uint32_t one_of_two = s_in ^ t_in;
    const std::uint32_t of_two = s + ((one_of_two & t_in) | ((one_of_two ^ 1) & closer_t));
    const std::uint32_t use_shorter = static_cast<std::uint32_t>(s >= 10) & (down_in ^ up_in);
    const std::uint32_t shorter = down + 10 * (down_in ^ 1);
    const std::uint32_t mask = 0u - use_shorter;
    return {(shorter & mask) | (of_two & ~mask), k};
}

constexpr char two_digits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

constexpr std::uint32_t pow10_32[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

/// Digits of n >= 1, without a loop: log10 from the bit length, then one comparison.
int digit_count(std::uint32_t n) {
    const int t = ((32 - __builtin_clz(n)) * 1233) >> 12;  // floor(log10(2^bits)) <= log10(n) + 1
    return t - (n < pow10_32[t] ? 1 : 0) + 1;
}

/// n < 10^8 as its 8 decimal digits (leading zeros kept), one per byte, the first in the
/// lowest byte: divisions by 10^4, 10^2 and 10 done in the lanes of one 64-bit word.
std::uint64_t eight_digits(std::uint32_t n) {
    std::uint64_t x = (n / 10000) | (std::uint64_t{n % 10000} << 32);    // two lanes of 4 digits
    const std::uint64_t hundreds = ((x * 10486) >> 20) & 0x0000007f0000007full;  // x / 100 for x < 43699
    x = hundreds | ((x - 100 * hundreds) << 16);                          // four lanes of 2 digits
    const std::uint64_t tens = ((x * 103) >> 10) & 0x000f000f000f000full;  // x / 10 for x < 179
    return tens | ((x - 10 * tens) << 8);
}

constexpr std::uint64_t ascii_zeros = 0x3030303030303030ull;

/// The text of positive finite `bits` (not 0) whose shortest digits, as nine with the
/// first not 0 ("1.5" is 150000000), are `first` and the eight `rest` (eight_digits), and
/// whose scientific exponent is `scientific_exponent` ("1.5" has 0).
inline char* write_digits(char* p, std::uint32_t bits, int scientific_exponent, std::uint32_t first,
                          std::uint64_t rest) {
    const int n = rest == 0 ? 1 : 9 - __builtin_clzll(rest) / 8;  // the significant digits
    const std::uint64_t rest_text = rest + ascii_zeros;
    const char first_text = static_cast<char>('0' + first);
    const int exponent = scientific_exponent - n + 1;  // of the last significant digit
    const int abs_exponent = scientific_exponent < 0 ? -scientific_exponent : scientific_exponent;
    // printf's %e: d[.ddd]e+XX, at least two exponent digits; %f: the digits with the point
    // inside, zeros after them, or "0." and zeros before them. Whichever is shorter, %f on
    // a tie, as std::to_chars chooses. The writes below are whole words: they may write
    // past the returned end (the header says how far).
    const int scientific_length = n + (n > 1 ? 1 : 0) + 4;  // e, sign, two digits (|exponent| <= 45)
    const int fixed_length = exponent >= 0 ? n + exponent : (n > -exponent ? n + 1 : 2 - exponent);
    if (fixed_length <= scientific_length) {
        if (exponent > 0) {  // %f writes the float's exact value: an integer (< 10^14) here
            const binary b = decode(bits);
            const std::uint64_t exact = b.q >= 0 ? std::uint64_t{b.c} << b.q : b.c >> -b.q;
            char text[20];
            char* end = text + sizeof text;
            for (std::uint64_t left = exact; left != 0; left /= 10) *--end = static_cast<char>('0' + left % 10);
            const auto length = static_cast<std::size_t>(text + sizeof text - end);
            std::memcpy(p, end, length);
            return p + length;
        }
        if (scientific_exponent < 0) {  // 0.000ddd: at most 3 zeros after the point (else %e is shorter)
            const int zeros = -scientific_exponent - 1;
            std::memcpy(p, "0.000000", 8);
            p[2 + zeros] = first_text;
            std::memcpy(p + 3 + zeros, &rest_text, 8);
            return p + 2 + zeros + n;
        }
        // ddd.ddd, or ddd when no digit follows the point: the point after the first
        // scientific_exponent + 1 digits
        char text[24];
        text[0] = first_text;
        std::memcpy(text + 1, &rest_text, 8);
        const int whole = scientific_exponent + 1;  // 1 ... 9
        std::memcpy(p, text, 16);
        if (n <= whole) return p + n;  // exponent == 0 here
        p[whole] = '.';
        std::memcpy(p + whole + 1, text + whole, 8);
        return p + n + 1;
    }
    p[0] = first_text;  // d.ddd: the first digit, the point, the others
    p[1] = '.';
    std::memcpy(p + 2, &rest_text, 8);
    p += n > 1 ? n + 1 : 1;
    p[0] = 'e';
    p[1] = scientific_exponent < 0 ? '-' : '+';
    std::memcpy(p + 2, two_digits + 2 * abs_exponent, 2);  // |exponent| <= 45
    return p + 4;
}

/// The text of the finite float whose bits are `bits`, one float at a time.
char* write_plain(char* p, std::uint32_t bits) {
    *p = '-';
    p += bits >> 31;
    bits &= 0x7fffffffu;
    if (bits == 0) {
        *p++ = '0';
        return p;
    }
    const decimal d = shortest_decimal(decode(bits));
    const int given = digit_count(d.digits);  // <= 9
    const std::uint32_t nine = d.digits * pow10_32[9 - given];
    return write_digits(p, bits, d.exponent + given - 1, nine / 100000000, eight_digits(nine % 100000000));
}

// ---- AVX2: the digits of 8 floats at a time (the steps of shortest_decimal, digit_count
// and eight_digits in the lanes of a vector), then their text one by one ----

/// Per (q, closer_below): k, h and 10^-k's two halves, as shortest_decimal computes them.
constexpr int q_first = -149, q_last = 104;
constexpr std::size_t scale_entries = 2 * (q_last - q_first + 1);
struct scale_table {
    std::array<std::int32_t, scale_entries> k_and_h{};  // k in the low 16 bits, h in the high
    std::array<std::uint32_t, scale_entries> g_high{}, g_low{};
};
constexpr scale_table make_scale_table() {
    scale_table t;
    for (int q = q_first; q <= q_last; ++q)
        for (int closer_below = 0; closer_below < 2; ++closer_below) {
            const std::size_t i = static_cast<std::size_t>(2 * (q - q_first) + closer_below);
            const int k = closer_below ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);
            const int h = q + floor_log2_pow10(-k) + 1;
            const std::uint64_t g = pow10_upper[-k - pow10_first];
            t.k_and_h[i] = static_cast<std::int32_t>((static_cast<std::uint32_t>(k) & 0xffffu) |
                                                     (static_cast<std::uint32_t>(h) << 16));
            t.g_high[i] = static_cast<std::uint32_t>(g >> 32);
            t.g_low[i] = static_cast<std::uint32_t>(g);
        }
    return t;
}
constexpr scale_table scales = make_scale_table();

#define ATTN_AVX2 [[gnu::target("avx2")]]

/// round_to_odd(g, cp) in 8 lanes: g = g_high * 2^32 + g_low, the 96-bit product from
/// two 32x32 -> 64 products per lane (even lanes, then odd ones).
ATTN_AVX2 inline __m256i round_to_odd_8(__m256i g_high, __m256i g_low, __m256i cp) {
    const __m256i cp_odd = _mm256_srli_epi64(cp, 32);
    const __m256i m_even = _mm256_add_epi64(_mm256_mul_epu32(g_high, cp),
                                            _mm256_srli_epi64(_mm256_mul_epu32(g_low, cp), 32));
    const __m256i m_odd = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(g_high, 32), cp_odd),
                                           _mm256_srli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(g_low, 32), cp_odd), 32));
    const __m256i whole = _mm256_blend_epi32(_mm256_srli_epi64(m_even, 32), m_odd, 0xaa);
    const __m256i fraction = _mm256_blend_epi32(m_even, _mm256_slli_epi64(m_odd, 32), 0xaa);
    const __m256i none = _mm256_cmpeq_epi32(_mm256_and_si256(fraction, _mm256_set1_epi32(-2)), _mm256_setzero_si256());
    return _mm256_or_si256(whole, _mm256_andnot_si256(none, _mm256_set1_epi32(1)));
}

/// x * magic >> shift in 8 lanes (shift >= 32): a division by a constant.
ATTN_AVX2 inline __m256i divide_8(__m256i x, std::uint32_t magic, int shift) {
    const __m256i m = _mm256_set1_epi32(static_cast<int>(magic));
    const __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(x, m), shift);
    const __m256i odd = _mm256_slli_epi64(_mm256_srli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), m), shift), 32);
    return _mm256_blend_epi32(even, odd, 0xaa);
}

/// a <= b, b ? yes : no (lanes below 2^31, as every value compared here is)
ATTN_AVX2 inline __m256i at_most(__m256i a, __m256i b) {
    return _mm256_xor_si256(_mm256_cmpgt_epi32(a, b), _mm256_set1_epi32(-1));
}
ATTN_AVX2 inline __m256i choose(__m256i b, __m256i yes, __m256i no) { return _mm256_blendv_epi8(no, yes, b); }

/// eight_digits of 4 numbers < 10^8, given as their n / 10^4 and n % 10^4 in the low and
/// high half of a 64-bit lane: the same word per lane.
ATTN_AVX2 inline __m256i eight_digits_4(__m256i x) {
    const __m256i hundreds = _mm256_srli_epi16(_mm256_mulhi_epu16(x, _mm256_set1_epi32(10486)), 4);  // x / 100, x < 2^16
    x = _mm256_or_si256(hundreds, _mm256_slli_epi32(_mm256_sub_epi16(x, _mm256_mullo_epi16(hundreds, _mm256_set1_epi32(100))), 16));
    const __m256i tens = _mm256_srli_epi16(_mm256_mullo_epi16(x, _mm256_set1_epi16(103)), 10);  // x / 10, x < 100
    return _mm256_or_si256(tens, _mm256_slli_epi16(_mm256_sub_epi16(x, _mm256_mullo_epi16(tens, _mm256_set1_epi16(10))), 8));
}

/// The text of 8 finite floats, each followed by `separator`.
ATTN_AVX2 char* write_8(char* p, const float* v, char separator) {
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1), ten = _mm256_set1_epi32(10);
    const __m256i signed_bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
    const __m256i bits = _mm256_and_si256(signed_bits, _mm256_set1_epi32(0x7fffffff));
    // decode
    const __m256i fraction = _mm256_and_si256(bits, _mm256_set1_epi32((1 << 23) - 1));
    const __m256i biased = _mm256_srli_epi32(bits, 23);
    const __m256i subnormal = _mm256_cmpeq_epi32(biased, zero);
    const __m256i c = choose(subnormal, fraction, _mm256_or_si256(fraction, _mm256_set1_epi32(1 << 23)));
    const __m256i q = choose(subnormal, _mm256_set1_epi32(q_first), _mm256_sub_epi32(biased, _mm256_set1_epi32(150)));
    const __m256i closer_below = _mm256_and_si256(_mm256_cmpeq_epi32(fraction, zero), _mm256_cmpgt_epi32(biased, one));
    // shortest_decimal: k, h and g from the table; closer_below is -1 where true
    const __m256i index = _mm256_sub_epi32(_mm256_slli_epi32(_mm256_sub_epi32(q, _mm256_set1_epi32(q_first)), 1), closer_below);
    const __m256i k_and_h = _mm256_i32gather_epi32(scales.k_and_h.data(), index, 4);
    const __m256i k = _mm256_srai_epi32(_mm256_slli_epi32(k_and_h, 16), 16);
    const __m256i h = _mm256_srli_epi32(k_and_h, 16);
    const __m256i g_high = _mm256_i32gather_epi32(reinterpret_cast<const int*>(scales.g_high.data()), index, 4);
    const __m256i g_low = _mm256_i32gather_epi32(reinterpret_cast<const int*>(scales.g_low.data()), index, 4);
    const __m256i open = _mm256_and_si256(c, one);
    const __m256i cb = _mm256_slli_epi32(c, 2);
    const __m256i cbl = _mm256_add_epi32(_mm256_sub_epi32(cb, _mm256_set1_epi32(2)), _mm256_and_si256(closer_below, one));
    const __m256i cbr = _mm256_add_epi32(cb, _mm256_set1_epi32(2));
    const __m256i vb = round_to_odd_8(g_high, g_low, _mm256_sllv_epi32(cb, h));
    const __m256i vbl = _mm256_add_epi32(round_to_odd_8(g_high, g_low, _mm256_sllv_epi32(cbl, h)), open);
    const __m256i vbr = _mm256_sub_epi32(round_to_odd_8(g_high, g_low, _mm256_sllv_epi32(cbr, h)), open);
    const __m256i s = _mm256_srli_epi32(vb, 2);
    const __m256i t = _mm256_add_epi32(s, one);
    const __m256i down = _mm256_mullo_epi32(divide_8(s, 0xcccccccdu, 35), ten);
    const __m256i up = _mm256_add_epi32(down, ten);
    const __m256i down_in = at_most(vbl, _mm256_slli_epi32(down, 2)), up_in = at_most(_mm256_slli_epi32(up, 2), vbr);
    const __m256i s_in = at_most(vbl, _mm256_slli_epi32(s, 2)), t_in = at_most(_mm256_slli_epi32(t, 2), vbr);
    const __m256i middle = _mm256_slli_epi32(_mm256_add_epi32(s, t), 1);
    const __m256i closer_t = _mm256_or_si256(
        _mm256_cmpgt_epi32(vb, middle),
        _mm256_and_si256(_mm256_cmpeq_epi32(vb, middle), _mm256_cmpeq_epi32(_mm256_and_si256(s, one), one)));
    const __m256i one_of_two = _mm256_xor_si256(s_in, t_in);
    const __m256i of_two =
        choose(_mm256_or_si256(_mm256_and_si256(one_of_two, t_in), _mm256_andnot_si256(one_of_two, closer_t)), t, s);
    const __m256i use_shorter =
        _mm256_and_si256(_mm256_cmpgt_epi32(s, _mm256_set1_epi32(9)), _mm256_xor_si256(down_in, up_in));
    const __m256i digits = choose(use_shorter, choose(down_in, down, up), of_two);
    // digit_count, then the digits as nine: the first, and the other eight in a word
    __m256i given = one;
    for (int i = 1; i < 9; ++i)
        given = _mm256_sub_epi32(given, _mm256_cmpgt_epi32(digits, _mm256_set1_epi32(static_cast<int>(pow10_32[i]) - 1)));
    const __m256i scientific_exponent = _mm256_sub_epi32(_mm256_add_epi32(k, given), one);
    const __m256i nine = _mm256_mullo_epi32(
        digits, _mm256_i32gather_epi32(reinterpret_cast<const int*>(pow10_32), _mm256_sub_epi32(_mm256_set1_epi32(9), given), 4));
    const __m256i first = divide_8(nine, 1441151881u, 57);  // / 10^8, nine < 10^9
    const __m256i rest = _mm256_sub_epi32(nine, _mm256_mullo_epi32(first, _mm256_set1_epi32(100000000)));
    const __m256i rest_high = divide_8(rest, 3518437209u, 45);  // / 10^4, rest < 10^8
    const __m256i rest_low = _mm256_sub_epi32(rest, _mm256_mullo_epi32(rest_high, _mm256_set1_epi32(10000)));
    // lanes 0 1 4 5, then 2 3 6 7 (unpack works within each 128-bit half)
    const __m256i words_0145 = eight_digits_4(_mm256_unpacklo_epi32(rest_high, rest_low));
    const __m256i words_2367 = eight_digits_4(_mm256_unpackhi_epi32(rest_high, rest_low));

    alignas(32) std::uint32_t bits_of[8], first_of[8];
    alignas(32) std::int32_t exponent_of[8];
    alignas(32) std::uint64_t words[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(bits_of), signed_bits);
    _mm256_store_si256(reinterpret_cast<__m256i*>(first_of), first);
    _mm256_store_si256(reinterpret_cast<__m256i*>(exponent_of), scientific_exponent);
    _mm256_store_si256(reinterpret_cast<__m256i*>(words), words_0145);
    _mm256_store_si256(reinterpret_cast<__m256i*>(words + 4), words_2367);
    constexpr int word_of[8] = {0, 1, 4, 5, 2, 3, 6, 7};
    for (int i = 0; i < 8; ++i) {
        const std::uint32_t b = bits_of[i];
        *p = '-';
        p += b >> 31;
        if ((b & 0x7fffffffu) == 0) {
            *p++ = '0';
        } else {
            p = write_digits(p, b & 0x7fffffffu, exponent_of[i], first_of[i], words[word_of[i]]);
        }
        *p++ = separator;
    }
    return p;
}

bool avx2_here() {
    static const bool here = cpu_features_here().avx2;
    return here;
}

}  // namespace

char* write_shortest_float(char* p, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return write_plain(p, bits);
}

bool float_text_kernel_runs_here(float_text_kernel kernel) {
    return kernel == float_text_kernel::plain || avx2_here();
}

char* write_shortest_floats(char* p, const float* v, std::size_t count, char separator, float_text_kernel kernel) {
    std::size_t i = 0;
    if (kernel == float_text_kernel::avx2)
        for (; i + 8 <= count; i += 8) p = write_8(p, v + i, separator);
    for (; i < count; ++i) {
        p = write_shortest_float(p, v[i]);
        *p++ = separator;
    }
    return p;
}

char* write_shortest_floats(char* p, const float* v, std::size_t count, char separator) {
    return write_shortest_floats(p, v, count, separator,
                                 avx2_here() ? float_text_kernel::avx2 : float_text_kernel::plain);
}

}  // namespace attn
