// torch_generator against PyTorch 1.13 (AVX2 kernel), bit for bit.
//
// Expected values are float32 BIT PATTERNS printed by Debian's PyTorch 1.13
// (`t.view(torch.int32)`), never this program's own output: section 8 of
// share/attn/doc/torch-rng.md by hand below, and the broader sweep of
// tests/reference/generator_vectors.json (written by make_generator_vectors.py).
// The comments give the `%.8g` values the spec's table shows.
#include "attn/compute/generator.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

using bits_list = std::vector<std::uint32_t>;

bits_list bits_of(const std::vector<float>& values) {
    bits_list out;
    for (float v : values) out.push_back(bits(v));
    return out;
}

std::vector<float> randn(attn::torch_generator& gen, std::size_t n) {
    std::vector<float> out(n);
    gen.randn(out.data(), n);
    return out;
}

std::vector<float> rand(attn::torch_generator& gen, std::size_t n) {
    std::vector<float> out(n);
    gen.rand(out.data(), n);
    return out;
}

/// nn.Linear(in, out, bias): the weight row-major, then the bias (if any), as one list.
std::vector<float> linear(attn::torch_generator& gen, std::size_t in, std::size_t out,
                          bool bias = true) {
    std::vector<float> weight(in * out);
    std::vector<float> b(bias ? out : 0);
    gen.linear_init(weight.data(), bias ? b.data() : nullptr, out, in);
    weight.insert(weight.end(), b.begin(), b.end());
    return weight;
}

/// The first `n` elements of `values`, as bit patterns.
bits_list first_bits(const std::vector<float>& values, std::size_t n) {
    return bits_of(std::vector<float>(values.begin(), values.begin() + n));
}

/// How many u32 words the calls consumed: the index of the next word in
/// std::mt19937's stream (an independent MT19937) that `gen` will return.
std::size_t draws_consumed(attn::torch_generator& gen, std::uint32_t seed) {
    std::mt19937 reference(seed);
    const std::uint32_t next = gen.next_u32();
    for (std::size_t k = 0; k < 100000; ++k) {
        if (reference() == next) return k;
    }
    return SIZE_MAX;
}

}  // namespace

