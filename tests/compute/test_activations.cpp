// The MLP activations (activations.hpp): torch 1.13's bits for every count of the fixtures
// (tests/reference/make_activation_fixtures.py), tails and thread chunks included, and the
// values that hold whatever the order of operations.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/activations.hpp"
#include "attn/io/npz.hpp"
#include "support.hpp"

namespace {

const attn::activation all[] = {attn::activation::gelu_tanh, attn::activation::gelu_erf, attn::activation::silu};

/// How many elements of `got` are not `want`'s bits; the first one in `first`.
std::size_t differing(const std::vector<float>& got, const std::vector<float>& want, std::size_t& first) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        if (bits(got[i]) != bits(want[i]) && count++ == 0) first = i;
    return count;
}

}  // namespace

TEST_CASE("each activation gives torch's bits for every count, on one thread and on two") {
    if (!attn::activations_are_torchs()) return;  // without AVX2 and FMA: within an ulp (below)
    const auto arrays = attn::read_npz(reference_path("activations/activations.npz"), "activations.npz");
    std::size_t cases = 0;
    for (const auto& [name, tensor] : arrays) {
        if (name.size() < 2 || name.compare(name.size() - 2, 2, ".x") != 0) continue;
        const std::string prefix = name.substr(0, name.size() - 1);  // "n17." or "t2n20001."
        const int threads = prefix.rfind("t2", 0) == 0 ? 2 : 1;
        const std::vector<float> x = values_of(tensor);
        for (const auto a : all) {
            const std::vector<float> want = values_of(arrays.at(prefix + std::string(attn::activation_name(a))));
            std::vector<float> got(x.size());
            attn::activate_as_on(a, x.data(), got.data(), x.size(), threads);
            std::size_t first = 0;
            INFO(prefix, attn::activation_name(a), " first differing element ", first);
            CHECK(differing(got, want, first) == 0);
            ++cases;
        }
    }
    CHECK(cases == 39);  // 13 counts × 3 activations
}

TEST_CASE("silu's chunks: computed as on one thread, the two-thread fixture differs") {
    // t2n40001 on two threads: silu's first chunk ends at 20001, its last element from the scalar
    // op (glibc's expf); on one thread that element is a vector one (SLEEF's). The fixture tells
    // the two apart, so the test above fails if the chunks are not torch's.
    if (!attn::activations_are_torchs()) return;
    const auto arrays = attn::read_npz(reference_path("activations/activations.npz"), "activations.npz");
    const std::vector<float> x = values_of(arrays.at("t2n40001.x")), want = values_of(arrays.at("t2n40001.silu"));
    std::vector<float> one(x.size());
    attn::activate_as_on(attn::activation::silu, x.data(), one.data(), x.size(), 1);
    std::size_t first = 0;
    CHECK(differing(one, want, first) == 1);
    CHECK(first == 20000);
}

TEST_CASE("activations at values worked by hand") {
    const float x[] = {0.0f, 1.0f, -1.0f, 3.0f, -10.0f};
    float y[5];
    attn::activate(attn::activation::silu, x, y, 5);  // x·σ(x)
    CHECK(y[0] == 0.0f);
    CHECK(y[1] == doctest::Approx(0.7310586).epsilon(1e-6));
    CHECK(y[2] == doctest::Approx(-0.2689414).epsilon(1e-6));
    CHECK(y[4] == doctest::Approx(-10.0 / (1.0 + std::exp(10.0))).epsilon(1e-5));
    attn::activate(attn::activation::gelu_erf, x, y, 5);  // x·Φ(x)
    CHECK(y[1] == doctest::Approx(0.8413447).epsilon(1e-6));
    CHECK(y[3] == doctest::Approx(2.9959502).epsilon(1e-6));
    CHECK(y[4] == doctest::Approx(0.0).epsilon(1e-6));
    attn::activate(attn::activation::gelu_tanh, x, y, 5);  // the tanh approximation, close to Φ
    CHECK(y[1] == doctest::Approx(0.8411920).epsilon(1e-6));
    CHECK(y[2] == doctest::Approx(-0.1588080).epsilon(1e-6));
}
