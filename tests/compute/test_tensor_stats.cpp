// tensor_stats: hand-worked small tensors, the identities of entropy (one-hot 0, uniform
// ln n), -inf and NaN counted and left out of the mean, rows in any order or blocks giving
// the same numbers as the whole tensor, and Var(q·k) ≈ dk on a large random run.
#include <cmath>
#include <limits>
#include <vector>

#include <doctest/doctest.h>
#include <xtensor/xarray.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/tensor_stats.hpp"

namespace {

constexpr float stats_inf = std::numeric_limits<float>::infinity();
constexpr float stats_nan = std::numeric_limits<float>::quiet_NaN();

attn::tensor stats_tensor(std::vector<std::size_t> shape, const std::vector<float>& values) {
    auto x = xt::xarray<float>::from_shape(shape);
    std::copy(values.begin(), values.end(), x.begin());
    std::vector<std::string> dims(shape.size(), "d");
    return attn::tensor("t", dims, std::move(x));
}

/// A sink that hands everything to a stage_stats and keeps the stats of `wanted` (stage.tensor).
class stats_recorder : public attn::stage_sink {
public:
    stats_recorder(attn::stage_id wanted, std::size_t index) : wanted_(wanted), index_(index) {}
    void begin(const attn::trace& so_far, const attn::stage& s) override {
        stats_.begin(so_far, s);
        current_ = s.id();
        if (!s.in_rows()) take();
    }
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) override {
        stats_.rows(index, first_row, count, data);
    }
    void end(const attn::trace&, const attn::stage& s) override {
        if (s.in_rows()) take();
    }
    attn::tensor_stats result;
    bool seen = false;

private:
    void take() {
        if (current_ != wanted_) return;
        result = stats_.of(index_);
        seen = true;
    }
    attn::stage_stats stats_;
    attn::stage_id wanted_, current_ = attn::stage_id::input;
    std::size_t index_;
};

}  // namespace

