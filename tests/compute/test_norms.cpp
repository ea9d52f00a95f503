// LayerNorm and RMSNorm (norms.hpp): torch 1.13's bits for every width of the fixtures
// (tests/reference/make_norm_fixtures.py), both builds alike, and the identities and small
// cases worked by hand that hold whatever the order of operations.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/norms.hpp"
#include "attn/io/npz.hpp"
#include "support.hpp"

namespace {

/// One width of norms.npz: x [R, W], weight, bias [W], eps [R], and torch's outputs [R, W]
/// (layer_norm_no_bias only for W <= 1024).
struct norm_fixture {
    std::size_t rows = 0, width = 0;
    std::vector<float> x, weight, bias, eps, layer_norm, layer_norm_no_bias, rms_norm;
};

const std::vector<norm_fixture>& norm_fixtures() {
    static const std::vector<norm_fixture> all = [] {
        const auto arrays = attn::read_npz(reference_path("norms/norms.npz"), "norms.npz");
        std::vector<norm_fixture> out;
        for (const auto& [name, tensor] : arrays) {
            if (name.size() < 2 || name.compare(name.size() - 2, 2, ".x") != 0) continue;
            const std::string prefix = name.substr(0, name.size() - 1);  // "w768."
            norm_fixture f;
            f.rows = tensor.shape.at(0);
            f.width = tensor.shape.at(1);
            f.x = values_of(tensor);
            f.weight = values_of(arrays.at(prefix + "weight"));
            f.bias = values_of(arrays.at(prefix + "bias"));
            f.eps = values_of(arrays.at(prefix + "eps"));
            f.layer_norm = values_of(arrays.at(prefix + "layer_norm"));
            if (arrays.count(prefix + "layer_norm_no_bias")) f.layer_norm_no_bias = values_of(arrays.at(prefix + "layer_norm_no_bias"));
            f.rms_norm = values_of(arrays.at(prefix + "rms_norm"));
            out.push_back(std::move(f));
        }
        std::sort(out.begin(), out.end(), [](const norm_fixture& a, const norm_fixture& b) { return a.width < b.width; });
        return out;
    }();
    return all;
}

/// How far apart two floats are, in float32 steps (0: the same bits, but +0 and -0 are 0 apart).
std::int64_t ulps_apart(float a, float b) {
    const auto ordered = [](float f) {
        const auto i = static_cast<std::int32_t>(bits(f));
        return i < 0 ? -static_cast<std::int64_t>(i & 0x7fffffff) : static_cast<std::int64_t>(i);
    };
    return std::llabs(ordered(a) - ordered(b));
}

/// Rows that are not torch's to the bit, and the largest difference in ulp.
struct row_differences {
    std::size_t rows = 0, differing = 0;
    std::int64_t worst_ulp = 0;  // near 0, where ulps are tiny, worst_abs says more
    double worst_abs = 0.0;
    std::string where;  // "w17 row 1: 3 values, 2 ulp; ..." for the first few
};

enum class which_norm { layer_norm, layer_norm_no_bias, rms_norm };

/// Each fixture row normalised alone (its own eps) by build k, against torch's bits.
row_differences compare_with_torch(which_norm n, attn::norm_kernel k) {
    row_differences d;
    for (const norm_fixture& f : norm_fixtures()) {
        const std::vector<float>& expected = n == which_norm::layer_norm           ? f.layer_norm
                                             : n == which_norm::layer_norm_no_bias ? f.layer_norm_no_bias
                                                                                   : f.rms_norm;
        if (expected.empty()) continue;
        std::vector<float> y(f.width);
        for (std::size_t r = 0; r < f.rows; ++r) {
            const float* x = f.x.data() + r * f.width;
            if (n == which_norm::rms_norm)
                attn::rms_norm_rows_with(k, x, 1, f.width, f.weight.data(), f.eps[r], y.data());
            else
                attn::layer_norm_rows_with(k, x, 1, f.width, f.weight.data(),
                                           n == which_norm::layer_norm ? f.bias.data() : nullptr, f.eps[r], y.data());
            std::size_t values = 0;
            std::int64_t worst = 0;
            for (std::size_t j = 0; j < f.width; ++j) {
                if (bits(y[j]) == bits(expected[r * f.width + j])) continue;
                ++values;
                worst = std::max(worst, ulps_apart(y[j], expected[r * f.width + j]));
                d.worst_abs = std::max(d.worst_abs, std::abs(static_cast<double>(y[j]) - expected[r * f.width + j]));
            }
            ++d.rows;
            if (values == 0) continue;
            ++d.differing;
            d.worst_ulp = std::max(d.worst_ulp, worst);
            if (d.differing <= 5)
                d.where += "w" + std::to_string(f.width) + " row " + std::to_string(r) + ": " + std::to_string(values) +
                           " values, " + std::to_string(worst) + " ulp; ";
        }
    }
    return d;
}

std::vector<attn::norm_kernel> kernels_here() {
    std::vector<attn::norm_kernel> ks{attn::norm_kernel::plain};
    if (attn::norm_kernel_runs_here(attn::norm_kernel::avx2))
        ks.push_back(attn::norm_kernel::avx2);
    else
        MESSAGE("this CPU does not run the AVX2 build of the norms: only the plain one compared");
    return ks;
}

/// "avx2 layer_norm: 3 of 185 rows differ from torch, at most 2 ulp (w17 row 1: ...)", shown when a check fails.
std::string summary(attn::norm_kernel k, const std::string& what, const row_differences& d) {
    return std::string(k == attn::norm_kernel::avx2 ? "avx2 " : "plain ") + what + ": " + std::to_string(d.differing) +
           " of " + std::to_string(d.rows) + " rows differ from torch, at most " + std::to_string(d.worst_ulp) +
           " ulp, " + std::to_string(d.worst_abs) + " apart (" + d.where + ")";
}

/// LayerNorm of `x` (one row) with unit weight and no bias: (x - mean)·rstd.
std::vector<float> plain_layer_norm(const std::vector<float>& x, float eps) {
    std::vector<float> ones(x.size(), 1.0f), y(x.size());
    attn::layer_norm_rows(x.data(), 1, x.size(), ones.data(), nullptr, eps, y.data());
    return y;
}

}  // namespace

