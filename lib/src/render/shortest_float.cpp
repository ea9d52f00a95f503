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

/// Digits of n >= 1, without a loop: log10 from the bit length, then one comparison.
int digit_count(std::uint32_t n) {
    constexpr std::uint32_t powers[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
    const int t = ((32 - __builtin_clz(n)) * 1233) >> 12;  // floor(log10(2^bits)) <= log10(n) + 1
    return t - (n < powers[t] ? 1 : 0) + 1;
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

constexpr std::uint32_t pow10_32[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
constexpr std::uint64_t ascii_zeros = 0x3030303030303030ull;

}  // namespace

char* write_shortest_float(char* p, float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    *p = '-';
    p += bits >> 31;
    bits &= 0x7fffffffu;
    if (bits == 0) {
        *p++ = '0';
        return p;
    }
    const binary b = decode(bits);
    const decimal d = shortest_decimal(b);
    // the digits as nine, the first not 0 ("1.5" is 150000000): the first apart, the other
    // eight in a word whose zero bytes at the top are the trailing zeros to drop
    const int given = digit_count(d.digits);  // <= 9
    const int scientific_exponent = d.exponent + given - 1;
    const std::uint32_t nine = d.digits * pow10_32[9 - given];
    const std::uint32_t first = nine / 100000000;
    const std::uint64_t rest = eight_digits(nine % 100000000);
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

}  // namespace attn
