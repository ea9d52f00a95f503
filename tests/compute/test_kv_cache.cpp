// A decoding step with a KV cache (--past N) and grouped-query heads (--kv-heads G), against
// identities that need no PyTorch: the step's rows are the last rows of the full causal pass over
// all N + Sq tokens (the same seed draws the same weights and the same x), append is the cache
// and the new keys one after the other, repeat_kv gives query head h the kv head h // (H/G).
// The numbers themselves are PyTorch's fixtures' (test_fixtures.cpp: past_*, kv_heads_*).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/compute/trace.hpp"
#include "support.hpp"

namespace {

attn::config decoding_step(std::int64_t past, std::int64_t seq, std::int64_t kv_heads = 0) {
    attn::config c;
    c.seed = 7;
    c.batch = 2;
    c.seq = seq;
    c.past = past;
    c.kv_seq = past + seq;
    c.d_model = 16;
    c.heads = 4;
    c.d_in = c.d_kv_in = 16;
    c.kv_heads = kv_heads;
    c.mask.causal = true;
    c.mask.causal_align = attn::causal_alignment::lower_right;
    return c;
}

/// The full causal pass over all N + Sq tokens the step sees.
attn::config full_pass(const attn::config& step) {
    attn::config c = step;
    c.past = 0;
    c.seq = c.kv_seq = step.past + step.seq;
    c.mask.causal_align = attn::causal_alignment::upper_left;
    return c;
}

std::vector<std::size_t> sizes_of(const attn::tensor& t) { return {t.values.shape().begin(), t.values.shape().end()}; }

const attn::tensor& tensor_of(const attn::trace& t, const char* stage, std::size_t i = 0) {
    const attn::stage* s = t.find(stage);
    REQUIRE_MESSAGE(s != nullptr, stage);
    return s->tensors.at(i);
}

}  // namespace