TEST_SUITE("tensor_stats") {

TEST_CASE("min, max, mean and torch.std's unbiased std of a small tensor, worked by hand") {
    const attn::tensor_stats s = attn::stats_of(stats_tensor({2, 3}, {1, 2, 3, 4, 5, 6}), attn::stats_kind::plain);
    CHECK(s.count == 6);
    CHECK(s.finite == 6);
    CHECK(s.min == 1);
    CHECK(s.max == 6);
    CHECK(s.mean == doctest::Approx(3.5).epsilon(1e-15));
    CHECK(s.std == doctest::Approx(std::sqrt(17.5 / 5)).epsilon(1e-15));  // Σ(x - 3.5)² = 17.5, n - 1 = 5
    CHECK(s.zeros == 0);
    CHECK(s.nans + s.pos_infs + s.neg_infs == 0);
}

TEST_CASE("-inf, inf and NaN are counted and left out of min, max, mean and std") {
    const attn::tensor_stats s = attn::stats_of(
        stats_tensor({2, 4}, {0, -stats_inf, 2, stats_nan, stats_inf, 4, 0, -2}), attn::stats_kind::plain);
    CHECK(s.count == 8);
    CHECK(s.finite == 5);  // 0 2 4 0 -2: mean 0.8, Σ(x - 0.8)² = 20.8
    CHECK(s.min == -2);
    CHECK(s.max == 4);
    CHECK(s.mean == doctest::Approx(0.8).epsilon(1e-15));
    CHECK(s.std == doctest::Approx(std::sqrt(20.8 / 4)).epsilon(1e-15));
    CHECK(s.zeros == 2);
    CHECK(s.nans == 1);
    CHECK(s.pos_infs == 1);
    CHECK(s.neg_infs == 1);
}

TEST_CASE("a tensor of one finite value has no std, as torch.std; none finite has no mean") {
    const attn::tensor_stats one = attn::stats_of(stats_tensor({3}, {-stats_inf, 7, -stats_inf}), attn::stats_kind::plain);
    CHECK(one.mean == 7);
    CHECK(std::isnan(one.std));
    const attn::tensor_stats none = attn::stats_of(stats_tensor({2}, {-stats_inf, stats_nan}), attn::stats_kind::plain);
    CHECK(none.finite == 0);
    CHECK(std::isnan(none.mean));
    CHECK(std::isnan(none.min));
}

TEST_CASE("entropy and largest weight of each row, worked by hand") {
    // [1,5,4]: half and half, one-hot, uniform over 4, (0.1, 0.2, 0.7), and a NaN row
    const attn::tensor_stats s = attn::stats_of(stats_tensor({1, 5, 4}, {0.5f, 0.5f, 0, 0,  //
                                                                          1, 0, 0, 0,        //
                                                                          0.25f, 0.25f, 0.25f, 0.25f,
                                                                          0.1f, 0.2f, 0.7f, 0,  //
                                                                          stats_nan, stats_nan, stats_nan, stats_nan}),
                                                attn::stats_kind::weights);
    REQUIRE(s.entropy.size() == 5);
    CHECK(s.row_shape == attn::tensor_shape{1, 5});
    CHECK(s.entropy[0] == doctest::Approx(std::log(2.0)).epsilon(1e-12));
    CHECK(s.entropy[1] == 0);  // one-hot: 0·ln 0 counts 0
    CHECK(s.entropy[2] == doctest::Approx(std::log(4.0)).epsilon(1e-12));  // uniform over n: ln n
    const double p1 = 0.1f, p2 = 0.2f, p3 = 0.7f;  // the float32 weights
    CHECK(s.entropy[3] == doctest::Approx(-(p1 * std::log(p1) + p2 * std::log(p2) + p3 * std::log(p3))).epsilon(1e-12));
    CHECK(std::isnan(s.entropy[4]));
    // the largest weight and its key, as max(dim=-1): the first of equals, a NaN wins
    CHECK(s.largest[0] == 0.5f);
    CHECK(s.largest_key[0] == 0);
    CHECK(s.largest_key[1] == 0);
    CHECK(s.largest[3] == 0.7f);
    CHECK(s.largest_key[3] == 2);
    CHECK(std::isnan(s.largest[4]));
    CHECK(s.largest_key[4] == 0);
    // the means leave the NaN row out; a uniform row over the same keys: ln 2, ln 1, ln 4, ln 3
    CHECK(s.rows_in_means == 4);
    CHECK(s.mean_entropy == doctest::Approx((std::log(2.0) + std::log(4.0) + s.entropy[3]) / 4).epsilon(1e-12));
    CHECK(s.uniform_entropy == doctest::Approx((std::log(2.0) + std::log(4.0) + std::log(3.0)) / 4).epsilon(1e-12));
    CHECK(s.nans == 4);
    CHECK(s.zeros == 6);
}

TEST_CASE("rows in any order and in blocks give the whole tensor's numbers") {
    attn::torch_generator g(3);
    std::vector<float> values(6 * 5);
    g.randn(values.data(), values.size());
    values[7] = -stats_inf;
    const attn::tensor_stats whole = attn::stats_of(stats_tensor({2, 3, 5}, values), attn::stats_kind::weights);
    attn::stats_accumulator acc(attn::stats_kind::weights, {2, 3, 5});
    acc.add_rows(4, 2, values.data() + 4 * 5);  // rows 4-5, then 0, then 1-3
    acc.add_rows(0, 1, values.data());
    acc.add_rows(1, 3, values.data() + 5);
    const attn::tensor_stats s = acc.result();
    CHECK(s.finite == whole.finite);
    CHECK(s.neg_infs == 1);
    CHECK(s.min == whole.min);
    CHECK(s.max == whole.max);
    CHECK(s.mean == doctest::Approx(whole.mean).epsilon(1e-14));
    CHECK(s.std == doctest::Approx(whole.std).epsilon(1e-14));
    CHECK(s.entropy.size() == 6);
    for (std::size_t r = 0; r < 6; ++r) {
        CHECK(s.largest[r] == whole.largest[r]);
        CHECK(s.largest_key[r] == whole.largest_key[r]);
    }
}

TEST_CASE("a strided view's statistics are its elements', not its storage's order") {
    const attn::tensor t = stats_tensor({2, 3}, {1, 0, 0, 0, 0, 2});
    // t.T [3,2], strides [1,3]: rows (1, 0), (0, 0), (0, 2); as weights, row 0's largest is key 0, row 2's key 1
    const attn::tensor view = attn::as_strided(t, "x.t", "t", {"a", "b"}, {3, 2}, {1, 3});
    const attn::tensor_stats s = attn::stats_of(view, attn::stats_kind::weights);
    CHECK(s.largest_key == std::vector<std::int64_t>{0, 0, 1});
    CHECK(s.largest == std::vector<float>{1, 0, 2});
}

TEST_CASE("stats_kind: weights for softmax and dropout weights, scores for scores and scaled") {
    CHECK(attn::stats_kind_of(attn::stage_id::softmax, "weights") == attn::stats_kind::weights);
    CHECK(attn::stats_kind_of(attn::stage_id::dropout, "weights") == attn::stats_kind::weights);
    CHECK(attn::stats_kind_of(attn::stage_id::dropout, "keep") == attn::stats_kind::plain);
    CHECK(attn::stats_kind_of(attn::stage_id::scores, "scores") == attn::stats_kind::scores);
    CHECK(attn::stats_kind_of(attn::stage_id::scaled, "scaled") == attn::stats_kind::scores);
    CHECK(attn::stats_kind_of(attn::stage_id::masked, "masked") == attn::stats_kind::plain);
}

TEST_CASE("streamed in blocks of rows, a stage's statistics are the whole tensor's") {
    attn::config c;
    c.batch = 2;
    c.seq = 7;
    c.kv_seq = 7;
    c.heads = 2;
    c.mask.causal = true;
    const attn::inputs in = attn::draw_inputs(c);
    const attn::trace t = attn::compute_trace(c, in);
    const attn::tensor_stats whole = attn::stats_of(t.find("softmax")->tensors[0], attn::stats_kind::weights);
    stats_recorder streamed(attn::stage_id::softmax, 0);
    attn::stage_plan plan = attn::stage_plan::of({"softmax"});
    plan.layout = attn::plane_layout::in_rows;
    plan.block_rows = 3;
    plan.sink_keeps = false;
    attn::compute_stages(c, in, plan, streamed);
    REQUIRE(streamed.seen);
    const attn::tensor_stats& s = streamed.result;
    CHECK(s.finite == 2 * 2 * 7 * 7);
    CHECK(s.zeros == 2 * 2 * 21);  // the causal mask's 21 keys of each plane
    CHECK(s.mean == doctest::Approx(whole.mean).epsilon(1e-14));
    CHECK(s.std == doctest::Approx(whole.std).epsilon(1e-14));
    CHECK(s.mean_entropy == doctest::Approx(whole.mean_entropy).epsilon(1e-14));
    CHECK(s.uniform_entropy == doctest::Approx(whole.uniform_entropy).epsilon(1e-14));
    CHECK(s.entropy.size() == 2 * 2 * 7);
    // a causal row i spreads over i + 1 keys: the uniform comparison is the mean of ln(i + 1)
    double uniform = 0;
    for (int i = 0; i < 7; ++i) uniform += std::log(i + 1.0);
    CHECK(s.uniform_entropy == doctest::Approx(uniform / 7).epsilon(1e-12));
}

TEST_CASE("Var(q·k) ≈ dk for q, k of unit variance, and scaled's variance ≈ 1") {
    attn::config c;
    c.batch = 1;
    c.heads = 4;
    c.seq = c.kv_seq = 256;
    c.d_model = c.d_in = c.d_kv_in = 256;  // dk = 64
    c.sources.from_projections = true;
    const std::size_t S = 256, D = 256;
    attn::torch_generator g(7);
    attn::projections qkv{xt::xarray<float>::from_shape({1, S, D}), xt::xarray<float>::from_shape({1, S, D}),
                          xt::xarray<float>::from_shape({1, S, D})};
    g.randn(qkv.q.data(), qkv.q.size());
    g.randn(qkv.k.data(), qkv.k.size());
    g.randn(qkv.v.data(), qkv.v.size());
    attn::given_inputs given;
    given.qkv = std::move(qkv);
    const attn::inputs in = attn::draw_inputs(c, std::move(given));
    stats_recorder scores(attn::stage_id::scores, 0), scaled(attn::stage_id::scaled, 0);
    attn::compute_stages(c, in, attn::stage_plan::of({"scores"}), scores);
    attn::compute_stages(c, in, attn::stage_plan::of({"scaled"}), scaled);
    REQUIRE(scores.seen);
    REQUIRE(scaled.seen);
    CHECK(scores.result.head_dim == 64);
    const double ratio = scores.result.var() / 64;
    CHECK(ratio > 0.85);
    CHECK(ratio < 1.15);
    CHECK(scaled.result.var() > 0.85);
    CHECK(scaled.result.var() < 1.15);
    // √64 = 8 divides exactly: scaled's variance is scores' / dk
    CHECK(scaled.result.var() == doctest::Approx(ratio).epsilon(1e-12));
}

}  // TEST_SUITE("tensor_stats")
