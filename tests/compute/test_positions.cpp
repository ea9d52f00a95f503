// --pos by hand (positions.hpp): Press et al.'s slopes written out, a rotation worked by hand,
// the sinusoidal table's first rows, and the identity rope exists for (scores depend on i - j).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/positions.hpp"
#include "attn/compute/rope_frequencies.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/compute/torch_trig.hpp"
#include "attn/io/npz.hpp"
#include "support.hpp"

namespace {

/// a is b or a float32 next to it: SLEEF's cos and sin (torch_trig.hpp) are within 1 ulp of
/// the rounded double values worked by hand here.
bool within_one_ulp(float a, double b) {
    const auto f = static_cast<float>(b);
    return a == f || a == std::nextafter(f, 2.0f) || a == std::nextafter(f, -2.0f);
}

}  // namespace

TEST_SUITE("positions") {

TEST_CASE("alibi slopes: geometric for H a power of 2, interleaved extras otherwise (get_slopes)") {
    CHECK(attn::alibi_slopes(8) == std::vector<float>{0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.0078125f, 0.00390625f});
    CHECK(attn::alibi_slopes(4) == std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f});
    // H = 6: get_slopes(4), then get_slopes(8)[0::2][:2]
    CHECK(attn::alibi_slopes(6) == std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f});
    CHECK(attn::alibi_slopes(1) == std::vector<float>{0.00390625f});
    CHECK(attn::alibi_bias_at(0.25f, 3, 0) == -0.75f);  // -m·(i - j): the key 3 back
    CHECK(attn::alibi_bias_at(0.25f, 1, 3) == 0.5f);
}

TEST_CASE("alibi: the formula line's rule gives get_slopes' slopes for every H, powers of 2 or not") {
    const std::string formula(attn::info_of(attn::stage_id::alibi).formula);
    CHECK(formula.find("m_h = 2^(-8(h+1)/P) for h < P = 2^⌊log2 H⌋, then 2^(-4(2(h-P)+1)/P)") != std::string::npos);
    for (std::int64_t H = 1; H <= 24; ++H) {
        std::int64_t P = 1;
        while (2 * P <= H) P *= 2;
        const std::vector<float> slopes = attn::alibi_slopes(H);
        for (std::int64_t h = 0; h < H; ++h) {
            const double exponent = h < P ? -8.0 * double(h + 1) / double(P) : -4.0 * double(2 * (h - P) + 1) / double(P);
            CAPTURE(H);
            CAPTURE(h);
            CHECK(slopes[std::size_t(h)] == doctest::Approx(std::pow(2.0, exponent)).epsilon(1e-6));
        }
    }
}

TEST_CASE("rope: one pair rotated by hand, half and interleaved") {
    attn::config c;
    c.d_model = 4;
    c.heads = 1;  // dk = 4: inv_freq = 1, 1/100
    const attn::rope_angles a = attn::make_rope_angles(c, 0, 2, c.rope_style);
    CHECK(within_one_ulp(a.cos(1, 0), std::cos(1.0)));
    CHECK(within_one_ulp(a.cos(1, 2), std::cos(1.0)));  // half: i and i + dk/2 share the angle
    CHECK(within_one_ulp(a.sin(1, 1), std::sin(0.01)));
    xt::xarray<float> x = xt::xarray<float>::from_shape({1, 1, 2, 4});
    for (std::size_t e = 0; e < 8; ++e) x.data()[e] = 1.0f;
    const attn::tensor t("q", {"batch", "head", "seq", "head_dim"}, x);
    const xt::xarray<float> r = attn::rotate(t, a, attn::rope_pairing::half);
    CHECK(r(0, 0, 0, 0) == 1.0f);  // position 0: no rotation
    // position 1, pair (0, 2) = (1, 1) by 1 radian: (cos 1 - sin 1, cos 1 + sin 1)
    CHECK(r(0, 0, 1, 0) == doctest::Approx(std::cos(1.0) - std::sin(1.0)).epsilon(1e-6));
    CHECK(r(0, 0, 1, 2) == doctest::Approx(std::cos(1.0) + std::sin(1.0)).epsilon(1e-6));
    c.rope_style = attn::rope_pairing::interleaved;
    const attn::rope_angles b = attn::make_rope_angles(c, 0, 2, c.rope_style);
    CHECK(within_one_ulp(b.cos(1, 1), std::cos(1.0)));  // interleaved: 2i and 2i + 1 share it
    const xt::xarray<float> s = attn::rotate(t, b, attn::rope_pairing::interleaved);
    CHECK(s(0, 0, 1, 0) == doctest::Approx(std::cos(1.0) - std::sin(1.0)).epsilon(1e-6));
    CHECK(s(0, 0, 1, 1) == doctest::Approx(std::cos(1.0) + std::sin(1.0)).epsilon(1e-6));
}

