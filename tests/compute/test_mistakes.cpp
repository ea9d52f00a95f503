// mistakes: attn trace --mistake ID computes the run with a common mistake made on purpose.
//
// Against PyTorch: each wrong stage equals the one tests/reference/make_mistake_fixtures.py
// computes with plain torch ops and the mistake written as a student writes it (within 1e-5:
// the ops are the same, the BLAS kernels may sum in another order). Against identities:
// softmax over dim=-2 makes each column sum to 1, the inverted mask is the right one negated,
// no scaling leaves the scores as they are; every stage before the mistake is untouched.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/forward_steps.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/teach/advice.hpp"
#include "attn/teach/stage_text.hpp"
#include "support.hpp"

namespace {

using attn::mistake;

xt::xarray<float> values(const attn::trace& t, const std::string& stage, const std::string& tensor) {
    REQUIRE(t.find(stage) != nullptr);
    return xt::xarray<float>(t.find(stage)->at(tensor).values);
}

/// Same shape; every element within 1e-5 + 1e-4·|expected| (NaN with NaN, infinities exactly).
void check_close(const xt::xarray<float>& actual, const xt::xarray<float>& expected, const std::string& label) {
    CAPTURE(label);
    REQUIRE(std::vector<std::size_t>(actual.shape().begin(), actual.shape().end()) ==
            std::vector<std::size_t>(expected.shape().begin(), expected.shape().end()));
    std::size_t bad = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const float a = actual.data()[i], e = expected.data()[i];
        const bool ok = std::isnan(e) ? std::isnan(a)
                        : std::isinf(e) ? a == e
                                        : std::abs(a - e) <= 1e-5 + 1e-4 * std::abs(e);
        if (!ok) ++bad;
    }
    CHECK(bad == 0);
}

attn::config seed24(mistake m = mistake::none, int way = 0) {
    attn::config c;
    c.seed = 24, c.batch = 2, c.seq = c.kv_seq = 5, c.d_model = c.d_in = c.d_kv_in = 8, c.heads = 4;
    c.mask.causal = true;
    c.mistake = m;
    c.mistake_variant = way;
    return c;
}

/// seed24 with dropout in training mode (p = 0.25, seed 3): the dropout mistakes need it.
attn::config seed24_dropout(mistake m = mistake::none) {
    attn::config c = seed24(m);
    c.dropout.p = 0.25, c.dropout.train = true, c.dropout.seed = 3;
    return c;
}

bool is_dropout_mistake(mistake m) {
    return m == mistake::dropout_not_rescaled || m == mistake::dropout_keep_inverted;
}

/// A run that can make `m`: seed24, with dropout for its mistakes, with causal+padding (lengths
/// 3 and 0: batch item 1 has no allowed key) for the mask kinds' and nan_replaced, with a window
/// of 1 for window_off_by_one, with Sq = 2 of Sk = 5 aligned lower-right for causal_misaligned,
/// with 2 kv heads for kv_heads_tiled, with rope in a decoding step (--past 3, dk = 4) for the
/// rope mistakes, with ALiBi in a decoding step for alibi_sign.
attn::config run_making(mistake m) {
    if (is_dropout_mistake(m)) return seed24_dropout(m);
    attn::config c = seed24(m);
    if (m == mistake::window_off_by_one) {
        c.mask.causal = false, c.mask.window = true, c.mask.window_size = 1;
    } else if (m == mistake::causal_misaligned) {  // a KV-cache step: 2 queries over 5 keys, lower-right
        c.seq = 2, c.mask.causal_align = attn::causal_alignment::lower_right;
    } else if (m == mistake::kv_heads_tiled) {  // grouped-query: 2 kv heads for the 4 query heads
        c.kv_heads = 2;
    } else if (m == mistake::rope_positions_from_zero || m == mistake::rope_pairs_mixed) {
        c.seq = 2, c.past = 3, c.kv_seq = 5, c.d_model = c.d_in = c.d_kv_in = 16;  // dk = 4
        c.pos = attn::position_encoding::rope;
    } else if (m == mistake::alibi_sign) {
        c.seq = 2, c.past = 3, c.kv_seq = 5;
        c.pos = attn::position_encoding::alibi;
    } else if (attn::changes_mask_rules(m) || m == mistake::nan_replaced) {
        c.mask.padding = true, c.mask.lengths = {3, 0};
    }
    return c;
}