TEST_SUITE("norms") {

TEST_CASE("the fixtures cover the widths torch's kernels treat differently") {
    std::vector<std::size_t> widths;
    for (const norm_fixture& f : norm_fixtures()) widths.push_back(f.width);
    // fewer than 8 (no vector), tails of 1 and 7, chunks of 16 vectors, the sum's level step
    // of 16·4 vectors, the moments' cascade of 32 and 64 chunks, the models' 768 and 4096
    for (std::size_t w : {1u, 2u, 7u, 8u, 9u, 15u, 127u, 128u, 129u, 511u, 512u, 513u, 768u, 1000u, 1024u, 4096u, 8192u})
        CHECK_MESSAGE(std::count(widths.begin(), widths.end(), w) == 1, "width " << w);
    CHECK(norm_fixtures().size() >= 30);
}

TEST_CASE("layer_norm_rows: torch's bits for every width, with a bias and without") {
    for (attn::norm_kernel k : kernels_here()) {
        for (which_norm n : {which_norm::layer_norm, which_norm::layer_norm_no_bias}) {
            const row_differences d = compare_with_torch(n, k);
            const std::string differences =
                summary(k, n == which_norm::layer_norm ? "layer_norm" : "layer_norm, bias None", d);
            CAPTURE(differences);
            CHECK(d.rows >= 170);
            CHECK(d.differing == 0);
        }
    }
}

TEST_CASE("rms_norm_rows: torch's bits for every width (Hugging Face's LlamaRMSNorm)") {
    for (attn::norm_kernel k : kernels_here()) {
        const row_differences d = compare_with_torch(which_norm::rms_norm, k);
        const std::string differences = summary(k, "rms_norm", d);
        CAPTURE(differences);
        CHECK(d.rows >= 170);
        CHECK(d.differing == 0);
    }
}

TEST_CASE("rows are independent: all rows at once give each row's bits") {
    for (const norm_fixture& f : norm_fixtures()) {
        CAPTURE(f.width);
        const float eps = f.eps[0];
        std::vector<float> together(f.x.size()), alone(f.width);
        attn::layer_norm_rows(f.x.data(), f.rows, f.width, f.weight.data(), f.bias.data(), eps, together.data());
        for (std::size_t r = 0; r < f.rows; ++r) {
            attn::layer_norm_rows(f.x.data() + r * f.width, 1, f.width, f.weight.data(), f.bias.data(), eps, alone.data());
            CHECK(std::equal(alone.begin(), alone.end(), together.begin() + static_cast<std::ptrdiff_t>(r * f.width),
                             [](float a, float b) { return bits(a) == bits(b); }));
        }
        attn::rms_norm_rows(f.x.data(), f.rows, f.width, f.weight.data(), eps, together.data());
        for (std::size_t r = 0; r < f.rows; ++r) {
            attn::rms_norm_rows(f.x.data() + r * f.width, 1, f.width, f.weight.data(), eps, alone.data());
            CHECK(std::equal(alone.begin(), alone.end(), together.begin() + static_cast<std::ptrdiff_t>(r * f.width),
                             [](float a, float b) { return bits(a) == bits(b); }));
        }
    }
}

TEST_CASE("both builds give the same bits on values torch's fixtures lack: inf, NaN, huge, subnormal") {
    // NaN's payload may differ: which of two NaNs an add passes on depends on operand order
    const auto same_or_both_nan = [](float a, float b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); };
    const std::vector<attn::norm_kernel> ks = kernels_here();
    if (ks.size() < 2) return;
    const float big = std::numeric_limits<float>::max();
    const std::vector<std::vector<float>> rows = {
        {1.0f, inf, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f},
        {not_a_number, 1.0f, 2.0f},
        {big, -big, big, big, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f, 10.0f, 11.0f, 12.0f, 13.0f},
        {1e-40f, -1e-42f, 3e-39f, 0.0f, -0.0f, 1e-45f, 2e-44f, 5e-41f, 7e-40f},
        {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
    };
    for (const std::vector<float>& x : rows) {
        CAPTURE(x.size());
        std::vector<float> weight(x.size(), 1.5f), bias(x.size(), -0.25f);
        std::vector<float> plain(x.size()), fast(x.size());
        for (const float eps : {1e-5f, 0.0f}) {
            attn::layer_norm_rows_with(ks[0], x.data(), 1, x.size(), weight.data(), bias.data(), eps, plain.data());
            attn::layer_norm_rows_with(ks[1], x.data(), 1, x.size(), weight.data(), bias.data(), eps, fast.data());
            for (std::size_t j = 0; j < x.size(); ++j) CHECK(same_or_both_nan(plain[j], fast[j]));
            attn::rms_norm_rows_with(ks[0], x.data(), 1, x.size(), weight.data(), eps, plain.data());
            attn::rms_norm_rows_with(ks[1], x.data(), 1, x.size(), weight.data(), eps, fast.data());
            for (std::size_t j = 0; j < x.size(); ++j) CHECK(same_or_both_nan(plain[j], fast[j]));
        }
    }
}

TEST_CASE("small cases worked by hand") {
    // x = [1, 2, 3, 4]: mean 2.5, variance 1.25, (x - 2.5)/sqrt(1.25)
    const std::vector<float> y = plain_layer_norm({1.0f, 2.0f, 3.0f, 4.0f}, 0.0f);
    const double s = 1.0 / std::sqrt(1.25);
    for (std::size_t j = 0; j < 4; ++j) CHECK(y[j] == doctest::Approx((j + 1.0 - 2.5) * s).epsilon(1e-6));
    // weight and bias: y·w + b
    const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f}, w{2.0f, 2.0f, -1.0f, 0.0f}, b{0.5f, 0.0f, 0.0f, 7.0f};
    std::vector<float> out(4);
    attn::layer_norm_rows(x.data(), 1, 4, w.data(), b.data(), 0.0f, out.data());
    CHECK(out[0] == doctest::Approx(-1.5 * s * 2 + 0.5).epsilon(1e-6));
    CHECK(out[2] == doctest::Approx(-0.5 * s).epsilon(1e-6));
    CHECK(out[3] == 7.0f);
    // one value: x - mean = 0, so y = bias (eps 0.25: rstd = 2 and x·rstd exact, so the fused
    // x·rstd - rstd·mean leaves no rounding residue); RMSNorm of one value x is x/|x| when eps = 0
    const float one = 5.0f, unit = 1.0f, half = 0.5f;
    float single = 0.0f;
    attn::layer_norm_rows(&one, 1, 1, &unit, &half, 0.25f, &single);
    CHECK(single == 0.5f);
    attn::rms_norm_rows(&one, 1, 1, &unit, 0.0f, &single);
    CHECK(single == 1.0f);
    // RMSNorm of [3, 4]: mean of squares 12.5
    const std::vector<float> p{3.0f, 4.0f}, ones{1.0f, 1.0f};
    std::vector<float> r(2);
    attn::rms_norm_rows(p.data(), 1, 2, ones.data(), 0.0f, r.data());
    CHECK(r[0] == doctest::Approx(3.0 / std::sqrt(12.5)).epsilon(1e-6));
    CHECK(r[1] == doctest::Approx(4.0 / std::sqrt(12.5)).epsilon(1e-6));
    // eps counts: a row of zeros stays zeros, and a tiny row is damped, not blown up
    const std::vector<float> tiny{1e-4f, -1e-4f};
    attn::layer_norm_rows(tiny.data(), 1, 2, ones.data(), nullptr, 1e-5f, r.data());
    CHECK(r[0] == doctest::Approx(1e-4 / std::sqrt(1e-8 + 1e-5)).epsilon(1e-5));
}

