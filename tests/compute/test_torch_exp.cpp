// torch_exp: the three builds of PyTorch's expf (AVX2 8 at a time, FMA, plain) give the
// same bits for every argument, ends and tails included; and a few values worked by hand.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/torch_exp.hpp"
#include "support.hpp"

namespace {

float from_bits(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

/// Arguments where exp is hard: the ends and just past them, zeros, infinities, NaN,
/// subnormals, halfway points of q = round(d / ln 2), and a sweep of [-110, 110].
std::vector<float> hard_arguments() {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> v{0.0f, -0.0f, inf, -inf, std::nanf(""), -104.0f, 100.0f, 88.72283f, 88.72284f,
                         -87.33654f, -103.97208f, 1e-45f, -1e-45f, 1e-38f, 0.5f * 0.6931472f, -0.5f * 0.6931472f};
    for (float b : {-104.0f, 100.0f})
        for (int k = 1; k <= 8; ++k) {
            v.push_back(std::nextafter(b, -inf));
            v.push_back(std::nextafter(b, inf));
            b = std::nextafter(b, k % 2 ? inf : -inf);
        }
    for (int q = -150; q <= 150; ++q) {  // where the rounding of d / ln 2 changes
        const float halfway = (static_cast<float>(q) + 0.5f) * 0.6931472f;
        v.insert(v.end(), {halfway, std::nextafter(halfway, -inf), std::nextafter(halfway, inf)});
    }
    for (float d = -110.0f; d <= 110.0f; d += 0.0137f) v.push_back(d);
    std::uint32_t x = 1;
    for (int i = 0; i < 20000; ++i) {  // any bits at all, NaNs with payloads among them
        x = x * 1664525u + 1013904223u;
        v.push_back(from_bits(x));
    }
    return v;
}

}  // namespace

TEST_SUITE("torch_exp") {
    TEST_CASE("values worked by hand: exp(0) = 1, the ends, and NaN kept") {
        std::vector<float> row{0.0f, -std::numeric_limits<float>::infinity(), -105.0f, 101.0f, std::nanf(""), 1.0f};
        attn::exp_shifted(row.data(), row.size(), 0.0f);
        CHECK(row[0] == 1.0f);
        CHECK(bits(row[1]) == 0u);
        CHECK(bits(row[2]) == 0u);
        CHECK(row[3] == std::numeric_limits<float>::infinity());
        CHECK(std::isnan(row[4]));
        CHECK(row[5] == doctest::Approx(2.7182817f).epsilon(1e-7));
        std::vector<float> shifted{3.0f, 2.0f};
        attn::exp_shifted(shifted.data(), shifted.size(), 3.0f);  // row - max: 0 and -1
        CHECK(shifted[0] == 1.0f);
        CHECK(shifted[1] == doctest::Approx(0.36787945f).epsilon(1e-7));
    }

    TEST_CASE("every build this CPU runs gives the plain build's bits, for every row length") {
        const std::vector<float> arguments = hard_arguments();
        for (attn::exp_kernel k : {attn::exp_kernel::fma, attn::exp_kernel::avx2}) {
            if (!attn::exp_kernel_runs_here(k)) {
                MESSAGE("this CPU does not run exp kernel " << static_cast<int>(k) << ": not compared");
                continue;
            }
            CAPTURE(static_cast<int>(k));
            std::size_t differ = 0;
            for (const float max : {0.0f, 1.5f, -3.25f}) {
                // rows of every length from 1 to 40, so that each tail length of 8 is met
                for (std::size_t at = 0, n = 1; at < arguments.size(); at += n, n = n % 40 + 1) {
                    const std::size_t len = std::min(n, arguments.size() - at);
                    std::vector<float> plain(arguments.begin() + static_cast<std::ptrdiff_t>(at),
                                             arguments.begin() + static_cast<std::ptrdiff_t>(at + len));
                    std::vector<float> fast = plain;
                    attn::exp_shifted_with(attn::exp_kernel::plain, plain.data(), len, max);
                    attn::exp_shifted_with(k, fast.data(), len, max);
                    for (std::size_t j = 0; j < len; ++j)
                        if (bits(plain[j]) != bits(fast[j]) && !(std::isnan(plain[j]) && std::isnan(fast[j]))) ++differ;
                }
            }
            CHECK(differ == 0);
        }
    }
}