/// Stage `stage`'s tensor of the run `c`, computed up to that stage only (the plan shows it
/// alone): K·Qᵀ with Sq != Sk (which validate refuses) is whole up to the scaled stage.
xt::xarray<float> stage_of_run(const attn::config& c, const std::string& stage, const std::string& tensor) {
    attn::trace t;
    t.stages.reserve(attn::stage_count);
    attn::trace_keeper keeper(t);
    attn::compute_stages(c, attn::draw_inputs(c), attn::stage_plan::of({stage}), keeper);
    REQUIRE_MESSAGE(t.stages.size() == 1, "no stage " << stage);
    return t.stages[0].at(tensor).values;
}

}  // namespace

TEST_SUITE("mistakes") {
    TEST_CASE("ids: CLI.md's, in its order, and back") {
        const std::vector<std::string> ids{"softmax_axis", "missing_scale", "wrong_scale", "mask_inverted",
                                           "fill_value", "split_without_transpose", "merge_without_transpose",
                                           "weight_not_transposed", "q_k_swapped", "missing_bias",
                                           "dropout_not_rescaled", "dropout_keep_inverted", "weights_transposed",
                                           "mask_not_applied", "mask_or_instead_of_and", "causal_only",
                                           "padding_only", "padding_on_queries", "diagonal_masked",
                                           "window_off_by_one", "masked_after_softmax", "nan_replaced",
                                           "log_softmax", "sigmoid_instead_of_softmax", "scale_multiplied",
                                           "heads_interleaved", "causal_misaligned", "kv_heads_tiled",
                                           "rope_positions_from_zero", "rope_pairs_mixed", "alibi_sign"};
        REQUIRE(attn::all_mistakes().size() == ids.size());
        for (std::size_t i = 0; i < ids.size(); ++i) {
            CHECK(attn::mistake_id(attn::all_mistakes()[i]) == ids[i]);
            CHECK(attn::parse_mistake(ids[i]) == attn::all_mistakes()[i]);
        }
        CHECK(attn::mistake_id(mistake::none) == "none");
        CHECK_FALSE(attn::parse_mistake("unknown").has_value());
        CHECK_FALSE(attn::parse_mistake("softmax").has_value());
    }

    TEST_CASE("each wrong stage is PyTorch's, made with plain torch ops, at the stage made and later ones") {
        int checked = 0;
        for (const auto& a : mistake_fixtures::all()) {
            CAPTURE(a.file);
            attn::config c = a.cfg;
            c.mistake = a.mistake == "none" ? mistake::none : *attn::parse_mistake(a.mistake);
            c.mistake_variant = a.way;
            check_close(stage_of_run(c, a.stage, a.tensor), mistake_fixtures::read(a).values, a.file);
            if (a.mistake != "none") CHECK(attn::info_of(*attn::mistake_stage(c.mistake, a.way)).name == a.made_at);
            ++checked;
        }
        CHECK(checked >= 60);
    }

    TEST_CASE("the stages before the one where the mistake is made are the right run's, bit for bit") {
        for (mistake m : attn::all_mistakes()) {
            CAPTURE(attn::mistake_id(m));
            attn::config right_config = run_making(m);
            right_config.mistake = mistake::none;
            const attn::trace right = run(right_config);
            const attn::trace wrong = run(run_making(m));
            const attn::stage_id made = *attn::mistake_stage(m);
            for (const attn::stage& s : right.stages) {
                if (s.id() >= made) break;
                for (const attn::tensor& x : s.tensors)
                    CHECK(xt::xarray<float>(x.values) == values(wrong, std::string(s.name()), x.name));
            }
            CHECK_FALSE(values(wrong, "output", "out") == values(right, "output", "out"));
        }
    }

    TEST_CASE("softmax_axis: each column (a key over the queries) sums to 1, not each row") {
        const xt::xarray<float> w = values(run(seed24(mistake::softmax_axis)), "softmax", "weights");  // [2,4,5,5]
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t h = 0; h < 4; ++h)
                for (std::size_t j = 0; j < 5; ++j) {
                    float column = 0;
                    for (std::size_t i = 0; i < 5; ++i) column += w(b, h, i, j);
                    CHECK(column == doctest::Approx(1.0f).epsilon(1e-5));
                }
        float row0 = 0;  // row 0 of a causal mask has one key, whose weight is a share of a column
        for (std::size_t j = 0; j < 5; ++j) row0 += w(0, 0, 0, j);
        CHECK(row0 < 0.99f);
        SUBCASE("way 1: over the heads (dim=1)") {
            const xt::xarray<float> wh = values(run(seed24(mistake::softmax_axis, 1)), "softmax", "weights");
            float heads = 0;
            for (std::size_t h = 0; h < 4; ++h) heads += wh(1, h, 3, 2);
            CHECK(heads == doctest::Approx(1.0f).epsilon(1e-5));
        }
    }

    TEST_CASE("missing_scale and wrong_scale: scaled is scores / 1, / √D, / D, / dk") {
        const xt::xarray<float> scores = values(run(seed24()), "scores", "scores");
        CHECK(values(run(seed24(mistake::missing_scale)), "scaled", "scaled") == scores);
        const std::vector<float> divisors{std::sqrt(8.0f), 8.0f, 2.0f};  // D = 8, dk = 2
        for (int way = 0; way < 3; ++way) {
            CAPTURE(way);
            check_close(values(run(seed24(mistake::wrong_scale, way)), "scaled", "scaled"),
                        scores / divisors[static_cast<std::size_t>(way)], "scaled");
        }
    }

    TEST_CASE("mask_inverted: the mask is the right one negated; fill_value: another fill where it is false") {
        const attn::trace right = run(seed24());
        const xt::xarray<float> keep = values(right, "mask", "mask");
        CHECK(values(run(seed24(mistake::mask_inverted)), "mask", "mask") == 1.0f - keep);
        const xt::xarray<float> scaled = values(right, "scaled", "scaled");
        const auto filled = [&](float fill) {  // [B,H,Sq,Sk]: scaled where the mask is true, else fill
            xt::xarray<float> m = scaled;
            for (std::size_t b = 0; b < 2; ++b)
                for (std::size_t h = 0; h < 4; ++h)
                    for (std::size_t i = 0; i < 5; ++i)
                        for (std::size_t j = 0; j < 5; ++j)
                            if (keep(b, 0, i, j) == 0) m(b, h, i, j) = fill;
            return m;
        };
        CHECK(values(run(seed24(mistake::fill_value)), "masked", "masked") == filled(0.0f));
        CHECK(values(run(seed24(mistake::fill_value, 1)), "masked", "masked") == filled(-1e9f));
        attn::config finite = seed24(mistake::fill_value);
        finite.fill = -1e9f;
        CHECK(attn::mistaken_fill(finite, 0) == 0.0f);
        CHECK(std::isinf(attn::mistaken_fill(finite, 1)));
        finite.fill = 0.0f;  // a fill of 0 asked for: the mistake is -inf
        CHECK(std::isinf(attn::mistaken_fill(finite, 0)));
    }

    TEST_CASE("split_without_transpose reads the projections straight as [B,H,S,dk]; merge_without_transpose "
              "reads context straight as [B,Sq,H,dk]") {
        const attn::trace split = run(seed24(mistake::split_without_transpose));
        xt::xarray<float> q = values(split, "projections", "q");  // [2,5,8]
        q.reshape({2, 4, 5, 2});
        CHECK(values(split, "transpose", "q") == q);
        const attn::trace merged = run(seed24(mistake::merge_without_transpose));
        xt::xarray<float> context = values(merged, "context", "context");  // [2,4,5,2]
        context.reshape({2, 5, 4, 2});
        CHECK(values(merged, "merge", "context") == context);
        context.reshape({2, 5, 8});
        CHECK(values(merged, "concat", "concat") == context);
    }

    TEST_CASE("q_k_swapped: the scores are the right ones with each plane transposed") {
        const xt::xarray<float> right = values(run(seed24()), "scores", "scores");
        const xt::xarray<float> swapped = values(run(seed24(mistake::q_k_swapped)), "scores", "scores");
        CHECK(xt::xarray<float>(xt::transpose(swapped, {0, 1, 3, 2})) == right);
    }

    TEST_CASE("dropout_not_rescaled: the kept weights as they are; dropout_keep_inverted: the dropped ones, / (1 - p)") {
        const attn::trace right = run(seed24_dropout());
        const xt::xarray<float> weights = values(right, "softmax", "weights");
        const xt::xarray<float> keep = values(right, "dropout", "keep");
        const float scale = 1.0f / 0.75f;
        const attn::trace plain = run(seed24_dropout(mistake::dropout_not_rescaled));
        const attn::trace inverted = run(seed24_dropout(mistake::dropout_keep_inverted));
        CHECK(values(plain, "dropout", "keep") == keep);
        CHECK(xt::xarray<float>(values(plain, "dropout", "weights")) == xt::xarray<float>(weights * keep));
        const xt::xarray<float> dropped = values(inverted, "dropout", "weights");
        for (std::size_t i = 0; i < weights.size(); ++i)
            CHECK(dropped.data()[i] == weights.data()[i] * (keep.data()[i] != 0.0f ? 0.0f : scale));
        attn::config eval = seed24(mistake::dropout_not_rescaled);
        CHECK(attn::mistake_problem(eval).find("--dropout P with P > 0 and --train") != std::string::npos);
    }

    TEST_CASE("weights_transposed: the context is weightsᵀ·V, plane by plane") {
        const attn::trace wrong = run(seed24(mistake::weights_transposed));
        const xt::xarray<float> weights = values(wrong, "softmax", "weights");  // [2,4,5,5]
        const xt::xarray<float> v = values(wrong, "transpose", "v");            // [2,4,5,2]
        const xt::xarray<float> context = values(wrong, "context", "context");  // [2,4,5,2]
        xt::xarray<float> expected = xt::zeros<float>({2, 4, 5, 2});
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t h = 0; h < 4; ++h)
                for (std::size_t i = 0; i < 5; ++i)
                    for (std::size_t d = 0; d < 2; ++d) {
                        float sum = 0.0f;
                        for (std::size_t j = 0; j < 5; ++j) sum += weights(b, h, j, i) * v(b, h, j, d);
                        expected(b, h, i, d) = sum;
                    }
        check_close(context, expected, "weightsᵀ·V");
        attn::config cross = seed24(mistake::weights_transposed);
        cross.kv_seq = 3;
        CHECK(attn::mistake_problem(cross).find("needs Sq == Sk (here Sq = 5, Sk = 3)") != std::string::npos);
    }

    TEST_CASE("the warning on the stage where it is made, and the formula, say it is on purpose") {
        const attn::config axis = seed24(mistake::softmax_axis);
        const attn::warning_list warnings = attn::run_advice(axis);
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0].stage == "softmax");
        CHECK(warnings[0].text ==
              "--mistake softmax_axis: softmax over the queries (dim=-2) instead of the keys (dim=-1), on purpose; "
              "every later stage follows from it");
        CHECK(attn::stage_formula(axis, "softmax") ==
              "weights = softmax(masked, dim=-2): over the queries, not the keys (--mistake softmax_axis, on purpose)");
        CHECK(attn::stage_formula(axis, "scaled") == "Q·Kᵀ / √dk");
        const attn::config w = seed24(mistake::weight_not_transposed, 1);
        CHECK(attn::stage_formula(w, "output") ==
              "out = concat·W_o + b_o: W_o not transposed (--mistake weight_not_transposed, on purpose)");
        const attn::warning_list said = attn::run_advice(w);
        CHECK(std::count_if(said.begin(), said.end(), [](const attn::warning& x) { return x.stage == "projections"; }) == 1);
    }

    TEST_CASE("a mistake the run cannot make is a usage error that says why") {
        attn::config c = seed24(mistake::weight_not_transposed);
        c.d_in = c.d_kv_in = 6;
        CHECK_THROWS_WITH_AS(attn::validate(c),
                             "--mistake weight_not_transposed: x·W_q multiplies x [B,S,Din] = [2,5,6] by W_q [D,Din] = "
                             "[8,6], which needs Din == D (here Din = 6, D = 8); PyTorch stops with \"mat1 and mat2 "
                             "shapes cannot be multiplied (10x6 and 8x6)\". Give --d-in 8 to see this mistake",
                             attn::usage_error);
        c.mistake_variant = 2;  // the output projection only: D == D always
        CHECK_NOTHROW(attn::validate(c));
        attn::config cross = seed24(mistake::q_k_swapped);
        cross.kv_seq = 3;
        CHECK(attn::mistake_problem(cross).find("when Sq != Sk (here Sq = 5, Sk = 3)") != std::string::npos);
        attn::config unmasked = seed24(mistake::mask_inverted);
        unmasked.mask.causal = false;
        CHECK(attn::mistake_problem(unmasked) ==
              "it needs a mask (--mask, --mask-file or --key-padding-mask): without one nothing is masked");
        attn::config no_bias = seed24(mistake::missing_bias);
        no_bias.qkv_bias = false;
        CHECK(attn::mistake_problem(no_bias).find("--no-qkv-bias") != std::string::npos);
        no_bias.mistake_variant = 2;  // b_o is still there
        CHECK(attn::mistake_problem(no_bias).empty());
        CHECK(attn::mistake_problem(seed24(mistake::softmax_axis, 2)) == "there is no way 2 to make it");
    }

    TEST_CASE("the mask kinds' mistakes: tril(-1), OR for AND, one kind alone, padding on the rows, a window off by one") {
        // causal+padding, lengths 3 and 0, Sq = Sk = 5: [b,0,i,j] = (j <= i) & (j < length b)
        const auto mask_of = [](mistake m) { return values(run(run_making(m)), "mask", "mask"); };
        const auto want = [](auto rule) {
            xt::xarray<float> m = xt::zeros<float>({2, 1, 5, 5});
            const int lengths[2] = {3, 0};
            for (int b = 0; b < 2; ++b)
                for (int i = 0; i < 5; ++i)
                    for (int j = 0; j < 5; ++j) m(b, 0, i, j) = rule(i, j, lengths[b]) ? 1.0f : 0.0f;
            return m;
        };
        CHECK(mask_of(mistake::diagonal_masked) == want([](int i, int j, int n) { return j < i && j < n; }));
        CHECK(mask_of(mistake::mask_or_instead_of_and) == want([](int i, int j, int n) { return j <= i || j < n; }));
        CHECK(mask_of(mistake::causal_only) == want([](int i, int j, int) { return j <= i; }));
        CHECK(mask_of(mistake::padding_only) == want([](int, int j, int n) { return j < n; }));
        CHECK(mask_of(mistake::padding_on_queries) == want([](int i, int j, int n) { return j <= i && i < n; }));
        attn::config window = run_making(mistake::window_off_by_one);  // --window 1, B = 1
        for (int way = 0; way < 2; ++way) {
            window.mistake_variant = way;
            const xt::xarray<float> m = values(run(window), "mask", "mask");
            for (int i = 0; i < 5; ++i)
                for (int j = 0; j < 5; ++j) CHECK(m(0, 0, i, j) == (std::abs(i - j) <= way * 2 ? 1.0f : 0.0f));
        }
        attn::config step = run_making(mistake::causal_misaligned);  // Sq = 2, Sk = 5: tril(ones, 0), not tril(ones, 3)
        const xt::xarray<float> upper_left = values(run(step), "mask", "mask");
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 5; ++j) CHECK(upper_left(0, 0, i, j) == (j <= i ? 1.0f : 0.0f));
        CHECK(attn::mistake_problem(seed24(mistake::causal_misaligned)).find("Sq == Sk") != std::string::npos);
        attn::config one_kind = seed24(mistake::mask_or_instead_of_and);
        CHECK(attn::mistake_problem(one_kind).find("two mask kinds") != std::string::npos);
        CHECK(attn::mistake_problem(seed24(mistake::padding_on_queries)).find("padding mask") != std::string::npos);
        CHECK(attn::mistake_problem(seed24(mistake::window_off_by_one)).find("--window") != std::string::npos);
    }

    TEST_CASE("the softmax's stand-ins: log_softmax is its log, masked_after_softmax its masked part, nan_replaced its NaN zeroed") {
        const attn::config masks = run_making(mistake::nan_replaced);  // causal+padding, lengths 3 and 0
        attn::config plain = masks;
        plain.mistake = mistake::none;
        const xt::xarray<float> w = values(run(plain), "softmax", "weights");
        const xt::xarray<float> mask = values(run(plain), "mask", "mask");
        const auto with = [&](mistake m) {
            attn::config c = masks;
            c.mistake = m;
            return values(run(c), "softmax", "weights");
        };
        const xt::xarray<float> logs = with(mistake::log_softmax), nan0 = with(mistake::nan_replaced),
                                after = with(mistake::masked_after_softmax), sig = with(mistake::sigmoid_instead_of_softmax);
        const xt::xarray<float> masked = values(run(plain), "masked", "masked");
        for (std::size_t e = 0; e < w.size(); ++e) {
            const float x = w.data()[e];
            if (std::isnan(x)) {
                CHECK(nan0.data()[e] == 0.0f);
                CHECK(std::isnan(logs.data()[e]));
            } else {
                CHECK(nan0.data()[e] == x);
                CHECK(std::exp(logs.data()[e]) == doctest::Approx(x).epsilon(1e-5));
            }
            CHECK(sig.data()[e] == doctest::Approx(1.0 / (1.0 + std::exp(-static_cast<double>(masked.data()[e])))));
        }
        const std::size_t sk = 5;
        for (std::size_t row = 0; row < after.size() / sk; ++row) {  // rows of [B,H,Sq,Sk]
            const std::size_t b = row / (4 * 5), i = row % 5;
            float sum = 0.0f;
            bool any_allowed = false;
            for (std::size_t j = 0; j < sk; ++j) {
                const bool allowed = mask(b, 0, i, j) != 0.0f;
                any_allowed |= allowed;
                if (!allowed) CHECK(after.data()[row * sk + j] == 0.0f);
                sum += after.data()[row * sk + j];
            }
            if (i > 0 && any_allowed) CHECK(sum < 1.0f - 1e-3f);  // the masked share is lost
        }
    }

    TEST_CASE("scale_multiplied: scaled = scores · √dk; heads_interleaved: head h of q takes features h, h + H, ...") {
        const attn::trace right = run(seed24());
        const attn::trace times = run(seed24(mistake::scale_multiplied));
        const xt::xarray<float> scores = values(right, "scores", "scores");
        CHECK(values(times, "scaled", "scaled") == xt::xarray<float>(scores * std::sqrt(2.0f)));
        const xt::xarray<float> proj = values(right, "projections", "q");  // [2,5,8]
        const xt::xarray<float> q = values(run(seed24(mistake::heads_interleaved)), "transpose", "q");  // [2,4,5,2]
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t h = 0; h < 4; ++h)
                for (std::size_t s = 0; s < 5; ++s)
                    for (std::size_t d = 0; d < 2; ++d) CHECK(q(b, h, s, d) == proj(b, s, d * 4 + h));
    }

    TEST_CASE("rope_positions_from_zero: cos and sin of positions 0..Sq-1; the cache and the scores among the new tokens unchanged") {
        attn::config wrong_config = run_making(mistake::rope_positions_from_zero);  // N = 3, Sq = 2, Sk = 5
        attn::config right_config = wrong_config;
        right_config.mistake = mistake::none;
        const attn::trace wrong = run(wrong_config), right = run(right_config);
        // the angles at 0 and 1: cos 1 and sin 0 at position 0, cos(θ_i) and sin(θ_i) at 1, θ = 1, 0.01
        const xt::xarray<float> cos = values(wrong, "rope", "cos"), sin = values(wrong, "rope", "sin");  // [2,4]
        const float theta[2] = {1.0f, 0.01f};
        for (std::size_t d = 0; d < 4; ++d) {
            CHECK(cos(0, d) == 1.0f);
            CHECK(sin(0, d) == 0.0f);
            CHECK(cos(1, d) == doctest::Approx(std::cos(theta[d % 2])).epsilon(1e-6));
            CHECK(sin(1, d) == doctest::Approx(std::sin(theta[d % 2])).epsilon(1e-6));
        }
        CHECK(values(wrong, "cache", "k") == values(right, "cache", "k"));  // kept from the steps before, at 0..N-1
        // a score depends on the distance i - j: the new keys' (columns 3, 4) keep theirs, the cached ones' do not
        const xt::xarray<float> s_wrong = values(wrong, "scores", "scores"), s_right = values(right, "scores", "scores");
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t i = 0; i < 2; ++i) {
                for (std::size_t j = 3; j < 5; ++j)
                    CHECK(s_wrong(0, h, i, j) == doctest::Approx(s_right(0, h, i, j)).epsilon(1e-5));
                CHECK(std::abs(s_wrong(0, h, i, 0) - s_right(0, h, i, 0)) > 1e-4f);
            }
        attn::config no_cache = wrong_config;
        no_cache.past = 0, no_cache.seq = no_cache.kv_seq = 5;
        CHECK(attn::mistake_problem(no_cache) ==
              "it needs a decoding step (--past N with N > 0): without a cache the new tokens are at positions "
              "0..Sq-1, where counting from 0 is right");
        no_cache.pos = attn::position_encoding::alibi;
        CHECK(attn::mistake_problem(no_cache) == "it needs rotary positions (--pos rope): without them nothing is rotated");
    }

    TEST_CASE("rope_pairs_mixed: the pairs of the other style, (2i, 2i+1) for (i, i + dk/2) and back, in q, k and the cache") {
        for (const auto style : {attn::rope_pairing::half, attn::rope_pairing::interleaved}) {
            attn::config wrong_config = run_making(mistake::rope_pairs_mixed);  // dk = 4
            wrong_config.rope_style = style;
            const attn::trace wrong = run(wrong_config);
            const xt::xarray<float> cos = values(wrong, "rope", "cos");  // [2,4]
            const xt::xarray<float> before = values(wrong, "transpose", "q"), after = values(wrong, "rope", "q");
            // the pairs rotated together share an angle, and a rotation keeps each pair's length
            const bool interleaved_pairs = style == attn::rope_pairing::half;
            const std::size_t partner[4] = {interleaved_pairs ? 1u : 2u, interleaved_pairs ? 0u : 3u,
                                            interleaved_pairs ? 3u : 0u, interleaved_pairs ? 2u : 1u};
            for (std::size_t s = 0; s < 2; ++s)
                for (std::size_t d = 0; d < 4; ++d) {
                    CHECK(cos(s, d) == cos(s, partner[d]));
                    for (std::size_t h = 0; h < 4; ++h) {
                        const float x0 = before(0, h, s, d), x1 = before(0, h, s, partner[d]);
                        const float y0 = after(0, h, s, d), y1 = after(0, h, s, partner[d]);
                        CHECK(y0 * y0 + y1 * y1 == doctest::Approx(x0 * x0 + x1 * x1).epsilon(1e-5));
                    }
                }
            CHECK(cos(0, 0) != cos(0, partner[0] == 1 ? 2 : 1));  // position 3: angles 3 and 0.03 in one row
            attn::config other = wrong_config;  // the mistake is the other style's right run
            other.mistake = mistake::none;
            other.rope_style = interleaved_pairs ? attn::rope_pairing::interleaved : attn::rope_pairing::half;
            const attn::trace other_run = run(other);
            CHECK(values(wrong, "rope", "q") == values(other_run, "rope", "q"));
            CHECK(values(wrong, "cache", "k") == values(other_run, "cache", "k"));
        }
        attn::config two = run_making(mistake::rope_pairs_mixed);
        two.d_model = two.d_in = two.d_kv_in = 8;  // dk = 2: one pair either way
        CHECK(attn::mistake_problem(two).find("with dk = 2 both pairings rotate the one pair (0, 1)") == 0);
    }

    TEST_CASE("alibi_sign: the bias is the right one negated, +m·(i - j), with +0 where i == j, and biased adds it") {
        attn::config wrong_config = run_making(mistake::alibi_sign);  // N = 3, Sq = 2, Sk = 5, H = 4
        attn::config right_config = wrong_config;
        right_config.mistake = mistake::none;
        const attn::trace wrong = run(wrong_config), right = run(right_config);
        const xt::xarray<float> bias = values(wrong, "alibi", "bias"), want = values(right, "alibi", "bias");
        for (std::size_t e = 0; e < bias.size(); ++e) {
            CHECK(bias.data()[e] == -want.data()[e]);
            const bool minus_zero = std::signbit(bias.data()[e]) && bias.data()[e] == 0.0f;  // torch has +0
            CHECK_FALSE(minus_zero);
        }
        CHECK(bias(0, 0, 1, 0) == 1.0f);  // head 0, m = 1/4: query 4 and key 0, 4 tokens back: +1, not -1
        const xt::xarray<float> scaled = values(wrong, "scaled", "scaled"), biased = values(wrong, "biased", "biased");
        CHECK(biased == xt::xarray<float>(scaled + bias));
        CHECK(attn::mistake_problem(seed24(mistake::alibi_sign)) ==
              "it needs ALiBi's bias (--pos alibi): without it there is no sign to flip");
    }

    TEST_CASE("alibi_sign against PyTorch: the bias of torch's slopes · (i - j), bit for bit") {
        int checked = 0;
        for (const auto& a : mistake_fixtures::all()) {
            if (a.stage != "alibi") continue;
            CAPTURE(a.file);
            attn::config c = a.cfg;
            c.mistake = a.mistake == "none" ? mistake::none : *attn::parse_mistake(a.mistake);
            const xt::xarray<float> got = stage_of_run(c, "alibi", "bias"), want = mistake_fixtures::read(a).values;
            REQUIRE(got.size() == want.size());
            for (std::size_t e = 0; e < got.size(); ++e)
                CHECK(std::memcmp(&got.data()[e], &want.data()[e], sizeof(float)) == 0);
            ++checked;
        }
        CHECK(checked >= 4);  // alibi_sign and the right bias, in two runs
    }
}