TEST_CASE("identities: LayerNorm rows have mean 0 and variance 1, RMSNorm rows mean square 1") {
    for (const norm_fixture& f : norm_fixtures()) {
        if (f.width < 2) continue;
        for (std::size_t r = 0; r < f.rows; ++r) {
            const std::vector<float> x(f.x.begin() + static_cast<std::ptrdiff_t>(r * f.width),
                                       f.x.begin() + static_cast<std::ptrdiff_t>((r + 1) * f.width));
            double mean = 0.0, variance = 0.0;
            for (float v : x) mean += v;
            mean /= static_cast<double>(f.width);
            for (float v : x) variance += (v - mean) * (v - mean);
            variance /= static_cast<double>(f.width);
            if (variance < 1e-4) continue;  // the tiny and constant rows: eps rules there
            CAPTURE(f.width);
            CAPTURE(r);
            const std::vector<float> y = plain_layer_norm(x, 1e-12f);
            double y_mean = 0.0, y_var = 0.0;
            for (float v : y) y_mean += v;
            y_mean /= static_cast<double>(f.width);
            for (float v : y) y_var += (v - y_mean) * (v - y_mean);
            y_var /= static_cast<double>(f.width);
            CHECK(std::abs(y_mean) < 1e-4);
            CHECK(y_var == doctest::Approx(1.0).epsilon(1e-4));

            std::vector<float> ones(f.width, 1.0f), z(f.width);
            attn::rms_norm_rows(x.data(), 1, f.width, ones.data(), 1e-12f, z.data());
            double squares = 0.0;
            for (float v : z) squares += static_cast<double>(v) * v;
            CHECK(squares / static_cast<double>(f.width) == doctest::Approx(1.0).epsilon(1e-4));
        }
    }
}