TEST_SUITE("kv cache") {

TEST_CASE("a decoding step's context rows are the last rows of the full causal pass") {
    for (const std::int64_t kv_heads : {0, 2, 1}) {
        for (const auto& sizes : {std::pair<std::int64_t, std::int64_t>{6, 1}, {3, 2}, {1, 4}}) {
            const std::int64_t past = sizes.first, seq = sizes.second;  // (no structured binding: CAPTURE is a lambda)
            CAPTURE(kv_heads);
            CAPTURE(past);
            CAPTURE(seq);
            const attn::config step = decoding_step(past, seq, kv_heads);
            const attn::trace t = run(step);
            const attn::trace full = run(full_pass(step));
            const attn::tensor& rows = tensor_of(t, "context");   // [B,H,Sq,dk]
            const attn::tensor& all = tensor_of(full, "context"); // [B,H,N+Sq,dk]
            REQUIRE(rows.values.shape()[2] == static_cast<std::size_t>(seq));
            double largest = 0.0;
            for (std::size_t b = 0; b < 2; ++b)
                for (std::size_t h = 0; h < 4; ++h)
                    for (std::size_t i = 0; i < static_cast<std::size_t>(seq); ++i)
                        for (std::size_t d = 0; d < 4; ++d)
                            largest = std::max(largest, std::fabs(double(rows.values(b, h, i, d)) -
                                                                  double(all.values(b, h, static_cast<std::size_t>(past) + i, d))));
            // the same products over other row counts: OpenBLAS's kernels may round the last bit otherwise
            CHECK(largest <= 1e-6);
            // the append stage holds the full pass's keys, heads G
            const attn::tensor& k_all = tensor_of(t, "append");
            const attn::tensor& k_full = tensor_of(full, "transpose", 1);
            REQUIRE(k_all.values.shape() == k_full.values.shape());
            double k_largest = 0.0;
            auto a = k_all.values.begin();
            for (auto f = k_full.values.begin(); f != k_full.values.end(); ++f, ++a)
                k_largest = std::max(k_largest, std::fabs(double(*a) - double(*f)));
            CHECK(k_largest <= 1e-6);
        }
    }
}

TEST_CASE("a decoding step: stages, shapes and the causal mask aligned lower-right") {
    const attn::config c = decoding_step(6, 1, 2);
    const attn::trace t = run(c);
    std::vector<std::string> names;
    for (const auto& s : t.stages) names.emplace_back(s.name());
    CHECK(names == std::vector<std::string>{"input", "params", "projections", "view", "transpose", "cache", "append",
                                            "repeat_kv", "scores", "scaled", "mask", "masked", "softmax", "context",
                                            "merge", "concat", "output"});
    CHECK(sizes_of(tensor_of(t, "input")) == std::vector<std::size_t>{2, 7, 16});       // x [B,N+Sq,Din]
    CHECK(sizes_of(tensor_of(t, "params", 2)) == std::vector<std::size_t>{8, 16});      // w_k [G·dk,Dkv]
    CHECK(sizes_of(tensor_of(t, "projections", 1)) == std::vector<std::size_t>{2, 1, 8});  // k [B,Sq,G·dk]
    CHECK(sizes_of(tensor_of(t, "cache", 0)) == std::vector<std::size_t>{2, 2, 6, 4});  // [B,G,N,dk]
    CHECK(tensor_of(t, "cache", 0).strides == attn::tensor_strides{48, 4, 8, 1});       // transpose of [B,N,G,dk]
    CHECK(sizes_of(tensor_of(t, "append", 1)) == std::vector<std::size_t>{2, 2, 7, 4}); // [B,G,N+Sq,dk]
    CHECK(tensor_of(t, "append", 1).contiguous());
    CHECK(sizes_of(tensor_of(t, "repeat_kv", 0)) == std::vector<std::size_t>{2, 4, 7, 4});  // [B,H,Sk,dk]
    const attn::tensor& mask = tensor_of(t, "mask");  // one new token sees every key
    for (std::size_t j = 0; j < 7; ++j) CHECK(mask.values(0, 0, 0, j) == 1.0f);
    CHECK_FALSE(c.cross());
    CHECK(attn::first_query_position(c) == 6);
}

TEST_CASE("repeat_kv: query head h reads kv head h // (H/G); kv_heads_tiled reads h % G") {
    attn::config c = decoding_step(0, 3, 2);
    c.kv_seq = 3;
    c.mask.causal = false;
    const attn::trace t = run(c);
    const attn::tensor& kv = tensor_of(t, "transpose", 1);   // [B,G,Sk,dk]
    const attn::tensor& rep = tensor_of(t, "repeat_kv", 0);  // [B,H,Sk,dk]
    c.mistake = attn::mistake::kv_heads_tiled;
    const attn::trace tiled = run(c);
    const attn::tensor& til = tensor_of(tiled, "repeat_kv", 0);
    for (std::size_t h = 0; h < 4; ++h)
        for (std::size_t s = 0; s < 3; ++s)
            for (std::size_t d = 0; d < 4; ++d) {
                CHECK(rep.values(1, h, s, d) == kv.values(1, h / 2, s, d));
                CHECK(til.values(1, h, s, d) == kv.values(1, h % 2, s, d));
            }
}

TEST_CASE("validate: --past and --kv-heads") {
    attn::config c = decoding_step(3, 2);
    CHECK_NOTHROW(attn::validate(c));
    c.kv_seq = 4;
    CHECK_THROWS_WITH_AS(attn::validate(c),
                         "--kv-seq 4 must equal --past 3 + --seq 2 = 5 (the keys are the cached tokens and the new "
                         "ones; or leave --kv-seq out)",
                         attn::usage_error);
    c = decoding_step(3, 2);
    c.separate_kv = true;
    CHECK_THROWS_WITH_AS(attn::validate(c),
                         "--past 3 is a decoding step of self-attention: keys and values come from the same tokens "
                         "as the queries, so it takes no --cross or --kv-input",
                         attn::usage_error);
    c = decoding_step(0, 2, 3);
    c.kv_seq = 2;
    CHECK_THROWS_WITH_AS(attn::validate(c),
                         "--kv-heads 3 must divide --heads 4 (1 <= G <= H: each kv head serves H/G query heads)",
                         attn::usage_error);
    c.kv_heads = 8;
    CHECK_THROWS_AS(attn::validate(c), attn::usage_error);
    c.kv_heads = 4;  // G = H: as without the flag
    CHECK_NOTHROW(attn::validate(c));
    CHECK_FALSE(c.grouped());
    c.kv_heads = 2;
    c.mistake = attn::mistake::kv_heads_tiled;
    CHECK_NOTHROW(attn::validate(c));
    c.kv_heads = 1;  // one kv head: tiling is repeat_interleave
    CHECK_THROWS_AS(attn::validate(c), attn::usage_error);
}

TEST_CASE("the plan: the cache is a view, append and repeat_kv copies, as computed") {
    const attn::config c = decoding_step(5, 2, 2);
    const attn::trace t = run(c);
    for (const attn::planned_stage& planned : attn::make_plan(c).stages) {
        const attn::stage* s = t.find(attn::info_of(planned.id).name);
        REQUIRE(s != nullptr);
        REQUIRE(s->tensors.size() == planned.tensors.size());
        for (std::size_t i = 0; i < planned.tensors.size(); ++i) {
            CAPTURE(std::string(s->name()) + "." + s->tensors[i].name);
            CHECK(sizes_of(s->tensors[i]) == planned.tensors[i].layout.shape);
            CHECK(s->tensors[i].strides == planned.tensors[i].layout.strides);
            CHECK(s->tensors[i].dims == planned.tensors[i].dims);
        }
    }
}

}  // TEST_SUITE