TEST_CASE("torch_cos, torch_sin: each argument's bits whatever its lane (the last n % 8 padded as torch pads them)") {
    std::vector<float> x(13), together(13), alone(1);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 2.0f;
    attn::torch_cos(x.data(), together.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        attn::torch_cos(&x[i], alone.data(), 1);
        CHECK(together[i] == alone[0]);
        CHECK(within_one_ulp(together[i], std::cos(static_cast<double>(x[i]))));
    }
    attn::torch_sin(x.data(), together.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(within_one_ulp(together[i], std::sin(static_cast<double>(x[i]))));
}

TEST_CASE("rope at positions 0..2047: PyTorch's cos and sin to the bit, both styles, dk 6, 8 and 16") {
    // make_rope_long_fixtures.py: past 125 radians SLEEF sends a whole vector of 8 down its
    // slow path, so cos and sin must be taken over torch's own emb [S,dk] (rope.sin[124,0] at dk 8)
    if (!attn::torch_trig_is_sleef()) return;  // rounded doubles: within an ulp (make_position_fixtures.py)
    for (const auto style : {attn::rope_pairing::half, attn::rope_pairing::interleaved})
        for (const std::int64_t dk : {6, 8, 16}) {
            const std::string name = std::string("rope_") + (style == attn::rope_pairing::half ? "half" : "interleaved") +
                                     "_dk" + std::to_string(dk);
            CAPTURE(name);
            const auto torch = attn::read_npz(reference_path("rope_long/" + name + ".npz"), name);
            attn::config c;
            c.d_model = dk;
            c.heads = 1;
            c.rope_style = style;
            const attn::rope_angles a = attn::make_rope_angles(c, 0, 2048, style);
            for (const auto& entry : {std::pair{"cos", &a.cos}, std::pair{"sin", &a.sin}}) {
                const char* const tensor = entry.first;  // not a structured binding: CAPTURE's lambda takes none in clang 14
                const xt::xarray<float>* const mine = entry.second;
                const xt::xarray<float>& want = torch.at(tensor).values;
                REQUIRE(want.shape() == mine->shape());
                std::size_t differ = 0, first = want.size();
                for (std::size_t e = 0; e < want.size(); ++e)
                    if (std::memcmp(&want.data()[e], &mine->data()[e], sizeof(float)) != 0 && differ++ == 0) first = e;
                CAPTURE(tensor);
                CAPTURE(first);
                CHECK(differ == 0);
            }
        }
}

TEST_CASE("sinusoidal: row 0 is sin 0, cos 0; row 1 starts sin 1, cos 1") {
    const xt::xarray<float> pe = attn::sinusoidal_table(0, 2, 4);
    CHECK(pe(0, 0) == 0.0f);
    CHECK(pe(0, 1) == 1.0f);
    CHECK(within_one_ulp(pe(1, 0), std::sin(1.0)));
    CHECK(within_one_ulp(pe(1, 1), std::cos(1.0)));
    CHECK(pe(1, 2) == doctest::Approx(std::sin(0.01)).epsilon(1e-6));  // 10000^(-2/4) = 1/100
}

TEST_CASE("rope: a run's scores with the same q and k at every position depend only on i - j") {
    attn::config c;
    c.seq = c.kv_seq = 6;
    c.pos = attn::position_encoding::rope;
    attn::validate(c);
    attn::inputs in = attn::draw_inputs(c);
    for (std::size_t b = 0; b < in.x.shape()[0]; ++b)  // one token repeated: only the positions differ
        for (std::size_t s = 1; s < in.x.shape()[1]; ++s)
            for (std::size_t d = 0; d < in.x.shape()[2]; ++d) in.x(b, s, d) = in.x(b, 0, d);
    const attn::trace t = attn::compute_trace(c, in);
    const attn::tensor& scores = t.find("scores")->tensors[0];
    for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t i = 1; i < 6; ++i)
            for (std::size_t j = 1; j < 6; ++j)  // (i, j) and (i - 1, j - 1): the same distance
                CHECK(scores.values(0, h, i, j) == doctest::Approx(scores.values(0, h, i - 1, j - 1)).epsilon(1e-5));
    c.pos = attn::position_encoding::none;  // without rope every score of the repeated token is the same
    const attn::trace plain = attn::compute_trace(c, in);
    CHECK(plain.find("scores")->tensors[0].values(0, 0, 0, 5) ==
          doctest::Approx(plain.find("scores")->tensors[0].values(0, 0, 5, 0)).epsilon(1e-6));
    CHECK(scores.values(0, 0, 0, 5) != doctest::Approx(scores.values(0, 0, 5, 0)).epsilon(1e-3));
}

}  // TEST_SUITE("positions")

TEST_CASE("rope_scaling's inverse frequencies are Hugging Face's, bit for bit (linear and llama3)") {
    const nlohmann::ordered_json doc = read_ordered_json(std::string(ATTN_REFERENCE_DIR) + "/rope_scaling/inv_freq.json");
    std::size_t rescaled_in_middle_band = 0;  // llama3 values neither kept nor divided: the smoothing ran
    for (const auto& one : doc.at("cases")) {
        attn::rope_scaling_spec s;
        const bool llama3 = one.at("rope_type") == "llama3";
        s.type = llama3 ? attn::rope_scaling_spec::kind::llama3 : attn::rope_scaling_spec::kind::linear;
        s.factor = one.at("factor").get<double>();
        if (llama3) {
            s.low_freq_factor = one.at("low_freq_factor").get<double>();
            s.high_freq_factor = one.at("high_freq_factor").get<double>();
            s.original_max_positions = one.at("original_max_position_embeddings").get<double>();
        }
        const auto dk = one.at("head_dim").get<std::size_t>();
        const double base = one.at("base").get<double>();
        const std::vector<float> got = attn::rope_inverse_frequencies(base, dk, s);
        const std::vector<float> plain = attn::rope_inverse_frequencies(base, dk);
        const auto want = one.at("inv_freq_bits").get<std::vector<std::uint32_t>>();
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            std::uint32_t bits = 0;
            std::memcpy(&bits, &got[i], sizeof bits);
            CAPTURE(one.at("rope_type").get<std::string>());
            CAPTURE(s.factor);
            CAPTURE(dk);
            CAPTURE(base);
            CAPTURE(i);
            CHECK(bits == want[i]);
            if (llama3 && got[i] != plain[i] && got[i] != plain[i] / static_cast<float>(s.factor)) ++rescaled_in_middle_band;
        }
    }
    CHECK(rescaled_in_middle_band > 0);
}