TEST_CASE("the model fixtures' norm stage: GPT-2's ln_1, BERT's embeddings.LayerNorm, Llama's RMSNorm") {
    // make_model_fixtures.py's stage files hold input.x, norm.weight (norm.bias) and norm.x
    // as each model's Hugging Face code computes them; eps from the model's config.json
    std::size_t files = 0;
    for (const char* model : {"gpt2", "bert", "llama"}) {
        const std::string dir = reference_path(std::string("models/") + model + "/");
        const nlohmann::json config = read_json(dir + "config.json");
        const bool rms = config.contains("rms_norm_eps");
        const float eps = config.value("rms_norm_eps", config.value("layer_norm_epsilon", config.value("layer_norm_eps", -1.0f)));
        REQUIRE(eps > 0.0f);
        for (const char* stages : {"stages-layer1.npz", "stages-layer1-f16.npz", "stages-layer1-bf16.npz",
                                   "stages-layer0-tokens.npz"}) {
            CAPTURE(model);
            CAPTURE(stages);
            const auto t = attn::read_npz(dir + stages, stages);
            if (!t.count("norm.x")) continue;
            ++files;
            const std::vector<float> x = values_of(t.at("input.x")), weight = values_of(t.at("norm.weight")),
                                     expected = values_of(t.at("norm.x"));
            const std::size_t width = weight.size(), rows = x.size() / width;
            std::vector<float> y(x.size());
            if (rms) {
                attn::rms_norm_rows(x.data(), rows, width, weight.data(), eps, y.data());
            } else {
                const std::vector<float> bias = values_of(t.at("norm.bias"));
                attn::layer_norm_rows(x.data(), rows, width, weight.data(), bias.data(), eps, y.data());
            }
            std::size_t differ = 0;
            for (std::size_t i = 0; i < y.size(); ++i) differ += bits(y[i]) != bits(expected[i]);
            CHECK(differ == 0);
        }
    }
    CHECK(files >= 9);  // gpt2 and llama: all four; bert: from its tokens (embeddings.LayerNorm)
}

TEST_CASE("bias null is bias zeros, bit for bit") {
    for (const norm_fixture& f : norm_fixtures()) {
        CAPTURE(f.width);
        std::vector<float> zeros(f.width, 0.0f), with(f.x.size()), without(f.x.size());
        attn::layer_norm_rows(f.x.data(), f.rows, f.width, f.weight.data(), zeros.data(), 1e-5f, with.data());
        attn::layer_norm_rows(f.x.data(), f.rows, f.width, f.weight.data(), nullptr, 1e-5f, without.data());
        CHECK(std::equal(with.begin(), with.end(), without.begin(), [](float a, float b) { return bits(a) == bits(b); }));
    }
}

}  // TEST_SUITE