namespace {

/// How many of the steps of `a` and `b` differ.
int steps_differing(const attn::forward_steps& a, const attn::forward_steps& b) {
    return int{a.project != b.project} + int{a.transpose != b.transpose} + int{a.pairing != b.pairing} +
           int{a.rope_first != b.rope_first} + int{a.kv_head_of != b.kv_head_of} +
           int{a.score_operands != b.score_operands} + int{a.divisor != b.divisor} + int{a.scale != b.scale} +
           int{a.slopes != b.slopes} + int{a.rules != b.rules} + int{a.fill != b.fill} + int{a.mask != b.mask} +
           int{a.softmax != b.softmax} + int{a.dropout != b.dropout} + int{a.context != b.context} +
           int{a.merge != b.merge} + int{a.project_output != b.project_output};
}

}  // namespace

TEST_CASE("run_steps: PyTorch's steps without a mistake; each way of each mistake swaps in its own") {
    attn::config c;
    const attn::forward_steps reference;
    CHECK(steps_differing(attn::run_steps(c), reference) == 0);
    CHECK((attn::run_steps(c).scale == attn::scale_step));
    CHECK((attn::run_steps(c).softmax == attn::softmax_step));
    std::vector<attn::forward_steps> made;
    for (mistake m : attn::all_mistakes())
        for (int way = 0; way < attn::mistake_variants(m); ++way) {
            c.mistake = m;
            c.mistake_variant = way;
            const attn::forward_steps steps = attn::run_steps(c);
            CAPTURE(attn::mistake_id(m));
            CAPTURE(way);
            // one step; two for weight_not_transposed and missing_bias way 1 (q, k, v and the
            // output) and masked_after_softmax (masked = scaled, then the softmax zeroes)
            const bool two = way == 1 && (m == mistake::weight_not_transposed || m == mistake::missing_bias);
            CHECK(steps_differing(steps, reference) == (two || m == mistake::masked_after_softmax ? 2 : 1));
            for (const attn::forward_steps& other : made) CHECK(steps_differing(steps, other) > 0);
            made.push_back(steps);
        }
}