TEST_SUITE("generator") {
    TEST_CASE("the u32 stream is std::mt19937 seeded with the seed mod 2^32 (1)") {
        SUBCASE("seed 0: the spec's first three words") {
            attn::torch_generator gen(0);
            CHECK(gen.next_u32() == 2357136044u);
            CHECK(gen.next_u32() == 2546248239u);
            CHECK(gen.next_u32() == 3071714933u);
        }
        SUBCASE("seeds 1, 42, 2^31+5: 2000 words, across three twists") {
            for (std::uint32_t seed : {1u, 42u, 2147483653u}) {
                CAPTURE(seed);
                attn::torch_generator gen(seed);
                std::mt19937 reference(seed);
                int mismatches = 0;
                for (int k = 0; k < 2000; ++k) mismatches += gen.next_u32() != reference();
                CHECK(mismatches == 0);
            }
        }
        SUBCASE("only the low 32 bits seed MT: 2^32 + 5 behaves as 5") {
            attn::torch_generator wide((std::uint64_t{1} << 32) + 5);
            std::mt19937 reference(5);
            for (int k = 0; k < 5; ++k) CHECK(wide.next_u32() == reference());
        }
        SUBCASE("next_u64: the first draw is the high word") {
            attn::torch_generator gen(0);
            CHECK(gen.next_u64() == (std::uint64_t{2357136044u} << 32 | 2546248239u));
        }
    }

    TEST_CASE("seed -1 wraps to 2^64-1 and MT gets 0xFFFFFFFF (8)") {
        attn::torch_generator gen(static_cast<std::uint64_t>(-1));
        CHECK(bits_of(rand(gen, 2)) == bits_list{0x3F7E69A3, 0x3F124122});  // 0.99379939, 0.57130635
        attn::torch_generator low(0xFFFFFFFFu);
        attn::torch_generator wrapped(static_cast<std::uint64_t>(-1));
        for (int k = 0; k < 5; ++k) CHECK(wrapped.next_u32() == low.next_u32());
    }

    TEST_CASE("rand takes the 24 low bits of one word per element (3)") {
        SUBCASE("seed 0") {
            attn::torch_generator gen(0);
            // 0.49625659, 0.7682218, 0.088477433, 0.13203049
            CHECK(bits_of(rand(gen, 4)) == bits_list{0x3EFE1558, 0x3F44AA2F, 0x3DB533A8, 0x3E073300});
        }
        SUBCASE("seed 42") {
            attn::torch_generator gen(42);
            // 0.88226926, 0.91500396, 0.38286376, 0.95930564
            CHECK(bits_of(rand(gen, 4)) == bits_list{0x3F61DC66, 0x3F6A3DB3, 0x3EC406B8, 0x3F75950E});
        }
    }

    TEST_CASE("randint(0, 10) is one u32 mod 10 per element (4)") {
        // The generator has no randint; this checks the stream it would use.
        SUBCASE("seed 0") {
            attn::torch_generator gen(0);
            std::vector<std::uint32_t> got;
            for (int k = 0; k < 6; ++k) got.push_back(gen.next_u32() % 10);
            CHECK(got == std::vector<std::uint32_t>{4, 9, 3, 0, 3, 9});
        }
        SUBCASE("seed 42") {
            attn::torch_generator gen(42);
            std::vector<std::uint32_t> got;
            for (int k = 0; k < 6; ++k) got.push_back(gen.next_u32() % 10);
            CHECK(got == std::vector<std::uint32_t>{2, 7, 6, 4, 6, 5});
        }
    }

    TEST_CASE("randn below 16 elements is double Box-Muller with a cache (5.1)") {
        SUBCASE("seed 0: randn(5)") {
            attn::torch_generator gen(0);
            // 1.5409961, -0.2934289, -2.1787894, 0.56843126, -1.0845224
            CHECK(bits_of(randn(gen, 5)) ==
                  bits_list{0x3FC53F5C, 0xBE963C50, 0xC00B7149, 0x3F1184B6, 0xBF8AD1A1});
        }
        SUBCASE("seed 42: randn(5)") {
            attn::torch_generator gen(42);
            // 0.33669037, 0.12880941, 0.23446237, 0.23033303, -1.1228564
            CHECK(bits_of(randn(gen, 5)) ==
                  bits_list{0x3EAC62AE, 0x3E03E69D, 0x3E7016E7, 0x3E6BDC6C, 0xBF8FB9C2});
        }
        SUBCASE("randn(1); randn(1): the second call returns the cached sine half") {
            attn::torch_generator gen(0);
            CHECK(bits_of(randn(gen, 1)) == bits_list{0x3FC53F5C});  // 1.5409961
            CHECK(bits_of(randn(gen, 1)) == bits_list{0xBE963C50});  // -0.2934289
            // Two values from one pair: 4 words (two 53-bit doubles) in all.
            CHECK(draws_consumed(gen, 0) == 4);
        }
        SUBCASE("randn(16) in between neither reads nor clears the cache") {
            attn::torch_generator gen(0);
            CHECK(bits_of(randn(gen, 1)) == bits_list{0x3FC53F5C});
            CHECK(first_bits(randn(gen, 16), 2) == bits_list{0x3F594515, 0x3F312783});
            CHECK(bits_of(randn(gen, 1)) == bits_list{0xBE963C50});
        }
    }

    TEST_CASE("a large randn (its blocks shared among threads) is its blocks of 16, one after another") {
        // randn(16) draws 16 uniforms and transforms them as one block, so n / 16 calls of it
        // give randn(n)'s values when every block is transformed on its own, in its place:
        // 2^20 + 48 values, many blocks on every core, and a tail block.
        const std::size_t n = (std::size_t{1} << 20) + 48;
        attn::torch_generator whole_gen(11), block_gen(11);
        const std::vector<float> whole = randn(whole_gen, n);
        std::vector<float> blocks;
        for (std::size_t k = 0; k < n / 16; ++k) {
            const std::vector<float> one = randn(block_gen, 16);
            blocks.insert(blocks.end(), one.begin(), one.end());
        }
        REQUIRE(blocks.size() == whole.size());
        CHECK(std::memcmp(blocks.data(), whole.data(), n * sizeof(float)) == 0);
        CHECK(whole_gen.next_u32() == block_gen.next_u32());  // the same draws consumed
    }

    TEST_CASE("randn from 16 elements transforms blocks of 16 floats (5.2, 5.3)") {
        SUBCASE("seed 0: randn(16)") {
            attn::torch_generator gen(0);
            // -1.1258398, -1.1523602, -0.25057858, -0.43387881, ... -0.24727815
            CHECK(bits_of(randn(gen, 16)) ==
                  bits_list{0xBF901B85, 0xBF93808A, 0xBE804BD6, 0xBEDE255D, 0x3F594515, 0x3F312783,
                            0xBEA1CC6D, 0xC0075FC1, 0x3EA50138, 0xBFA1B4F4, 0x3EB330FF, 0x3E9DC3BB,
                            0x3DF56F77, 0x3F9E6B93, 0x3F8EF28E, 0xBE7D367C});
        }
        SUBCASE("seed 42: randn(16)") {
            attn::torch_generator gen(42);
            // 1.9269153, 1.4872841, 0.9007172, -2.105521
            CHECK(first_bits(randn(gen, 16), 4) ==
                  bits_list{0x3FF6A529, 0x3FBE5F53, 0x3F669567, 0xC006C0DB});
        }
        SUBCASE("seed 0: randn(32)[3] has the AVX2 kernel's bits, not the no-AVX ones") {
            attn::torch_generator gen(0);
            const std::uint32_t got = bits(randn(gen, 32)[3]);
            CHECK(got == 0xBEDE255Du);  // -0.43387881
            CHECK(got != 0xBEDE255Eu);  // -0.43387884, ATEN_CPU_CAPABILITY=default
        }
        SUBCASE("seed 0: randn(17)") {
            attn::torch_generator gen(0);
            // -1.1258398, -1.6959312, 0.56665063, 0.79350835 ... last 0.93182659
            CHECK(bits_of(randn(gen, 17)) ==
                  bits_list{0xBF901B85, 0xBFD91446, 0x3F111004, 0x3F4B235D, 0x3F194D8B, 0xBFC70D5B,
                            0xBEAEC6CA, 0x3FED2F4E, 0x3EEFAA55, 0xBF15E32B, 0xBE318EEB, 0x3E3BE1A4,
                            0x3FB1D6C0, 0x3FCB0D00, 0x3F72409C, 0xBF57FB33, 0x3F6E8C30});
        }
        SUBCASE("seed 42: randn(17)") {
            attn::torch_generator gen(42);
            // 1.9269153, -0.15959747, -0.49739754, 0.43958926 ... last -0.30972677
            const std::vector<float> got = randn(gen, 17);
            CHECK(first_bits(got, 4) == bits_list{0x3FF6A529, 0xBE236D85, 0xBEFEAAE4, 0x3EE111D8});
            CHECK(bits(got[16]) == 0xBE9E9482u);
        }
        SUBCASE("randn(17): element 0 from block 0, elements 1..16 from 16 fresh draws 17..32") {
            attn::torch_generator whole(0);
            const std::vector<float> got = randn(whole, 17);

            attn::torch_generator head(0);  // block 0 = draws 0..15
            CHECK(bits(got[0]) == bits(randn(head, 16)[0]));

            attn::torch_generator tail(0);  // skip draws 0..16, then one block
            for (int k = 0; k < 17; ++k) tail.next_u32();
            const std::vector<float> block = randn(tail, 16);
            CHECK(bits_of(std::vector<float>(got.begin() + 1, got.end())) == bits_of(block));
        }
        SUBCASE("sizes 15/16/17/31/32/33/1000 draw N words, N + 16 with a tail, 4 per pair below 16") {
            struct size_case {
                std::size_t n;
                std::size_t draws;
            };
            // N < 16: 4 words per pair, an odd N leaves its last sine half cached.
            const size_case sizes[] = {{15, 32},  {16, 16},  {17, 33},    {31, 47},
                                       {32, 32},  {33, 49},  {1000, 1016}};
            for (const size_case& s : sizes) {
                CAPTURE(s.n);
                attn::torch_generator gen(7);
                randn(gen, s.n);
                CHECK(draws_consumed(gen, 7) == s.draws);
            }
        }
        SUBCASE("sizes 15/16/17/31/32/33/1000: no NaN, no infinity, values of a standard normal") {
            for (std::size_t n : {15u, 16u, 17u, 31u, 32u, 33u, 1000u}) {
                CAPTURE(n);
                attn::torch_generator gen(3);
                const std::vector<float> got = randn(gen, n);
                double sum = 0;
                for (float v : got) {
                    CHECK(std::isfinite(v));
                    CHECK(std::abs(v) < 6.0f);
                    sum += v;
                }
                if (n == 1000) CHECK(std::abs(sum / n) < 0.15);
            }
        }
    }

    TEST_CASE("nn.Linear draws the kaiming weight, then the bias (6)") {
        SUBCASE("seed 0: Linear(3, 2)") {
            attn::torch_generator gen(0);
            // weight -0.0043225177, 0.30971584, -0.47518533, -0.4248946, -0.22236897, 0.15482073
            // bias -0.011439145, 0.45777494
            CHECK(bits_of(linear(gen, 3, 2)) ==
                  bits_list{0xBB8DA3E8, 0x3E9E9313, 0xBEF34B7E, 0xBED98BC9, 0xBE63B4B1, 0x3E1E8953,
                            0xBC3B6B40, 0x3EEA617A});
        }
        SUBCASE("seed 42: Linear(3, 2)") {
            attn::torch_generator gen(42);
            // weight 0.44140652, 0.47920528, -0.13525727, 0.53036046, -0.1264995, 0.11650391
            // bias -0.28108588, 0.33906779
            CHECK(bits_of(linear(gen, 3, 2)) ==
                  bits_list{0x3EE20009, 0x3EF55A65, 0xBE0A80E2, 0x3F07C5B4, 0xBE018916, 0x3DEE999A,
                            0xBE8FEA7D, 0x3EAD9A4B});
        }
        SUBCASE("seed 0: 3 x Linear(16, 2, bias=False), then Linear(2, 2)") {
            attn::torch_generator gen(0);
            for (int k = 0; k < 3; ++k) linear(gen, 16, 2, false);
            // weight 0.35306904, 0.14799841, -0.55160266, -0.40716586 / bias 0.66521019, 0.47646117
            CHECK(bits_of(linear(gen, 2, 2)) ==
                  bits_list{0x3EB4C577, 0x3E178CE5, 0xBF0D35D5, 0xBED0780B, 0x3F2A4B37, 0x3EF3F2B8});
        }
        SUBCASE("with bias: out*in + out draws; without: out*in draws") {
            attn::torch_generator with_bias(0);
            linear(with_bias, 7, 5, true);
            CHECK(draws_consumed(with_bias, 0) == 40);
            attn::torch_generator without_bias(0);
            linear(without_bias, 7, 5, false);
            CHECK(draws_consumed(without_bias, 0) == 35);
        }
        SUBCASE("the weight of Linear(in, out) does not depend on the bias flag") {
            attn::torch_generator a(5);
            attn::torch_generator b(5);
            const std::vector<float> with_bias = linear(a, 7, 5, true);
            const std::vector<float> without_bias = linear(b, 7, 5, false);
            CHECK(first_bits(with_bias, 35) == bits_of(without_bias));
        }
    }

    TEST_CASE("3 x Linear(8, 8) then randn(2, 5, 8): 216 draws, then one N=80 fill (6, 8)") {
        attn::torch_generator gen(0);
        for (int k = 0; k < 3; ++k) linear(gen, 8, 8);
        // 0.43864921, -0.010704049, 1.3383542, -0.27940503
        CHECK(first_bits(randn(gen, 2 * 5 * 8), 4) ==
              bits_list{0x3EE096A1, 0xBC2F6009, 0x3FAB4F31, 0xBE8F0E2D});
        CHECK(draws_consumed(gen, 0) == 216 + 80);
    }

    TEST_CASE("every float of the PyTorch reference vectors matches bit for bit") {
        const nlohmann::json cases = read_json(reference_path("generator_vectors.json"));
        REQUIRE(cases.is_array());
        REQUIRE(cases.size() >= 40);

        std::size_t values_checked = 0;
        std::size_t total_mismatches = 0;
        for (std::size_t c = 0; c < cases.size(); ++c) {
            const nlohmann::json& test = cases[c];
            attn::torch_generator gen(test.at("seed").get<std::uint64_t>());
            std::vector<float> produced;
            for (const nlohmann::json& call : test.at("calls")) {
                const std::string op = call.at("op").get<std::string>();
                std::vector<float> out;
                if (op == "randn") {
                    out = randn(gen, call.at("n").get<std::size_t>());
                } else if (op == "rand") {
                    out = rand(gen, call.at("n").get<std::size_t>());
                } else if (op == "uniform") {
                    out.resize(call.at("n").get<std::size_t>());
                    gen.uniform(out.data(), out.size(), call.at("a").get<double>(),
                                call.at("b").get<double>());
                } else if (op == "skip") {  // draws that produce no values
                    const auto n = call.at("n").get<std::size_t>();
                    for (std::size_t k = 0; k < n; ++k) gen.next_u32();
                } else if (op == "linear") {
                    out = linear(gen, call.at("in").get<std::size_t>(),
                                 call.at("out").get<std::size_t>(), call.at("bias").get<bool>());
                } else {
                    FAIL("case " << c << ": unknown op " << op);
                }
                produced.insert(produced.end(), out.begin(), out.end());
            }

            const bits_list expected = test.at("bits").get<bits_list>();
            INFO("case " << c << " (seed " << test.at("seed") << ", calls " << test.at("calls")
                         << ")");
            CHECK(produced.size() == expected.size());
            std::size_t mismatches = 0;
            for (std::size_t k = 0; k < expected.size() && k < produced.size(); ++k) {
                if (bits(produced[k]) == expected[k]) continue;
                if (mismatches++ < 3) {  // the first few are enough to debug
                    FAIL_CHECK("case " << c << " element " << k << ": got 0x" << std::hex
                                       << bits(produced[k]) << " (" << produced[k]
                                       << "), want 0x" << expected[k] << std::dec);
                }
            }
            CHECK_MESSAGE(mismatches == 0, "case " << c << ": " << mismatches << " of "
                                                   << expected.size() << " values differ");
            values_checked += expected.size();
            total_mismatches += mismatches;
        }
        INFO(cases.size() << " cases, " << values_checked << " values");
        CHECK(total_mismatches == 0);
    }
}
