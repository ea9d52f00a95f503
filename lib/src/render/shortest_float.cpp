#include "attn/render/shortest_float.hpp"

#include <cstdint>
#include <cstring>

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
inline int floor_log10_pow2(int q) { return static_cast<int>((q * 661971961083LL) >> 41); }
inline int floor_log10_three_quarters_pow2(int q) {
    return static_cast<int>((q * 661971961083LL - 274743187321LL) >> 41);
}
inline int floor_log2_pow10(int e) { return static_cast<int>((e * 913124641741LL) >> 38); }

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

    const std::uint32_t s = vb >> 2;  // floor(v / 10^k)
    if (s >= 10) {  // one digit fewer: the multiple of 10 in the interval, if just one is
        const std::uint32_t down = s / 10 * 10, up = down + 10;
        const bool down_in = vbl <= down << 2, up_in = (up << 2) <= vbr;
        if (down_in != up_in) return {down_in ? down : up, k};
    }
    const std::uint32_t t = s + 1;
    const bool s_in = vbl <= s << 2, t_in = (t << 2) <= vbr;
    if (s_in != t_in) return {s_in ? s : t, k};
    // both: the closer to v, s on a tie when even
    const std::int64_t above_middle = static_cast<std::int64_t>(vb) - 2 * (static_cast<std::int64_t>(s) + t);
    return {above_middle < 0 || (above_middle == 0 && (s & 1) == 0) ? s : t, k};
}

constexpr char two_digits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/// Digits of n >= 1, without a loop: log10 from the bit length, then one comparison.
int digit_count(std::uint32_t n) {
    constexpr std::uint32_t powers[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    const int t = ((32 - __builtin_clz(n)) * 1233) >> 12;  // floor(log10(2^bits)) <= log10(n) + 1
    return t - (n < powers[t] ? 1 : 0) + 1;
}

/// The `count` digits of n, at p.
void put_digits(char* p, std::uint32_t n, int count) {
    char* end = p + count;
    while (n >= 100) {
        end -= 2;
        std::memcpy(end, two_digits + 2 * (n % 100), 2);
        n /= 100;
    }
    if (n >= 10) {
        end -= 2;
        std::memcpy(end, two_digits + 2 * n, 2);
    } else {
        *--end = static_cast<char>('0' + n);
    }
}

}  // namespace

char* write_shortest_float(char* p, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (bits >> 31) *p++ = '-';
    bits &= 0x7fffffffu;
    if (bits == 0) {
        *p++ = '0';
        return p;
    }
    const binary b = decode(bits);
    decimal d = shortest_decimal(b);
    while (d.digits % 10 == 0) {
        d.digits /= 10;
        ++d.exponent;
    }
    const int n = digit_count(d.digits);
    const int scientific_exponent = d.exponent + n - 1;
    const int abs_exponent = scientific_exponent < 0 ? -scientific_exponent : scientific_exponent;
    // printf's %e: d[.ddd]e+XX, at least two exponent digits; %f: the digits with the point
    // inside, zeros after them, or "0." and zeros before them
    const int scientific_length = n + (n > 1 ? 1 : 0) + 4;  // e, sign, two digits (|exponent| <= 45)
    const int fixed_length = d.exponent >= 0 ? n + d.exponent : (n > -d.exponent ? n + 1 : 2 - d.exponent);
    if (fixed_length <= scientific_length) {
        if (d.exponent > 0) {  // %f writes the float's exact value: an integer (< 10^14) here
            const std::uint64_t exact = b.q >= 0 ? std::uint64_t{b.c} << b.q : b.c >> -b.q;
            char text[20];
            char* end = text + sizeof text;
            for (std::uint64_t rest = exact; rest != 0; rest /= 10) *--end = static_cast<char>('0' + rest % 10);
            const auto length = static_cast<std::size_t>(text + sizeof text - end);
            std::memcpy(p, end, length);
            return p + length;
        }
        if (d.exponent == 0) {
            put_digits(p, d.digits, n);
            return p + n;
        }
        if (n > -d.exponent) {  // ddd.ddd
            const int whole = n + d.exponent;
            put_digits(p + 1, d.digits, n);  // then the whole part moved one place left
            std::memmove(p, p + 1, static_cast<std::size_t>(whole));
            p[whole] = '.';
            return p + n + 1;
        }
        p[0] = '0';  // 0.000ddd
        p[1] = '.';
        std::memset(p + 2, '0', static_cast<std::size_t>(-d.exponent - n));
        put_digits(p + 2 - d.exponent - n, d.digits, n);
        return p + 2 - d.exponent;
    }
    put_digits(p + 1, d.digits, n);  // d.ddd: the first digit moved before the point
    p[0] = p[1];
    if (n > 1) {
        p[1] = '.';
        p += n + 1;
    } else {
        p += 1;
    }
    *p++ = 'e';
    *p++ = scientific_exponent < 0 ? '-' : '+';
    std::memcpy(p, two_digits + 2 * abs_exponent, 2);  // |exponent| <= 45
    return p + 2;
}

}  // namespace attn
